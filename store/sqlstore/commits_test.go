package sqlstore_test

import (
	"context"
	"errors"
	"io"
	"net"
	"net/url"
	"sync"
	"testing"
	"time"

	"repohost/store"
	"repohost/store/sqlstore"
	"repohost/store/sqlstore/sqltest"
)

func TestCommitMarker(t *testing.T) {
	db, _ := open(t)
	bg := context.Background()
	boom := errors.New("boom")

	// Without a marker nothing is recorded, and nothing breaks.
	store.MarkCommitted(bg)
	if store.Committed(bg) {
		t.Fatal("a context without a marker reports a commit")
	}
	ctx := store.TrackCommits(bg)
	if store.TrackCommits(ctx) != ctx {
		t.Error("TrackCommits on a tracked context replaced its marker")
	}

	// Reads, a rolled-back transaction and a write that matched no row
	// commit nothing.
	if _, err := db.Users().FindByName(ctx, "nobody"); !errors.Is(err, store.ErrNotFound) {
		t.Fatal(err)
	}
	if _, _, err := db.Users().Search(ctx, store.UserSearch{}, store.Page{Limit: 10}); err != nil {
		t.Fatal(err)
	}
	if err := db.WithTx(ctx, func(ctx context.Context) error {
		if err := db.Users().Create(ctx, newUser("rolled-back")); err != nil {
			return err
		}
		return boom
	}); !errors.Is(err, boom) {
		t.Fatal(err)
	}
	if err := db.Tokens().MarkUsed(ctx, 424242); err != nil {
		t.Fatal(err)
	}
	if store.Committed(ctx) {
		t.Fatal("marked committed by reads, a rollback or a write that changed nothing")
	}

	// A transaction marks its request once the outermost level commits.
	err := db.WithTx(ctx, func(txCtx context.Context) error {
		if err := db.Users().Create(txCtx, newUser("committed")); err != nil {
			return err
		}
		if err := db.WithTx(txCtx, func(ctx context.Context) error {
			return db.Users().Create(ctx, newUser("nested"))
		}); err != nil {
			return err
		}
		if store.Committed(txCtx) {
			t.Error("marked committed before the outermost transaction committed")
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if !store.Committed(ctx) {
		t.Fatal("a committed transaction did not mark its request")
	}

	// A statement outside a transaction commits on its own: a write that
	// changed a row marks, and so does an INSERT … RETURNING read back
	// through Raw.
	ctx = store.TrackCommits(bg)
	if err := db.Users().Create(ctx, newUser("autocommit")); err != nil {
		t.Fatal(err)
	}
	if !store.Committed(ctx) {
		t.Fatal("an autocommitted INSERT did not mark its request")
	}
	owner := mustCreateUser(t, db, newUser("owner"))
	repo := &store.Repository{OwnerID: owner.ID, Name: "r", DefaultBranch: "main"}
	if err := db.Repos().Create(bg, repo); err != nil {
		t.Fatal(err)
	}
	ctx = store.TrackCommits(bg)
	if _, err := db.Issues().NextIndex(ctx, repo.ID); err != nil {
		t.Fatal(err)
	}
	if !store.Committed(ctx) {
		t.Fatal("an autocommitted INSERT … RETURNING did not mark its request")
	}
}

// outageProxy stands between the store and PostgreSQL. Down cuts every
// connection and turns new ones away at once, as a server being restarted
// does; Up lets them through again.
type outageProxy struct {
	ln     net.Listener
	target string
	mu     sync.Mutex
	down   bool
	conns  map[net.Conn]struct{}
}

func newOutageProxy(t *testing.T, target string) *outageProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &outageProxy{ln: ln, target: target, conns: map[net.Conn]struct{}{}}
	go p.serve()
	t.Cleanup(func() {
		ln.Close()
		p.Down()
	})
	return p
}

func (p *outageProxy) serve() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		go p.pipe(c)
	}
}

func (p *outageProxy) pipe(c net.Conn) {
	p.mu.Lock()
	down := p.down
	p.mu.Unlock()
	if down {
		c.Close()
		return
	}
	s, err := net.Dial("tcp", p.target)
	if err != nil {
		c.Close()
		return
	}
	p.mu.Lock()
	if p.down {
		p.mu.Unlock()
		c.Close()
		s.Close()
		return
	}
	p.conns[c], p.conns[s] = struct{}{}, struct{}{}
	p.mu.Unlock()
	done := make(chan struct{}, 2)
	go func() { _, _ = io.Copy(s, c); done <- struct{}{} }()
	go func() { _, _ = io.Copy(c, s); done <- struct{}{} }()
	<-done
	c.Close()
	s.Close()
	p.mu.Lock()
	delete(p.conns, c)
	delete(p.conns, s)
	p.mu.Unlock()
}

