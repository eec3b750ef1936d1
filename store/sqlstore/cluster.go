package sqlstore

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/fnv"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"repohost/store"
)

// changesChannel is the PostgreSQL notification channel on which the
// processes of a cluster tell each other what they changed; each schema
// (namespace) has its own, as notifications go to the whole database.
func changesChannel(namespace string) string {
	return fmt.Sprintf("repohost_changes_%08x", namespaceHash(namespace))
}

// namespaceHash names a namespace (a schema) where identifiers must stay
// short: the notification channel, the connections' application_name.
func namespaceHash(namespace string) uint32 {
	h := fnv.New32a()
	h.Write([]byte(namespace))
	return h.Sum32()
}

// maxPayload bounds a notification's payload (PostgreSQL's limit is 8000
// bytes); a change that does not fit is sent as "everything changed".
const maxPayload = 7000

// syncTimeout bounds how long a request waits for this process's listener
// to hear the clock it read; past it the request is served without the
// caches.
const syncTimeout = 2 * time.Second

// cluster keeps the read cache (and what watches it) of a process coherent
// with the writes of the other processes sharing a PostgreSQL database.
//
// Every transaction that changed cached tables, once it has committed and
// before its request is answered, moves the change clock (one row,
// cluster_clock) and sends a notification naming what it changed (the
// bits and repository scopes the local generations count) and the clock's
// new number, in one short transaction of its own; so does a statement
// outside a transaction. The row's lock makes the clock's order the order
// of the notifications, which PostgreSQL delivers in commit order. A
// dedicated connection LISTENs, bumps the local generations of what the
// others changed, and remembers the highest number heard.
//
// Before a request is served from a cache, the process reads the clock
// (one primary-key read) and waits until its listener has heard that
// number: every write acknowledged before the request began moved the
// clock before that read, and its notification has been heard. Reads are
// shared: one made after a request began serves every request that began
// before it was made, so a busy process reads about once per round trip,
// and a request at most once. While the listener is down (its connection
// lost, not yet back) no cache serves or keeps anything; once it is back
// (what was missed is unknown) every entry is retired.
//
// Why not the notification inside the write's transaction: PostgreSQL
// then holds its notification queue's lock through the write's wait for
// the disk, serialising every write of the cluster (issue creation fell
// from about 400 to 20 per second on the bench). The notifying
// transaction here does not wait for the disk (a notification lost with
// the server is lost either way). A process that dies between a commit
// and its notification never acknowledged the write; the others follow
// the TTL for it.
type cluster struct {
	dsn string
	// channel is this schema's notification channel.
	channel string
	proc    string
	// app is the application_name of this process's connections, prefix
	// that of its namespace's processes (see cluster_alone.go).
	app, prefix string
	cache       *readCache
	pool        *sql.DB
	log         *slog.Logger

	// listenerPID is the backend of the listening connection (tests end
	// it to see the caches turn off).
	listenerPID atomic.Uint32
	// reads counts the clock reads (tests).
	reads atomic.Int64

	mu sync.Mutex
	up bool
	// alone: the process is alone on the database (cluster_alone.go),
	// trusted until aloneUntil.
	alone      bool
	aloneUntil time.Time
	// heard is the highest clock number the listener has heard (or
	// covered by retiring everything when it came back).
	heard uint64
	// rounds are the clock reads not finished; latest the one made last;
	// doneAt when the last one finished well was made.
	rounds map[*clockRound]bool
	latest *clockRound
	doneAt time.Time
	// next is the round that requests waiting for a read join while
	// another read is under way; reading tells whether one is.
	next    *clockRound
	reading bool
	// pending gathers the changes committed while a publication is
	// under way, to go out together in the next; publishing tells
	// whether one is.
	pending    *publication
	publishing bool
	// dropListener ends the listening connection (a number it never
	// hears suggests it is dead without knowing: a peer gone silent).
	dropListener context.CancelFunc

	stop context.CancelFunc
	done chan struct{}
	// ready is closed once the listener has listened, or failed to, for
	// the first time.
	ready     chan struct{}
	readyOnce sync.Once
}

