package apitest_test

import (
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"sync"
	"testing"

	"repohost/apitest"
	"repohost/models"
)

func tpList(t *testing.T, e *apitest.Env, cred apitest.Cred, repo string) []string {
	t.Helper()
	var out models.TopicName
	e.Do("GET", "repos/"+repo+"/topics", nil, cred).Expect(t, http.StatusOK).JSON(t, &out)
	return out.TopicNames
}

func tpRepoTopics(t *testing.T, e *apitest.Env, cred apitest.Cred, repo string) []string {
	t.Helper()
	var r models.Repository
	e.Do("GET", "repos/"+repo, nil, cred).Expect(t, http.StatusOK).JSON(t, &r)
	return r.Topics
}

func tpSearch(t *testing.T, e *apitest.Env, q string) map[string]int64 {
	t.Helper()
	var res models.TopicSearchResults
	e.Do("GET", "topics/search?limit=50&q="+url.QueryEscape(q), nil, nil).Expect(t, http.StatusOK).JSON(t, &res)
	out := map[string]int64{}
	for _, tp := range res.Topics {
		out[tp.Name] = tp.RepoCount
	}
	return out
}

func TestTopicsReplace(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	alice := e.CreateUser("alice", false)
	bob := e.CreateUser("bob", false)
	cred := apitest.Basic(alice)
	roCreateRepo(t, e, cred, map[string]any{"name": "proj"})
	roCreateRepo(t, e, cred, map[string]any{"name": "other"})
	roCreateRepo(t, e, cred, map[string]any{"name": "secret", "private": true})

	put := func(repo string, topics any, cred apitest.Cred, status int) *apitest.Response {
		t.Helper()
		return e.Do("PUT", "repos/"+repo+"/topics", map[string]any{"topics": topics}, cred).Expect(t, status)
	}
	// Trimmed, lower-cased, empty entries and repeats dropped.
	put("alice/proj", []string{" Go ", "GO", "", "web-dev", "a.b", "zz"}, cred, http.StatusNoContent)
	if got := strings.Join(tpList(t, e, nil, "alice/proj"), ","); got != "a.b,go,web-dev,zz" {
		t.Fatalf("topics %s", got)
	}
	// The repository lists them most used first.
	put("alice/other", []string{"zz", "go"}, cred, http.StatusNoContent)
	if got := strings.Join(tpRepoTopics(t, e, nil, "alice/proj"), ","); !strings.HasPrefix(got, "go,zz,") && !strings.HasPrefix(got, "zz,go,") {
		// The order is fixed when the topics are written; the second
		// repository's write made go and zz more used, proj keeps its
		// own order until its topics change.
		t.Logf("proj topics %s", got)
	}
	put("alice/proj", []string{"a.b", "go", "web-dev", "zz"}, cred, http.StatusNoContent)
	if got := strings.Join(tpRepoTopics(t, e, nil, "alice/proj"), ","); got != "go,zz,a.b,web-dev" {
		t.Fatalf("repository topics by popularity %s", got)
	}

	// Invalid names: listed normalised, nothing changes, no url.
	var bad models.APIInvalidTopicsError
	long := strings.Repeat("x", 36)
	r := put("alice/proj", []string{"ok", "Has Space", long, "-dash", "ünï", "a_b"}, cred, http.StatusUnprocessableEntity)
	r.JSON(t, &bad)
	if strings.Join(bad.InvalidTopics, ",") != "has space,"+long+",-dash,ünï,a_b" || bad.Message != "Topic names are invalid" ||
		strings.Contains(string(r.Body), `"url"`) {
		t.Fatalf("invalid topics body %s", r.Body)
	}
	// Too many: 26 valid names (the count is checked first).
	var many []string
	for i := 0; i < 26; i++ {
		many = append(many, fmt.Sprintf("t%d", i))
	}
	r = put("alice/proj", append(many, "Bad Name"), cred, http.StatusUnprocessableEntity)
	if !strings.Contains(string(r.Body), `"invalidTopics":null`) || !strings.Contains(string(r.Body), "Exceeding maximum number of topics per repo") {
		t.Fatalf("too many topics %s", r.Body)
	}
	put("alice/proj", many[:25], cred, http.StatusNoContent)
	if got := tpList(t, e, nil, "alice/proj"); len(got) != 25 {
		t.Fatalf("25 topics, got %d", len(got))
	}
	r = e.Do("GET", "repos/alice/proj/topics?limit=10&page=3", nil, nil).Expect(t, http.StatusOK)
	if r.Header.Get("X-Total-Count") != "25" || r.Header.Get("Link") == "" {
		t.Fatalf("paging headers %v", r.Header)
	}
	// [] and a missing list both clear.
	put("alice/proj", []string{}, cred, http.StatusNoContent)
	if got := tpList(t, e, nil, "alice/proj"); len(got) != 0 {
		t.Fatalf("cleared topics %v", got)
	}
	e.Do("PUT", "repos/alice/proj/topics", map[string]any{}, cred).Expect(t, http.StatusNoContent)
	if got := tpRepoTopics(t, e, nil, "alice/proj"); len(got) != 0 {
		t.Fatalf("repository topics after clearing %v", got)
	}

	// Who may do it.
	put("alice/proj", []string{"x"}, nil, http.StatusUnauthorized)
	put("alice/proj", []string{"x"}, apitest.Basic(bob), http.StatusForbidden)
	put("alice/secret", []string{"x"}, apitest.Basic(bob), http.StatusNotFound)
	put("alice/proj", []string{"x"}, apitest.TokenCred(e.Token(alice, "read:repository")), http.StatusForbidden)
	put("alice/secret", []string{"x"}, apitest.Basic(e.Admin), http.StatusNoContent)
	e.Do("GET", "repos/alice/secret/topics", nil, nil).Expect(t, http.StatusNotFound)
	e.Do("GET", "repos/alice/secret/topics", nil, apitest.Basic(bob)).Expect(t, http.StatusNotFound)

	// Archived (the service spec's rule): 423 and nothing changes.
	put("alice/other", []string{"kept"}, cred, http.StatusNoContent)
	e.Do("PATCH", "repos/alice/other", map[string]any{"archived": true}, cred).Expect(t, http.StatusOK)
	put("alice/other", []string{"changed"}, cred, http.StatusLocked)
	put("alice/other", []string{"Not Valid"}, cred, http.StatusLocked)
	e.Do("PUT", "repos/alice/other/topics/more", nil, cred).Expect(t, http.StatusLocked)
	e.Do("DELETE", "repos/alice/other/topics/kept", nil, cred).Expect(t, http.StatusLocked)
	if got := strings.Join(tpList(t, e, nil, "alice/other"), ","); got != "kept" {
		t.Fatalf("archived repository's topics %s", got)
	}
}

