// Package listcache keeps rendered list pages (the JSON body and the
// total) for a moment, under the same rules as the store's read cache
// (store.Watch): within this process an answer is retired as soon as any
// table it was rendered from changes; across processes likewise in cluster
// mode (store.Watch.Fresh, asked once per request through Generation or
// Shared, turns the cache off for a request the store cannot vouch for),
// and otherwise it is served for at most the store's TTL. It never decides who may see an answer: the caller
// checks access on every request before asking it, and puts in the key
// everything about the request and the caller that changes the bytes.
// Each kind of list has its own Cache, over the tables it is read from
// (see impl/app: issue lists, repository lists, comment lists).
package listcache

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/go-openapi/runtime"
	"github.com/go-openapi/runtime/middleware"

	"repohost/store"
)

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
	// rendering holds, by key, the renders under way: a request that
	// misses while one is waits for it instead of rendering the same
	// answer again (many, when a popular entry expires under load).
	rendering map[string]chan struct{}
}

// maxRenderWait bounds how long a request waits for another's render of
// the same answer before it renders its own.
const maxRenderWait = time.Second

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
	// repo is the repository whose rows the answer was read from besides
	// shared ones (ServeRepo), 0 for an answer that follows every write.
	repo int64
}

// New builds a cache over st's watch of tables, every table the lists it
// keeps are read from; nil (no caching) when st caches nothing.
func New(st store.Store, tables ...string) (*Cache, error) {
	w, ok, err := st.Watch(tables...)
	if err != nil || !ok {
		return nil, err
	}
	return newCache(w), nil
}

func newCache(w store.Watch) *Cache {
	return &Cache{watch: w, now: time.Now, entries: map[string]*entry{}, rendering: map[string]chan struct{}{}}
}

// bypass is the generation handed out to a request the cache may not
// serve (store.Watch.Fresh said no): it neither serves nor keeps anything.
const bypass = ^uint64(0)

// Generation is taken before anything an answer is rendered from is read
// (the repository and the caller's access included), and handed to Put;
// ctx is the request's.
func (c *Cache) Generation(ctx context.Context) uint64 {
	if c == nil {
		return 0
	}
	if c.watch.Fresh != nil && !c.watch.Fresh(ctx) {
		return bypass
	}
	return c.watch.Generation()
}

// Shared is taken, for an answer read from one repository's rows
// (ServeRepo), before anything it is read from, the repository and the
// caller's access included: it follows the changes not confined to one
// repository.
func (c *Cache) Shared(ctx context.Context) uint64 {
	if c == nil {
		return 0
	}
	if c.watch.Fresh != nil && !c.watch.Fresh(ctx) {
		return bypass
	}
	if c.watch.Shared == nil {
		return c.watch.Generation()
	}
	return c.watch.Shared()
}

// current is the generation an entry of repo (0: of none) is kept in.
func (c *Cache) current(repo int64) uint64 {
	if repo == 0 || c.watch.Shared == nil || c.watch.Repo == nil {
		return c.watch.Generation()
	}
	return c.watch.Shared() + c.watch.Repo(repo)
}

// Get returns the answer under key while it is current.
func (c *Cache) Get(key string) (Answer, bool) {
	if c == nil {
		return Answer{}, false
	}
	c.mu.Lock()
	e, ok := c.entries[key]
	c.mu.Unlock()
	if !ok || e.gen != c.current(e.repo) || !c.now().Before(e.expires) {
		return Answer{}, false
	}
	return e.Answer, true
}

// Put stores a, rendered from what was read after gen was taken, unless a
// watched table has changed since (a was then perhaps read from rows being
// replaced). The body must not be changed afterwards.
func (c *Cache) Put(key string, gen uint64, a Answer) {
	c.put(key, 0, gen, a)
}

