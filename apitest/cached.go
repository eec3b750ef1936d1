package apitest

import (
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
