package listcache

import (
	"fmt"
	"sync/atomic"
	"testing"
	"time"

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

	g := c.Generation()
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
	c.Put("k", c.Generation(), a)
	now = now.Add(time.Second)
	if _, ok := c.Get("k"); ok {
		t.Error("served past the TTL")
	}
	c.Put("big", c.Generation(), Answer{Body: make([]byte, MaxEntrySize+1)})
	if _, ok := c.Get("big"); ok {
		t.Error("kept an answer over MaxEntrySize")
	}

	for i := 0; i < 3*MaxEntries; i++ {
		c.Put(fmt.Sprint(i), c.Generation(), Answer{Body: make([]byte, 100)})
		if len(c.entries) > MaxEntries {
			t.Fatalf("%d entries, bound %d", len(c.entries), MaxEntries)
		}
	}
	body := make([]byte, MaxEntrySize)
	for i := 0; i < 3*MaxBytes/MaxEntrySize; i++ {
		c.Put(fmt.Sprint("large", i), c.Generation(), Answer{Body: body})
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
	none.Put("k", none.Generation(), a)
	if _, ok := none.Get("k"); ok {
		t.Error("a nil cache kept something")
	}
}
