// Package apitest starts a real repohost server for tests, on the embedded
// database or on PostgreSQL (REPOHOST_TEST_PG set by scripts/with-postgres.sh),
// and checks every response a test receives against swagger.yml.
package apitest

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-openapi/runtime"
	httptransport "github.com/go-openapi/runtime/client"
	"github.com/go-openapi/runtime/middleware"
	"github.com/go-openapi/strfmt"
	"golang.org/x/crypto/bcrypt"
	"gorm.io/gorm/logger"

	"repohost/gen/client"
	"repohost/impl"
	"repohost/impl/app"
	"repohost/impl/auth"
	"repohost/impl/metrics"
	"repohost/impl/user"
	"repohost/impl/webhook"
	"repohost/store"
	"repohost/store/secretbox"
	"repohost/store/sqlstore"
	"repohost/store/sqlstore/sqltest"
)

// PostgresEnv names the variable holding the base DSN of the throwaway
// PostgreSQL cluster; when it is empty tests use SQLite. Each test gets its
// own schema there (see store/sqlstore/sqltest).
const PostgresEnv = sqltest.PostgresEnv

var (
	contractOnce sync.Once
	contract     *Contract
	contractErr  error
)

// SharedContract is the parsed spec, loaded once per test binary.
func SharedContract() (*Contract, error) {
	contractOnce.Do(func() { contract, contractErr = LoadContract() })
	return contract, contractErr
}

// Env is one running server with a fresh database and data directory.
type Env struct {
	T      testing.TB
	URL    string // base URL with a trailing slash
	Deps   *app.Deps
	DB     *sqlstore.DB
	Server *httptest.Server
	Admin  *Account
	// Hooks is the server's webhook runner (delivery queue workers).
	Hooks    *webhook.Runner
	stmts    atomic.Int64
	checker  *Contract
	guard    *refGuard
	dsn      string
	dataDir  string
	cacheTTL time.Duration
}

// Account is a user a test can sign in as.
type Account struct {
	User     *store.User
	Password string
}

// Database reports which database tests run on.
func Database() string { return sqltest.Database() }

// New starts a server for t.
func New(t testing.TB) *Env {
	t.Helper()
	return NewWithConfig(t, nil)
}

// NewWithConfig starts a server for t whose configuration configure may
// change first (to lower a limit so a test reaches it cheaply).
func NewWithConfig(t testing.TB, configure func(*app.Config)) *Env {
	t.Helper()
	if configure == nil {
		return NewWithDeps(t, nil)
	}
	return NewWithDeps(t, func(d *app.Deps) { configure(&d.Config) })
}

// NewWithDeps starts a server for t whose dependencies configure may change
// first: its configuration, or the git store wrapped to stage a race.
func NewWithDeps(t testing.TB, configure func(*app.Deps)) *Env {
	t.Helper()
	return newEnv(t, configure, testCacheTTL())
}

// NewCached starts a server whose store serves its hottest lookups from
// memory as `repohost serve` does (sqlstore.DefaultCacheTTL). Other test
// servers read every row, so that the tests counting statements see the
// same statements whatever ran before; REPOHOST_TEST_CACHE=1 gives every
// test server the cache.
func NewCached(t testing.TB) *Env {
	t.Helper()
	return newEnv(t, nil, sqlstore.DefaultCacheTTL)
}

func testCacheTTL() time.Duration {
	if os.Getenv("REPOHOST_TEST_CACHE") != "" {
		return sqlstore.DefaultCacheTTL
	}
	return 0
}

func newEnv(t testing.TB, configure func(*app.Deps), cacheTTL time.Duration) *Env {
	t.Helper()
	c, err := SharedContract()
	if err != nil {
		t.Fatalf("load swagger.yml: %v", err)
	}
	e := &Env{T: t, checker: c, cacheTTL: cacheTTL}
	dataDir := t.TempDir()
	e.start(t, sqltest.DSN(t, dataDir), dataDir, configure)
	e.Admin = e.CreateUser("admin", true)
	return e
}

// Twin starts a second server on e's database and data directory, as a
// second process sharing them would run: its own connection pool, caches
// and handler, nothing shared in memory with e.
func (e *Env) Twin(t testing.TB) *Env {
	t.Helper()
	twin := &Env{T: t, checker: e.checker, Admin: e.Admin, cacheTTL: e.cacheTTL}
	// The same settings, as a second process started alike would have.
	config, stores := e.Deps.Config, e.Deps.Objects
	twin.start(t, e.dsn, e.dataDir, func(d *app.Deps) { d.Config, d.Objects = config, stores })
	return twin
}