// clockRound is one read of the clock, and the wait until it was heard.
type clockRound struct {
	// at is when the read was sent (zero while it waits its turn).
	at time.Time
	// n is the number read (0: not yet).
	n uint64
	// waiters counts the fresh calls waiting for it (tests).
	waiters  int
	done     chan struct{}
	ok       bool
	finished bool
}

// newProc names a process of a cluster.
func newProc() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// newCluster is the cluster of process proc of namespace, whose
// connections (dsn and pool's) are named appPrefix(namespace) + proc.
func newCluster(dsn, namespace, proc string, cache *readCache, pool *sql.DB, log *slog.Logger) *cluster {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	prefix := appPrefix(namespace)
	return &cluster{dsn: dsn, channel: changesChannel(namespace), proc: proc, app: prefix + proc, prefix: prefix,
		cache: cache, pool: pool, log: log, rounds: map[*clockRound]bool{}, done: make(chan struct{}), ready: make(chan struct{})}
}

// start runs the listener until close, and waits (up to a few seconds) for
// it to listen.
func (cl *cluster) start() {
	ctx, stop := context.WithCancel(context.Background())
	cl.stop = stop
	go cl.listen(ctx)
	select {
	case <-cl.ready:
	case <-time.After(5 * time.Second):
	}
}

func (cl *cluster) close() {
	if cl == nil || cl.stop == nil {
		return
	}
	cl.stop()
	<-cl.done
}

// listen keeps a connection LISTENing, reconnecting with a growing pause
// when it is lost.
func (cl *cluster) listen(ctx context.Context) {
	defer close(cl.done)
	pause := 100 * time.Millisecond
	for ctx.Err() == nil {
		err := cl.listenOnce(ctx)
		// A first attempt that fails (the clock's table not there yet,
		// before the migrations) does not hold up the start.
		cl.readyOnce.Do(func() { close(cl.ready) })
		cl.setDown()
		if ctx.Err() != nil {
			return
		}
		cl.log.Warn("cluster: change listener lost; caches off until it is back", "err", err)
		select {
		case <-ctx.Done():
			return
		case <-time.After(pause):
		}
		pause = min(2*pause, 5*time.Second)
	}
}

