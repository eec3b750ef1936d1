package statuses

import (
	"testing"

	"repohost/store"
)

func latest(pairs ...string) []*store.CommitStatus {
	var out []*store.CommitStatus
	for i := 0; i+1 < len(pairs); i += 2 {
		out = append(out, &store.CommitStatus{Context: pairs[i], State: pairs[i+1]})
	}
	return out
}

func TestCombine(t *testing.T) {
	for _, c := range []struct {
		in   []*store.CommitStatus
		want string
	}{
		{nil, Pending},
		{latest("a", Success), Success},
		{latest("a", Success, "b", Skipped), Success},
		{latest("a", Success, "b", Pending), Pending},
		{latest("a", Success, "b", Warning), Failure},
		{latest("a", Pending, "b", Error), Failure},
	} {
		if got := Combine(c.in); got != c.want {
			t.Errorf("Combine(%v) = %s, want %s", c.in, got, c.want)
		}
	}
}

func TestRequiredState(t *testing.T) {
	for _, c := range []struct {
		in       []*store.CommitStatus
		required []string
		want     string
	}{
		// No pattern: every context counts, and none is not success.
		{nil, nil, Pending},
		{latest("lint", Failure), nil, Failure},
		// "*" crosses "/", as the reference's globs do.
		{latest("ci/build/linux", Success, "lint", Failure), []string{"ci/*"}, Success},
		// A pattern that matches no context waits.
		{latest("ci/build", Success), []string{"ci/*", "deploy"}, Pending},
		// The worst state of the matched contexts.
		{latest("ci/build", Success, "deploy", Error), []string{"ci/*", "deploy"}, Error},
		{latest("ci/build", Skipped), []string{"ci/*"}, Success},
		// A pattern that does not compile is skipped; then no pattern
		// matches and the combination of all decides.
		{latest("ci", Success), []string{"[ci"}, Success},
	} {
		if got := RequiredState(c.in, c.required); got != c.want {
			t.Errorf("RequiredState(%v, %q) = %s, want %s", c.in, c.required, got, c.want)
		}
	}
}
