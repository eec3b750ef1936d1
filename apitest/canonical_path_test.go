package apitest_test

import (
	"net/http"
	"testing"

	"repohost/apitest"
)

// TestNonCanonicalAPIPathsAreNotRedirected: a path with "." or ".."
// segments answers 404. It used to be redirected with 307 to the cleaned
// path, which clients follow with the same method: DELETE
// .../branches/.. deleted the repository itself (found by FuzzOperations).
func TestNonCanonicalAPIPathsAreNotRedirected(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	alice := e.CreateUser("cpalice", false)
	cred := apitest.Basic(alice)
	roCreateRepo(t, e, cred, map[string]any{"name": "keep", "auto_init": true})
	for _, c := range []struct{ method, path string }{
		{"DELETE", "repos/cpalice/keep/branches/.."},
		{"DELETE", "repos/cpalice/keep/topics/.."},
		{"DELETE", "repos/cpalice/keep/issues/./.."},
		{"GET", "users/.."},
		{"GET", "repos/cpalice/keep/contents/."},
		{"GET", "repos/cpalice/./keep"},
		{"PATCH", "repos/cpalice/../cpalice/keep"},
		{"GET", "repos/cpalice//keep"},
	} {
		// The test client follows redirects, as most clients do.
		e.Do(c.method, c.path, "{}", cred).Expect(t, http.StatusNotFound)
	}
	e.Do("GET", "repos/cpalice/keep", nil, cred).Expect(t, http.StatusOK)
	// Escaped dots and slashes are part of a name, not path syntax.
	e.Do("GET", "repos/cpalice/keep/branches/%2E%2E", nil, cred).Expect(t, http.StatusNotFound)
	e.Do("GET", "repos/cpalice/keep/contents/README.md", nil, cred).Expect(t, http.StatusOK)
}
