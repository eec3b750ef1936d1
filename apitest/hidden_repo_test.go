package apitest_test

import (
	"net/http"
	"regexp"
	"sort"
	"strings"
	"testing"

	"repohost/apitest"
)

// TestPrivateRepositoryIsNotFoundOnEveryRoute walks every operation of the
// spec under /repos/{owner}/{repo} on a private repository, and on one that
// does not exist, as an anonymous caller and as a signed-in outsider: each
// answers 404 with the body of a missing repository, before any other
// refusal (the need of a token, a binding error, a missing permission),
// as the reference's repository assignment does. Otherwise "401 token is
// required" or "422 [Title]: Required" would tell an outsider that the
// repository exists. On a public repository the same requests keep their
// own refusals.
func TestPrivateRepositoryIsNotFoundOnEveryRoute(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	alice := e.CreateUser("hidalice", false)
	outsider := e.CreateUser("hidout", false)
	roCreateRepo(t, e, apitest.Basic(alice), map[string]any{"name": "secret", "private": true, "auto_init": true})
	roCreateRepo(t, e, apitest.Basic(alice), map[string]any{"name": "open", "auto_init": true})
	e.Do("POST", "repos/hidalice/secret/issues", map[string]any{"title": "one"}, apitest.Basic(alice)).Expect(t, http.StatusCreated)

	c, err := apitest.SharedContract()
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for key := range c.Operations() {
		if _, path, _ := strings.Cut(key, " "); strings.HasPrefix(path, "/repos/{owner}/{repo}") {
			keys = append(keys, key)
		}
	}
	sort.Strings(keys)
	if len(keys) < 100 {
		t.Fatalf("only %d repository operations in the spec", len(keys))
	}
	param := regexp.MustCompile(`\{[^}]+\}`)
	fill := func(path, repo string) string {
		path = strings.NewReplacer("{owner}", "hidalice", "{repo}", repo).Replace(path)
		return strings.TrimPrefix(param.ReplaceAllString(path, "1"), "/")
	}
	for _, caller := range []struct {
		name string
		cred apitest.Cred
	}{{"anonymous", nil}, {"outsider", apitest.Basic(outsider)}} {
		t.Run(caller.name, func(t *testing.T) {
			for _, key := range keys {
				method, path, _ := strings.Cut(key, " ")
				var body any
				if method == "POST" || method == "PUT" || method == "PATCH" {
					body = map[string]any{}
				}
				for _, repo := range []string{"secret", "missing"} {
					r := e.Do(method, fill(path, repo), body, caller.cred)
					if r.Status != http.StatusNotFound || !strings.Contains(string(r.Body), `"message":"not found"`) {
						t.Errorf("%s %s on %s: %d %s, want 404", method, path, repo, r.Status, r.Body)
					}
				}
			}
		})
	}
	// A repository the caller may see keeps its own refusals.
	e.Do("PATCH", "repos/hidalice/open", map[string]any{}, nil).Expect(t, http.StatusUnauthorized)
	e.Do("GET", "repos/hidalice/open/times", nil, nil).Expect(t, http.StatusUnauthorized)
	e.Do("PATCH", "repos/hidalice/open", map[string]any{}, apitest.Basic(outsider)).Expect(t, http.StatusForbidden)
	e.Do("GET", "repos/hidalice/secret/issues/1/times", nil, apitest.Basic(alice)).Expect(t, http.StatusOK)
}
