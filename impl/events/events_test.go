package events_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"repohost/impl/events"
	"repohost/store"
	"repohost/store/sqlstore"
	"repohost/store/sqlstore/sqltest"
)

// openStore opens a fresh migrated database (SQLite, or a schema of the
// throwaway PostgreSQL under scripts/with-postgres.sh).
func openStore(t *testing.T, dsn string) *sqlstore.DB {
	t.Helper()
	db, err := sqlstore.Open(dsn, sqlstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if _, err := db.Migrate(context.Background()); err != nil {
		t.Fatal(err)
	}
	return db
}

// quick are options for tests: a short poll and lease, retries at once.
func quick() events.Options {
	return events.Options{Lease: 2 * time.Second, Poll: 20 * time.Millisecond, Attempts: 4,
		Backoff: func(int) time.Duration { return 0 }}
}

func newBus(t *testing.T, db store.Store, opts events.Options) *events.Bus {
	return events.NewBus(db, store.SystemClock{}, slog.New(slog.NewTextHandler(io.Discard, nil)), opts)
}

// recorder is a consumer that keeps what it was handed.
type recorder struct {
	mu  sync.Mutex
	got []events.Event
}

func (r *recorder) handle(_ context.Context, e events.Event) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.got = append(r.got, e)
	return nil
}

func (r *recorder) events() []events.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.got)
}

func settle(t *testing.T, b *events.Bus) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := b.Settle(ctx); err != nil {
		t.Fatalf("settle: %v", err)
	}
}

func TestEmitInsideATransactionIsHandledAfterCommit(t *testing.T) {
	db := openStore(t, sqltest.DSN(t, ""))
	bus := newBus(t, db, quick())
	rec := &recorder{}
	bus.Register(events.Consumer{Name: "rec", Kinds: []events.Kind{events.IssueOpened}, Handle: rec.handle})
	ctx := context.Background()
	err := db.WithTx(ctx, func(ctx context.Context) error {
		return bus.Emit(ctx, events.IssueOpened, 7, 1, events.Issue{ID: 1, Index: 1})
	})
	if err != nil {
		t.Fatal(err)
	}
	// Not started yet: the job waits in the database.
	if st, err := bus.Stats(ctx); err != nil || st[0].Pending != 1 || st[0].OldestPending.IsZero() {
		t.Fatalf("stats before start: %+v, %v", st, err)
	}
	if err := bus.Start(); err != nil {
		t.Fatal(err)
	}
	defer bus.Stop()
	settle(t, bus)
	got := rec.events()
	if len(got) != 1 || got[0].Kind != events.IssueOpened || got[0].RepoID != 7 || got[0].ID == 0 {
		t.Fatalf("handled: %+v", got)
	}
	if p, ok := got[0].Payload.(events.Issue); !ok || p.Index != 1 {
		t.Fatalf("payload %#v, want events.Issue", got[0].Payload)
	}
	if st, err := bus.Stats(ctx); err != nil || st[0].Pending != 0 || st[0].Dead != 0 {
		t.Fatalf("stats after: %+v, %v", st, err)
	}
}

