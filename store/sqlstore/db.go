// Package sqlstore implements the store interfaces with GORM, on PostgreSQL or
// on an embedded SQLite file.
package sqlstore

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/ncruces/go-sqlite3"
	sqlitedriver "github.com/ncruces/go-sqlite3/driver"
	"github.com/ncruces/go-sqlite3/gormlite"
	"gorm.io/driver/postgres"
	"gorm.io/gorm"
	"gorm.io/gorm/clause"
	"gorm.io/gorm/logger"

	"repohost/store"
	"repohost/store/secretbox"
)

// DB is the GORM-backed store.
type DB struct {
	gorm *gorm.DB
	// outsideTx runs statements that are not part of a transaction with
	// prepared statements, which saves parsing the SQL again each time.
	// Transactions never use this statement cache: a transaction waiting
	// for a statement that another request is still preparing would hold
	// its connection while that request waits for one — with the pool full
	// of such transactions, nothing moves (seen on PostgreSQL under
	// concurrent issue updates). Their statements are kept by each
	// connection instead: pgx does so on PostgreSQL, keptStatements on
	// SQLite.
	outsideTx *gorm.DB
	// retrying, on PostgreSQL only, runs the statements outside a
	// transaction of a request that has already committed a write: they
	// wait through a short outage instead of failing (see commits.go).
	retrying *gorm.DB
	clock    store.Clock
	// cache serves the hottest lookups for a moment (nil: never).
	cache *readCache
	// secrets seals the columns kept encrypted at rest (a hook's
	// authorization header); nil when no instance key was given.
	secrets *secretbox.Box
	// cluster keeps the read cache coherent with the other processes
	// on the database (Options.Cluster); nil otherwise.
	cluster *cluster
	// locks serialises work per key (Locks).
	locks *locker
	// creates groups a repository's concurrent issue creates into one
	// statement (PostgreSQL's CreateNumberedAlone).
	creates createGroups
}

var _ store.Store = (*DB)(nil)

// Options tune Open.
type Options struct {
	// Logger receives every statement; tests use it to count queries.
	Logger logger.Interface
	// Clock stamps rows the store dates itself; the system clock when nil.
	Clock store.Clock
	// CommittedRetry bounds how long a statement of a request that has
	// committed retries while PostgreSQL is unreachable;
	// DefaultCommittedRetry when zero.
	CommittedRetry time.Duration
	// CacheTTL is how long the hottest lookups (a token with its user, a
	// repository with its owner, a user by name or id) may be served from
	// memory; 0 reads them every time. See readCache; the server uses
	// DefaultCacheTTL.
	CacheTTL time.Duration
	// Secrets seals the columns kept encrypted at rest (a webhook's
	// authorization header) with the instance secret key. Without it such
	// a column can only be empty: writing a value, or a migration finding
	// one to seal, fails.
	Secrets *secretbox.Box
	// Cluster (PostgreSQL only) makes the read cache, and what watches
	// it, coherent across the processes sharing the database: each tells
	// the others what it changed, and a request is served from a cache
	// only once this process has heard of every write acknowledged
	// before it began (see cluster). Every process on the database must
	// run with it.
	Cluster bool
	// Log receives what the cluster listener has to say (lost, back).
	Log *slog.Logger
}

// IsPostgres tells whether a --db value selects PostgreSQL.
func IsPostgres(dsn string) bool {
	return strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://")
}

// DefaultSQLitePath is where the embedded database lives inside a data dir.
func DefaultSQLitePath(dataDir string) string {
	return filepath.Join(dataDir, "repohost.db")
}

// Open connects to dsn: a postgres:// URL, or else the path of a SQLite file.
// statementsNeverExpire is the statement lifetime GORM's cache takes to
// mean "no expiry", the one value for which it starts no sweeping
// goroutine.
const statementsNeverExpire = 10 * 365 * 24 * time.Hour

