package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"repohost/store"
	"repohost/store/sqlstore/sqltest"
)

func TestChangeEncoding(t *testing.T) {
	for _, ch := range []change{
		{all: true},
		{tables: tUsers | tRepos},
		{counters: []int64{3, 1024}},
		{tables: tTokens, counters: []int64{7}, scoped: []scopedWrite{{repo: 9, tables: tIssues | tComments}, {repo: 2, tables: tLabels}}},
	} {
		got, err := decodeChange(ch.encode())
		if err != nil || !reflect.DeepEqual(got, ch) {
			t.Errorf("%q decodes to %+v (%v), want %+v", ch.encode(), got, err, ch)
		}
	}
	big := change{counters: make([]int64, 2000)}
	for i := range big.counters {
		big.counters[i] = int64(1_000_000 + i)
	}
	if got := big.encode(); got != "*" {
		t.Errorf("a change past the payload limit encodes to %d bytes, want everything", len(got))
	}
	for _, bad := range []string{"", "1 2", "zz - -", "1 x -", "1 - 3", "1 - 3:q"} {
		if _, err := decodeChange(bad); err == nil {
			t.Errorf("%q decoded", bad)
		}
	}
}

func TestChangeMerge(t *testing.T) {
	a := change{tables: tUsers, counters: []int64{1}, scoped: []scopedWrite{{repo: 9, tables: tIssues}}}
	b := change{tables: tTokens, counters: []int64{1, 2}, scoped: []scopedWrite{{repo: 9, tables: tComments}, {repo: 3, tables: tLabels}}}
	want := change{tables: tUsers | tTokens, counters: []int64{1, 2},
		scoped: []scopedWrite{{repo: 9, tables: tIssues | tComments}, {repo: 3, tables: tLabels}}}
	if got := (change{}).merge(a).merge(b); !reflect.DeepEqual(got, want) {
		t.Errorf("merged: %+v, want %+v", got, want)
	}
	if !reflect.DeepEqual(a, change{tables: tUsers, counters: []int64{1}, scoped: []scopedWrite{{repo: 9, tables: tIssues}}}) {
		t.Errorf("merging changed its operand: %+v", a)
	}
	if got := a.merge(change{all: true}); !got.all {
		t.Errorf("with everything: %+v", got)
	}
}

// openClusterPair opens two stores in cluster mode on one PostgreSQL
// schema, as two processes would, keeping cached rows for an hour: what
// one sees of the other's writes is not the TTL's doing.
func openClusterPair(t *testing.T) (a, b *DB, dsn string) {
	t.Helper()
	a, dsn = openClusterStore(t, "")
	b, _ = openClusterStore(t, dsn)
	return a, b, dsn
}

