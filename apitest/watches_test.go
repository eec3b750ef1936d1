package apitest_test

import (
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"

	"repohost/apitest"
	"repohost/impl/events"
	"repohost/models"
)

// watchersOf reads owner/name's watchers_count as cred sees it.
func watchersOf(t *testing.T, e *apitest.Env, path string, cred apitest.Cred) int64 {
	t.Helper()
	var r models.Repository
	e.Do("GET", "repos/"+path, nil, cred).Expect(t, http.StatusOK).JSON(t, &r)
	return r.Watchers
}

func userNames(us []*models.User) string {
	var out []string
	for _, u := range us {
		out = append(out, u.UserName)
	}
	return strings.Join(out, ",")
}

func repoNames(rs []*models.Repository) string {
	var out []string
	for _, r := range rs {
		out = append(out, r.FullName)
	}
	return strings.Join(out, ",")
}

// TestRepoWatch: the creator's auto-watch (and, in an organization, the
// all-repositories teams' members'), the subscription routes and their
// WatchInfo, the lists, and who sees what in them.
func TestRepoWatch(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	alice, bob, carol := e.CreateUser("alice", false), e.CreateUser("bob", false), e.CreateUser("carol", false)
	ac, bc, cc := apitest.Basic(alice), apitest.Basic(bob), apitest.Basic(carol)

	var created models.Repository
	e.Do("POST", "user/repos", map[string]any{"name": "pub"}, ac).Expect(t, http.StatusCreated).JSON(t, &created)
	if created.Watchers != 1 {
		t.Fatalf("new repository watchers_count %d, want 1 (the creator)", created.Watchers)
	}
	e.Do("POST", "user/repos", map[string]any{"name": "secret", "private": true}, ac).Expect(t, http.StatusCreated)

	var wi models.WatchInfo
	e.Do("GET", "repos/alice/pub/subscription", nil, ac).Expect(t, http.StatusOK).JSON(t, &wi)
	if !wi.Subscribed || wi.Ignored || wi.Reason != nil || !strings.HasSuffix(wi.URL, "/api/v1/repos/alice/pub/subscription") ||
		!strings.HasSuffix(wi.RepositoryURL, "/api/v1/repos/alice/pub") {
		t.Fatalf("watch info %+v", wi)
	}
	e.Do("GET", "repos/alice/pub/subscription", nil, bc).Expect(t, http.StatusNotFound)
	e.Do("GET", "repos/alice/pub/subscription", nil, nil).Expect(t, http.StatusUnauthorized)
	e.Do("PUT", "repos/alice/pub/subscription", nil, nil).Expect(t, http.StatusUnauthorized)
	e.Do("PUT", "repos/alice/secret/subscription", nil, bc).Expect(t, http.StatusNotFound)
	e.Do("PUT", "repos/alice/pub/subscription", nil, bc).Expect(t, http.StatusOK).JSON(t, &wi)
	if !wi.Subscribed {
		t.Fatalf("put watch info %+v", wi)
	}
	e.Do("PUT", "repos/alice/pub/subscription", nil, bc).Expect(t, http.StatusOK) // again: no second count
	if n := watchersOf(t, e, "alice/pub", nil); n != 2 {
		t.Fatalf("watchers_count %d, want 2", n)
	}
	e.Do("GET", "repos/alice/pub/subscription", nil, bc).Expect(t, http.StatusOK)

	var users []*models.User
	resp := e.Do("GET", "repos/alice/pub/subscribers", nil, nil).Expect(t, http.StatusOK)
	resp.JSON(t, &users)
	if userNames(users) != "alice,bob" || resp.Header.Get("X-Total-Count") != "2" {
		t.Fatalf("subscribers %s (total %s)", userNames(users), resp.Header.Get("X-Total-Count"))
	}
	resp = e.Do("GET", "repos/alice/pub/subscribers?limit=1&page=2", nil, nil).Expect(t, http.StatusOK)
	resp.JSON(t, &users)
	if userNames(users) != "bob" || !strings.Contains(resp.Header.Get("Link"), `rel="prev"`) {
		t.Fatalf("second page %s, link %q", userNames(users), resp.Header.Get("Link"))
	}
	e.Do("GET", "repos/alice/secret/subscribers", nil, bc).Expect(t, http.StatusNotFound)

	// Lists: a private repository only for those who may see it.
	var repos []*models.Repository
	e.Do("GET", "user/subscriptions", nil, ac).Expect(t, http.StatusOK).JSON(t, &repos)
	if repoNames(repos) != "alice/pub,alice/secret" {
		t.Fatalf("alice's subscriptions %s", repoNames(repos))
	}
	e.Do("GET", "users/alice/subscriptions", nil, bc).Expect(t, http.StatusOK).JSON(t, &repos)
	if repoNames(repos) != "alice/pub" {
		t.Fatalf("alice's subscriptions seen by bob %s", repoNames(repos))
	}
	e.Do("GET", "user/subscriptions", nil, nil).Expect(t, http.StatusUnauthorized)
	e.Do("GET", "users/nobody/subscriptions", nil, nil).Expect(t, http.StatusNotFound)

	// Carol, a collaborator, watches the private one, then loses access:
	// it leaves her list.
	e.Do("PUT", "repos/alice/secret/collaborators/carol", map[string]any{"permission": "read"}, ac).Expect(t, http.StatusNoContent)
	e.Do("PUT", "repos/alice/secret/subscription", nil, cc).Expect(t, http.StatusOK)
	e.Do("GET", "user/subscriptions", nil, cc).Expect(t, http.StatusOK).JSON(t, &repos)
	if repoNames(repos) != "alice/secret" {
		t.Fatalf("carol's subscriptions %s", repoNames(repos))
	}
	e.Do("DELETE", "repos/alice/secret/collaborators/carol", nil, ac).Expect(t, http.StatusNoContent)
	resp = e.Do("GET", "user/subscriptions", nil, cc).Expect(t, http.StatusOK)
	resp.JSON(t, &repos)
	if len(repos) != 0 || resp.Header.Get("X-Total-Count") != "0" {
		t.Fatalf("carol's subscriptions after losing access %s", repoNames(repos))
	}

	// Unwatch.
	e.Do("DELETE", "repos/alice/pub/subscription", nil, bc).Expect(t, http.StatusNoContent)
	e.Do("DELETE", "repos/alice/pub/subscription", nil, bc).Expect(t, http.StatusNoContent)
	e.Do("GET", "repos/alice/pub/subscription", nil, bc).Expect(t, http.StatusNotFound)
	if n := watchersOf(t, e, "alice/pub", nil); n != 1 {
		t.Fatalf("watchers_count after unwatch %d, want 1", n)
	}

	// An organization's repository: its creator and the members of the
	// teams with all repositories (the owners) watch it; a forker its fork.
	e.Do("POST", "orgs", map[string]any{"username": "acme"}, ac).Expect(t, http.StatusCreated)
	tmTeam(t, e, ac, "acme", map[string]any{"name": "all", "includes_all_repositories": true, "units_map": tmAllUnits("write"),
		"can_create_org_repo": true}, "bob")
	tmTeam(t, e, ac, "acme", map[string]any{"name": "some", "units_map": tmAllUnits("read")}, "carol")
	e.Do("POST", "orgs/acme/repos", map[string]any{"name": "proj"}, bc).Expect(t, http.StatusCreated).JSON(t, &created)
	if created.Watchers != 2 {
		t.Fatalf("organization repository watchers_count %d, want 2", created.Watchers)
	}
	e.Do("GET", "repos/acme/proj/subscribers", nil, ac).Expect(t, http.StatusOK).JSON(t, &users)
	if userNames(users) != "alice,bob" {
		t.Fatalf("organization repository subscribers %s", userNames(users))
	}
	var fork models.Repository
	e.Do("POST", "repos/alice/pub/forks", map[string]any{}, cc).Expect(t, http.StatusAccepted).JSON(t, &fork)
	if fork.Watchers != 1 {
		t.Fatalf("fork watchers_count %d, want 1", fork.Watchers)
	}
	e.Do("GET", "repos/carol/pub/subscription", nil, cc).Expect(t, http.StatusOK)
}