func Open(dsn string, opts Options) (*DB, error) {
	clock := opts.Clock
	if clock == nil {
		clock = store.SystemClock{}
	}
	// Each handle needs a configuration of its own: GORM keeps its
	// callbacks in it.
	config := func() *gorm.Config {
		cfg := &gorm.Config{
			TranslateError:         true,
			SkipDefaultTransaction: true,
			// Queries with IN lists of varying length each prepare anew, so
			// the statement cache (see DB.outsideTx) is bounded: the least
			// recently used statement goes first. Statements do not expire
			// by age: GORM sweeps expiring ones from a goroutine it never
			// ends, which would keep every closed handle's memory (and
			// its statements) alive, as the tests' many servers showed.
			PrepareStmtMaxSize: 1000,
			PrepareStmtTTL:     statementsNeverExpire,
			NowFunc:            clock.Now,
			Logger:             opts.Logger,
		}
		if cfg.Logger == nil {
			cfg.Logger = logger.Discard
		}
		return cfg
	}
	// The schema names this instance within its database: advisory
	// locks and notifications are the database's, and other schemas hold
	// other instances (the tests' servers, each in a schema of its own).
	// On PostgreSQL a process names its connections after its namespace
	// and itself: cluster mode sees by the names who else is there
	// (cluster_alone.go).
	namespace, proc, connDSN := "", newProc(), dsn
	if IsPostgres(dsn) {
		var err error
		if namespace, err = readNamespace(context.Background(), dsn); err != nil {
			return nil, fmt.Errorf("connect to database: %w", err)
		}
		if connDSN, err = namedDSN(dsn, appPrefix(namespace)+proc); err != nil {
			return nil, fmt.Errorf("open database: %w", err)
		}
	}
	var dialector gorm.Dialector
	if IsPostgres(dsn) {
		dialector = postgres.Open(connDSN)
	} else {
		// WAL lets readers run beside the one writer; busy_timeout makes a
		// second writer wait instead of failing with "database is locked";
		// immediate transactions take the write lock up front so two
		// read-then-write transactions cannot deadlock on the upgrade.
		// Each connection keeps a page cache of 512 KiB instead of SQLite's
		// 2 MiB: with eight connections the default held 16 MiB of pages
		// the operating system's file cache holds anyway (the server's
		// resident memory after a load fell by about 12 MB, the lists'
		// throughput did not move).
		connector, err := (&sqlitedriver.SQLite{}).OpenConnector("file:" + dsn +
			"?_pragma=busy_timeout(20000)&_pragma=journal_mode(wal)&_pragma=foreign_keys(on)&_pragma=synchronous(normal)&_pragma=cache_size(-512)&_txlock=immediate")
		if err != nil {
			return nil, fmt.Errorf("open database: %w", err)
		}
		dialector = gormlite.OpenDB(sql.OpenDB(keptStatements{connector}))
	}
	g, err := gorm.Open(dialector, config())
	if err != nil {
		return nil, fmt.Errorf("open database: %w", err)
	}
	if err := registerCommitMarking(g); err != nil {
		return nil, fmt.Errorf("open database: %w", err)
	}
	sqlDB, err := g.DB()
	if err != nil {
		return nil, err
	}
	if IsPostgres(dsn) {
		sqlDB.SetMaxOpenConns(32)
		sqlDB.SetMaxIdleConns(32)
	} else {
		n := sqliteConns(runtime.GOMAXPROCS(0))
		sqlDB.SetMaxOpenConns(n)
		sqlDB.SetMaxIdleConns(n)
	}
	sqlDB.SetConnMaxIdleTime(5 * time.Minute)
	if err := sqlDB.Ping(); err != nil {
		return nil, fmt.Errorf("connect to database: %w", err)
	}
	cache := newReadCache(opts.CacheTTL, 10_000)
	if err := cache.watchWrites(g); err != nil {
		sqlDB.Close()
		return nil, fmt.Errorf("watch writes: %w", err)
	}
	// On the embedded database, parsing SQL was a quarter of the CPU time
	// of a simple GET before statements were reused.
	d := &DB{gorm: g, outsideTx: g.Session(&gorm.Session{PrepareStmt: true}), clock: clock, cache: cache, secrets: opts.Secrets}
	d.locks = newLocker(connDSN, namespace)
	if opts.Cluster {
		if !IsPostgres(dsn) {
			sqlDB.Close()
			return nil, errors.New("cluster mode needs PostgreSQL: the embedded database serves one process")
		}
		if cache != nil {
			d.cluster = newCluster(connDSN, namespace, proc, cache, sqlDB, opts.Log)
			cache.published = d.cluster.publish
			d.cluster.start()
		}
	}
	if IsPostgres(dsn) {
		budget := opts.CommittedRetry
		if budget <= 0 {
			budget = DefaultCommittedRetry
		}
		// The same pool of connections, seen through retries.
		d.retrying, err = gorm.Open(postgres.New(postgres.Config{Conn: &retryingPool{db: sqlDB, budget: budget}}), config())
		if err != nil {
			return nil, fmt.Errorf("open database: %w", err)
		}
		// Writes through the retrying handle retire cached rows too.
		if err := cache.watchWrites(d.retrying); err != nil {
			sqlDB.Close()
			return nil, fmt.Errorf("watch writes: %w", err)
		}
	}
	return d, nil
}