func TestRolledBackTransactionEmitsNothing(t *testing.T) {
	db := openStore(t, sqltest.DSN(t, ""))
	bus := newBus(t, db, quick())
	rec := &recorder{}
	bus.Register(events.Consumer{Name: "rec", Kinds: events.AllKinds(), Handle: rec.handle})
	ctx := context.Background()
	boom := errors.New("boom")
	err := db.WithTx(ctx, func(ctx context.Context) error {
		if err := bus.Emit(ctx, events.RepoCreated, 1, 1, events.Repo{ID: 1}); err != nil {
			return err
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("err = %v", err)
	}
	stored, err := db.Events().ListAfter(ctx, 0, 10)
	if err != nil || len(stored) != 0 {
		t.Fatalf("outbox kept a rolled-back event: %+v, %v", stored, err)
	}
	if busy, err := db.EventJobs().Busy(ctx, time.Now().UnixMilli()); err != nil || busy {
		t.Fatalf("a rolled-back event left a job: %v %v", busy, err)
	}
}

func TestOnlyConsumersOfTheKindGetAJob(t *testing.T) {
	db := openStore(t, sqltest.DSN(t, ""))
	bus := newBus(t, db, quick())
	refs, all := &recorder{}, &recorder{}
	bus.Register(events.Consumer{Name: "refs", Kinds: []events.Kind{events.RefsChanged}, Handle: refs.handle})
	bus.Register(events.Consumer{Name: "all", Kinds: events.AllKinds(), Handle: all.handle})
	if err := bus.Start(); err != nil {
		t.Fatal(err)
	}
	defer bus.Stop()
	ctx := context.Background()
	for _, k := range []events.Kind{events.UserCreated, events.RefsChanged, events.IssueOpened} {
		if err := bus.Emit(ctx, k, 3, 2, struct{}{}); err != nil {
			t.Fatal(err)
		}
	}
	settle(t, bus)
	if n := len(refs.events()); n != 1 {
		t.Errorf("the refs consumer handled %d events, want 1", n)
	}
	if n := len(all.events()); n != 3 {
		t.Errorf("the consumer of every kind handled %d events, want 3", n)
	}
}

func TestEveryKindDecodes(t *testing.T) {
	for _, k := range events.AllKinds() {
		if _, err := events.Decode(&store.Event{ID: 1, Kind: string(k), Payload: []byte(`{}`)}); err != nil {
			t.Errorf("%s: %v", k, err)
		}
	}
	if _, err := events.Decode(&store.Event{ID: 1, Kind: "no.such", Payload: []byte(`{}`)}); err == nil {
		t.Error("an unknown kind decoded")
	}
}

// flaky fails its first fails attempts of each event, then succeeds.
type flaky struct {
	mu       sync.Mutex
	fails    int
	attempts map[int64]int
	done     map[int64]bool
}

func (f *flaky) handle(_ context.Context, e events.Event) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.attempts[e.ID]++
	if f.attempts[e.ID] <= f.fails {
		return fmt.Errorf("attempt %d fails", f.attempts[e.ID])
	}
	f.done[e.ID] = true
	return nil
}

func TestAFailingConsumerIsRetriedThenDead(t *testing.T) {
	db := openStore(t, sqltest.DSN(t, ""))
	opts := quick()
	bus := newBus(t, db, opts)
	recovers := &flaky{fails: 3, attempts: map[int64]int{}, done: map[int64]bool{}}
	never := &flaky{fails: 1 << 30, attempts: map[int64]int{}, done: map[int64]bool{}}
	panics := func(context.Context, events.Event) error { panic("consumer bug") }
	bus.Register(events.Consumer{Name: "recovers", Kinds: []events.Kind{events.UserCreated}, Handle: recovers.handle})
	bus.Register(events.Consumer{Name: "never", Kinds: []events.Kind{events.UserCreated}, Handle: never.handle})
	bus.Register(events.Consumer{Name: "panics", Kinds: []events.Kind{events.UserCreated}, Handle: panics})
	if err := bus.Start(); err != nil {
		t.Fatal(err)
	}
	defer bus.Stop()
	ctx := context.Background()
	if err := bus.Emit(ctx, events.UserCreated, 0, 1, events.Named{ID: 1}); err != nil {
		t.Fatal(err)
	}
	settle(t, bus)
	ev, _ := db.Events().ListAfter(ctx, 0, 1)
	id := ev[0].ID
	if recovers.attempts[id] != 4 || !recovers.done[id] {
		t.Errorf("the consumer failing three times: %d attempts, done %v; want 4, done", recovers.attempts[id], recovers.done[id])
	}
	if never.attempts[id] != opts.Attempts {
		t.Errorf("the consumer that always fails was tried %d times, want %d", never.attempts[id], opts.Attempts)
	}
	st, err := bus.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := []store.JobStats{{Consumer: "recovers"}, {Consumer: "never", Dead: 1}, {Consumer: "panics", Dead: 1}}
	for i := range st {
		st[i].OldestPending = time.Time{}
	}
	if !slices.Equal(st, want) {
		t.Errorf("stats %+v, want %+v", st, want)
	}
	dead, total, err := db.EventJobs().Dead(ctx, "never", 0, 10)
	if err != nil || total != 1 || len(dead) != 1 || dead[0].EventID != id || dead[0].LastError == "" {
		t.Fatalf("dead letters of never: %+v (%d), %v", dead, total, err)
	}
	// An operator's retry makes it pending again; it now succeeds.
	never.mu.Lock()
	never.fails = 0
	never.mu.Unlock()
	if n, err := db.EventJobs().Retry(ctx, "never", dead[0].ID, store.SystemClock{}.Now().UnixMilli()); err != nil || n != 1 {
		t.Fatalf("retry: %d, %v", n, err)
	}
	settle(t, bus)
	if !never.done[id] {
		t.Error("the retried dead letter was not handled")
	}
	if _, total, _ := db.EventJobs().Dead(ctx, "", 0, 10); total != 1 {
		t.Errorf("%d dead letters left, want the panicking consumer's", total)
	}
}

// TestQuickConsumersShareARound: quick consumers are claimed and finished
// together, each still getting every event of its kinds once, a failing
// one retried on its own, beside a consumer with its own worker; a burst
// larger than a claim is taken in several rounds.
func TestQuickConsumersShareARound(t *testing.T) {
	db := openStore(t, sqltest.DSN(t, ""))
	bus := newBus(t, db, quick())
	logs, hooks, own := &recorder{}, &recorder{}, &recorder{}
	retried := &flaky{fails: 2, attempts: map[int64]int{}, done: map[int64]bool{}}
	kinds := []events.Kind{events.UserCreated}
	bus.Register(events.Consumer{Name: "logs", Kinds: kinds, Quick: true, Handle: logs.handle})
	bus.Register(events.Consumer{Name: "hooks", Kinds: kinds, Quick: true, Workers: 4, Handle: hooks.handle})
	bus.Register(events.Consumer{Name: "retried", Kinds: kinds, Quick: true, Handle: retried.handle})
	bus.Register(events.Consumer{Name: "own", Kinds: kinds, Handle: own.handle})
	if err := bus.Start(); err != nil {
		t.Fatal(err)
	}
	defer bus.Stop()
	ctx := context.Background()
	const n = 70 // over two claims' worth of each consumer
	for i := range n {
		if err := bus.Emit(ctx, events.UserCreated, 0, 1, events.Named{ID: int64(i + 1)}); err != nil {
			t.Fatal(err)
		}
	}
	settle(t, bus)
	for name, r := range map[string]*recorder{"logs": logs, "hooks": hooks, "own": own} {
		seen := map[int64]int{}
		for _, e := range r.events() {
			seen[e.Payload.(events.Named).ID]++
		}
		if len(seen) != n {
			t.Errorf("%s saw %d events, want %d", name, len(seen), n)
		}
		for id, k := range seen {
			if k != 1 {
				t.Errorf("%s handled event %d %d times", name, id, k)
			}
		}
	}
	retried.mu.Lock()
	if len(retried.done) != n {
		t.Errorf("the failing quick consumer finished %d events, want %d", len(retried.done), n)
	}
	for id, k := range retried.attempts {
		if k != 3 {
			t.Errorf("the failing quick consumer tried event %d %d times, want 3", id, k)
		}
	}
	retried.mu.Unlock()
	st, err := bus.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range st {
		if s.Pending != 0 || s.Dead != 0 {
			t.Errorf("jobs left: %+v", s)
		}
	}
}

// TestGatheringEndsAfterEnoughCommits: a worker woken by a commit waits
// up to Options.Gather for more, but no longer once GatherCommits commits
// have woken it.
func TestGatheringEndsAfterEnoughCommits(t *testing.T) {
	db := openStore(t, sqltest.DSN(t, ""))
	opts := quick()
	opts.Poll, opts.Gather = time.Hour, time.Hour
	bus := newBus(t, db, opts)
	rec := &recorder{}
	// Two quick consumers: their worker is woken once per commit.
	bus.Register(events.Consumer{Name: "rec", Kinds: []events.Kind{events.UserCreated}, Quick: true, Handle: rec.handle})
	bus.Register(events.Consumer{Name: "log", Kinds: []events.Kind{events.UserCreated}, Quick: true,
		Handle: func(context.Context, events.Event) error { return nil }})
	if err := bus.Start(); err != nil {
		t.Fatal(err)
	}
	defer bus.Stop()
	ctx := context.Background()
	for i := range events.GatherCommits {
		if len(rec.events()) != 0 {
			t.Fatalf("handled after %d commits, before the gathering ended", i)
		}
		if err := bus.Emit(ctx, events.UserCreated, 0, 1, events.Named{ID: int64(i + 1)}); err != nil {
			t.Fatal(err)
		}
	}
	deadline := time.Now().Add(10 * time.Second)
	for len(rec.events()) < events.GatherCommits {
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d events handled: the gathering did not end", len(rec.events()), events.GatherCommits)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestAQuickConsumerIsNotOrdered(t *testing.T) {
	bus := newBus(t, openStore(t, sqltest.DSN(t, "")), quick())
	defer func() {
		if recover() == nil {
			t.Error("a quick and ordered consumer was registered")
		}
	}()
	bus.Register(events.Consumer{Name: "both", Kinds: []events.Kind{events.UserCreated}, Quick: true, Ordered: true,
		Handle: func(context.Context, events.Event) error { return nil }})
}

func TestOrderedConsumerKeepsEachRepositorysOrder(t *testing.T) {
	db := openStore(t, sqltest.DSN(t, ""))
	bus := newBus(t, db, quick())
	var mu sync.Mutex
	seen := map[int64][]int64{}
	failedOnce := map[int64]bool{}
	bus.Register(events.Consumer{Name: "ordered", Kinds: []events.Kind{events.RefsChanged}, Ordered: true, Workers: 4,
		Handle: func(_ context.Context, e events.Event) error {
			n := e.Payload.(events.Refs).Repo.ID
			mu.Lock()
			defer mu.Unlock()
			// Every fifth event fails once: its successors must wait.
			if n%5 == 0 && !failedOnce[e.ID] {
				failedOnce[e.ID] = true
				return errors.New("transient")
			}
			seen[e.RepoID] = append(seen[e.RepoID], n)
			return nil
		}})
	ctx := context.Background()
	const repos, perRepo = 4, 25
	for i := range repos * perRepo {
		repo := int64(i%repos + 1)
		if err := bus.Emit(ctx, events.RefsChanged, repo, 1, events.Refs{Repo: events.Repo{ID: int64(i)}}); err != nil {
			t.Fatal(err)
		}
	}
	if err := bus.Start(); err != nil {
		t.Fatal(err)
	}
	defer bus.Stop()
	settle(t, bus)
	for repo := int64(1); repo <= repos; repo++ {
		got := seen[repo]
		if len(got) != perRepo || !slices.IsSorted(got) {
			t.Errorf("repository %d: handled %v, want %d in emission order", repo, got, perRepo)
		}
	}
}

// TestCompleteMakesTheEffectExactlyOnce: a handler that writes its effect
// with Complete in one transaction commits it once, even when its lease
// ran out and another worker took the job meanwhile.
func TestCompleteMakesTheEffectExactlyOnce(t *testing.T) {
	db := openStore(t, sqltest.DSN(t, ""))
	ctx := context.Background()
	var mu sync.Mutex
	effects := 0
	bus := newBus(t, db, quick())
	bus.Register(events.Consumer{Name: "effects", Kinds: []events.Kind{events.UserCreated},
		Handle: func(ctx context.Context, e events.Event) error {
			return db.WithTx(ctx, func(ctx context.Context) error {
				if err := events.Complete(ctx); err != nil {
					return err
				}
				db.AfterCommit(ctx, func() { mu.Lock(); effects++; mu.Unlock() })
				return nil
			})
		}})
	if err := bus.Emit(ctx, events.UserCreated, 0, 1, events.Named{ID: 1}); err != nil {
		t.Fatal(err)
	}
	// A worker that then stalls holds the job, its lease already over.
	now := time.Now().UnixMilli()
	jobs, _, err := db.EventJobs().Claim(ctx, []string{"effects"}, now, now-1, 11, 10, false)
	if err != nil || len(jobs) != 1 {
		t.Fatalf("claim: %+v, %v", jobs, err)
	}
	if err := bus.Start(); err != nil {
		t.Fatal(err)
	}
	defer bus.Stop()
	settle(t, bus)
	// The stalled worker wakes up and tries to finish: refused.
	if n, err := db.EventJobs().Finish(ctx, []int64{jobs[0].ID}, 11); err != nil || n != 0 {
		t.Errorf("the stalled worker finished a job another worker took: %d, %v", n, err)
	}
	if effects != 1 {
		t.Errorf("effect committed %d times, want 1", effects)
	}
}

// TestTwoBusesShareTheWork runs two buses on two connection pools to one
// database, as two processes would: every event is handled by exactly one
// of them, and the jobs a stopped one held go to the other. On PostgreSQL
// they claim side by side (SKIP LOCKED); on SQLite one writer at a time.
// The effect is a row written with the job's end, so it is counted as the
// database has it: a commit whose answer the stopping bus never read
// still counts, as it would for a real consumer.
func TestTwoBusesShareTheWork(t *testing.T) {
	dsn := sqltest.DSN(t, t.TempDir())
	dbA := openStore(t, dsn)
	dbB := openStore(t, dsn)
	consumer := func(name string, db *sqlstore.DB) events.Consumer {
		return events.Consumer{Name: "shared", Kinds: []events.Kind{events.IssueOpened}, Workers: 4,
			Handle: func(ctx context.Context, e events.Event) error {
				return db.WithTx(ctx, func(ctx context.Context) error {
					if err := events.Complete(ctx); err != nil {
						return err
					}
					return db.Notices().Create(ctx, &store.Notice{Type: name, Description: strconv.FormatInt(e.ID, 10), CreatedAt: time.Now()})
				})
			}}
	}
	a, b := newBus(t, dbA, quick()), newBus(t, dbB, quick())
	a.Register(consumer("a", dbA))
	b.Register(consumer("b", dbB))
	if err := a.Start(); err != nil {
		t.Fatal(err)
	}
	if err := b.Start(); err != nil {
		t.Fatal(err)
	}
	defer b.Stop()
	const n = 1000
	ctx := context.Background()
	for i := range n {
		bus := a
		if i%2 == 1 {
			bus = b
		}
		if err := bus.Emit(ctx, events.IssueOpened, int64(i%7+1), 1, events.Issue{ID: int64(i)}); err != nil {
			t.Fatal(err)
		}
		if i == n/2 {
			a.Stop() // one process goes away half way
		}
	}
	settle(t, b)
	rows, total, err := dbB.Notices().List(ctx, store.Page{Limit: 2 * n})
	if err != nil {
		t.Fatal(err)
	}
	handled := map[string][]string{}
	by := map[string]int{}
	for _, r := range rows {
		handled[r.Description] = append(handled[r.Description], r.Type)
		by[r.Type]++
	}
	if len(handled) != n || total != n {
		t.Fatalf("%d of %d events handled (%d effects)", len(handled), n, total)
	}
	for id, who := range handled {
		if len(who) != 1 {
			t.Errorf("event %s handled %d times (%v)", id, len(who), who)
		}
	}
	t.Logf("handled by a: %d, by b: %d", by["a"], by["b"])
}

func TestPruneKeepsWhatAConsumerStillNeeds(t *testing.T) {
	db := openStore(t, sqltest.DSN(t, ""))
	bus := newBus(t, db, quick())
	bus.Register(events.Consumer{Name: "slow", Kinds: []events.Kind{events.RefsChanged}, Handle: func(context.Context, events.Event) error { return nil }})
	ctx := context.Background()
	for _, k := range []events.Kind{events.UserCreated, events.RefsChanged, events.UserEdited} {
		if err := bus.Emit(ctx, k, 1, 1, struct{}{}); err != nil {
			t.Fatal(err)
		}
	}
	// Not started: the refs event still has its job.
	n, err := db.Events().Prune(ctx, time.Now().Add(time.Hour), 100)
	if err != nil || n != 2 {
		t.Fatalf("pruned %d, %v; want the 2 events no consumer needs", n, err)
	}
	left, _ := db.Events().ListAfter(ctx, 0, 10)
	if len(left) != 1 || left[0].Kind != string(events.RefsChanged) {
		t.Fatalf("left %+v", left)
	}
	if n, err := db.Events().Prune(ctx, time.Now().Add(-time.Hour), 100); err != nil || n != 0 {
		t.Fatalf("pruned %d newer than the cutoff, %v", n, err)
	}
}
