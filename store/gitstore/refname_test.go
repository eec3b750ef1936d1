package gitstore_test

import (
	"testing"

	"github.com/go-git/go-git/v6/plumbing"

	"repohost/store/gitstore"
)

// TestValidRefName: git's check-ref-format rules, and this server's
// stricter ones that go-git v5 applied (a branch or tag starting with "-",
// a component "@").
func TestValidRefName(t *testing.T) {
	t.Parallel()
	for name, ok := range map[string]bool{
		"HEAD": true, "refs/heads/main": true, "refs/tags/v1.0": true, "refs/heads/a/b-c": true,
		"refs/pull/1/head": true, "refs/heads/x-": true, "refs/notes/-x": true,
		"refs/heads/-x": false, "refs/tags/-dash": false, "refs/heads/@": false, "refs/heads/a/@": false,
		"refs/heads/a..b": false, "refs/heads/x.lock": false, "refs/heads/has space": false,
		"refs/heads/.x": false, "refs/heads/": false, "main": false, "": false,
	} {
		if err := gitstore.ValidRefName(plumbing.ReferenceName(name)); (err == nil) != ok {
			t.Errorf("%q: %v, want valid %v", name, err, ok)
		}
	}
}
