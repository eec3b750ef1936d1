package apitest_test

import (
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"

	"repohost/apitest"
	"repohost/impl/events"
	"repohost/models"
	"repohost/store/gitstore"
)

// repoEvents takes the recorded events and keeps the repository ones
// (other areas announce their own changes, which these tests leave alone).
func repoEvents(l *apitest.EventLog) []events.Event {
	var out []events.Event
	for _, ev := range l.Take() {
		if strings.HasPrefix(string(ev.Kind), "repository.") {
			out = append(out, ev)
		}
	}
	return out
}

// expectRepoEvent fails t unless exactly one repository event was recorded,
// of kind, about owner/name, caused by actor.
func expectRepoEvent(t *testing.T, l *apitest.EventLog, action string, kind events.Kind, owner, name string, actor *apitest.Account) events.Repo {
	t.Helper()
	got := repoEvents(l)
	if len(got) != 1 || got[0].Kind != kind {
		t.Fatalf("%s: repository events %v, want one %s", action, eventKinds(got), kind)
	}
	ev := got[0]
	p, ok := ev.Payload.(events.Repo)
	if !ok {
		t.Fatalf("%s: payload %T", action, ev.Payload)
	}
	if p.Owner != owner || p.Name != name || p.ID != ev.RepoID || ev.RepoID == 0 || ev.ActorID != actor.User.ID {
		t.Fatalf("%s: event %+v payload %+v, want %s/%s by %s", action, ev, p, owner, name, actor.User.Name)
	}
	return p
}

func expectNoRepoEvents(t *testing.T, l *apitest.EventLog, action string) {
	t.Helper()
	if got := repoEvents(l); len(got) != 0 {
		t.Fatalf("%s: repository events %v, want none", action, eventKinds(got))
	}
}

func eventKinds(evs []events.Event) []events.Kind {
	out := make([]events.Kind, len(evs))
	for i, ev := range evs {
		out[i] = ev.Kind
	}
	return out
}

// TestRepoEventsCreate: every way a repository comes into being announces
// it exactly once, with the new repository's id; a refused creation
// announces nothing.
func TestRepoEventsCreate(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	alice := e.CreateUser("alice", false)
	a, admin := apitest.Basic(alice), apitest.Basic(e.Admin)
	roCreateOrg(t, e, a, map[string]any{"username": "acme"})
	unStray(t, e, "alice", "stray", gitstore.InitOptions{Files: map[string]string{"a.txt": "a\n"}})
	unStray(t, e, "alice", "files", gitstore.InitOptions{})
	log := e.RecordEvents()

	for _, tc := range []struct {
		name, path  string
		body        map[string]any
		cred        apitest.Cred
		actor       *apitest.Account
		owner, repo string
	}{
		{"user", "user/repos", map[string]any{"name": "tpl", "auto_init": true, "template": true}, a, alice, "alice", "tpl"},
		{"org", "orgs/acme/repos", map[string]any{"name": "web", "private": true}, a, alice, "acme", "web"},
		{"admin", "admin/users/alice/repos", map[string]any{"name": "given"}, admin, e.Admin, "alice", "given"},
		{"generate", "repos/alice/tpl/generate", map[string]any{"owner": "acme", "name": "gen", "git_content": true, "topics": true}, a, alice, "acme", "gen"},
	} {
		var r models.Repository
		e.Do("POST", tc.path, tc.body, tc.cred).Expect(t, http.StatusCreated).JSON(t, &r)
		expectRepoEvent(t, log, tc.name, events.RepoCreated, tc.owner, tc.repo, tc.actor)
		// The repository exists once; asking again is a 409 that
		// announces nothing.
		e.Do("POST", tc.path, tc.body, tc.cred).Expect(t, http.StatusConflict)
		expectNoRepoEvents(t, log, tc.name+" again")
	}

	e.Do("POST", "admin/unadopted/alice/stray", nil, admin).Expect(t, http.StatusNoContent)
	p := expectRepoEvent(t, log, "adopt", events.RepoCreated, "alice", "stray", e.Admin)
	if !p.Private {
		t.Fatalf("adopted repository announced as public: %+v", p)
	}
	e.Do("POST", "admin/unadopted/alice/stray", nil, admin).Expect(t, http.StatusNotFound)
	expectNoRepoEvents(t, log, "adopt again")

	// Refused before or during the git work: stray files in the way, a
	// bad name, an unknown template name.
	e.Do("POST", "user/repos", map[string]any{"name": "files"}, a).Expect(t, http.StatusConflict)
	e.Do("POST", "user/repos", map[string]any{"name": "a b"}, a).Expect(t, http.StatusUnprocessableEntity)
	e.Do("POST", "user/repos", map[string]any{"name": "lic", "auto_init": true, "license": "nope"}, a).Expect(t, http.StatusUnprocessableEntity)
	e.Do("POST", "repos/alice/tpl/generate", map[string]any{"owner": "alice", "name": "files", "git_content": true}, a).Expect(t, http.StatusConflict)
	expectNoRepoEvents(t, log, "refused creations")
}

