// Package listcache keeps rendered issue lists (the JSON body and the
// total) for a moment, under the same rules as the store's read cache
// (store.Watch): within this process an answer is retired as soon as any
// table it was rendered from changes; across processes it is served for at
// most the store's TTL. It never decides who may see an answer: the caller
// checks access on every request before asking it, and puts in the key
// everything about the request and the caller that changes the bytes.
package listcache

import (
	"sync"
	"time"

	"repohost/store"
)

// Tables are the tables a rendered issue list is read from: the issues and
// what filters them (labels and their links, milestones, assignees,
// mentions, comments for the keyword), and what each issue shows (its
// pull request, projects, repository, and the users it names).
var Tables = []string{"issues", "comments", "labels", "issue_labels", "milestones", "issue_assignees",
	"issue_mentions", "pull_requests", "projects", "project_issues", "users", "repositories"}

// Bounds of a cache: entries, bytes of bodies, and the largest body kept.
const (
	MaxEntries   = 2048
	MaxBytes     = 32 << 20
	MaxEntrySize = 1 << 20
)

// Cache holds rendered answers by key. A nil *Cache holds nothing.
type Cache struct {
	watch store.Watch
	now   func() time.Time

	mu      sync.Mutex
	entries map[string]*entry
	bytes   int
}

// Answer is a rendered list: the body as sent and the size of the whole
// filtered set.
type Answer struct {
	Body  []byte
	Total int64
}

type entry struct {
	Answer
	gen     uint64
	expires time.Time
}

// New builds a cache over st's watch of Tables; nil (no caching) when st
// caches nothing.
func New(st store.Store) (*Cache, error) {
	w, ok, err := st.Watch(Tables...)
	if err != nil || !ok {
		return nil, err
	}
	return newCache(w), nil
}

func newCache(w store.Watch) *Cache {
	return &Cache{watch: w, now: time.Now, entries: map[string]*entry{}}
}

// Generation is taken before anything an answer is rendered from is read
// (the repository and the caller's access included), and handed to Put.
func (c *Cache) Generation() uint64 {
	if c == nil {
		return 0
	}
	return c.watch.Generation()
}

// Get returns the answer under key while it is current.
func (c *Cache) Get(key string) (Answer, bool) {
	if c == nil {
		return Answer{}, false
	}
	c.mu.Lock()
	e, ok := c.entries[key]
	c.mu.Unlock()
	if !ok || e.gen != c.watch.Generation() || !c.now().Before(e.expires) {
		return Answer{}, false
	}
	return e.Answer, true
}

// Put stores a, rendered from what was read after gen was taken, unless a
// watched table has changed since (a was then perhaps read from rows being
// replaced). The body must not be changed afterwards.
func (c *Cache) Put(key string, gen uint64, a Answer) {
	if c == nil || len(a.Body) > MaxEntrySize {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.watch.Generation() != gen {
		return
	}
	now := c.now()
	if old, ok := c.entries[key]; ok {
		c.bytes -= len(old.Body)
		delete(c.entries, key)
	}
	if len(c.entries) >= MaxEntries || c.bytes+len(a.Body) > MaxBytes {
		// Drop what is dead; then any entry (a dropped one costs one
		// rendering) until an eighth of the room is free, so that a full
		// cache is not walked on every store.
		for k, e := range c.entries {
			if e.gen != gen || !now.Before(e.expires) {
				c.bytes -= len(e.Body)
				delete(c.entries, k)
			}
		}
		for k, e := range c.entries {
			if len(c.entries) < MaxEntries*7/8 && c.bytes+len(a.Body) <= MaxBytes*7/8 {
				break
			}
			c.bytes -= len(e.Body)
			delete(c.entries, k)
		}
	}
	c.entries[key] = &entry{Answer: a, gen: gen, expires: now.Add(c.watch.TTL)}
	c.bytes += len(a.Body)
}
