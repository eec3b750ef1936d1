package apitest_test

import (
	"fmt"
	"maps"
	"net/http"
	"testing"

	"repohost/apitest"
	"repohost/models"
)

// tvSearch is GET /topics/search as cred: topic names with their counts,
// and X-Total-Count.
func tvSearch(t *testing.T, e *apitest.Env, cred apitest.Cred, query string) (map[string]int64, string) {
	t.Helper()
	var res models.TopicSearchResults
	r := e.Do("GET", "topics/search?limit=50"+query, nil, cred).Expect(t, http.StatusOK)
	r.JSON(t, &res)
	out := map[string]int64{}
	for _, tp := range res.Topics {
		out[tp.Name] = tp.RepoCount
	}
	return out, r.Header.Get("X-Total-Count")
}

// TestTopicSearchCountsOnlyVisibleRepositories: topic search names and
// counts only repositories the caller may see, by the rule the repository
// lists use. Before, it counted and named the topics of private
// repositories for anonymous callers, outsiders and public-only tokens.
func TestTopicSearchCountsOnlyVisibleRepositories(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	admin := apitest.Basic(e.Admin)
	owner := e.CreateUser("tvowner", false)
	boss := e.CreateUser("tvboss", false)
	member := e.CreateUser("tvmember", false)
	outsider := e.CreateUser("tvoutsider", false)
	limited := e.CreateUser("tvlimited", false)
	e.Do("PATCH", "admin/users/tvlimited", map[string]any{"login_name": "tvlimited", "source_id": 0, "visibility": "limited"},
		admin).Expect(t, http.StatusOK)

	topics := func(cred apitest.Cred, repo string, names ...string) {
		e.Do("PUT", "repos/"+repo+"/topics", map[string]any{"topics": names}, cred).Expect(t, http.StatusNoContent)
	}
	ownerCred := apitest.Basic(owner)
	roCreateRepo(t, e, ownerCred, map[string]any{"name": "pub"})
	topics(ownerCred, "tvowner/pub", "shared", "open")
	roCreateRepo(t, e, ownerCred, map[string]any{"name": "priv", "private": true})
	topics(ownerCred, "tvowner/priv", "shared", "secret")
	bossCred := apitest.Basic(boss)
	org := roCreateOrg(t, e, bossCred, map[string]any{"username": "tvorg", "visibility": "public"})
	e.Do("POST", "orgs/tvorg/repos", map[string]any{"name": "opriv", "private": true}, bossCred).Expect(t, http.StatusCreated)
	topics(bossCred, "tvorg/opriv", "shared", "orgsecret")
	roAddMember(t, e, org.ID, member, false, false)
	limitedCred := apitest.Basic(limited)
	roCreateRepo(t, e, limitedCred, map[string]any{"name": "pub"})
	topics(limitedCred, "tvlimited/pub", "shared", "insiders")

	publicOnly := func(a *apitest.Account) apitest.Cred {
		return apitest.TokenCred(e.Token(a, "public-only", "read:repository"))
	}
	anonymous := map[string]int64{"shared": 1, "open": 1}
	signedIn := map[string]int64{"shared": 2, "open": 1, "insiders": 1}
	for _, c := range []struct {
		name string
		cred apitest.Cred
		want map[string]int64
	}{
		{"anonymous", nil, anonymous},
		{"outsider", apitest.Basic(outsider), signedIn},
		{"public-only token of the owner", publicOnly(owner), anonymous},
		{"public-only token of a site admin", publicOnly(e.Admin), anonymous},
		{"org member", apitest.Basic(member), map[string]int64{"shared": 3, "open": 1, "insiders": 1, "orgsecret": 1}},
		{"owner", ownerCred, map[string]int64{"shared": 3, "open": 1, "insiders": 1, "secret": 1}},
		{"site admin", admin, map[string]int64{"shared": 4, "open": 1, "insiders": 1, "secret": 1, "orgsecret": 1}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, total := tvSearch(t, e, c.cred, "")
			if !maps.Equal(got, c.want) || total != fmt.Sprint(len(c.want)) {
				t.Errorf("topics %v (X-Total-Count %s), want %v", got, total, c.want)
			}
			// The same answer the repository search gives this caller:
			// one visibility rule.
			var wrap struct {
				Data []*models.Repository `json:"data"`
			}
			e.Do("GET", "repos/search?limit=50", nil, c.cred).Expect(t, http.StatusOK).JSON(t, &wrap)
			fromRepos := map[string]int64{}
			for _, r := range wrap.Data {
				for _, tp := range r.Topics {
					fromRepos[tp]++
				}
			}
			if !maps.Equal(got, fromRepos) {
				t.Errorf("topics %v, but the repositories /repos/search lists carry %v", got, fromRepos)
			}
			// A keyword only private repositories use finds nothing
			// for whoever cannot see them.
			for _, secret := range []string{"secret", "orgsecret", "insiders"} {
				got, total := tvSearch(t, e, c.cred, "&q="+secret)
				want := map[string]int64{}
				if n, ok := c.want[secret]; ok {
					want[secret] = n
				}
				if secret == "secret" {
					// "secret" also matches "orgsecret".
					if n, ok := c.want["orgsecret"]; ok {
						want["orgsecret"] = n
					}
				}
				if !maps.Equal(got, want) || total != fmt.Sprint(len(want)) {
					t.Errorf("q=%s: topics %v (X-Total-Count %s), want %v", secret, got, total, want)
				}
			}
		})
	}

	// The statement count does not grow with the page, for a filtered
	// caller as for an unfiltered one.
	for _, cred := range []apitest.Cred{nil, apitest.Basic(outsider), admin} {
		count := func(limit int) int64 {
			before := e.Statements()
			e.Do("GET", fmt.Sprintf("topics/search?limit=%d", limit), nil, cred).Expect(t, http.StatusOK)
			return e.Statements() - before
		}
		if one, all := count(1), count(50); one != all {
			t.Errorf("topic search statements: %d for a page of one, %d for fifty", one, all)
		}
	}
}