// start opens dsn, migrates it and serves it.
func (e *Env) start(t testing.TB, dsn, dataDir string, configure func(*app.Deps)) {
	t.Helper()
	e.dsn, e.dataDir = dsn, dataDir
	// The instance key, as `repohost serve` keeps it without --secret-key.
	key, err := secretbox.LoadKey(dataDir)
	if err != nil {
		t.Fatalf("secret key: %v", err)
	}
	secrets, err := secretbox.New(key)
	if err != nil {
		t.Fatal(err)
	}
	db, err := sqlstore.Open(dsn, sqlstore.Options{Logger: &countingLogger{n: &e.stmts}, CacheTTL: e.cacheTTL, Secrets: secrets})
	if err != nil {
		t.Fatalf("open database: %v", err)
	}
	t.Cleanup(func() { db.Close() })
	if _, err := db.Migrate(context.Background()); err != nil {
		t.Fatalf("migrate: %v", err)
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	if os.Getenv("REPOHOST_TEST_LOG") != "" {
		log = slog.New(slog.NewTextHandler(os.Stderr, nil))
	}
	e.DB = db
	e.Deps, err = app.New(db, dataDir, auth.Hasher{Cost: bcrypt.MinCost}, log)
	if err != nil {
		t.Fatal(err)
	}
	// Every test server fails its test when code outside impl/refs moves
	// a ref.
	e.guard = &refGuard{Repos: e.Deps.Git, t: t}
	e.Deps.Git = e.guard
	e.Deps.Metrics = metrics.New()
	if configure != nil {
		configure(e.Deps)
	}
	// The maintenance tasks run on demand; they run on their schedules
	// only in servers started with StartCron (a schedule's statements
	// would otherwise land in other tests' statement counts).
	if err := impl.NewCron(e.Deps); err != nil {
		t.Fatalf("cron: %v", err)
	}
	t.Cleanup(func() { e.Deps.Cron.Wait() })
	// The root URL is the listener's address, known before the handler is
	// built, as `repohost serve` derives it from --listen.
	e.Server = httptest.NewUnstartedServer(nil)
	e.Deps.Config.RootURL = "http://" + e.Server.Listener.Addr().String() + "/"
	h, err := impl.NewHandler(e.Deps, impl.WithOperationMiddleware(announceOperation))
	if err != nil {
		t.Fatalf("build handler: %v", err)
	}
	opts := e.Deps.Events.Options()
	opts.Poll = 50 * time.Millisecond
	e.Deps.Events.SetOptions(opts)
	background := impl.RegisterConsumers(e.Deps)
	if err := background.Start(); err != nil {
		t.Fatalf("start consumers and webhooks: %v", err)
	}
	t.Cleanup(background.Stop)
	e.Hooks = background.Hooks
	e.Server.Config = impl.HTTPServer(settled(e.Deps, h), e.Deps.Config)
	e.Server.Start()
	t.Cleanup(e.Server.Close)
	e.URL = e.Server.URL + "/"
}

// settleBound is the longest a test server's request waits for the
// consumers (see settled).
const settleBound = 15 * time.Second

// settled makes every request wait until the consumers of the events
// committed so far are done (events.Bus.Settle): tests read the state the
// server converges to after a change (pull requests refreshed, workflow
// runs created) without polling for it. The server itself never waits.
//
// A migration's own requests (git's and the SDK's, named by their user
// agent) do not wait: one to this very server comes from a consumer,
// which would wait for itself.
//
// The wait is bounded by settleBound, below the job lease (30 s) and the
// outage test's latency bound: a job a database restart left claimed
// (its claim's answer lost) is only taken again when its lease ends, and
// the requests of that test must not carry that wait as their own.
func settled(d *app.Deps, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.UserAgent() == "repohost-migration" {
			next.ServeHTTP(w, r)
			return
		}
		ctx, cancel := context.WithTimeout(r.Context(), settleBound)
		_ = d.Events.Settle(ctx)
		cancel()
		next.ServeHTTP(w, r)
	})
}

// OperationHeader is the response header in which, in tests only, the
// server names the operation (operationId) the generated router dispatched
// the request to. A response without it never reached an operation: the
// router answered 404 or 405 itself, or a middleware in front refused the
// request.
const OperationHeader = "X-Test-Operation"

// announceOperation runs inside the generated router, once it has matched
// the request to an operation with a handler, and sets OperationHeader.
func announceOperation(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if route := middleware.MatchedRouteFrom(r); route != nil && route.Handler != nil && route.Operation != nil {
			w.Header().Set(OperationHeader, route.Operation.ID)
		}
		next.ServeHTTP(w, r)
	})
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// CreateUser makes an individual account directly through the service
// layer (the password is the name followed by "-pw").
func (e *Env) CreateUser(name string, admin bool) *Account {
	e.T.Helper()
	pw := name + "-pw"
	u, err := impl.NewServices(e.Deps).Users.Create(context.Background(), nil, user.CreateInput{
		Name: name, Password: pw, Email: name + "@example.com", IsAdmin: admin,
	})
	if err != nil {
		e.T.Fatalf("create user %s: %v", name, err)
	}
	return &Account{User: u, Password: pw}
}