// TestRepoEventsConcurrentCreate: of several creates of one name racing,
// only the one that commits is announced.
func TestRepoEventsConcurrentCreate(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	alice := e.CreateUser("alice", false)
	log := e.RecordEvents()
	const n = 4
	cred := apitest.TokenCred(e.Token(alice, "write:repository"))
	statuses := make([]int, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			statuses[i] = e.Do("POST", "user/repos", map[string]any{"name": "race", "auto_init": true}, cred).Status
		}()
	}
	wg.Wait()
	slices.Sort(statuses)
	if statuses[0] != http.StatusCreated || statuses[1] != http.StatusConflict {
		t.Fatalf("statuses %v, want one 201 and the rest 409", statuses)
	}
	expectRepoEvent(t, log, "racing creates", events.RepoCreated, "alice", "race", alice)
}

// TestRepoEventsEdit: each PATCH is announced once, renames with the old
// name; a refused PATCH is not announced.
func TestRepoEventsEdit(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	alice, bob := e.CreateUser("alice", false), e.CreateUser("bob", false)
	a := apitest.Basic(alice)
	roCreateRepo(t, e, a, map[string]any{"name": "r", "auto_init": true})
	log := e.RecordEvents()

	e.Do("PATCH", "repos/alice/r", map[string]any{"description": "d", "has_wiki": false, "private": true}, a).Expect(t, http.StatusOK)
	if p := expectRepoEvent(t, log, "fields", events.RepoEdited, "alice", "r", alice); !p.Private || p.OldName != "" {
		t.Fatalf("fields: payload %+v", p)
	}
	e.Do("PATCH", "repos/alice/r", map[string]any{"name": "renamed"}, a).Expect(t, http.StatusOK)
	if p := expectRepoEvent(t, log, "rename", events.RepoEdited, "alice", "renamed", alice); p.OldName != "r" {
		t.Fatalf("rename: payload %+v", p)
	}
	e.Do("PATCH", "repos/alice/renamed", map[string]any{"archived": true, "default_branch": "main"}, a).Expect(t, http.StatusOK)
	expectRepoEvent(t, log, "archive", events.RepoEdited, "alice", "renamed", alice)
	e.Do("PATCH", "repos/alice/renamed", map[string]any{}, a).Expect(t, http.StatusOK)
	expectRepoEvent(t, log, "empty", events.RepoEdited, "alice", "renamed", alice)

	e.Do("PATCH", "repos/alice/renamed", map[string]any{"default_branch": "missing"}, a).Expect(t, http.StatusUnprocessableEntity)
	e.Do("PATCH", "repos/alice/renamed", map[string]any{"name": "a b"}, a).Expect(t, http.StatusUnprocessableEntity)
	e.Do("PATCH", "repos/alice/renamed", map[string]any{"description": "x"}, apitest.Basic(bob)).Expect(t, http.StatusNotFound) // private
	e.Do("PATCH", "repos/alice/renamed", map[string]any{"private": false}, a).Expect(t, http.StatusOK)
	expectRepoEvent(t, log, "publish", events.RepoEdited, "alice", "renamed", alice)
	e.Do("PATCH", "repos/alice/renamed", map[string]any{"description": "x"}, apitest.Basic(bob)).Expect(t, http.StatusForbidden)
	expectNoRepoEvents(t, log, "refused edits")
}