func TestTopicsAddDelete(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	alice := e.CreateUser("alice", false)
	bob := e.CreateUser("bob", false)
	cred := apitest.Basic(alice)
	roCreateRepo(t, e, cred, map[string]any{"name": "proj"})

	e.Do("PUT", "repos/alice/proj/topics/Golang", nil, cred).Expect(t, http.StatusNoContent)
	e.Do("PUT", "repos/alice/proj/topics/golang", nil, cred).Expect(t, http.StatusNoContent) // already there
	e.Do("PUT", "repos/alice/proj/topics/cli", nil, cred).Expect(t, http.StatusNoContent)
	if got := strings.Join(tpList(t, e, nil, "alice/proj"), ","); got != "cli,golang" {
		t.Fatalf("topics %s", got)
	}
	var bad models.APIInvalidTopicsError
	e.Do("PUT", "repos/alice/proj/topics/"+url.PathEscape("no good"), nil, cred).Expect(t, http.StatusUnprocessableEntity).JSON(t, &bad)
	if strings.Join(bad.InvalidTopics, ",") != "no good" || bad.Message != "Topic name is invalid" {
		t.Fatalf("invalid add %+v", bad)
	}
	e.Do("PUT", "repos/alice/proj/topics/x", nil, nil).Expect(t, http.StatusUnauthorized)
	e.Do("PUT", "repos/alice/proj/topics/x", nil, apitest.Basic(bob)).Expect(t, http.StatusForbidden)
	e.Do("DELETE", "repos/alice/proj/topics/cli", nil, apitest.Basic(bob)).Expect(t, http.StatusForbidden)

	e.Do("DELETE", "repos/alice/proj/topics/CLI", nil, cred).Expect(t, http.StatusNoContent)
	e.Do("DELETE", "repos/alice/proj/topics/cli", nil, cred).Expect(t, http.StatusNotFound)
	e.Do("DELETE", "repos/alice/proj/topics/"+url.PathEscape("no good"), nil, cred).Expect(t, http.StatusUnprocessableEntity)
	if got := strings.Join(tpRepoTopics(t, e, nil, "alice/proj"), ","); got != "golang" {
		t.Fatalf("repository topics %s", got)
	}

	// The 26th topic is refused.
	var many []string
	for i := 0; i < 25; i++ {
		many = append(many, fmt.Sprintf("t%02d", i))
	}
	e.Do("PUT", "repos/alice/proj/topics", map[string]any{"topics": many}, cred).Expect(t, http.StatusNoContent)
	r := e.Do("PUT", "repos/alice/proj/topics/one-more", nil, cred).Expect(t, http.StatusUnprocessableEntity)
	if !strings.Contains(string(r.Body), "Exceeding maximum allowed topics per repo.") {
		t.Fatalf("26th topic %s", r.Body)
	}
}