// Token issues an access token for a with the given scopes.
func (e *Env) Token(a *Account, scopes ...string) string {
	e.T.Helper()
	secret, hash, err := auth.NewToken()
	if err != nil {
		e.T.Fatal(err)
	}
	if len(scopes) == 0 {
		scopes = []string{"all"}
	}
	t := &store.AccessToken{UserID: a.User.ID, Name: "t-" + randomHex(4), TokenHash: hash,
		TokenLastEight: secret[len(secret)-8:], Scopes: strings.Join(scopes, ",")}
	if err := e.DB.Tokens().Create(context.Background(), t); err != nil {
		e.T.Fatal(err)
	}
	return secret
}

// Cred is how a request authenticates; nil means anonymous.
type Cred func(*http.Request)

// Basic signs in with a's password.
func Basic(a *Account) Cred {
	return func(r *http.Request) { r.SetBasicAuth(a.User.Name, a.Password) }
}

// TokenCred sends a token as "Authorization: token X".
func TokenCred(secret string) Cred {
	return func(r *http.Request) { r.Header.Set("Authorization", "token "+secret) }
}

// HTTPClient validates every response against the spec.
func (e *Env) HTTPClient() *http.Client { return e.httpClientFor(e.T) }

// httpClientFor reports contract violations to t.
func (e *Env) httpClientFor(t testing.TB) *http.Client {
	return &http.Client{Transport: checkingTransport{contract: e.checker, next: http.DefaultTransport,
		fail: func(err error) { t.Errorf("contract violation: %v", err) }}}
}

// Client is the generated client acting with cred (nil: anonymous).
func (e *Env) Client(cred Cred) (*client.RepohostAPI, runtime.ClientAuthInfoWriter) {
	host := strings.TrimPrefix(e.Server.URL, "http://")
	tr := httptransport.NewWithClient(host, "/api/v1", []string{"http"}, e.HTTPClient())
	var authw runtime.ClientAuthInfoWriter = runtime.ClientAuthInfoWriterFunc(func(runtime.ClientRequest, strfmt.Registry) error { return nil })
	if cred != nil {
		authw = runtime.ClientAuthInfoWriterFunc(func(r runtime.ClientRequest, _ strfmt.Registry) error {
			req, _ := http.NewRequest(http.MethodGet, "/", nil)
			cred(req)
			for k, vs := range req.Header {
				for _, v := range vs {
					if err := r.SetHeaderParam(k, v); err != nil {
						return err
					}
				}
			}
			return nil
		})
	}
	return client.New(tr, strfmt.Default), authw
}

// Response is a raw answer, already checked against the spec.
type Response struct {
	Status int
	Header http.Header
	Body   []byte
}

// JSON decodes the body into v, failing the test on error.
func (r *Response) JSON(t testing.TB, v any) {
	t.Helper()
	if err := json.Unmarshal(r.Body, v); err != nil {
		t.Fatalf("decode %s: %v", r.Body, err)
	}
}

// Do sends a raw request to path (relative to /api/v1, or absolute when it
// starts with "/"). body is marshalled unless it is already []byte or a string.
func (e *Env) Do(method, path string, body any, cred Cred) *Response {
	e.T.Helper()
	return e.DoFor(e.T, method, path, body, cred)
}

// DoFor is Do reporting to t instead of e.T. A fuzz target needs it: the
// server is started with the *testing.F, which must not be used inside
// f.Fuzz, while each input runs under its own *testing.T.
func (e *Env) DoFor(t testing.TB, method, path string, body any, cred Cred) *Response {
	t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case []byte:
		rd = bytes.NewReader(b)
	case string:
		rd = strings.NewReader(b)
	default:
		raw, err := json.Marshal(b)
		if err != nil {
			t.Fatal(err)
		}
		rd = bytes.NewReader(raw)
	}
	if !strings.HasPrefix(path, "/") {
		path = "/api/v1/" + path
	}
	req, err := http.NewRequest(method, e.Server.URL+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if cred != nil {
		cred(req)
	}
	resp, err := e.httpClientFor(t).Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return &Response{Status: resp.StatusCode, Header: resp.Header, Body: raw}
}

// Expect fails the test unless the response has the wanted status.
func (r *Response) Expect(t testing.TB, status int) *Response {
	t.Helper()
	if r.Status != status {
		t.Fatalf("status %d, want %d; body: %s", r.Status, status, r.Body)
	}
	return r
}

// Statements is the number of SQL statements run so far.
func (e *Env) Statements() int64 { return e.stmts.Load() }

// countingLogger counts every statement GORM runs for requests (and
// tests), leaving out background work (store.Background).
type countingLogger struct{ n *atomic.Int64 }

func (l *countingLogger) LogMode(logger.LogLevel) logger.Interface      { return l }
func (l *countingLogger) Info(context.Context, string, ...interface{})  {}
func (l *countingLogger) Warn(context.Context, string, ...interface{})  {}
func (l *countingLogger) Error(context.Context, string, ...interface{}) {}
func (l *countingLogger) Trace(ctx context.Context, _ time.Time, _ func() (string, int64), _ error) {
	if store.IsBackground(ctx) {
		return // the webhook queue's own work, not a request's
	}
	l.n.Add(1)
}
