package apitest_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"repohost/apitest"
)

// Every search keyword is bounded like the others (255): a 100,000-byte
// one is a 422, never a pattern the database refuses to run.
func TestSearchKeywordsAreBounded(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	alice := e.CreateUser("alice", false)
	roCreateOrg(t, e, apitest.Basic(alice), map[string]any{"username": "acme"})
	long := url.QueryEscape(strings.Repeat("%_x", 100_000/3))
	for _, path := range []string{"orgs/acme/teams/search", "packages/alice", "admin/packages", "repos/search", "users/search"} {
		e.Do("GET", path+"?q="+long, nil, apitest.Basic(e.Admin)).Expect(t, http.StatusUnprocessableEntity)
		e.Do("GET", path+"?q="+url.QueryEscape(strings.Repeat("%_x", 85)), nil, apitest.Basic(e.Admin)).Expect(t, http.StatusOK)
	}
}
