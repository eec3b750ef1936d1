package sqlstore

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"

	"repohost/store"
)

// changesChannel is the PostgreSQL notification channel on which the
// processes of a cluster tell each other what they changed, and through
// which each one checks it has heard everything (syncs).
const changesChannel = "repohost_changes"

// maxPayload bounds a notification's payload (PostgreSQL's limit is 8000
// bytes); a change that does not fit is sent as "everything changed".
const maxPayload = 7000

// syncTimeout bounds how long a request waits for this process's listener
// to hear its own sync; past it the request is served without the caches.
const syncTimeout = 2 * time.Second

// cluster keeps the read cache (and what watches it) of a process coherent
// with the writes of the other processes sharing a PostgreSQL database.
//
// Every transaction that changed cached tables sends, once it has
// committed and before its request is answered, one notification naming
// them (the bits and repository scopes the local generations count); so
// does a statement outside a transaction. (Sent inside the transaction it
// would be delivered at commit, but PostgreSQL then holds its queue's lock
// through the write's wait for the disk, serialising every write of the
// cluster: issue creation fell from about 400 to 20 per second.) A process
// that dies between a commit and its notification never acknowledged the
// write; the others then follow the TTL for it. A dedicated
// connection LISTENs and bumps the local generations of what the others
// changed. Notifications reach a listener in commit order, so before a
// request is served from a cache the process sends a notification of its
// own (a sync) and waits until its listener hears it: every write
// acknowledged before the request began committed before the sync, and
// its notification has been heard, too. Syncs are shared: one issued after
// a request began serves every request that began before it was issued,
// so a busy process sends about one per round trip, and a request at most
// one. While the listener is down (its connection lost, not yet back) no
// cache serves or keeps anything; once it is back every entry is retired.
type cluster struct {
	dsn   string
	proc  string
	cache *readCache
	pool  *sql.DB
	log   *slog.Logger

	// listenerPID is the backend of the listening connection (tests end
	// it to see the caches turn off).
	listenerPID atomic.Uint32

	mu     sync.Mutex
	up     bool
	seq    uint64
	rounds map[uint64]*syncRound
	// latest is the sync issued last and not yet heard; doneAt is when
	// the last sync heard was issued.
	latest *syncRound
	doneAt time.Time
	// dropListener ends the listening connection (a sync it never heard
	// suggests it is dead without knowing: a peer gone silent).
	dropListener context.CancelFunc

	stop context.CancelFunc
	done chan struct{}
	// ready is closed once the listener has listened for the first time.
	ready     chan struct{}
	readyOnce sync.Once
}

type syncRound struct {
	at   time.Time
	done chan struct{}
	ok   bool
}

func newCluster(dsn string, cache *readCache, pool *sql.DB, log *slog.Logger) *cluster {
	var b [6]byte
	_, _ = rand.Read(b[:])
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &cluster{dsn: dsn, proc: hex.EncodeToString(b[:]), cache: cache, pool: pool, log: log,
		rounds: map[uint64]*syncRound{}, done: make(chan struct{}), ready: make(chan struct{})}
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
	if _, err := conn.Exec(ctx, "LISTEN "+changesChannel); err != nil {
		return err
	}
	// What changed while nobody listened is unknown: everything kept is
	// retired, then the caches may serve again.
	cl.cache.invalidateAll()
	cl.mu.Lock()
	cl.up = true
	cl.mu.Unlock()
	cl.readyOnce.Do(func() { close(cl.ready) })
	for {
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			return err
		}
		cl.heard(n.Payload)
	}
}

// setDown turns the caches off and fails the syncs under way.
func (cl *cluster) setDown() {
	cl.mu.Lock()
	defer cl.mu.Unlock()
	cl.up = false
	for seq, r := range cl.rounds {
		delete(cl.rounds, seq)
		close(r.done)
	}
	cl.latest = nil
}

// heard applies one notification.
func (cl *cluster) heard(payload string) {
	kind, rest, _ := strings.Cut(payload, " ")
	proc, rest, _ := strings.Cut(rest, " ")
	switch kind {
	case "s":
		if proc != cl.proc {
			return
		}
		seq, err := strconv.ParseUint(rest, 10, 64)
		if err == nil {
			cl.finish(seq, true)
		}
	case "c":
		if proc == cl.proc {
			return // applied when made
		}
		ch, err := decodeChange(rest)
		if err != nil {
			cl.log.Warn("cluster: unreadable change notification", "payload", payload, "err", err)
			ch = change{all: true}
		}
		ch.apply(cl.cache)
	}
}

// finish ends the sync seq.
func (cl *cluster) finish(seq uint64, ok bool) {
	cl.mu.Lock()
	defer cl.mu.Unlock()
	r := cl.rounds[seq]
	if r == nil {
		return
	}
	delete(cl.rounds, seq)
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
// now, outside a request). It sends at most one sync per request.
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
		cl.seq++
		seq := cl.seq
		r = &syncRound{at: time.Now(), done: make(chan struct{})}
		cl.rounds[seq] = r
		cl.latest = r
		go cl.send(seq)
	}
	cl.mu.Unlock()
	t := time.NewTimer(syncTimeout)
	defer t.Stop()
	select {
	case <-r.done:
	case <-ctx.Done():
		return false
	case <-t.C:
		// The listener did not hear what the database took: start it
		// again (meanwhile the caches are off).
		cl.log.Warn("cluster: a sync was not heard in time; reconnecting the change listener")
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

// send issues sync seq.
func (cl *cluster) send(seq uint64) {
	ctx, cancel := context.WithTimeout(context.Background(), syncTimeout)
	defer cancel()
	if err := cl.notify(ctx, "s "+cl.proc+" "+strconv.FormatUint(seq, 10)); err != nil {
		cl.finish(seq, false)
	}
}

// notify sends one notification in a transaction of its own that commits
// without waiting for its commit record to reach the disk: PostgreSQL
// serialises the commits of notifying transactions (one lock on the queue
// until the commit is done), and with the wait for the disk inside that
// lock every write of the cluster would commit one at a time. A
// notification lost with the server is lost either way.
func (cl *cluster) notify(ctx context.Context, payload string) error {
	_, err := cl.pool.ExecContext(ctx, "SELECT set_config('synchronous_commit', 'off', true), pg_notify($1, $2)",
		changesChannel, payload)
	return err
}

// publish tells the others of ch, a write that has committed (and that
// was not acknowledged yet: its request answers once this returns).
func (cl *cluster) publish(ctx context.Context, ch change) {
	if cl == nil || ch.empty() {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), syncTimeout)
	defer cancel()
	if err := cl.notify(ctx, "c "+cl.proc+" "+ch.encode()); err != nil {
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