// TestRepoWatchConcurrent: 50 users watching at once give 50 more watchers
// than the owner's auto-watch, and unwatching at once brings the count back.
func TestRepoWatchConcurrent(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	owner := e.CreateUser("owner", false)
	e.Do("POST", "user/repos", map[string]any{"name": "hot"}, apitest.Basic(owner)).Expect(t, http.StatusCreated)
	const n = 50
	creds := make([]apitest.Cred, n)
	for i := range creds {
		creds[i] = apitest.Basic(e.CreateUser(fmt.Sprintf("w%02d", i), false))
	}
	all := func(method string, want int) {
		var wg sync.WaitGroup
		for _, c := range creds {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if r := e.Do(method, "repos/owner/hot/subscription", nil, c); r.Status != want {
					t.Errorf("%s: status %d, body %s", method, r.Status, r.Body)
				}
			}()
		}
		wg.Wait()
	}
	all("PUT", http.StatusOK)
	if got := watchersOf(t, e, "owner/hot", nil); got != n+1 {
		t.Fatalf("watchers_count after %d watches %d, want %d", n, got, n+1)
	}
	resp := e.Do("GET", "repos/owner/hot/subscribers", nil, nil).Expect(t, http.StatusOK)
	if resp.Header.Get("X-Total-Count") != fmt.Sprint(n+1) {
		t.Fatalf("subscribers total %s", resp.Header.Get("X-Total-Count"))
	}
	all("DELETE", http.StatusNoContent)
	if got := watchersOf(t, e, "owner/hot", nil); got != 1 {
		t.Fatalf("watchers_count after unwatching %d, want 1", got)
	}
}

