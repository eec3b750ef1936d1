package auth

import (
	"sync"
	"time"
)

// LoginThrottle limits failed password attempts, per account and per client
// address, so guessing passwords costs the guesser time instead of costing
// the server a bcrypt verification per guess. It counts failures only: a
// caller whose keys have no recent failures is never slowed, and a correct
// password clears its account's count.
//
// It lives in one process; several processes behind a load balancer each
// allow the limit, which still bounds guessing to a small multiple.
type LoginThrottle struct {
	// MaxFailures within Window locks an account until the window that
	// counted them has passed; an address gets addressFactor times as many,
	// since many honest users may share one (a NAT, an office).
	MaxFailures int
	Window      time.Duration
	// MaxKeys bounds the memory: past it, expired keys are dropped, and if
	// none has expired the oldest are.
	MaxKeys int
	Now     func() time.Time

	mu   sync.Mutex
	keys map[string]*failures
}

type failures struct {
	first time.Time // start of the current window
	count int
}

// addressFactor is how many more failures an address may have than an
// account.
const addressFactor = 5

// NewLoginThrottle allows max failures per account within window.
func NewLoginThrottle(max int, window time.Duration) *LoginThrottle {
	return &LoginThrottle{MaxFailures: max, Window: window, MaxKeys: 100_000, Now: time.Now, keys: map[string]*failures{}}
}

// RetryAfter tells how long an account or an address stays locked: 0
// when neither is.
func (t *LoginThrottle) RetryAfter(account, address string) time.Duration {
	if t == nil {
		return 0
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	now := t.Now()
	var wait time.Duration
	for k, limit := range map[string]int{account: t.MaxFailures, address: t.MaxFailures * addressFactor} {
		f := t.keys[k]
		if f == nil || f.count < limit {
			continue
		}
		if left := f.first.Add(t.Window).Sub(now); left > wait {
			wait = left
		}
	}
	return wait
}

// Fail counts a failed attempt against each key.
func (t *LoginThrottle) Fail(keys ...string) {
	if t == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	now := t.Now()
	for _, k := range keys {
		f := t.keys[k]
		if f == nil || now.Sub(f.first) >= t.Window {
			if f == nil && len(t.keys) >= t.MaxKeys {
				t.sweep(now)
			}
			f = &failures{first: now}
			t.keys[k] = f
		}
		f.count++
	}
}

// Succeed clears a key's failures.
func (t *LoginThrottle) Succeed(key string) {
	if t == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.keys, key)
}

// sweep drops expired keys, or the oldest half when none has expired, so
// a flood of addresses cannot grow the map without bound.
func (t *LoginThrottle) sweep(now time.Time) {
	for k, f := range t.keys {
		if now.Sub(f.first) >= t.Window {
			delete(t.keys, k)
		}
	}
	if len(t.keys) < t.MaxKeys {
		return
	}
	var cut time.Time
	for _, f := range t.keys {
		if cut.IsZero() || f.first.Before(cut) {
			cut = f.first
		}
	}
	cut = cut.Add(now.Sub(cut) / 2)
	for k, f := range t.keys {
		if f.first.Before(cut) || f.first.Equal(cut) {
			delete(t.keys, k)
		}
	}
}