// sqliteConns sizes the pool of embedded database connections: two per
// processor, at least four and at most eight. SQLite runs as Go code in the
// process, so a connection beyond that adds no throughput (readers do not
// block one another under WAL, and writers take turns anyway), while each
// keeps a memory of its own, page cache and prepared statements, of about
// 1.5 MB once warm: on two processors four connections instead of eight
// left the server's resident memory after the bench's load 6 MB lower,
// throughput unchanged.
func sqliteConns(procs int) int {
	return min(8, max(4, 2*procs))
}

// Close releases the connection pool.
func (d *DB) Close() error {
	d.cluster.close()
	d.locks.close()
	sqlDB, err := d.gorm.DB()
	if err != nil {
		return err
	}
	return sqlDB.Close()
}

type txKey struct{}

// txState is what a transaction carries in its context: the GORM handle and
// the functions to run once the outermost transaction has committed.
type txState struct {
	tx          *gorm.DB
	afterCommit []func()
	// wrote holds the cached tables the transaction changed, counters
	// the repositories whose counters alone it moved (readCache).
	wrote    int
	counters []int64
	// scoped holds the writes confined to one repository (repoWrite).
	scoped []scopedWrite
}

// WithTx runs fn in a transaction carried by ctx; a nested call joins the
// outer transaction instead of opening a second one. Once the outermost
// transaction has committed it sets the commit marker of ctx
// (store.MarkCommitted); in a request that had already committed, starting
// the transaction waits through an outage (see commits.go).
func (d *DB) WithTx(ctx context.Context, fn func(ctx context.Context) error) error {
	if _, ok := ctx.Value(txKey{}).(*txState); ok {
		return fn(ctx)
	}
	begin := d.gorm
	if d.retrying != nil && store.Committed(ctx) {
		begin = d.retrying
	}
	state := &txState{}
	err := begin.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		state.tx = tx
		return fn(context.WithValue(ctx, txKey{}, state))
	})
	// The tables it changed are retired again even when it failed: a
	// commit whose answer was lost may still have committed.
	d.cache.committed(state)
	// The others are told likewise, also of a failure (a commit whose
	// answer was lost), before the request is answered.
	d.cluster.publish(ctx, txChange(state))
	if err != nil {
		if isCanceled(err) && !errors.Is(err, context.Canceled) {
			return fmt.Errorf("transaction: %w (%v)", context.Canceled, err)
		}
		if isUnavailable(err) && !errors.Is(err, store.ErrUnavailable) && !isCanceled(err) {
			return fmt.Errorf("transaction: %w: %v", store.ErrUnavailable, err)
		}
		return err
	}
	store.MarkCommitted(ctx)
	for _, f := range state.afterCommit {
		f()
	}
	return nil
}

func cloneUser(u *store.User) *store.User {
	c := *u
	return &c
}

// cloneTime copies a nullable time, so that a clone shares nothing a
// caller may change with the row kept in the cache.
func cloneTime(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	c := *t
	return &c
}

func cloneRepo(r *store.Repository) *store.Repository {
	c := *r
	if r.Owner != nil {
		c.Owner = cloneUser(r.Owner)
	}
	return &c
}

// AfterCommit implements store.Tx.
func (d *DB) AfterCommit(ctx context.Context, fn func()) {
	if state, ok := ctx.Value(txKey{}).(*txState); ok {
		state.afterCommit = append(state.afterCommit, fn)
		return
	}
	fn()
}

// conn returns the transaction in ctx, or else the pool: with retries
// through an outage when the request has already committed a write (see
// commits.go), failing fast otherwise.
func (d *DB) conn(ctx context.Context) *gorm.DB {
	if state, ok := ctx.Value(txKey{}).(*txState); ok {
		return state.tx.WithContext(ctx)
	}
	if d.retrying != nil && store.Committed(ctx) {
		return d.retrying.WithContext(ctx)
	}
	return d.outsideTx.WithContext(ctx)
}

// errNoTx is returned by a locking read outside a transaction, where the
// lock would end with the statement and protect nothing.
var errNoTx = errors.New("a locking read needs a transaction (store.WithTx)")

// lockingConn is conn for a read whose row the transaction in ctx will write
// back: on PostgreSQL the rows read stay locked (SELECT ... FOR UPDATE) until
// the transaction ends, so a concurrent read-change-write of the same row
// waits for this one instead of overwriting it with what it read before.
// SQLite needs no clause (it has none): its immediate transactions hold the
// database's write lock from their first statement, so they already run one
// at a time.
func (d *DB) lockingConn(ctx context.Context) (*gorm.DB, error) {
	state, ok := ctx.Value(txKey{}).(*txState)
	if !ok {
		return nil, errNoTx
	}
	db := state.tx.WithContext(ctx)
	if d.usesPostgres() {
		db = db.Clauses(clause.Locking{Strength: "UPDATE"})
	}
	return db, nil
}

