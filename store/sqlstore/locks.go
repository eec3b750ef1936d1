package sqlstore

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"hash/fnv"
	"sync"
	"time"

	"repohost/store"
)

// maxLockConns bounds the connections a process holds for database locks,
// apart from its pool of statements: a holder keeps its lock's connection
// until it releases, and a request holding a lock still needs statements.
const maxLockConns = 64

// locker is the store's Locker: a lock per key within the process, and on
// PostgreSQL, once that is held, an advisory lock (pg_advisory_lock, or
// its shared form) on a connection of its own, which the holder keeps
// until it releases (or its process dies: the session ends, the lock
// goes). The local lock first means a process waits in the database with
// one connection per key, not one per waiting request.
type locker struct {
	local localLocks
	// db is the pool of lock connections; nil on SQLite.
	db *sql.DB
	// namespace is the schema: advisory locks are the whole database's,
	// and instances in other schemas of it are not this one's peers.
	namespace string
}

var _ store.Locker = (*locker)(nil)

func newLocker(dsn, namespace string) *locker {
	l := &locker{namespace: namespace}
	if IsPostgres(dsn) {
		db, err := sql.Open("pgx", dsn)
		if err == nil {
			db.SetMaxOpenConns(maxLockConns)
			db.SetMaxIdleConns(4)
			db.SetConnMaxIdleTime(time.Minute)
			l.db = db
		}
	}
	return l
}

func (l *locker) close() {
	if l != nil && l.db != nil {
		l.db.Close()
	}
}

// AcrossHosts tells whether the locks hold between processes on several
// hosts (PostgreSQL's advisory locks), not only within this process.
func (l *locker) AcrossHosts() bool { return l.db != nil }

// Locks is the store's Locker.
func (d *DB) Locks() store.Locker { return d.locks }

// lockID turns a key of namespace into an advisory lock's number.
func lockID(namespace, key string) int64 {
	h := fnv.New64a()
	h.Write([]byte("repohost\x00"))
	h.Write([]byte(namespace))
	h.Write([]byte{0})
	h.Write([]byte(key))
	return int64(h.Sum64())
}

func (l *locker) Lock(ctx context.Context, key string, shared bool) (func(), error) {
	unlockLocal, err := l.local.lock(ctx, key, shared)
	if err != nil {
		return nil, err
	}
	if l.db == nil {
		return unlockLocal, nil
	}
	conn, err := l.db.Conn(ctx)
	if err != nil {
		unlockLocal()
		return nil, translate(err, "lock")
	}
	take, give := "SELECT pg_advisory_lock($1)", "SELECT pg_advisory_unlock($1)"
	if shared {
		take, give = "SELECT pg_advisory_lock_shared($1)", "SELECT pg_advisory_unlock_shared($1)"
	}
	id := lockID(l.namespace, key)
	if _, err := conn.ExecContext(ctx, take, id); err != nil {
		// A wait cut short may have left the session in any state: it is
		// not reused.
		_ = conn.Raw(func(any) error { return driver.ErrBadConn })
		conn.Close()
		unlockLocal()
		return nil, translate(err, "lock")
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			if _, err := conn.ExecContext(ctx, give, id); err != nil {
				// Ending the session releases its locks.
				_ = conn.Raw(func(any) error { return driver.ErrBadConn })
			}
			conn.Close()
			unlockLocal()
		})
	}, nil
}

// localLocks are shared/exclusive locks by key within a process, waited
// for until a context ends; a key is dropped once nobody holds or awaits
// it. A waiting exclusive holder keeps new shared ones waiting, so a
// stream of shared holders cannot starve it.
type localLocks struct {
	mu    sync.Mutex
	locks map[string]*localLock
}

type localLock struct {
	readers        int
	writer         bool
	writersWaiting int
	refs           int
	// changed is closed (and replaced) whenever the lock is released.
	changed chan struct{}
}

func (k *localLocks) lock(ctx context.Context, key string, shared bool) (func(), error) {
	k.mu.Lock()
	if k.locks == nil {
		k.locks = map[string]*localLock{}
	}
	l := k.locks[key]
	if l == nil {
		l = &localLock{changed: make(chan struct{})}
		k.locks[key] = l
	}
	l.refs++
	if !shared {
		l.writersWaiting++
	}
	for {
		if shared && !l.writer && l.writersWaiting == 0 {
			l.readers++
			break
		}
		if !shared && !l.writer && l.readers == 0 {
			l.writersWaiting--
			l.writer = true
			break
		}
		wait := l.changed
		k.mu.Unlock()
		select {
		case <-wait:
			k.mu.Lock()
		case <-ctx.Done():
			k.mu.Lock()
			if !shared {
				l.writersWaiting--
				k.wake(l)
			}
			k.drop(key, l)
			k.mu.Unlock()
			return nil, ctx.Err()
		}
	}
	k.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			k.mu.Lock()
			defer k.mu.Unlock()
			if shared {
				l.readers--
			} else {
				l.writer = false
			}
			k.wake(l)
			k.drop(key, l)
		})
	}, nil
}

// wake tells the waiters of l that it changed; k.mu is held.
func (k *localLocks) wake(l *localLock) {
	close(l.changed)
	l.changed = make(chan struct{})
}

// drop forgets l once nobody holds or awaits it; k.mu is held.
func (k *localLocks) drop(key string, l *localLock) {
	if l.refs--; l.refs == 0 {
		delete(k.locks, key)
	}
}