// TestIssueSubscription: participants are subscribed unless they
// unsubscribe, repository watchers too (the check), the permission rule
// of changing someone's subscription, and the 200/201 answers.
func TestIssueSubscription(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	alice, bob, carol, dave := e.CreateUser("alice", false), e.CreateUser("bob", false), e.CreateUser("carol", false), e.CreateUser("dave", false)
	admin := e.CreateUser("root", true)
	ac, bc, cc, dc, rc := apitest.Basic(alice), apitest.Basic(bob), apitest.Basic(carol), apitest.Basic(dave), apitest.Basic(admin)
	e.Do("POST", "user/repos", map[string]any{"name": "proj"}, ac).Expect(t, http.StatusCreated)
	e.Do("PUT", "repos/alice/proj/collaborators/carol", map[string]any{"permission": "write"}, ac).Expect(t, http.StatusNoContent)
	// bob opens it (the poster), mentioning dave; carol is assigned.
	var is models.Issue
	e.Do("POST", "repos/alice/proj/issues", map[string]any{"title": "t", "body": "ping @dave"}, bc).Expect(t, http.StatusCreated).JSON(t, &is)
	e.Do("PATCH", "repos/alice/proj/issues/1", map[string]any{"assignees": []string{"carol"}}, ac).Expect(t, http.StatusCreated)
	base := "repos/alice/proj/issues/1/subscriptions"
	var users []*models.User
	resp := e.Do("GET", base, nil, nil).Expect(t, http.StatusOK)
	resp.JSON(t, &users)
	if userNames(users) != "bob,carol,dave" || resp.Header.Get("X-Total-Count") != "3" {
		t.Fatalf("subscribers %s total %s", userNames(users), resp.Header.Get("X-Total-Count"))
	}
	check := func(cred apitest.Cred, want bool) {
		t.Helper()
		var wi models.WatchInfo
		e.Do("GET", base+"/check", nil, cred).Expect(t, http.StatusOK).JSON(t, &wi)
		if wi.Subscribed != want || wi.Ignored == want || !strings.HasSuffix(wi.URL, "/api/v1/repos/alice/proj/issues/1/subscriptions") {
			t.Fatalf("check %+v, want subscribed %v", wi, want)
		}
	}
	check(bc, true)
	check(ac, true) // watches the repository
	e.Do("GET", base+"/check", nil, nil).Expect(t, http.StatusUnauthorized)
	e.Do("DELETE", "repos/alice/proj/subscription", nil, ac).Expect(t, http.StatusNoContent)
	check(ac, false)

	// A commenter joins; one who unsubscribes leaves, and stays out
	// after commenting again.
	e.Do("POST", "repos/alice/proj/issues/1/comments", map[string]any{"body": "me too"}, ac).Expect(t, http.StatusCreated)
	check(ac, true)
	e.Do("DELETE", base+"/dave", nil, dc).Expect(t, http.StatusCreated)
	e.Do("DELETE", base+"/dave", nil, dc).Expect(t, http.StatusOK)
	e.Do("POST", "repos/alice/proj/issues/1/comments", map[string]any{"body": "hi"}, dc).Expect(t, http.StatusCreated)
	check(dc, false)
	e.Do("GET", base, nil, nil).Expect(t, http.StatusOK).JSON(t, &users)
	if userNames(users) != "alice,bob,carol" {
		t.Fatalf("subscribers after dave left %s", userNames(users))
	}

	// Someone else's subscription: only a site admin.
	e.Do("PUT", base+"/dave", nil, bc).Expect(t, http.StatusForbidden)
	e.Do("PUT", base+"/dave", nil, ac).Expect(t, http.StatusForbidden) // the repository's owner is no exception
	e.Do("PUT", base+"/dave", nil, rc).Expect(t, http.StatusCreated)
	e.Do("PUT", base+"/dave", nil, dc).Expect(t, http.StatusOK)
	e.Do("PUT", base+"/nobody", nil, rc).Expect(t, http.StatusNotFound)
	e.Do("PUT", base+"/dave", nil, nil).Expect(t, http.StatusUnauthorized)
	e.Do("GET", "repos/alice/proj/issues/9/subscriptions", nil, nil).Expect(t, http.StatusNotFound)
	resp = e.Do("GET", base+"?limit=2", nil, nil).Expect(t, http.StatusOK)
	resp.JSON(t, &users)
	if userNames(users) != "alice,bob" || resp.Header.Get("X-Total-Count") != "4" || !strings.Contains(resp.Header.Get("Link"), `rel="next"`) {
		t.Fatalf("first page %s total %s", userNames(users), resp.Header.Get("X-Total-Count"))
	}
	_ = cc
}

