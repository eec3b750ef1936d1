package apitest_test

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"io"
	"net/http"
	"testing"
	"time"

	"repohost/apitest"
	"repohost/impl/app"
)

// TestArchiveAndLargeRawDownloadsAreBounded: archives and raw downloads of
// large blobs share Config.MaxHeavyRequests slots. With every slot taken,
// one more waits HeavyRequestWait and is answered 503 with Retry-After,
// on the API routes and on /{owner}/{repo}/archive alike; a small raw file
// never waits. Each finished or abandoned download gives its slot back.
func TestArchiveAndLargeRawDownloadsAreBounded(t *testing.T) {
	t.Parallel()
	e := apitest.NewWithConfig(t, func(c *app.Config) {
		c.MaxHeavyRequests = 1
		c.HeavyRequestWait = 50 * time.Millisecond
		c.LargeBlobBytes = 1000
		c.MaxBodyBytes = 32 << 20
	})
	alice := e.CreateUser("alice", false)
	owner := apitest.Basic(alice)
	roCreateRepo(t, e, owner, map[string]any{"name": "pub", "auto_init": true})
	big := make([]byte, 12<<20)
	if _, err := rand.Read(big); err != nil {
		t.Fatal(err)
	}
	e.Do("POST", "repos/alice/pub/contents/big.bin", map[string]any{"content": base64.StdEncoding.EncodeToString(big)}, owner).
		Expect(t, http.StatusCreated)
	e.Do("POST", "repos/alice/pub/contents/small.txt", map[string]any{"content": b64("small")}, owner).
		Expect(t, http.StatusCreated)

	// The test holds the only slot.
	release, err := e.Deps.Heavy().Acquire(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{"repos/alice/pub/archive/main.zip", "repos/alice/pub/archive/main.tar.gz", "repos/alice/pub/raw/big.bin", "/alice/pub/archive/main.zip"} {
		r := e.Do("GET", path, nil, nil)
		if r.Status != http.StatusServiceUnavailable || r.Header.Get("Retry-After") == "" {
			t.Errorf("GET %s with every slot taken: %d, Retry-After %q", path, r.Status, r.Header.Get("Retry-After"))
		}
	}
	// Refusals come before the wait: a missing archive is a 404 at once.
	e.Do("GET", "repos/alice/pub/archive/nope.zip", nil, nil).Expect(t, http.StatusNotFound)
	if r := e.Do("GET", "repos/alice/pub/raw/small.txt", nil, nil).Expect(t, http.StatusOK); string(r.Body) != "small" {
		t.Fatalf("small raw file: %q", r.Body)
	}
	release()

	// One slot serves download after download: each gives it back.
	for _, path := range []string{"repos/alice/pub/archive/main.zip", "repos/alice/pub/raw/big.bin", "/alice/pub/archive/main.tar.gz",
		"repos/alice/pub/archive/main.tar.gz", "repos/alice/pub/archive/main.zip"} {
		r := e.Do("GET", path, nil, nil).Expect(t, http.StatusOK)
		if len(r.Body) < len(big) {
			t.Fatalf("GET %s: %d bytes", path, len(r.Body))
		}
	}

	// A client that goes away mid-download gives the slot back too.
	for _, path := range []string{"/api/v1/repos/alice/pub/archive/main.zip", "/api/v1/repos/alice/pub/raw/big.bin", "/alice/pub/archive/main.zip"} {
		resp, err := http.Get(e.Server.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: %d", path, resp.StatusCode)
		}
		if _, err := io.ReadFull(resp.Body, make([]byte, 1024)); err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		deadline := time.Now().Add(20 * time.Second)
		for {
			ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
			release, err := e.Deps.Heavy().Acquire(ctx)
			cancel()
			if err == nil {
				release()
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("the slot of an abandoned GET %s was not given back", path)
			}
		}
	}
}