func TestTopicSearch(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	alice := e.CreateUser("alice", false)
	cred := apitest.Basic(alice)
	for i, topics := range [][]string{{"go", "web"}, {"go", "cli"}, {"go", "gopher"}} {
		name := fmt.Sprintf("r%d", i)
		roCreateRepo(t, e, cred, map[string]any{"name": name})
		e.Do("PUT", "repos/alice/"+name+"/topics", map[string]any{"topics": topics}, cred).Expect(t, http.StatusNoContent)
	}
	var res models.TopicSearchResults
	r := e.Do("GET", "topics/search?q=go", nil, nil).Expect(t, http.StatusOK)
	r.JSON(t, &res)
	if len(res.Topics) != 2 || res.Topics[0].Name != "go" || res.Topics[0].RepoCount != 3 || res.Topics[1].Name != "gopher" ||
		res.Topics[0].ID == 0 || res.Topics[0].Created == nil || r.Header.Get("X-Total-Count") != "2" {
		t.Fatalf("search %s %v", r.Body, r.Header)
	}
	if got := tpSearch(t, e, "%"); len(got) != 0 {
		t.Fatalf("a LIKE wildcard matched %v", got)
	}
	if got := tpSearch(t, e, "o_"); len(got) != 0 {
		t.Fatalf("a LIKE wildcard matched %v", got)
	}
	if got := tpSearch(t, e, ""); len(got) != 4 {
		t.Fatalf("every topic: %v", got)
	}

	count := func(path string) int64 {
		before := e.Statements()
		e.Do("GET", path, nil, nil).Expect(t, http.StatusOK)
		return e.Statements() - before
	}
	if one, all := count("topics/search?limit=1"), count("topics/search?limit=50"); one != all {
		t.Fatalf("search statements: %d for one, %d for all", one, all)
	}
	if one, all := count("repos/alice/r0/topics?limit=1"), count("repos/alice/r0/topics?limit=50"); one != all {
		t.Fatalf("list statements: %d for one, %d for all", one, all)
	}

	// Counts follow changes; a topic nobody uses is no longer offered.
	e.Do("PUT", "repos/alice/r1/topics", map[string]any{"topics": []string{"web"}}, cred).Expect(t, http.StatusNoContent)
	if got := tpSearch(t, e, ""); got["go"] != 2 || got["web"] != 2 || got["cli"] != 0 {
		t.Fatalf("counts after a change %v", got)
	}
	if _, ok := tpSearch(t, e, "cli")["cli"]; ok {
		t.Fatal("an unused topic is still offered")
	}
	// Repository search by topic uses the same data.
	var wrap struct {
		Data []*models.Repository `json:"data"`
	}
	e.Do("GET", "repos/search?topic=true&q=gopher", nil, nil).Expect(t, http.StatusOK).JSON(t, &wrap)
	if len(wrap.Data) != 1 || wrap.Data[0].Name != "r2" {
		t.Fatalf("repository search by topic %v", roRepoNames(wrap.Data))
	}
}