func (p *outageProxy) Down() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.down = true
	for c := range p.conns {
		c.Close()
	}
}

func (p *outageProxy) Up() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.down = false
}

// openThroughProxy opens a migrated store on PostgreSQL whose connections go
// through an outageProxy.
func openThroughProxy(t *testing.T, retry time.Duration) (*sqlstore.DB, *outageProxy) {
	t.Helper()
	if sqltest.Database() != "postgres" {
		t.Skip("the retrying read path exists on PostgreSQL only; run under scripts/with-postgres.sh")
	}
	u, err := url.Parse(sqltest.DSN(t, ""))
	if err != nil {
		t.Fatal(err)
	}
	p := newOutageProxy(t, u.Host)
	u.Host = p.ln.Addr().String()
	db, err := sqlstore.Open(u.String(), sqlstore.Options{CommittedRetry: retry})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if _, err := db.Migrate(context.Background()); err != nil {
		t.Fatal(err)
	}
	return db, p
}

// during runs fn while the database is unreachable for outage, and returns
// fn's error and how long it took. The database is back when it returns.
func during(p *outageProxy, outage time.Duration, fn func() error) (error, time.Duration) {
	start := time.Now()
	p.Down()
	up := make(chan struct{})
	go func() {
		time.Sleep(outage)
		p.Up()
		close(up)
	}()
	err := fn()
	took := time.Since(start)
	<-up
	return err, took
}

func TestCommittedRequestReadsThroughAnOutage(t *testing.T) {
	db, p := openThroughProxy(t, 10*time.Second)
	bg := context.Background()
	mustCreateUser(t, db, newUser("alice"))
	const outage = 700 * time.Millisecond

	// Before any commit a request fails at once, so its client sees the
	// outage (503) and knows nothing was changed. (Had it waited for the
	// database, it would have succeeded.)
	err, took := during(p, outage, func() error {
		_, err := db.Users().FindByName(store.TrackCommits(bg), "alice")
		return err
	})
	if !errors.Is(err, store.ErrUnavailable) {
		t.Fatalf("uncommitted read during the outage: err %v after %s; want ErrUnavailable at once", err, took)
	}

	// After a commit, the reads that build the answer wait for the
	// database to come back.
	committed := store.TrackCommits(bg)
	store.MarkCommitted(committed)
	err, took = during(p, outage, func() error {
		u, err := db.Users().FindByName(committed, "alice")
		if err == nil && u.Name != "alice" {
			t.Errorf("read %q", u.Name)
		}
		return err
	})
	if err != nil || took < outage {
		t.Fatalf("committed read during the outage: err %v after %s; want success after the outage", err, took)
	}

	// So does a further transaction of that request: its BEGIN waits.
	err, took = during(p, outage, func() error {
		return db.WithTx(committed, func(ctx context.Context) error {
			return db.Users().Create(ctx, newUser("bob"))
		})
	})
	if err != nil || took < outage {
		t.Fatalf("transaction of a committed request during the outage: err %v after %s; want success after the outage", err, took)
	}
	// And an autocommitted write, which could not have been sent.
	err, took = during(p, outage, func() error {
		return db.Users().Create(committed, newUser("carol"))
	})
	if err != nil || took < outage {
		t.Fatalf("write of a committed request during the outage: err %v after %s; want success after the outage", err, took)
	}
	for _, name := range []string{"bob", "carol"} {
		if _, err := db.Users().FindByName(bg, name); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func TestCommittedRequestRetriesForABoundedTime(t *testing.T) {
	db, p := openThroughProxy(t, 300*time.Millisecond)
	mustCreateUser(t, db, newUser("alice"))
	committed := store.TrackCommits(context.Background())
	store.MarkCommitted(committed)
	err, took := during(p, 3*time.Second, func() error {
		_, err := db.Users().FindByName(committed, "alice")
		return err
	})
	// ErrUnavailable: it gave up before the database came back.
	if !errors.Is(err, store.ErrUnavailable) || took < 300*time.Millisecond {
		t.Fatalf("err %v after %s; want ErrUnavailable after the 300ms budget", err, took)
	}
}