// affected translates the result of a statement that must touch a row:
// touching none is ErrNotFound, like a lookup that finds nothing.
func affected(res *gorm.DB, what string) error {
	if res.Error != nil {
		return translate(res.Error, what)
	}
	if res.RowsAffected == 0 {
		return translate(gorm.ErrRecordNotFound, what)
	}
	return nil
}

// translate maps driver and GORM errors to the store's sentinels.
func translate(err error, what string) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, gorm.ErrRecordNotFound):
		return fmt.Errorf("%s: %w", what, store.ErrNotFound)
	case errors.Is(err, gorm.ErrDuplicatedKey):
		return fmt.Errorf("%s: %w", what, store.ErrDuplicate)
	case isInvalidText(err):
		return fmt.Errorf("%s: %w", what, store.ErrInvalid)
	case isCanceled(err):
		// The caller gave up (a client closed its connection): nothing
		// is wrong with the database, whatever the driver made of it.
		if errors.Is(err, context.Canceled) {
			return fmt.Errorf("%s: %w", what, err)
		}
		return fmt.Errorf("%s: %w (%v)", what, context.Canceled, err)
	case isUnavailable(err):
		return fmt.Errorf("%s: %w: %v", what, store.ErrUnavailable, err)
	default:
		return fmt.Errorf("%s: %w", what, err)
	}
}

// isInvalidText recognises PostgreSQL refusing a character it cannot store
// in text (NUL, or bytes invalid in the encoding).
func isInvalidText(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && (pgErr.Code == "22021" || pgErr.Code == "22P05")
}

// isCanceled recognises a statement stopped because the context it ran
// under was cancelled: context.Canceled itself, SQLite's interruption (how
// the embedded driver stops a statement whose context ends) and
// PostgreSQL's "canceling statement due to user request" (how pgx stops
// one; this server sets no statement_timeout, which would raise it too).
func isCanceled(err error) bool {
	var pgErr *pgconn.PgError
	return errors.Is(err, context.Canceled) || errors.Is(err, sqlite3.INTERRUPT) ||
		(errors.As(err, &pgErr) && pgErr.Code == "57014")
}

// isUnavailable recognises a database that cannot be reached: refused or
// broken connections, and PostgreSQL shutting down or starting up. Such a
// request changed nothing (its transaction did not commit) and may be
// retried.
func isUnavailable(err error) bool {
	var connectErr *pgconn.ConnectError
	var opErr *net.OpError
	var pgErr *pgconn.PgError
	switch {
	case errors.As(err, &connectErr), errors.As(err, &opErr):
		return true
	case errors.As(err, &pgErr):
		// Class 08 is "connection exception"; 57P01-57P03 are the server
		// shutting down, crashing, or not yet accepting connections.
		return strings.HasPrefix(pgErr.Code, "08") || pgErr.Code == "57P01" || pgErr.Code == "57P02" || pgErr.Code == "57P03"
	}
	return errors.Is(err, driver.ErrBadConn) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, net.ErrClosed) ||
		errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) || pgconn.SafeToRetry(err)
}

// escapeLike makes a user's keyword match literally inside a LIKE pattern.
func escapeLike(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)
	return r.Replace(s)
}

// likePattern is the "contains, case-insensitively" pattern for a keyword; pair
// it with "LIKE ? ESCAPE '\'" on a lower-cased column.
func likePattern(keyword string) string {
	return "%" + escapeLike(strings.ToLower(keyword)) + "%"
}

func (d *DB) Users() store.UserStore     { return userStore{d} }
func (d *DB) Emails() store.EmailStore   { return emailStore{d} }
func (d *DB) Tokens() store.TokenStore   { return tokenStore{d} }
func (d *DB) Orgs() store.OrgStore       { return orgStore{d} }
func (d *DB) Access() store.AccessStore  { return accessStore{d} }
func (d *DB) Repos() store.RepoStore     { return repoStore{d} }
func (d *DB) Events() store.EventStore   { return eventStore{d} }
func (d *DB) Cron() store.CronStore      { return cronStore{d} }
func (d *DB) Notices() store.NoticeStore { return noticeStore{d} }
func (d *DB) Hooks() store.HookStore     { return hookStore{d} }

// Ping checks that the database answers (GET /api/healthz).
func (d *DB) Ping(ctx context.Context) error {
	sqlDB, err := d.gorm.DB()
	if err != nil {
		return err
	}
	return sqlDB.PingContext(ctx)
}

// SQL is the connection pool, for its statistics (GET /metrics).
func (d *DB) SQL() (*sql.DB, error) { return d.gorm.DB() }
