package events

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"repohost/store"
)

// Consumer is one durable reader of the outbox: webhooks, pull request
// refresh, actions triggers, the log line. Every event of one of its Kinds
// gets a job for it, written in the event's transaction (so a committed
// change is never lost to a crash), handled off the request by a worker of
// whichever process claims it, retried with backoff when Handle fails,
// and left as a dead letter after the last attempt.
//
// Handle must be idempotent: a job is handled at least once, and again
// when its process dies before finishing it. A handler whose effect is a
// database write can make it exactly once instead by calling Complete in
// the transaction of that write.
type Consumer struct {
	// Name identifies the consumer's jobs; it never changes once jobs
	// were written under it.
	Name string
	// Kinds are the kinds it handles.
	Kinds []Kind
	// Ordered consumers get the events of one repository one at a time,
	// in outbox order: a job waits while an earlier one of its
	// repository is pending (a dead one no longer holds it up).
	Ordered bool
	// Workers is how many of its jobs one process handles at once (at
	// least 1).
	Workers int
	// Quick consumers finish a job in moments with the database alone (a
	// log line, a few rows written): the bus takes the jobs of all of
	// them together, one claim and one finish a round for the lot rather
	// than for each, which is most of what an event costs them. A slow
	// handler would hold up the others' next round, so a consumer that
	// calls out (git, the network) is not quick; nor is an Ordered one.
	Quick bool
	// Handle does the work; an error is retried later.
	Handle func(ctx context.Context, e Event) error
}

// Options tune how consumers take their jobs.
type Options struct {
	// Lease is how long a claimed job stays with its worker without news
	// (it is extended while the worker lives): a process that dies
	// leaves its jobs to others after at most this long.
	Lease time.Duration
	// Poll is how often each consumer looks for jobs written by other
	// processes (its own process wakes it at once).
	Poll time.Duration
	// Attempts is how many times a job is tried before it is dead.
	Attempts int
	// Backoff is the wait before the attempt after the n-th failure
	// (n from 1).
	Backoff func(n int) time.Duration
	// SoleProcess says no other process shares the queue (the embedded
	// database): claims left by an earlier run are handed back at start.
	SoleProcess bool
	// Gather is how long, at most, a worker woken by a commit of its own
	// process waits before it claims, so that the jobs of the changes
	// committed meanwhile are claimed and finished together: a claim and
	// a finish for a batch rather than for each event. The wait ends
	// sooner once gatherCommits commits have woken the worker, and when
	// Settle cuts it short.
	Gather time.Duration
}

// DefaultOptions are the settings `repohost serve` starts with.
func DefaultOptions() Options {
	return Options{Lease: 30 * time.Second, Poll: time.Second, Attempts: 8, Backoff: ExponentialBackoff(time.Second, 10*time.Minute),
		Gather: 50 * time.Millisecond}
}

// gatherCommits is how many commits end a worker's gathering wait: under
// a steady stream of changes a batch of this size already makes the
// claim and the finish a small share of the work, and a busier stream
// then waits less than Gather (8 commits at 400 a second: 20 ms).
const gatherCommits = 8

// ExponentialBackoff doubles the wait from first after each failure, up
// to most.
func ExponentialBackoff(first, most time.Duration) func(int) time.Duration {
	return func(n int) time.Duration {
		d := first
		for i := 1; i < n && d < most; i++ {
			d *= 2
		}
		return min(d, most)
	}
}