// put is Put for an answer of repo (0: of none), gen taken by repoGen.
func (c *Cache) put(key string, repo int64, gen uint64, a Answer) {
	if c == nil || len(a.Body) > MaxEntrySize || gen == bypass {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.current(repo) != gen {
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
			if e.gen != c.current(e.repo) || !now.Before(e.expires) {
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
	c.entries[key] = &entry{Answer: a, gen: gen, expires: now.Add(c.watch.TTL), repo: repo}
	c.bytes += len(a.Body)
}

// Key turns everything that changes the bytes of a list besides the rows
// (plain data: the query, the page, the root URL, the caller's facts) into
// a key.
func Key(parts any) string {
	b, err := json.Marshal(parts)
	if err != nil {
		panic(err) // plain data: cannot fail
	}
	return string(b)
}

// Serve answers a list page from c when it holds the answer under key, as
// the route's OK answer writes it: status 200, Link (link of the total,
// computed per request) unless empty, X-Total-Count and the body. Otherwise
// it calls render, which returns that OK answer (its Link set to
// link(total)) with the total, and keeps what it writes if nothing watched
// has changed since gen was taken; gen is taken (Generation) before
// anything the answer is read from, the caller's access included.
func (c *Cache) Serve(key string, gen uint64, link func(total int64) string,
	render func() (middleware.Responder, int64, error)) (middleware.Responder, error) {
	return c.serve(key, 0, gen, link, render)
}

// ServeRepo is Serve for an answer read from repository repoID's rows and
// from shared ones only (users, the repository itself): it is retired by
// the changes not confined to one repository and by those of repoID (and
// of the repositories sharing its stripe), not by a write confined to
// another repository. shared was taken (Shared) before anything the answer
// is read from; ServeRepo must be called before the repository's own rows
// are read, which render does.
func (c *Cache) ServeRepo(repoID int64, shared uint64, key string, link func(total int64) string,
	render func() (middleware.Responder, int64, error)) (middleware.Responder, error) {
	gen := shared
	if c != nil && shared != bypass {
		if c.watch.Shared == nil || c.watch.Repo == nil {
			repoID = 0
		} else {
			gen += c.watch.Repo(repoID)
		}
	}
	return c.serve(key, repoID, gen, link, render)
}

func (c *Cache) serve(key string, repo int64, gen uint64, link func(total int64) string,
	render func() (middleware.Responder, int64, error)) (middleware.Responder, error) {
	if gen == bypass {
		c = nil
	}
	if c == nil {
		ok, _, err := render()
		return ok, err
	}
	if a, ok := c.Get(key); ok {
		return cached{a, link(a.Total)}, nil
	}
	c.mu.Lock()
	wait, busy := c.rendering[key]
	done := make(chan struct{})
	if !busy {
		c.rendering[key] = done
	}
	c.mu.Unlock()
	if busy {
		// Kept by the other render unless what it read has changed
		// since (then this one renders too).
		select {
		case <-wait:
		case <-time.After(maxRenderWait):
			// A render whose answer was never written: the next
			// requests do not wait for it.
			c.mu.Lock()
			if c.rendering[key] == wait {
				delete(c.rendering, key)
			}
			c.mu.Unlock()
		}
		if a, ok := c.Get(key); ok {
			return cached{a, link(a.Total)}, nil
		}
		done = nil
	}
	// finish ends this request's render of key, if it is the one others
	// wait for.
	finish := func() {
		if done != nil {
			c.mu.Lock()
			if c.rendering[key] == done {
				delete(c.rendering, key)
			}
			c.mu.Unlock()
			close(done)
		}
	}
	ok, total, err := render()
	if err != nil {
		finish()
		return ok, err
	}
	return middleware.ResponderFunc(func(rw http.ResponseWriter, p runtime.Producer) {
		defer finish()
		tee := &teeWriter{ResponseWriter: rw}
		ok.WriteResponse(tee, p)
		c.put(key, repo, gen, Answer{Body: tee.body.Bytes(), Total: total})
	}), nil
}

// cached writes a kept answer as the route's OK answer writes it.
type cached struct {
	Answer
	link string
}

func (c cached) WriteResponse(rw http.ResponseWriter, _ runtime.Producer) {
	if c.link != "" {
		rw.Header().Set("Link", c.link)
	}
	rw.Header().Set("X-Total-Count", strconv.FormatInt(c.Total, 10))
	rw.WriteHeader(http.StatusOK)
	_, _ = rw.Write(c.Body)
}

// teeWriter keeps a copy of the body it writes.
type teeWriter struct {
	http.ResponseWriter
	body bytes.Buffer
}

func (t *teeWriter) Write(b []byte) (int, error) {
	t.body.Write(b)
	return t.ResponseWriter.Write(b)
}