func (cl *cluster) listenOnce(ctx context.Context) error {
	ctx, drop := context.WithCancel(ctx)
	defer drop()
	cl.mu.Lock()
	cl.dropListener = drop
	cl.mu.Unlock()
	cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	conn, err := pgx.Connect(cctx, cl.dsn)
	cancel()
	if err != nil {
		return err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	cl.listenerPID.Store(conn.PgConn().PID())
	if _, err := conn.Exec(ctx, "LISTEN "+cl.channel); err != nil {
		return err
	}
	// Nobody may be alone once this process serves from its caches (or
	// writes: see cluster_alone.go). A claim of its own is from before
	// its listener was lost.
	if err := cl.free(ctx, conn); err != nil {
		return err
	}
	if err := cl.awaitNobodyAlone(ctx); err != nil {
		return err
	}
	// What changed while nobody listened is unknown: everything kept is
	// retired, which covers every change up to the clock read now (read
	// after LISTEN: later ones are heard); then the caches may serve.
	var now int64
	if err := conn.QueryRow(ctx, "SELECT n FROM cluster_clock WHERE id = 1").Scan(&now); err != nil {
		return err
	}
	cl.cache.invalidateAll()
	cl.mu.Lock()
	cl.up = true
	cl.mu.Unlock()
	cl.heardUpTo(uint64(now))
	cl.readyOnce.Do(func() { close(cl.ready) })
	// Every aloneRenew, the process tries to be alone or renews its lease.
	tick := time.Now()
	for {
		if !time.Now().Before(tick) {
			cl.mu.Lock()
			alone := cl.alone
			cl.mu.Unlock()
			var err error
			if alone {
				err = cl.renewAlone(ctx, conn)
			} else {
				err = cl.tryAlone(ctx, conn)
			}
			if err != nil {
				return err
			}
			tick = time.Now().Add(aloneRenew)
		}
		wctx, cancel := context.WithDeadline(ctx, tick)
		n, err := conn.WaitForNotification(wctx)
		cancel()
		if err != nil {
			if ctx.Err() == nil && pgconn.Timeout(err) {
				continue
			}
			return err
		}
		if err := cl.hear(ctx, conn, n.Payload); err != nil {
			return err
		}
	}
}

// hear applies a notification: a change, or a process joining. Either
// from another process ends this one's being alone.
func (cl *cluster) hear(ctx context.Context, conn *pgx.Conn, payload string) error {
	kind, rest, _ := strings.Cut(payload, " ")
	proc, _, _ := strings.Cut(rest, " ")
	if kind != "j" {
		cl.heardOne(payload)
	}
	cl.mu.Lock()
	alone := cl.alone
	cl.mu.Unlock()
	if alone && proc != cl.proc {
		// (A change heard was applied: nothing else to retire.)
		return cl.leaveAlone(ctx, conn, false)
	}
	return nil
}

// setDown turns the caches off and fails the reads under way.
func (cl *cluster) setDown() {
	cl.mu.Lock()
	defer cl.mu.Unlock()
	cl.up = false
	cl.alone = false
	for r := range cl.rounds {
		cl.finish(r, false)
	}
}

// heardOne applies one notification: "c PROC N CHANGE".
func (cl *cluster) heardOne(payload string) {
	kind, rest, _ := strings.Cut(payload, " ")
	proc, rest, _ := strings.Cut(rest, " ")
	num, rest, _ := strings.Cut(rest, " ")
	n, err := strconv.ParseUint(num, 10, 64)
	if kind != "c" || err != nil {
		cl.log.Warn("cluster: unreadable notification", "payload", payload)
		cl.cache.invalidateAll()
		return
	}
	if proc != cl.proc { // ours were applied when made
		ch, err := decodeChange(rest)
		if err != nil {
			cl.log.Warn("cluster: unreadable change notification", "payload", payload, "err", err)
			ch = change{all: true}
		}
		ch.apply(cl.cache)
	}
	// Only once applied: a request waiting for n then reads after it.
	cl.heardUpTo(n)
}

// heardUpTo records that every change up to clock number n was heard, and
// finishes the reads waiting for it.
func (cl *cluster) heardUpTo(n uint64) {
	cl.mu.Lock()
	defer cl.mu.Unlock()
	if n > cl.heard {
		cl.heard = n
	}
	for r := range cl.rounds {
		if r.n != 0 && r.n <= cl.heard {
			cl.finish(r, true)
		}
	}
}

// finish ends round r; cl.mu is held.
func (cl *cluster) finish(r *clockRound, ok bool) {
	if r.finished {
		return
	}
	r.finished = true
	delete(cl.rounds, r)
	r.ok = ok && cl.up
	if r.ok && r.at.After(cl.doneAt) {
		cl.doneAt = r.at
	}
	if cl.latest == r {
		cl.latest = nil
	}
	close(r.done)
}

// fresh tells whether the caches may serve ctx: the listener is up and
// has heard every write acknowledged before ctx's request began (before
// now, outside a request). It reads the clock at most once per request.
func (cl *cluster) fresh(ctx context.Context) bool {
	if cl == nil {
		return true
	}
	rp := store.ReadPointOf(ctx)
	cl.mu.Lock()
	if !cl.up {
		cl.mu.Unlock()
		return false
	}
	if cl.aloneNow() {
		cl.mu.Unlock()
		return true
	}
	since := time.Now()
	if rp != nil {
		if rp.Synced() {
			cl.mu.Unlock()
			return true
		}
		since = rp.At
	}
	if !cl.doneAt.Before(since) {
		cl.mu.Unlock()
		if rp != nil {
			rp.MarkSynced()
		}
		return true
	}
	r := cl.latest
	if r == nil || r.at.Before(since) {
		// One read is under way at a time: a request that cannot use the
		// one under way (sent before it began) joins the next, sent as
		// that one returns, so a busy process reads about once per round
		// trip, not once per request.
		if cl.next == nil {
			cl.next = &clockRound{done: make(chan struct{})}
			cl.rounds[cl.next] = true
		}
		r = cl.next
		r.waiters++
		if !cl.reading {
			cl.reading = true
			go cl.readLoop()
		}
	}
	cl.mu.Unlock()
	t := time.NewTimer(syncTimeout)
	defer t.Stop()
	select {
	case <-r.done:
	case <-ctx.Done():
		return false
	case <-t.C:
		// The listener did not hear what the database holds: start it
		// again (meanwhile the caches are off).
		cl.log.Warn("cluster: the change listener did not catch up in time; reconnecting it")
		cl.mu.Lock()
		if cl.dropListener != nil {
			cl.dropListener()
		}
		cl.mu.Unlock()
		return false
	}
	if r.ok && rp != nil {
		rp.MarkSynced()
	}
	return r.ok
}

// readLoop sends the waiting round's read, one at a time, until none
// waits.
func (cl *cluster) readLoop() {
	for {
		cl.mu.Lock()
		r := cl.next
		cl.next = nil
		if r == nil {
			cl.reading = false
			cl.mu.Unlock()
			return
		}
		// Every request that joined r began before now.
		r.at = time.Now()
		live := !r.finished // (it fails when the listener is set down)
		if live {
			cl.latest = r
		}
		cl.mu.Unlock()
		if live {
			cl.read(r)
		}
	}
}

// read reads the clock for r, which ends once the listener has heard it.
func (cl *cluster) read(r *clockRound) {
	ctx, cancel := context.WithTimeout(context.Background(), syncTimeout)
	defer cancel()
	cl.reads.Add(1)
	var n int64
	err := cl.pool.QueryRowContext(ctx, "SELECT n FROM cluster_clock WHERE id = 1").Scan(&n)
	cl.mu.Lock()
	defer cl.mu.Unlock()
	switch {
	case err != nil:
		cl.finish(r, false)
	case uint64(n) <= cl.heard:
		cl.finish(r, true)
	default:
		r.n = uint64(n)
	}
}

// publication is the changes sent in one notification, and the wait of
// the writes they come from.
type publication struct {
	ch   change
	done chan struct{}
	// writes counts the writes it tells of (tests).
	writes int
}

// publish tells the others of ch, a write that has committed (and that
// was not acknowledged yet: its request answers once this returns).
// Publications go out one at a time; the changes committed while one is
// under way go out together in the next (one clock move and notification
// for them all), as a database groups commits.
func (cl *cluster) publish(ctx context.Context, ch change) {
	if cl == nil || ch.empty() {
		return
	}
	cl.mu.Lock()
	if cl.aloneNow() { // nobody to tell
		cl.mu.Unlock()
		return
	}
	p := cl.pending
	if p == nil {
		p = &publication{done: make(chan struct{})}
		cl.pending = p
	}
	p.ch = p.ch.merge(ch)
	p.writes++
	if !cl.publishing {
		cl.publishing = true
		go cl.publishLoop()
	}
	cl.mu.Unlock()
	<-p.done
}

// publishLoop sends the pending publication, one at a time, until none is
// left.
func (cl *cluster) publishLoop() {
	for {
		cl.mu.Lock()
		p := cl.pending
		cl.pending = nil
		if p == nil {
			cl.publishing = false
			cl.mu.Unlock()
			return
		}
		cl.mu.Unlock()
		cl.send(p.ch)
		close(p.done)
	}
}

// send moves the clock and notifies the others of ch.
func (cl *cluster) send(ch change) {
	ctx, cancel := context.WithTimeout(context.Background(), syncTimeout)
	defer cancel()
	// The row tells whether another process is alone (and so hears
	// nothing before it serves): see cluster_alone.go.
	var otherAlone bool
	var setting, notified any
	err := cl.pool.QueryRowContext(ctx, `WITH c AS (UPDATE cluster_clock SET n = n + 1 WHERE id = 1 RETURNING n, alone_proc, alone_until)
SELECT set_config('synchronous_commit', 'off', true), pg_notify($1, 'c ' || $2::text || ' ' || c.n || ' ' || $3::text),
	COALESCE(c.alone_until > `+dbMillis+` AND c.alone_proc IS DISTINCT FROM $2::text, false) FROM c`,
		cl.channel, cl.proc, ch.encode()).Scan(&setting, &notified, &otherAlone)
	if err == nil && otherAlone {
		err = cl.awaitNobodyAlone(ctx)
	}
	if err != nil {
		// The others follow the TTL for this change.
		cl.log.Warn("cluster: could not tell the other processes of a change", "err", err)
	}
}

// change is what one write (a transaction, or a statement outside one)
// changed, as the read cache counts it.
type change struct {
	// all: anything may have changed.
	all      bool
	tables   int
	counters []int64
	scoped   []scopedWrite
}

// merge is what ch and o changed together.
func (ch change) merge(o change) change {
	if ch.all || o.all {
		return change{all: true}
	}
	out := change{tables: ch.tables | o.tables, counters: ch.counters, scoped: ch.scoped}
	for _, id := range o.counters {
		if !slices.Contains(out.counters, id) {
			out.counters = append(out.counters, id)
		}
	}
	for _, w := range o.scoped {
		if i := slices.IndexFunc(out.scoped, func(x scopedWrite) bool { return x.repo == w.repo }); i >= 0 {
			out.scoped[i].tables |= w.tables
		} else {
			out.scoped = append(out.scoped, w)
		}
	}
	return out
}

func (ch change) empty() bool {
	return !ch.all && ch.tables == 0 && len(ch.counters) == 0 && len(ch.scoped) == 0
}

// encode writes ch as "TABLES COUNTERS SCOPED": the table bits in hex,
// the repository ids whose counters moved (comma separated, "-" for none),
// and repo:bits pairs ("-" for none); "*" when anything changed.
func (ch change) encode() string {
	if ch.all {
		return "*"
	}
	var b strings.Builder
	b.WriteString(strconv.FormatInt(int64(ch.tables), 16))
	b.WriteByte(' ')
	if len(ch.counters) == 0 {
		b.WriteByte('-')
	}
	for i, id := range ch.counters {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.FormatInt(id, 10))
	}
	b.WriteByte(' ')
	if len(ch.scoped) == 0 {
		b.WriteByte('-')
	}
	for i, w := range ch.scoped {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.FormatInt(w.repo, 10))
		b.WriteByte(':')
		b.WriteString(strconv.FormatInt(int64(w.tables), 16))
	}
	if b.Len() > maxPayload {
		return "*"
	}
	return b.String()
}