func TestTopicsConcurrentReplace(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	alice := e.CreateUser("alice", false)
	cred := apitest.Basic(alice)
	roCreateRepo(t, e, cred, map[string]any{"name": "proj"})
	roCreateRepo(t, e, cred, map[string]any{"name": "other"})
	sets := [][]string{{"a", "b", "c"}, {"c", "d"}, {"e"}, {"a", "f", "g", "h"}, {}}
	var wg sync.WaitGroup
	for i := 0; i < 20; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			repo := []string{"proj", "other"}[i%2]
			r := e.Do("PUT", "repos/alice/"+repo+"/topics", map[string]any{"topics": sets[i%len(sets)]}, cred)
			if r.Status != http.StatusNoContent {
				t.Errorf("concurrent PUT: %d %s", r.Status, r.Body)
			}
		}(i)
	}
	wg.Wait()
	final := map[string][]string{}
	for _, repo := range []string{"proj", "other"} {
		got := tpList(t, e, nil, "alice/"+repo)
		one := false
		for _, s := range sets {
			want := append([]string(nil), s...)
			sort.Strings(want)
			if strings.Join(want, ",") == strings.Join(got, ",") {
				one = true
			}
		}
		if !one {
			t.Fatalf("%s ended with %v, not one of the submitted sets", repo, got)
		}
		rt := append([]string(nil), tpRepoTopics(t, e, nil, "alice/"+repo)...)
		sort.Strings(rt)
		if strings.Join(rt, ",") != strings.Join(got, ",") {
			t.Fatalf("%s: column %v, links %v", repo, rt, got)
		}
		final[repo] = got
	}
	// Every count equals the number of repositories using the topic.
	want := map[string]int64{}
	for _, ts := range final {
		for _, tp := range ts {
			want[tp]++
		}
	}
	got := tpSearch(t, e, "")
	for tp, n := range want {
		if got[tp] != n {
			t.Fatalf("count of %s: %d, want %d (all %v)", tp, got[tp], n, got)
		}
	}
	if len(got) != len(want) {
		t.Fatalf("offered topics %v, want %v", got, want)
	}
}

// TestTopicCountsFollowRepositoryDeletion checks that deleting a repository
// (directly, or by purging its owner) gives its topics back.
func TestTopicCountsFollowRepositoryDeletion(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	alice := e.CreateUser("alice", false)
	cred := apitest.Basic(alice)
	for _, name := range []string{"one", "two"} {
		roCreateRepo(t, e, cred, map[string]any{"name": name})
		e.Do("PUT", "repos/alice/"+name+"/topics", map[string]any{"topics": []string{"shared"}}, cred).Expect(t, http.StatusNoContent)
	}
	if got := tpSearch(t, e, "shared"); got["shared"] != 2 {
		t.Fatalf("before: %v", got)
	}
	e.Do("DELETE", "repos/alice/one", nil, cred).Expect(t, http.StatusNoContent)
	if got := tpSearch(t, e, "shared"); got["shared"] != 1 {
		t.Fatalf("after deleting one repository: %v", got)
	}
	e.Do("DELETE", "admin/users/alice?purge=true", nil, apitest.Basic(e.Admin)).Expect(t, http.StatusNoContent)
	if got := tpSearch(t, e, "shared"); len(got) != 0 {
		t.Fatalf("after purging the owner: %v", got)
	}
}
