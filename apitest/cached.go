package apitest

import (
	"bytes"
	"fmt"
	"net/http"
	"testing"
	"time"
)

// CachedServers runs test twice on servers that keep in memory what
// `repohost serve` keeps (NewCached): a serves the requests under test and
// b makes the changes; first b is a itself, and a's answers must follow
// b's changes at once (within 0), then b is a's Twin on the same database,
// and they must follow within a second.
func CachedServers(t *testing.T, test func(t *testing.T, a, b *Env, within time.Duration)) {
	for _, c := range []struct {
		name   string
		twin   bool
		within time.Duration
	}{{"same server", false, 0}, {"another server on the same database", true, time.Second}} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			a := NewCached(t)
			b := a
			if c.twin {
				b = a.Twin(t)
			}
			test(t, a, b, c.within)
		})
	}
}

// Eventually calls ok until it reports true, and fails the test with what
// and ok's account of the last try once within has passed (ok is called at
// least once).
func Eventually(t testing.TB, within time.Duration, what string, ok func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		good, got := ok()
		if good {
			return
		}
		if !time.Now().Before(deadline) {
			t.Fatalf("%s: %s (within %v)", what, got, within)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// ServedFromMemory checks that a answers a repeated GET of path for cred
// with the same bytes (body, X-Total-Count and Link) and, when b is a
// itself, with fewer statements than once change (made on b) has retired
// the kept answer.
func ServedFromMemory(t testing.TB, a, b *Env, path string, cred Cred, change func()) {
	t.Helper()
	first := a.Do(http.MethodGet, path, nil, cred).Expect(t, http.StatusOK)
	n := a.Statements()
	again := a.Do(http.MethodGet, path, nil, cred).Expect(t, http.StatusOK)
	hit := a.Statements() - n
	if !bytes.Equal(first.Body, again.Body) || first.Header.Get("X-Total-Count") != again.Header.Get("X-Total-Count") ||
		first.Header.Get("Link") != again.Header.Get("Link") {
		t.Fatalf("%s: repeated answer differs:\n%s\n%s", path, first.Body, again.Body)
	}
	change()
	n = a.Statements()
	a.Do(http.MethodGet, path, nil, cred).Expect(t, http.StatusOK)
	if miss := a.Statements() - n; b == a && hit >= miss {
		t.Fatalf("%s: a repeated answer ran %d statements, a fresh one %d: not served from memory", path, hit, miss)
	}
}

// FollowsChange warms a's answer to GET path for cred, checks that it does
// not show the change yet, makes the change (do: on a, or on another server
// on its database), then waits at most within for a's answer to show it.
func FollowsChange(t testing.TB, a *Env, within time.Duration, what, path string, cred Cred, do func(), shows func(*Response) bool) {
	t.Helper()
	a.Do(http.MethodGet, path, nil, cred).Expect(t, http.StatusOK)
	if r := a.Do(http.MethodGet, path, nil, cred).Expect(t, http.StatusOK); shows(r) {
		t.Fatalf("%s: shown before the change: %s", what, r.Body)
	}
	do()
	Eventually(t, within, what, func() (bool, string) {
		r := a.Do(http.MethodGet, path, nil, cred).Expect(t, http.StatusOK)
		return shows(r), fmt.Sprintf("GET %s answers %s", path, r.Body)
	})
}
