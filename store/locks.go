package store

import (
	"context"
	"sync/atomic"
	"time"
)

// Locker serialises work on one key wherever it runs: within a process on
// the embedded database (which one process serves), across every process
// sharing the database on PostgreSQL (advisory locks), so that work which
// must not overlap (ref changes of one repository and its maintenance, a
// package blob and its accounting, a branch's queued commits, an LFS
// object) does not, whichever process a request reaches.
type Locker interface {
	// Lock waits for key, or for ctx to end, and returns the release.
	// Shared holders of a key run together; an exclusive holder runs
	// alone. A holder that dies (its process, its database session) lets
	// the others go on.
	Lock(ctx context.Context, key string, shared bool) (unlock func(), err error)
}

// readPointKey holds a request's ReadPoint in its context.
type readPointKey struct{}

// ReadPoint is when one request began: what a cache serves it must include
// every write acknowledged before then, by whichever process (see
// BeginRequest). A cache that checks this across processes does so once per
// request and marks it Synced.
type ReadPoint struct {
	At     time.Time
	synced atomic.Bool
}

// Synced tells whether this request's caches were already brought up to
// date with the writes acknowledged before it began.
func (p *ReadPoint) Synced() bool { return p.synced.Load() }

// MarkSynced records that they were.
func (p *ReadPoint) MarkSynced() { p.synced.Store(true) }

// BeginRequest marks ctx as the context of one request starting now.
func BeginRequest(ctx context.Context) context.Context {
	return context.WithValue(ctx, readPointKey{}, &ReadPoint{At: time.Now()})
}

// ReadPointOf is the request ctx belongs to, nil outside one (background
// work, where every cached read is checked on its own).
func ReadPointOf(ctx context.Context) *ReadPoint {
	p, _ := ctx.Value(readPointKey{}).(*ReadPoint)
	return p
}