// Bus records events in the outbox with their consumers' jobs, and runs
// this process's workers of every consumer.
type Bus struct {
	store store.Store
	clock store.Clock
	log   *slog.Logger
	opts  Options

	// routes and workers are filled by Register before Start, and only
	// read after. workers holds each consumer's worker by name; pool the
	// workers, each once (the quick consumers share quick).
	routes    map[Kind][]string
	consumers []Consumer
	workers   map[string]*worker
	pool      []*worker
	quick     *worker
	started   bool

	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// NewBus makes a bus over st's outbox with opts.
func NewBus(st store.Store, clock store.Clock, log *slog.Logger, opts Options) *Bus {
	return &Bus{store: st, clock: clock, log: log, opts: opts, routes: map[Kind][]string{}, workers: map[string]*worker{}}
}

// Options are the options in force.
func (b *Bus) Options() Options { return b.opts }

// SetOptions replaces the options; only before Start.
func (b *Bus) SetOptions(opts Options) {
	if b.started {
		panic("events: options set after Start")
	}
	b.opts = opts
}

// Register adds c. Consumers are registered once, by the composition root,
// before the server emits anything: an event emitted earlier has no job
// for c.
func (b *Bus) Register(c Consumer) {
	if b.started {
		panic("events: consumer " + c.Name + " registered after Start")
	}
	if _, dup := b.workers[c.Name]; dup || c.Name == "" || c.Handle == nil || (c.Quick && c.Ordered) {
		panic("events: consumer name missing, taken, without a handler, or quick and ordered: " + c.Name)
	}
	c.Workers = max(c.Workers, 1)
	b.consumers = append(b.consumers, c)
	w := b.quick
	if w == nil || !c.Quick {
		w = &worker{bus: b, consumers: map[string]Consumer{}, ordered: c.Ordered,
			wakeup: make(chan struct{}, 1), hurry: make(chan struct{}, 1)}
		b.pool = append(b.pool, w)
		if c.Quick {
			b.quick = w
		}
	}
	w.consumers[c.Name] = c
	w.names = append(w.names, c.Name)
	b.workers[c.Name] = w
	for _, k := range c.Kinds {
		if !slices.Contains(b.routes[k], c.Name) {
			b.routes[k] = append(b.routes[k], c.Name)
		}
	}
}

// Consumers are the names of the registered consumers, in registration
// order.
func (b *Bus) Consumers() []string {
	out := make([]string, len(b.consumers))
	for i, c := range b.consumers {
		out[i] = c.Name
	}
	return out
}

// Start runs this process's workers until Stop.
func (b *Bus) Start() error {
	if b.started {
		return errors.New("events: started twice")
	}
	b.started = true
	ctx, cancel := context.WithCancel(store.Background(context.Background()))
	b.cancel = cancel
	if b.opts.SoleProcess {
		if _, err := b.store.EventJobs().Release(ctx); err != nil {
			cancel()
			return fmt.Errorf("hand back the claims of an earlier run: %w", err)
		}
	}
	for _, w := range b.pool {
		b.wg.Add(1)
		go func() {
			defer b.wg.Done()
			w.run(ctx)
		}()
	}
	return nil
}

// Stop ends the workers; jobs under way are cut off and handed back for
// this or another process to take again.
func (b *Bus) Stop() {
	if b.cancel != nil {
		b.cancel()
	}
	b.wg.Wait()
}

// Settle waits until no job is due or being handled (or ctx ends): what
// the events committed so far cause has happened, but for jobs waiting
// for a retry. Tests use it to read the converged state.
func (b *Bus) Settle(ctx context.Context) error {
	ctx = store.Background(ctx)
	// Idle must be seen twice in a row: a failure recorded between taking
	// a check's time and running its query is due at a time after it (with
	// no backoff), so only the next check, timed after the first returned,
	// is sure to see it.
	idle := 0
	for {
		for _, w := range b.pool {
			w.poke(w.hurry)
		}
		busy, err := b.store.EventJobs().Busy(ctx, b.clock.Precise().UnixMilli())
		if err != nil {
			return err
		}
		if busy {
			idle = 0
		} else if idle++; idle == 2 {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// Stats are the queue figures of every registered consumer (zero for one
// without jobs), in registration order.
func (b *Bus) Stats(ctx context.Context) ([]store.JobStats, error) {
	rows, err := b.store.EventJobs().Stats(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]store.JobStats, 0, len(b.consumers))
	for _, c := range b.consumers {
		st := store.JobStats{Consumer: c.Name}
		if i := slices.IndexFunc(rows, func(r store.JobStats) bool { return r.Consumer == c.Name }); i >= 0 {
			st = rows[i]
		}
		out = append(out, st)
	}
	return out, nil
}

// claimKey holds, in a handler's context, the claim of the job it handles.
type claimKey struct{}

type claim struct {
	jobs  store.EventJobStore
	tx    store.Tx
	id    int64
	token int64
	done  bool
}

// ErrLeaseLost is Complete's answer when the job is no longer the
// caller's (its lease ran out and another worker took it): the caller's
// transaction must roll back, leaving the effect to that worker.
var ErrLeaseLost = errors.New("events: the job's lease was lost to another worker")

// Complete marks the job being handled in ctx as done in the transaction
// ctx carries, so the handler's writes and the job's end commit together:
// the effect happens exactly once. Outside a handler it does nothing.
func Complete(ctx context.Context) error {
	c, ok := ctx.Value(claimKey{}).(*claim)
	if !ok {
		return nil
	}
	n, err := c.jobs.Finish(ctx, []int64{c.id}, c.token)
	if err != nil {
		return err
	}
	if n == 0 {
		return ErrLeaseLost
	}
	c.tx.AfterCommit(ctx, func() { c.done = true })
	return nil
}

// worker runs the jobs of one consumer, or of every quick one, in this
// process.
type worker struct {
	bus *Bus
	// consumers are the worker's by name, and names them in
	// registration order.
	consumers map[string]Consumer
	names     []string
	ordered   bool
	wakeup    chan struct{}
	// commits counts the commits that woke the worker since its last
	// claim (see gatherCommits).
	commits atomic.Int64
	// hurry ends a gathering wait at once (Settle).
	hurry chan struct{}
}

// wake tells the worker that a commit of this process wrote it jobs.
func (w *worker) wake() {
	w.commits.Add(1)
	w.poke(w.wakeup)
}

func (w *worker) poke(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}

// batchSize is how many jobs of each consumer a worker claims at once:
// enough for its handlers to run side by side, and for a burst of events
// to be claimed and finished in a few statements.
func (w *worker) batchSize() int {
	n := 32
	for _, c := range w.consumers {
		n = max(n, 4*c.Workers)
	}
	return n
}

// name names the worker's consumers in log lines.
func (w *worker) name() string { return strings.Join(w.names, ",") }

// run claims and handles jobs until ctx ends, sleeping when there are
// none until woken or the poll interval passes.
func (w *worker) run(ctx context.Context) {
	poll := time.NewTicker(w.bus.opts.Poll)
	defer poll.Stop()
	gather := time.NewTimer(0)
	defer gather.Stop()
	for ctx.Err() == nil {
		full, err := w.round(ctx)
		if err != nil && ctx.Err() == nil {
			w.bus.log.Error("event consumer: claim jobs", "consumer", w.name(), "err", err)
		}
		if full && err == nil {
			continue // a full batch: there are likely more
		}
		// A commit that came while the batch was handled left its
		// wake-up in the channel, so nothing waits for the poll.
		select {
		case <-ctx.Done():
		case <-poll.C:
		case <-w.wakeup:
			w.gather(ctx, gather)
		}
	}
}

// gather waits after a wake-up until gatherCommits commits have woken
// the worker or Options.Gather has passed, unless Settle hurries it, so
// that the commits of the next moments are claimed in the same round.
func (w *worker) gather(ctx context.Context, t *time.Timer) {
	if w.bus.opts.Gather <= 0 {
		return
	}
	t.Reset(w.bus.opts.Gather)
	defer t.Stop()
	for w.commits.Load() < gatherCommits {
		select {
		case <-ctx.Done():
			return
		case <-w.hurry:
			return
		case <-t.C:
			return
		case <-w.wakeup:
		}
	}
}

// round claims a batch of due jobs and handles it; full tells that some
// consumer's share of the batch was as large as a claim takes.
func (w *worker) round(ctx context.Context) (full bool, err error) {
	b := w.bus
	jobs := b.store.EventJobs()
	token := newToken()
	w.commits.Store(0) // the claim takes what they wrote
	now := b.clock.Precise()
	n := w.batchSize()
	batch, rows, err := jobs.Claim(ctx, w.names, now.UnixMilli(), now.Add(b.opts.Lease).UnixMilli(), token, n, w.ordered)
	if err != nil && ctx.Err() == nil {
		// The claim may have been made with its answer lost (the
		// database restarting): what it took goes back at once rather
		// than when its lease runs out.
		if rerr := b.retryUnavailable(ctx, func() error { return jobs.ReleaseToken(ctx, token) }); rerr != nil {
			b.log.Error("event consumer: hand back a claim whose answer was lost", "consumer", w.name(), "err", rerr)
		}
	}
	if err != nil || len(batch) == 0 {
		return false, err
	}
	ids := make([]int64, len(batch))
	byConsumer := map[string][]*store.EventJob{}
	for i, j := range batch {
		ids[i] = j.ID
		byConsumer[j.Consumer] = append(byConsumer[j.Consumer], j)
		full = full || len(byConsumer[j.Consumer]) == n
	}
	// The lease is renewed while the batch is handled, so a long job
	// (a push to a branch with hundreds of pull requests) is not taken
	// over by another process meanwhile.
	renewed := make(chan struct{})
	defer close(renewed)
	go func() {
		t := time.NewTicker(b.opts.Lease / 3)
		defer t.Stop()
		for {
			select {
			case <-renewed:
				return
			case <-t.C:
				if err := jobs.Extend(ctx, ids, token, b.clock.Precise().Add(b.opts.Lease).UnixMilli()); err != nil && ctx.Err() == nil {
					b.log.Error("event consumer: extend lease", "consumer", w.name(), "err", err)
				}
			}
		}
	}()
	var (
		mu   sync.Mutex
		done []int64
		wg   sync.WaitGroup
	)
	// Each consumer's jobs start in order, Workers of them at a time;
	// the consumers side by side.
	for name, list := range byConsumer {
		c := w.consumers[name]
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem := make(chan struct{}, c.Workers)
			for _, j := range list {
				sem <- struct{}{}
				wg.Add(1)
				go func() {
					defer func() { <-sem; wg.Done() }()
					finished, err := w.handle(ctx, c, j, rows[j.EventID], token)
					if ctx.Err() != nil {
						return // cut off: the job goes back when its lease ends
					}
					if err != nil {
						w.fail(ctx, j, token, err)
						return
					}
					if !finished {
						mu.Lock()
						done = append(done, j.ID)
						mu.Unlock()
					}
				}()
			}
		}()
	}
	wg.Wait()
	if ctx.Err() != nil {
		// Hand back what is left, due at once, for whoever runs next.
		_ = jobs.Extend(context.WithoutCancel(ctx), ids, token, 0)
		return full, nil
	}
	err = b.retryUnavailable(ctx, func() error {
		_, err := jobs.Finish(ctx, done, token)
		return err
	})
	return full, err
}

// retryUnavailable runs write, one of the bus's own bookkeeping writes
// (finishing jobs, recording a failure), again while the database is
// unavailable, for up to half a lease: a restart of the database takes
// moments, and a job whose end was lost would wait for its lease to run
// out before anyone handled the events behind it.
func (b *Bus) retryUnavailable(ctx context.Context, write func() error) error {
	deadline := b.clock.Precise().Add(b.opts.Lease / 2)
	wait := 50 * time.Millisecond
	for {
		err := write()
		if !errors.Is(err, store.ErrUnavailable) || b.clock.Precise().After(deadline) {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(wait):
		}
		wait = min(2*wait, time.Second)
	}
}

// handle runs the handler on the job's event; finished tells that the
// handler completed the job itself (Complete).
func (w *worker) handle(ctx context.Context, c Consumer, j *store.EventJob, row *store.Event, token int64) (finished bool, err error) {
	if row == nil {
		return false, nil // the event is gone: nothing left to do
	}
	ev, err := Decode(row)
	if err != nil {
		return false, err
	}
	cl := &claim{jobs: w.bus.store.EventJobs(), tx: w.bus.store, id: j.ID, token: token}
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("consumer panicked: %v", r)
		}
	}()
	err = c.Handle(context.WithValue(ctx, claimKey{}, cl), ev)
	return cl.done, err
}