// openClusterStore opens a store in cluster mode on dsn (a new schema,
// migrated, when empty), keeping cached rows for an hour.
func openClusterStore(t *testing.T, dsn string) (*DB, string) {
	t.Helper()
	if sqltest.Database() != "postgres" {
		t.Skip("cluster mode runs on PostgreSQL")
	}
	fresh := dsn == ""
	if fresh {
		dsn = sqltest.DSN(t, "")
	}
	d, err := Open(dsn, Options{CacheTTL: time.Hour, Cluster: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	if fresh {
		if _, err := d.Migrate(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	return d, dsn
}

func request() context.Context { return store.BeginRequest(context.Background()) }

// TestClusterReadYourWrites: a write made through one store is seen by the
// next request to the other, at once, whether made by a statement alone or
// in a transaction, through its read cache and through a watch; while the
// other's listener is lost, nothing stale is served, and once it is back
// the cache serves again.
func TestClusterReadYourWrites(t *testing.T) {
	a, b, dsn := openClusterPair(t)
	ctx := context.Background()
	u := &store.User{Name: "ann", Email: "ann@example.com", IsActive: true, MaxRepoCreation: -1}
	if err := a.Users().Create(ctx, u); err != nil {
		t.Fatal(err)
	}
	seen := func(want string) {
		t.Helper()
		got, err := b.Users().FindByName(request(), "ann")
		if err != nil || got.FullName != want {
			t.Fatalf("the other store serves %q (%v), want %q", got.FullName, err, want)
		}
	}
	seen("")
	w, ok, err := b.Watch("users")
	if err != nil || !ok || w.Fresh == nil {
		t.Fatalf("watch: %v %v", ok, err)
	}
	for i := range 40 {
		g := w.Generation()
		name := fmt.Sprint("name ", i)
		if i%2 == 0 {
			u.FullName = name
			err = a.Users().Update(ctx, u)
		} else {
			err = a.WithTx(ctx, func(ctx context.Context) error {
				return a.conn(ctx).Exec("UPDATE users SET full_name = ? WHERE id = ?", name, u.ID).Error
			})
		}
		if err != nil {
			t.Fatal(err)
		}
		if !w.Fresh(request()) || w.Generation() == g {
			t.Fatalf("round %d: the watch did not move (fresh %v)", i, w.Fresh(request()))
		}
		seen(name)
	}
	// The cache does serve (a row changed behind its back, with no
	// notification, is still the old one): nothing above was the
	// bypass's doing.
	raw, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	if _, err := raw.Exec("UPDATE users SET full_name = 'behind its back' WHERE id = $1", u.ID); err != nil {
		t.Fatal(err)
	}
	seen("name 39")

	// The listener lost: not one stale answer, then the cache is back.
	pid := b.cluster.listenerPID.Load()
	if err := a.ExecRaw(ctx, "SELECT pg_terminate_backend(?)", pid); err != nil {
		t.Fatal(err)
	}
	u.FullName = "while the listener was lost"
	if err := a.Users().Update(ctx, u); err != nil {
		t.Fatal(err)
	}
	seen("while the listener was lost")
	deadline := time.Now().Add(15 * time.Second)
	for !b.cluster.fresh(request()) || b.cluster.listenerPID.Load() == pid {
		if time.Now().After(deadline) {
			t.Fatal("the listener did not come back")
		}
		time.Sleep(50 * time.Millisecond)
	}
	u.FullName = "after"
	if err := a.Users().Update(ctx, u); err != nil {
		t.Fatal(err)
	}
	seen("after")
}

func TestClusterNeedsPostgres(t *testing.T) {
	t.Parallel()
	if d, err := Open(filepath.Join(t.TempDir(), "x.db"), Options{CacheTTL: time.Second, Cluster: true}); err == nil {
		d.Close()
		t.Error("cluster mode opened on SQLite")
	}
}

// TestClusterSyncsOncePerRequest: one request reads the change clock at
// most once.
func TestClusterSyncsOncePerRequest(t *testing.T) {
	_, b, _ := openClusterPair(t)
	ctx := request()
	if !b.cluster.fresh(ctx) {
		t.Fatal("not fresh")
	}
	before := b.cluster.reads.Load()
	for range 10 {
		if !b.cluster.fresh(ctx) {
			t.Fatal("not fresh")
		}
	}
	if after := b.cluster.reads.Load(); after != before || before > 1 {
		t.Errorf("one request read the clock %d times", after)
	}
}

// isAlone tells whether d's process is alone on its database.
func isAlone(d *DB) bool {
	d.cluster.mu.Lock()
	defer d.cluster.mu.Unlock()
	return d.cluster.alone
}

// eventually waits up to ten seconds for cond.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	start := time.Now()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("waited in vain for %s", what)
		}
	}
	t.Logf("waited %v for %s", time.Since(start), what)
}

// TestClusterAlone: a process alone on its database serves its caches
// without reading the clock and publishes nothing; a second process that
// opens on the database is served only once the first is no longer
// alone, and each then sees the other's writes at once; alone again when
// the second has gone; a client that is not a repohost process (one of an
// earlier version) ends it, retiring what it kept, and so does losing the
// listener.
func TestClusterAlone(t *testing.T) {
	a, dsn := openClusterStore(t, "")
	ctx := context.Background()
	eventually(t, "the process to be alone", func() bool { return isAlone(a) })
	u := &store.User{Name: "ann", Email: "ann@example.com", IsActive: true, MaxRepoCreation: -1}
	if err := a.Users().Create(ctx, u); err != nil {
		t.Fatal(err)
	}
	clock := func() (n int64) {
		if err := a.conn(ctx).Raw("SELECT n FROM cluster_clock WHERE id = 1").Scan(&n).Error; err != nil {
			t.Fatal(err)
		}
		return n
	}
	seen := func(d *DB, want string) {
		t.Helper()
		got, err := d.Users().FindByName(request(), "ann")
		if err != nil || got.FullName != want {
			t.Fatalf("the store serves %q (%v), want %q", got.FullName, err, want)
		}
	}
	rename := func(d *DB, name string) {
		t.Helper()
		u.FullName = name
		if err := d.Users().Update(ctx, u); err != nil {
			t.Fatal(err)
		}
	}
	reads, moved := a.cluster.reads.Load(), clock()
	for i := range 20 {
		rename(a, fmt.Sprint("alone ", i))
		seen(a, fmt.Sprint("alone ", i))
	}
	if got := a.cluster.reads.Load() - reads; got != 0 {
		t.Errorf("alone, 20 requests read the clock %d times", got)
	}
	if got := clock() - moved; got != 0 {
		t.Errorf("alone, 20 writes moved the clock %d times", got)
	}

	// A second process: a is not alone by the time b serves.
	b, _ := openClusterStore(t, dsn)
	if isAlone(a) {
		t.Fatal("a is still alone once b opened")
	}
	seen(b, "alone 19")
	for i := range 10 {
		rename(a, fmt.Sprint("by a ", i))
		seen(b, fmt.Sprint("by a ", i))
		rename(b, fmt.Sprint("by b ", i))
		seen(a, fmt.Sprint("by b ", i))
	}
	if isAlone(a) || isAlone(b) {
		t.Fatal("one of two processes is alone")
	}
	b.Close()
	eventually(t, "a to be alone again", func() bool { return isAlone(a) })

	// A client that does not name itself as a repohost process.
	legacyDSN, err := namedDSN(dsn, "legacy")
	if err != nil {
		t.Fatal(err)
	}
	legacy, err := sql.Open("pgx", legacyDSN)
	if err != nil {
		t.Fatal(err)
	}
	defer legacy.Close()
	seen(a, "by b 9")
	if _, err := legacy.Exec("UPDATE users SET full_name = 'by legacy' WHERE id = $1", u.ID); err != nil {
		t.Fatal(err)
	}
	eventually(t, "a to see the other client", func() bool { return !isAlone(a) })
	seen(a, "by legacy")
	legacy.Close()
	eventually(t, "a to be alone once the other client left", func() bool { return isAlone(a) })

	// The listener lost: alone no more at once; alone again once back.
	pid := a.cluster.listenerPID.Load()
	raw, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := raw.Exec("SELECT pg_terminate_backend($1)", pid); err != nil {
		t.Fatal(err)
	}
	raw.Close()
	eventually(t, "a to notice", func() bool { return !isAlone(a) })
	eventually(t, "a to be alone with a new listener", func() bool { return isAlone(a) && a.cluster.listenerPID.Load() != pid })
	rename(a, "after")
	seen(a, "after")
}

// TestClusterWriteWaitsForTheAlone: a write published while another
// process holds the clock's row as alone is acknowledged only once that
// process is no longer alone.
func TestClusterWriteWaitsForTheAlone(t *testing.T) {
	a, dsn := openClusterStore(t, "")
	eventually(t, "the process to be alone", func() bool { return isAlone(a) })
	pool, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	// A process that cannot listen (no cluster of its own started).
	other := newCluster(dsn, "", "other", a.cache, pool, nil)
	other.channel = a.cluster.channel
	other.send(change{tables: tUsers})
	if isAlone(a) {
		t.Fatal("a write was acknowledged while another process was alone")
	}
}

// holdClock takes the change clock's table until release, so that the
// clock reads and moves of every store wait.
func holdClock(t *testing.T, dsn string) (release func()) {
	t.Helper()
	raw, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatal(err)
	}
	tx, err := raw.Begin()
	if err == nil {
		_, err = tx.Exec("LOCK TABLE cluster_clock IN ACCESS EXCLUSIVE MODE")
	}
	if err != nil {
		raw.Close()
		t.Fatal(err)
	}
	return func() {
		_ = tx.Rollback()
		raw.Close()
	}
}