// Watching, unwatching and choosing an issue subscription are changes like
// any other: each emits its event once, and doing it again emits nothing.
func TestWatchAndSubscriptionEvents(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	alice, bob := e.CreateUser("alice", false), e.CreateUser("bob", false)
	admin := e.CreateUser("root", true)
	ac, bc := apitest.Basic(alice), apitest.Basic(bob)
	e.Do("POST", "user/repos", map[string]any{"name": "proj"}, ac).Expect(t, http.StatusCreated)
	e.Do("POST", "repos/alice/proj/issues", map[string]any{"title": "t"}, ac).Expect(t, http.StatusCreated)
	log := e.RecordEvents()

	e.Do("PUT", "repos/alice/proj/subscription", nil, bc).Expect(t, http.StatusOK)
	expectRepoEvent(t, log, "watch", events.RepoWatched, "alice", "proj", bob)
	e.Do("PUT", "repos/alice/proj/subscription", nil, bc).Expect(t, http.StatusOK)
	expectNoRepoEvents(t, log, "watch again")
	e.Do("DELETE", "repos/alice/proj/subscription", nil, bc).Expect(t, http.StatusNoContent)
	expectRepoEvent(t, log, "unwatch", events.RepoUnwatched, "alice", "proj", bob)

	e.Do("PUT", "repos/alice/proj/issues/1/subscriptions/bob", nil, bc).Expect(t, http.StatusCreated)
	got := log.ExpectKinds(t, "subscribe", events.IssueSubscribed)
	if p, ok := got[0].Payload.(events.Issue); !ok || p.Subscriber != bob.User.ID || p.Index != 1 || got[0].ActorID != bob.User.ID {
		t.Fatalf("subscribe event %+v", got[0])
	}
	e.Do("PUT", "repos/alice/proj/issues/1/subscriptions/bob", nil, bc).Expect(t, http.StatusOK)
	log.ExpectKinds(t, "subscribe again")
	// A site admin changes bob's: the admin acts, bob is named.
	e.Do("DELETE", "repos/alice/proj/issues/1/subscriptions/bob", nil, apitest.Basic(admin)).Expect(t, http.StatusCreated)
	got = log.ExpectKinds(t, "unsubscribe", events.IssueUnsubscribed)
	if p, ok := got[0].Payload.(events.Issue); !ok || p.Subscriber != bob.User.ID || got[0].ActorID != admin.User.ID {
		t.Fatalf("unsubscribe event %+v", got[0])
	}
}
