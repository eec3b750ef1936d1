package app

import (
	"context"
	"net/http"
	"sync"
	"time"

	"repohost/impl/apierr"
	"repohost/store"
)

// KeyedMutex serialises work per key within this process; its zero value
// is ready. Keys are dropped once nobody holds or awaits them. With a
// Locker it serialises through it instead (the store's, across every
// process on the database), the key prefixed with Prefix.
type KeyedMutex struct {
	Locker store.Locker
	Prefix string

	mu    sync.Mutex
	locks map[string]*keyedLock
}

type keyedLock struct {
	held chan struct{} // one token: the holder's
	refs int           // holder and waiters
}

// Lock waits for key, or for ctx to end; unlock releases it.
func (k *KeyedMutex) Lock(ctx context.Context, key string) (unlock func(), err error) {
	if k.Locker != nil {
		return k.Locker.Lock(ctx, k.Prefix+key, false)
	}
	k.mu.Lock()
	if k.locks == nil {
		k.locks = make(map[string]*keyedLock)
	}
	l := k.locks[key]
	if l == nil {
		l = &keyedLock{held: make(chan struct{}, 1)}
		k.locks[key] = l
	}
	l.refs++
	k.mu.Unlock()
	select {
	case l.held <- struct{}{}:
		var once sync.Once
		return func() {
			once.Do(func() {
				<-l.held
				k.drop(key, l)
			})
		}, nil
	case <-ctx.Done():
		k.drop(key, l)
		return nil, ctx.Err()
	}
}

func (k *KeyedMutex) drop(key string, l *keyedLock) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if l.refs--; l.refs == 0 {
		delete(k.locks, key)
	}
}

// Limiter bounds how many heavy requests run at once: those that stream a
// lot of repository data (archives, raw downloads of large blobs). One more
// waits for a slot up to its wait, then is answered 503 with Retry-After.
type Limiter struct {
	slots chan struct{}
	wait  time.Duration
}

// busyRetryAfter is what a client turned away by a full Limiter is asked
// to wait.
const busyRetryAfter = 10 * time.Second

// NewLimiter allows n heavy requests at once (at least one), each further
// one waiting at most wait.
func NewLimiter(n int, wait time.Duration) *Limiter {
	return &Limiter{slots: make(chan struct{}, max(n, 1)), wait: wait}
}

// Acquire takes a slot; release gives it back and may be called more than
// once. When no slot frees up in time the error is the 503.
func (l *Limiter) Acquire(ctx context.Context) (release func(), err error) {
	select {
	case l.slots <- struct{}{}:
	default:
		t := time.NewTimer(l.wait)
		defer t.Stop()
		select {
		case l.slots <- struct{}{}:
		case <-t.C:
			e := &apierr.Error{Status: http.StatusServiceUnavailable,
				Message: "the server is busy with other transfers; nothing was changed, retry later", RetryAfter: busyRetryAfter}
			return nil, e
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	var once sync.Once
	return func() { once.Do(func() { <-l.slots }) }, nil
}