// fail records a failed attempt: the job is tried again after the
// backoff, or is dead after the last attempt.
func (w *worker) fail(ctx context.Context, j *store.EventJob, token int64, cause error) {
	b := w.bus
	now := b.clock.Precise()
	dead := j.Attempts >= b.opts.Attempts
	reason := cause.Error()
	if len(reason) > 1000 {
		reason = reason[:1000]
	}
	level := slog.LevelWarn
	if dead {
		level = slog.LevelError
	}
	b.log.Log(ctx, level, "event consumer failed", "consumer", j.Consumer, "event", j.EventID, "attempt", j.Attempts,
		"dead", dead, "err", cause)
	err := b.retryUnavailable(ctx, func() error {
		return b.store.EventJobs().Fail(ctx, j.ID, token, now.Add(b.opts.Backoff(j.Attempts)).UnixMilli(), dead, reason, now)
	})
	if err != nil {
		b.log.Error("event consumer: record failure", "consumer", j.Consumer, "event", j.EventID, "err", err)
	}
}

// newToken is a random claim token, so that no two claims share one
// across processes.
func newToken() int64 {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return int64(binary.LittleEndian.Uint64(b[:])>>1) | 1
}

// DeadLetter is a job its consumer gave up on, with its event's kind.
type DeadLetter struct {
	*store.EventJob
	Kind Kind
	// At is when the event was committed.
	At time.Time
}

