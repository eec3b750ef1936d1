package listcache

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-openapi/runtime"
	"github.com/go-openapi/runtime/middleware"

	"repohost/store"
)

// TestCacheRules: an answer is served while nothing watched has changed
// and for at most the TTL; one rendered across a change is not kept; the
// entries and bytes kept stay within their bounds.
func TestCacheRules(t *testing.T) {
	var gen atomic.Uint64
	c := newCache(store.Watch{TTL: time.Second, Generation: gen.Load})
	now := time.Unix(1000, 0)
	c.now = func() time.Time { return now }
	a := Answer{Body: []byte("[1]"), Total: 1}

	g := c.Generation(t.Context())
	c.Put("k", g, a)
	if got, ok := c.Get("k"); !ok || string(got.Body) != "[1]" || got.Total != 1 {
		t.Fatalf("kept answer: %v %v", got, ok)
	}
	gen.Add(1)
	if _, ok := c.Get("k"); ok {
		t.Error("served after a change")
	}
	c.Put("k", g, a)
	if _, ok := c.Get("k"); ok {
		t.Error("kept an answer rendered across a change")
	}
	c.Put("k", c.Generation(t.Context()), a)
	now = now.Add(time.Second)
	if _, ok := c.Get("k"); ok {
		t.Error("served past the TTL")
	}
	c.Put("big", c.Generation(t.Context()), Answer{Body: make([]byte, MaxEntrySize+1)})
	if _, ok := c.Get("big"); ok {
		t.Error("kept an answer over MaxEntrySize")
	}

	for i := 0; i < 3*MaxEntries; i++ {
		c.Put(fmt.Sprint(i), c.Generation(t.Context()), Answer{Body: make([]byte, 100)})
		if len(c.entries) > MaxEntries {
			t.Fatalf("%d entries, bound %d", len(c.entries), MaxEntries)
		}
	}
	body := make([]byte, MaxEntrySize)
	for i := 0; i < 3*MaxBytes/MaxEntrySize; i++ {
		c.Put(fmt.Sprint("large", i), c.Generation(t.Context()), Answer{Body: body})
		if c.bytes > MaxBytes {
			t.Fatalf("%d bytes, bound %d", c.bytes, MaxBytes)
		}
	}
	sum := 0
	for _, e := range c.entries {
		sum += len(e.Body)
	}
	if sum != c.bytes {
		t.Errorf("counted %d bytes, kept %d", c.bytes, sum)
	}
	var none *Cache
	none.Put("k", none.Generation(t.Context()), a)
	if _, ok := none.Get("k"); ok {
		t.Error("a nil cache kept something")
	}
}

// TestServeWritesWhatItKept: an answer served from memory is the rendered
// one, byte for byte, headers included, its Link computed for the request.
func TestServeWritesWhatItKept(t *testing.T) {
	var gen atomic.Uint64
	c := newCache(store.Watch{TTL: time.Minute, Generation: gen.Load})
	renders := 0
	serve := func(link string) *httptest.ResponseRecorder {
		t.Helper()
		r, err := c.Serve("k", c.Generation(t.Context()), func(total int64) string { return fmt.Sprint(link, total) },
			func() (middleware.Responder, int64, error) {
				renders++
				return middleware.ResponderFunc(func(rw http.ResponseWriter, _ runtime.Producer) {
					rw.Header().Set("Link", fmt.Sprint(link, 2))
					rw.Header().Set("X-Total-Count", "2")
					rw.WriteHeader(http.StatusOK)
					_, _ = rw.Write([]byte(`[1,2]`))
				}), 2, nil
			})
		if err != nil {
			t.Fatal(err)
		}
		rec := httptest.NewRecorder()
		r.WriteResponse(rec, runtime.JSONProducer())
		return rec
	}
	first, again := serve("a"), serve("b")
	if renders != 1 {
		t.Fatalf("rendered %d times", renders)
	}
	if first.Code != again.Code || first.Body.String() != again.Body.String() ||
		first.Header().Get("X-Total-Count") != again.Header().Get("X-Total-Count") || again.Header().Get("Link") != "b2" {
		t.Fatalf("kept answer differs: %d %q %v / %d %q %v", first.Code, first.Body, first.Header(), again.Code, again.Body, again.Header())
	}
	if _, err := c.Serve("e", c.Generation(t.Context()), nil, func() (middleware.Responder, int64, error) {
		return nil, 0, fmt.Errorf("boom")
	}); err == nil {
		t.Error("a failed rendering was not reported")
	}
}

