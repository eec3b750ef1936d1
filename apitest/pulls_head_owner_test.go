package apitest_test

import (
	"encoding/base64"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"repohost/apitest"
)

// TestPullHeadOfHiddenOwner: a pull request's head "owner:branch" (or
// "owner/repo:branch") names an owner; one the caller may not see answers
// exactly like one that does not exist, whether or not it has a fork, when
// creating a pull request and when looking one up by base and head.
func TestPullHeadOfHiddenOwner(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	admin := apitest.Basic(e.Admin)
	alice, hidden, carol := e.CreateUser("alice", false), e.CreateUser("hidden", false), e.CreateUser("carol", false)
	e.CreateUser("hermit", false)
	e.CreateUser("bob", false)
	for _, login := range []string{"hidden", "hermit"} {
		e.Do("PATCH", "admin/users/"+login, map[string]any{"login_name": login, "source_id": 0, "visibility": "private"}, admin).
			Expect(t, http.StatusOK)
	}
	roCreateRepo(t, e, apitest.Basic(alice), map[string]any{"name": "proj", "auto_init": true})
	hc := apitest.Basic(hidden)
	e.Do("POST", "repos/alice/proj/forks", nil, hc).Expect(t, http.StatusAccepted)
	e.Do("POST", "repos/hidden/proj/contents/f.txt", map[string]any{"content": base64.StdEncoding.EncodeToString([]byte("f\n")),
		"new_branch": "feature", "message": "f"}, hc).Expect(t, http.StatusCreated)

	cc := apitest.Basic(carol)
	create := func(head string, cred apitest.Cred) *apitest.Response {
		return e.Do("POST", "repos/alice/proj/pulls", map[string]any{"head": head, "base": "main", "title": "t"}, cred)
	}
	lookup := func(head string, cred apitest.Cred) *apitest.Response {
		return e.Do("GET", "repos/alice/proj/pulls/main/"+url.PathEscape(head), nil, cred)
	}
	for _, ask := range []struct {
		name string
		do   func(string, apitest.Cred) *apitest.Response
	}{{"create", create}, {"lookup", lookup}} {
		for _, cred := range []apitest.Cred{cc, nil} {
			if ask.name == "create" && cred == nil {
				continue
			}
			// The answer for an owner that does not exist, its name
			// taken out.
			want := func(owner, head string) string {
				t.Helper()
				r := ask.do(head, cred).Expect(t, http.StatusNotFound)
				return strings.ReplaceAll(string(r.Body), owner, "OWNER")
			}
			missing := want("ghost", "ghost:feature")
			for _, c := range []struct{ owner, head string }{
				{"hidden", "hidden:feature"},      // a private owner with a fork
				{"hidden", "hidden/proj:feature"}, // the same, by repository
				{"hermit", "hermit:feature"},      // a private owner without one
			} {
				if got := want(c.owner, c.head); got != missing {
					t.Errorf("%s %s: %s, a missing owner: %s", ask.name, c.head, got, missing)
				}
			}
			if r := ask.do("ghost/proj:feature", cred).Expect(t, http.StatusNotFound); strings.ReplaceAll(string(r.Body), "ghost", "OWNER") != missing {
				t.Errorf("%s ghost/proj:feature: %s", ask.name, r.Body)
			}
		}
	}
	// A visible owner without a fork may be told so.
	if r := create("bob:feature", cc).Expect(t, http.StatusNotFound); !strings.Contains(string(r.Body), "no fork") {
		t.Errorf("visible owner without a fork: %s", r.Body)
	}
	// Its owner (and whoever sees it) uses the fork.
	create("hidden:feature", hc).Expect(t, http.StatusCreated)
	lookup("hidden:feature", hc).Expect(t, http.StatusOK)
	lookup("hidden:feature", admin).Expect(t, http.StatusOK)
}
