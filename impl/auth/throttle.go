package auth

import (
	"strings"
	"sync"
	"time"
)

// LoginThrottle limits failed password attempts so guessing passwords
// costs the guesser time instead of costing the server a bcrypt
// verification per guess. It counts failures only: a caller whose keys
// have no recent failures is never slowed, and a correct password clears
// its own count.
//
// Failures lock an account only for the address they came from: a lock
// keyed on the account alone would let anyone, from anywhere, keep its
// owner out with a few wrong passwords. Guessing stays bounded three ways:
// per account and address (MaxFailures), per address across accounts
// (addressFactor times as many, since many honest users may share one
// address), and per account across addresses, where past
// addressFactor·MaxFailures every further check of that account's
// password is delayed (SlowDown) instead of refused, so a guesser with
// many addresses gains little while the owner still signs in.
//
// It lives in one process; several processes behind a load balancer each
// allow the limit, which still bounds guessing to a small multiple.
type LoginThrottle struct {
	// MaxFailures within Window locks an account from one address until
	// the window that counted them has passed.
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
// account from one address, and how many an account may have from all
// addresses before its checks are slowed.
const addressFactor = 5

// slowDown is the delay of a password check for an account that many
// addresses have failed on.
const slowDown = time.Second

// NewLoginThrottle allows max failures per account and address within
// window.
func NewLoginThrottle(max int, window time.Duration) *LoginThrottle {
	return &LoginThrottle{MaxFailures: max, Window: window, MaxKeys: 100_000, Now: time.Now, keys: map[string]*failures{}}
}

// LoginKeys are the keys one password attempt is counted under.
type LoginKeys struct {
	// Account is the account from this address, Address the address
	// across accounts, AnyAddress the account across addresses.
	Account, Address, AnyAddress string
}

// KeysFor names the keys of an attempt on account (a login name, case
// folded) from address.
func KeysFor(account, address string) LoginKeys {
	account = strings.ToLower(account)
	return LoginKeys{Account: "account:" + account + "@" + address, Address: "address:" + address, AnyAddress: "account:" + account}
}

// RetryAfter tells how long an attempt with keys k stays refused: 0 when
// neither its account from its address nor its address is locked.
func (t *LoginThrottle) RetryAfter(k LoginKeys) time.Duration {
	if t == nil {
		return 0
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	now := t.Now()
	var wait time.Duration
	for key, limit := range map[string]int{k.Account: t.MaxFailures, k.Address: t.MaxFailures * addressFactor} {
		if left := t.locked(now, key, limit); left > wait {
			wait = left
		}
	}
	return wait
}

// SlowDown is how long to wait before checking a password for k's
// account: slowDown while failures from all addresses are past the
// account-wide limit, else 0.
func (t *LoginThrottle) SlowDown(k LoginKeys) time.Duration {
	if t == nil {
		return 0
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.locked(t.Now(), k.AnyAddress, t.MaxFailures*addressFactor) > 0 {
		return slowDown
	}
	return 0
}

// locked is how long key stays past limit; t.mu is held.
func (t *LoginThrottle) locked(now time.Time, key string, limit int) time.Duration {
	f := t.keys[key]
	if f == nil || f.count < limit {
		return 0
	}
	return max(f.first.Add(t.Window).Sub(now), 0)
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