// TestServeRendersOnceAtATime: requests that miss the same key while it is
// being rendered wait for that render and serve its answer; after a change
// the waiters render for themselves; a render never written does not keep
// later requests waiting.
func TestServeRendersOnceAtATime(t *testing.T) {
	var gen atomic.Uint64
	c := newCache(store.Watch{TTL: time.Minute, Generation: gen.Load})
	var renders atomic.Int32
	release := make(chan struct{})
	serve := func(key string, written bool) (string, error) {
		r, err := c.Serve(key, c.Generation(t.Context()), func(int64) string { return "" },
			func() (middleware.Responder, int64, error) {
				n := renders.Add(1)
				<-release
				return middleware.ResponderFunc(func(rw http.ResponseWriter, _ runtime.Producer) {
					_, _ = fmt.Fprint(rw, "render ", n)
				}), 1, nil
			})
		if err != nil || !written {
			return "", err
		}
		rec := httptest.NewRecorder()
		r.WriteResponse(rec, runtime.JSONProducer())
		return rec.Body.String(), nil
	}
	const n = 8
	bodies := make([]string, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { bodies[i], _ = serve("k", true) })
	}
	for renders.Load() == 0 {
		time.Sleep(time.Millisecond)
	}
	time.Sleep(20 * time.Millisecond) // the others are waiting by now
	close(release)
	wg.Wait()
	if renders.Load() != 1 {
		t.Errorf("%d renders of one key at once, want 1", renders.Load())
	}
	for i, b := range bodies {
		if b != "render 1" {
			t.Errorf("request %d served %q", i, b)
		}
	}

	// The first render's answer is not written (nothing is kept): the
	// next request waits at most maxRenderWait, and the one after that
	// not at all.
	renders.Store(0)
	if _, err := serve("lost", false); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if b, _ := serve("lost", true); b != "render 2" || time.Since(start) > 3*maxRenderWait {
		t.Errorf("after a lost render: %q in %v", b, time.Since(start))
	}
	start = time.Now()
	gen.Add(1)
	if b, _ := serve("lost", true); b != "render 3" || time.Since(start) > maxRenderWait/2 {
		t.Errorf("a request waited for a render that was over: %q in %v", b, time.Since(start))
	}
}

// TestServeRepo: an answer of one repository is retired by a change of
// that repository or a shared one, not by another repository's; one
// rendered across a change of its repository is not kept.
func TestServeRepo(t *testing.T) {
	var shared atomic.Uint64
	repos := map[int64]*atomic.Uint64{1: {}, 2: {}}
	c := newCache(store.Watch{TTL: time.Minute, Generation: func() uint64 { return shared.Load() + repos[1].Load() + repos[2].Load() },
		Shared: shared.Load, Repo: func(id int64) uint64 { return repos[id].Load() }})
	renders := 0
	serve := func(repo int64, during func()) {
		t.Helper()
		r, err := c.ServeRepo(repo, c.Shared(t.Context()), fmt.Sprint("k", repo), func(int64) string { return "" },
			func() (middleware.Responder, int64, error) {
				renders++
				if during != nil {
					during()
				}
				return middleware.ResponderFunc(func(rw http.ResponseWriter, _ runtime.Producer) {
					rw.WriteHeader(http.StatusOK)
					_, _ = rw.Write([]byte(`[]`))
				}), 0, nil
			})
		if err != nil {
			t.Fatal(err)
		}
		r.WriteResponse(httptest.NewRecorder(), runtime.JSONProducer())
	}
	expect := func(what string, want int) {
		t.Helper()
		if renders != want {
			t.Errorf("%s: %d renderings, want %d", what, renders, want)
		}
	}
	serve(1, nil)
	serve(1, nil)
	expect("kept", 1)
	repos[2].Add(1)
	serve(1, nil)
	expect("after a write in another repository", 1)
	repos[1].Add(1)
	serve(1, nil)
	expect("after a write in the repository", 2)
	shared.Add(1)
	serve(1, nil)
	expect("after a shared write", 3)
	repos[1].Add(1)
	serve(1, func() { repos[1].Add(1) })
	serve(1, nil)
	expect("rendered across a write in the repository", 5)
}

// TestServeNotFresh: while the store says a request may not be served from
// caches (Watch.Fresh: this process cannot tell it has heard of every
// write made elsewhere), every request renders, and nothing rendered then
// is kept for later ones.
func TestServeNotFresh(t *testing.T) {
	var fresh atomic.Bool
	c := newCache(store.Watch{TTL: time.Minute, Generation: func() uint64 { return 1 },
		Shared: func() uint64 { return 1 }, Repo: func(int64) uint64 { return 0 },
		Fresh: func(context.Context) bool { return fresh.Load() }})
	renders := 0
	serve := func(repo bool) {
		t.Helper()
		render := func() (middleware.Responder, int64, error) {
			renders++
			return middleware.ResponderFunc(func(rw http.ResponseWriter, _ runtime.Producer) {
				rw.WriteHeader(http.StatusOK)
				_, _ = rw.Write([]byte(`[]`))
			}), 0, nil
		}
		var r middleware.Responder
		var err error
		if repo {
			r, err = c.ServeRepo(1, c.Shared(t.Context()), "r", func(int64) string { return "" }, render)
		} else {
			r, err = c.Serve("k", c.Generation(t.Context()), func(int64) string { return "" }, render)
		}
		if err != nil {
			t.Fatal(err)
		}
		r.WriteResponse(httptest.NewRecorder(), runtime.JSONProducer())
	}
	for _, repo := range []bool{false, true} {
		renders = 0
		fresh.Store(false)
		serve(repo)
		serve(repo)
		fresh.Store(true)
		serve(repo)
		if renders != 3 {
			t.Errorf("repo %v: %d renderings, want 3: something was kept or served while not fresh", repo, renders)
		}
		serve(repo)
		if renders != 3 {
			t.Errorf("repo %v: not served from the cache once fresh", repo)
		}
	}
}