// DeadLetters lists the dead letters of consumer ("" for every one),
// newest first, with their total.
func (b *Bus) DeadLetters(ctx context.Context, consumer string, offset, limit int) ([]DeadLetter, int64, error) {
	jobs, total, err := b.store.EventJobs().Dead(ctx, consumer, offset, limit)
	if err != nil {
		return nil, 0, err
	}
	ids := make([]int64, len(jobs))
	for i, j := range jobs {
		ids[i] = j.EventID
	}
	rows, err := b.store.Events().FindByIDs(ctx, ids)
	if err != nil {
		return nil, 0, err
	}
	out := make([]DeadLetter, len(jobs))
	for i, j := range jobs {
		out[i] = DeadLetter{EventJob: j, At: j.CreatedAt}
		if r := rows[j.EventID]; r != nil {
			out[i].Kind, out[i].At = Kind(r.Kind), r.CreatedAt
		}
	}
	return out, total, nil
}

// Retry gives dead letters to their consumers again with all their
// attempts: the one of id, or else every one of consumer ("" for every
// consumer). It returns how many; the workers are woken.
func (b *Bus) Retry(ctx context.Context, consumer string, id int64) (int64, error) {
	n, err := b.store.EventJobs().Retry(ctx, consumer, id, b.clock.Precise().UnixMilli())
	if n > 0 {
		for _, w := range b.pool {
			w.wake()
		}
	}
	return n, err
}

// pruneBatch is how many events one statement of Prune deletes, so that
// no statement holds the outbox for long.
const pruneBatch = 1000

// Prune deletes the events committed before cutoff that every consumer is
// done with (dead letters keep theirs), a batch at a time.
func (b *Bus) Prune(ctx context.Context, cutoff time.Time) error {
	total := int64(0)
	for {
		n, err := b.store.Events().Prune(ctx, cutoff, pruneBatch)
		if err != nil {
			return fmt.Errorf("prune events: %w", err)
		}
		total += n
		if n < pruneBatch {
			b.log.Info("pruned events", "deleted", total, "before", cutoff)
			return nil
		}
	}
}
