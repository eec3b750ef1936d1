package store

import (
	"context"
	"sync/atomic"
)

// A request must never be reported as failed once one of its writes has
// committed: the client would retry a change that is already there. So a
// request carries a commit marker (TrackCommits, put in by the server's
// outermost middleware); the store sets it when a write commits
// (MarkCommitted) and, once it is set, reads the rest of the request with
// retries through a short database outage instead of failing fast (see
// sqlstore). Before the first commit nothing is retried: a request that
// cannot reach the database answers 503 at once, so clients see the outage.

type commitKey struct{}

type commitMarker struct{ committed atomic.Bool }

// TrackCommits returns ctx with a commit marker, unset. A ctx that already
// has one is returned as it is, so that nested middleware keeps the marker of
// the whole request.
func TrackCommits(ctx context.Context) context.Context {
	if _, ok := ctx.Value(commitKey{}).(*commitMarker); ok {
		return ctx
	}
	return context.WithValue(ctx, commitKey{}, &commitMarker{})
}

// MarkCommitted records that a write made under ctx has committed. Without a
// marker in ctx (TrackCommits) it does nothing.
func MarkCommitted(ctx context.Context) {
	if m, ok := ctx.Value(commitKey{}).(*commitMarker); ok {
		m.committed.Store(true)
	}
}

// Committed tells whether a write made under ctx (or under any context
// derived from the one TrackCommits returned) has committed.
func Committed(ctx context.Context) bool {
	m, ok := ctx.Value(commitKey{}).(*commitMarker)
	return ok && m.committed.Load()
}