// waitFor polls cond, under the cluster's lock, for up to ten seconds.
func waitFor(t *testing.T, cl *cluster, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		cl.mu.Lock()
		ok := cond()
		cl.mu.Unlock()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("waited in vain for %s", what)
		}
	}
}

// TestClusterGroupsClockWork: requests that begin while a clock read is
// under way share the next one, and writes committed while a publication
// is under way go out together in the next, which the other store hears
// whole.
func TestClusterGroupsClockWork(t *testing.T) {
	a, b, dsn := openClusterPair(t)
	ctx := context.Background()
	const n = 12
	users := make([]*store.User, n)
	for i := range users {
		users[i] = &store.User{Name: fmt.Sprint("u", i), Email: fmt.Sprint("u", i, "@example.com"), IsActive: true, MaxRepoCreation: -1}
		if err := a.Users().Create(ctx, users[i]); err != nil {
			t.Fatal(err)
		}
		if _, err := b.Users().FindByName(request(), users[i].Name); err != nil { // kept by b
			t.Fatal(err)
		}
	}

	// Reads: one under way, held; n requests begun after it join the next.
	release := holdClock(t, dsn)
	before := b.cluster.reads.Load()
	results := make(chan bool, n+1)
	go func() { results <- b.cluster.fresh(request()) }()
	waitFor(t, b.cluster, "the first read", func() bool { return b.cluster.reading && b.cluster.latest != nil })
	for range n {
		go func() { results <- b.cluster.fresh(request()) }()
	}
	waitFor(t, b.cluster, "the requests to join", func() bool { return b.cluster.next != nil && b.cluster.next.waiters == n })
	release()
	for range n + 1 {
		if !<-results {
			t.Fatal("a request was not served fresh")
		}
	}
	if got := b.cluster.reads.Load() - before; got != 2 {
		t.Errorf("%d requests read the clock %d times, want 2", n+1, got)
	}

	// Writes: the first publication held; the n writes after it go out
	// in one.
	clock := func() (c int64) {
		if err := a.conn(ctx).Raw("SELECT n FROM cluster_clock WHERE id = 1").Scan(&c).Error; err != nil {
			t.Fatal(err)
		}
		return c
	}
	start := clock()
	release = holdClock(t, dsn)
	errs := make(chan error, n)
	for i, u := range users {
		if i == 1 {
			waitFor(t, a.cluster, "the first publication", func() bool { return a.cluster.publishing && a.cluster.pending == nil })
		}
		go func() {
			u.FullName = "renamed"
			errs <- a.Users().Update(ctx, u)
		}()
	}
	waitFor(t, a.cluster, "the writes to gather", func() bool { return a.cluster.pending != nil && a.cluster.pending.writes == n-1 })
	release()
	for range n {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	if got := clock() - start; got != 2 {
		t.Errorf("%d writes moved the clock %d times, want 2", n, got)
	}
	for _, u := range users {
		if got, err := b.Users().FindByName(request(), u.Name); err != nil || got.FullName != "renamed" {
			t.Errorf("the other store serves %s as %q (%v)", u.Name, got.FullName, err)
		}
	}
}

// TestLockerExcludes: an exclusive lock keeps everyone else out, shared
// ones run together and keep an exclusive one out, and a release lets the
// next one in; on PostgreSQL between two stores (two processes), on SQLite
// within the one.
func TestLockerExcludes(t *testing.T) {
	t.Parallel()
	dsn := sqltest.DSN(t, "")
	a, err := Open(dsn, Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	b := a
	if sqltest.Database() == "postgres" {
		if b, err = Open(dsn, Options{}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { b.Close() })
		if !b.locks.AcrossHosts() {
			t.Error("PostgreSQL locks hold only within the process")
		}
	}
	key := "test:" + t.Name() + sqltest.DSN(t, t.TempDir())
	refused := func(l store.Locker, k string, shared bool) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
		defer cancel()
		if unlock, err := l.Lock(ctx, k, shared); err == nil {
			unlock()
			t.Fatalf("%s (shared %v) taken while held", k, shared)
		} else if !errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, context.Canceled) {
			t.Logf("refused with %v", err)
		}
	}
	ctx := context.Background()
	unlock, err := a.Locks().Lock(ctx, key, false)
	if err != nil {
		t.Fatal(err)
	}
	refused(b.Locks(), key, false)
	refused(b.Locks(), key, true)
	got := make(chan func())
	go func() {
		u, err := b.Locks().Lock(ctx, key, false)
		if err != nil {
			t.Error(err)
		}
		got <- u
	}()
	time.Sleep(100 * time.Millisecond)
	unlock()
	select {
	case u := <-got:
		u()
	case <-time.After(5 * time.Second):
		t.Fatal("a released lock was not handed on")
	}

	s1, err := a.Locks().Lock(ctx, key, true)
	if err != nil {
		t.Fatal(err)
	}
	s2, err := b.Locks().Lock(ctx, key, true)
	if err != nil {
		t.Fatal(err)
	}
	refused(a.Locks(), key, false)
	refused(b.Locks(), key, false)
	s1()
	refused(a.Locks(), key, false)
	s2()
	ex, err := a.Locks().Lock(ctx, key, false)
	if err != nil {
		t.Fatal(err)
	}
	ex()
	if n := len(a.locks.local.locks); n != 0 {
		t.Errorf("%d keys kept after every holder left", n)
	}
}