func decodeChange(s string) (change, error) {
	if s == "*" {
		return change{all: true}, nil
	}
	parts := strings.Split(s, " ")
	if len(parts) != 3 {
		return change{}, errors.New("want three fields")
	}
	var ch change
	t, err := strconv.ParseInt(parts[0], 16, 64)
	if err != nil {
		return change{}, err
	}
	ch.tables = int(t)
	if parts[1] != "-" {
		for _, f := range strings.Split(parts[1], ",") {
			id, err := strconv.ParseInt(f, 10, 64)
			if err != nil {
				return change{}, err
			}
			ch.counters = append(ch.counters, id)
		}
	}
	if parts[2] != "-" {
		for _, f := range strings.Split(parts[2], ",") {
			r, bits, ok := strings.Cut(f, ":")
			if !ok {
				return change{}, errors.New("bad scoped write")
			}
			repo, err := strconv.ParseInt(r, 10, 64)
			if err != nil {
				return change{}, err
			}
			tb, err := strconv.ParseInt(bits, 16, 64)
			if err != nil {
				return change{}, err
			}
			ch.scoped = append(ch.scoped, scopedWrite{repo: repo, tables: int(tb)})
		}
	}
	return ch, nil
}

// apply retires in c what ch changed.
func (ch change) apply(c *readCache) {
	if ch.all {
		c.invalidateAll()
		return
	}
	c.invalidate(ch.tables)
	c.countersChanged(ch.counters)
	for _, w := range ch.scoped {
		c.invalidateRepo(w.tables, w.repo)
	}
}

// txChange is what the transaction of state changed.
func txChange(state *txState) change {
	return change{tables: state.wrote, counters: state.counters, scoped: state.scoped}
}
