package auth

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"sync"
	"time"
)

// CredentialCache remembers password sign-ins that bcrypt has verified, so a
// client sending Basic credentials with every request pays for bcrypt once
// per TTL instead of once per request.
//
// An entry is keyed by the user's id and an HMAC of the password under a key
// drawn at random when the process starts: the password itself is never
// kept, and the HMAC is useless outside this process. It records the
// password hash it was verified against. A sign-in reads the user's row
// anyway (by name, for the account state), and an entry only counts while
// that row still holds the same hash: a password changed by any process
// sharing the database stops matching on the next request, and the account
// state (disabled, prohibited, must change password, deleted) is checked on
// that fresh row every time, cached or not. Only successful verifications are
// stored, so a wrong password always goes to bcrypt and costs what it always
// cost (and counts against the sign-in throttle).
type CredentialCache struct {
	key [32]byte
	ttl time.Duration
	max int
	now func() time.Time

	mu      sync.Mutex
	entries map[credentialKey]credentialEntry
}

type credentialKey struct {
	userID int64
	mac    [sha256.Size]byte
}

type credentialEntry struct {
	hash    string // the stored password hash the password was checked against
	expires time.Time
}

// NewCredentialCache keeps at most max entries, each for ttl.
func NewCredentialCache(max int, ttl time.Duration) *CredentialCache {
	c := &CredentialCache{ttl: ttl, max: max, now: time.Now, entries: map[credentialKey]credentialEntry{}}
	if _, err := rand.Read(c.key[:]); err != nil {
		// crypto/rand does not fail on supported platforms; without a
		// secret key the cache must not be used at all.
		panic("credential cache: no randomness: " + err.Error())
	}
	return c
}

func (c *CredentialCache) keyOf(userID int64, password string) credentialKey {
	m := hmac.New(sha256.New, c.key[:])
	m.Write([]byte(password))
	k := credentialKey{userID: userID}
	m.Sum(k.mac[:0])
	return k
}

// Verified tells whether password was verified for the user whose row now
// holds passwordHash, within the TTL. A nil cache verifies nothing.
func (c *CredentialCache) Verified(userID int64, passwordHash, password string) bool {
	if c == nil || passwordHash == "" {
		return false
	}
	k := c.keyOf(userID, password)
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[k]
	switch {
	case !ok:
		return false
	case e.hash != passwordHash || !c.now().Before(e.expires):
		delete(c.entries, k)
		return false
	}
	return true
}

// Remember records that bcrypt accepted password against passwordHash.
func (c *CredentialCache) Remember(userID int64, passwordHash, password string) {
	if c == nil || c.max <= 0 || passwordHash == "" {
		return
	}
	k := c.keyOf(userID, password)
	now := c.now()
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.entries[k]; !ok && len(c.entries) >= c.max {
		c.evict(now)
	}
	c.entries[k] = credentialEntry{hash: passwordHash, expires: now.Add(c.ttl)}
}

// Len is the number of entries, for tests.
func (c *CredentialCache) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.entries)
}

// evict makes room: expired entries go first, and if none has expired, an
// arbitrary eighth of the entries (map order), so a flood of distinct
// credentials cannot grow the map and costs one sweep per max/8 inserts.
func (c *CredentialCache) evict(now time.Time) {
	for k, e := range c.entries {
		if !now.Before(e.expires) {
			delete(c.entries, k)
		}
	}
	drop := len(c.entries) - c.max + max(1, c.max/8)
	for k := range c.entries {
		if drop <= 0 {
			break
		}
		delete(c.entries, k)
		drop--
	}
}