// TestRepoEventsDelete: a repository deleted through its route, with a
// purged user, or with an organization the purged user alone owned, is
// announced once; refused deletes announce nothing.
func TestRepoEventsDelete(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	alice, bob := e.CreateUser("alice", false), e.CreateUser("bob", false)
	a, b, admin := apitest.Basic(alice), apitest.Basic(bob), apitest.Basic(e.Admin)
	for _, name := range []string{"doomed", "r1", "r2"} {
		roCreateRepo(t, e, a, map[string]any{"name": name, "auto_init": true})
	}
	roCreateOrg(t, e, a, map[string]any{"username": "solo"})
	shared := roCreateOrg(t, e, b, map[string]any{"username": "shared"})
	roAddMember(t, e, shared.ID, alice, true, false)
	for _, path := range []string{"orgs/solo/repos", "orgs/shared/repos"} {
		e.Do("POST", path, map[string]any{"name": "sr"}, a).Expect(t, http.StatusCreated)
	}
	roCreateOrg(t, e, b, map[string]any{"username": "acme"})
	e.Do("POST", "orgs/acme/repos", map[string]any{"name": "web"}, b).Expect(t, http.StatusCreated)
	log := e.RecordEvents()

	e.Do("DELETE", "repos/alice/doomed", nil, b).Expect(t, http.StatusForbidden)
	expectNoRepoEvents(t, log, "refused delete")
	e.Do("DELETE", "repos/alice/doomed", nil, a).Expect(t, http.StatusNoContent)
	expectRepoEvent(t, log, "delete", events.RepoDeleted, "alice", "doomed", alice)

	// An organization that still owns repositories is not deleted; once
	// they are gone it is, announcing no repository.
	e.Do("DELETE", "orgs/acme", nil, b).Expect(t, http.StatusUnprocessableEntity)
	expectNoRepoEvents(t, log, "refused org delete")
	e.Do("DELETE", "repos/acme/web", nil, b).Expect(t, http.StatusNoContent)
	expectRepoEvent(t, log, "delete org repository", events.RepoDeleted, "acme", "web", bob)
	e.Do("DELETE", "orgs/acme", nil, b).Expect(t, http.StatusNoContent)
	expectNoRepoEvents(t, log, "org delete")

	// The purge deletes alice's repositories and solo's (she was its only
	// owner), not shared's.
	e.Do("DELETE", "admin/users/alice", nil, admin).Expect(t, http.StatusUnprocessableEntity)
	expectNoRepoEvents(t, log, "refused user delete")
	e.Do("DELETE", "admin/users/alice?purge=true", nil, admin).Expect(t, http.StatusNoContent)
	var got []string
	for _, ev := range repoEvents(log) {
		p := ev.Payload.(events.Repo)
		if ev.Kind != events.RepoDeleted || ev.ActorID != e.Admin.User.ID || p.ID != ev.RepoID {
			t.Fatalf("purge: event %+v payload %+v", ev, p)
		}
		got = append(got, p.Owner+"/"+p.Name)
	}
	slices.Sort(got)
	if want := []string{"alice/r1", "alice/r2", "solo/sr"}; !slices.Equal(got, want) {
		t.Fatalf("purge announced %v, want %v", got, want)
	}
	e.Do("GET", "repos/shared/sr", nil, b).Expect(t, http.StatusOK)
}
