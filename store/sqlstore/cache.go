package sqlstore

import (
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"gorm.io/gorm"
)

// DefaultCacheTTL is how long a looked-up row may be served from memory:
// short enough that a change made by another process sharing the database
// (a revoked token, a repository made private, a new password) is seen
// within a second, long enough that a busy server reads each hot row a
// couple of times per second instead of on every request.
const DefaultCacheTTL = 500 * time.Millisecond

// readCache holds the rows the hottest lookups return (a token with its
// user, a repository with its owner, a user by name or id), for the requests
// of every route that start with the same few lookups.
//
// Staleness is bounded twice. Across processes, by the TTL. Within this
// process, by a generation number that every statement changing rows (any
// INSERT, UPDATE or DELETE through this store, at the statement and again
// when its transaction commits) increments: an entry counts only in the
// generation it was stored in, and a row read while a change was under way
// is not stored at all. So after a change has committed and its request has
// answered, no request of this process is served what it replaced. Reads in
// a transaction never use the cache (they may be the first half of a
// read-change-write).
type readCache struct {
	ttl time.Duration
	max int
	now func() time.Time
	gen atomic.Uint64

	mu      sync.RWMutex
	entries map[string]cacheEntry
}

type cacheEntry struct {
	gen     uint64
	expires time.Time
	val     any
}

func newReadCache(ttl time.Duration, max int) *readCache {
	if ttl <= 0 {
		return nil
	}
	return &readCache{ttl: ttl, max: max, now: time.Now, entries: map[string]cacheEntry{}}
}

// generation is taken before a read whose result may be stored.
func (c *readCache) generation() uint64 {
	if c == nil {
		return 0
	}
	return c.gen.Load()
}

func (c *readCache) get(key string) (any, bool) {
	if c == nil {
		return nil, false
	}
	c.mu.RLock()
	e, ok := c.entries[key]
	c.mu.RUnlock()
	if !ok || e.gen != c.gen.Load() || !c.now().Before(e.expires) {
		return nil, false
	}
	return e.val, true
}

// put stores val under key unless a change happened since gen was taken.
func (c *readCache) put(key string, gen uint64, val any) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if gen != c.gen.Load() {
		return
	}
	if len(c.entries) >= c.max {
		// Everything older than this generation or past its TTL is dead;
		// if that frees nothing, start over: refilling costs one read
		// per key.
		now := c.now()
		for k, e := range c.entries {
			if e.gen != gen || !now.Before(e.expires) {
				delete(c.entries, k)
			}
		}
		if len(c.entries) >= c.max {
			clear(c.entries)
		}
	}
	c.entries[key] = cacheEntry{gen: gen, expires: c.now().Add(c.ttl), val: val}
}

// invalidate retires every entry.
func (c *readCache) invalidate() {
	if c != nil {
		c.gen.Add(1)
	}
}

// watchWrites makes every statement that may have changed rows retire the
// cache's entries.
func (c *readCache) watchWrites(g *gorm.DB) error {
	if c == nil {
		return nil
	}
	changed := func(db *gorm.DB) {
		if db.Error != nil || db.RowsAffected != 0 {
			c.invalidate()
		}
	}
	cb := g.Callback()
	for _, err := range []error{
		cb.Create().After("gorm:create").Register("repohost:cache", changed),
		cb.Update().After("gorm:update").Register("repohost:cache", changed),
		cb.Delete().After("gorm:delete").Register("repohost:cache", changed),
		// Exec: raw INSERT, UPDATE and DELETE statements.
		cb.Raw().After("gorm:raw").Register("repohost:cache", changed),
		// Raw(...).Scan runs as a row query, and may be an INSERT ...
		// RETURNING (the issue counter); its rows affected are not known.
		cb.Row().After("gorm:row").Register("repohost:cache", func(db *gorm.DB) {
			if !isSelect(db.Statement.SQL.String()) {
				c.invalidate()
			}
		}),
	} {
		if err != nil {
			return err
		}
	}
	return nil
}

func isSelect(sql string) bool {
	sql = strings.TrimLeft(sql, " \t\r\n(")
	return len(sql) >= 6 && strings.EqualFold(sql[:6], "SELECT")
}
