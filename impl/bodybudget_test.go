package impl

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"repohost/impl/apierr"
)

// Large bodies take turns within the budget; small ones never wait; a body
// declared larger than the API accepts is refused unread.
func TestBodyBudget(t *testing.T) {
	const maxBody = 3 << 20
	b := newBodyBudget(maxBody, maxBody, apierr.Translator{})
	var inside, most atomic.Int64
	release := make(chan struct{})
	h := b.middleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, err := readBody(r.Body, maxBody)
		if err != nil || int64(len(raw)) != r.ContentLength {
			t.Errorf("read %d of %d bytes: %v", len(raw), r.ContentLength, err)
		}
		if r.ContentLength >= largeBody {
			n := inside.Add(1)
			for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
			}
			<-release
			inside.Add(-1)
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	serve := func(size int) int {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest("POST", "/", bytes.NewReader(bytes.Repeat([]byte("x"), size))))
		return w.Code
	}

	var wg sync.WaitGroup
	for range 3 { // 3 × 2 MiB against a 3 MiB budget: one at a time
		wg.Add(1)
		go func() { defer wg.Done(); serve(2 << 20) }()
	}
	time.Sleep(100 * time.Millisecond)
	if code := serve(100); code != http.StatusNoContent { // not held up
		t.Fatalf("small body while large ones wait: %d", code)
	}
	if n := inside.Load(); n != 1 {
		t.Fatalf("%d large bodies decoded at once, want 1", n)
	}
	close(release)
	wg.Wait()
	if most.Load() != 1 {
		t.Fatalf("at most %d large bodies at once, want 1", most.Load())
	}

	// Declared too large: 413 in the API's error shape, body unread.
	body := &countingReader{r: strings.NewReader(strings.Repeat("x", maxBody+1))}
	req := httptest.NewRequest("POST", "/", body)
	req.ContentLength = maxBody + 1
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)
	if w.Code != http.StatusRequestEntityTooLarge || !strings.Contains(w.Body.String(), `"message"`) || body.n != 0 {
		t.Fatalf("oversized body: %d %s, %d bytes read", w.Code, w.Body, body.n)
	}
}

type countingReader struct {
	r io.Reader
	n int
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += n
	return n, err
}
