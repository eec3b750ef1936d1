package apitest_test

import (
	"fmt"
	"net/http"
	"testing"

	"repohost/apitest"
	"repohost/models"
)

// TestOrgBlocks: an organization's owners block a user who is not a
// member; the block takes away the user's stars, watches and follows
// and stops them from starring, watching, opening issues, commenting
// and joining a team, until it is lifted.
func TestOrgBlocks(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	owner := e.CreateUser("owner", false)
	bob := e.CreateUser("bob", false)
	carol := e.CreateUser("carol", false)
	oc, bc, cc := apitest.Basic(owner), apitest.Basic(bob), apitest.Basic(carol)
	e.Do("POST", "orgs", map[string]any{"username": "acme"}, oc).Expect(t, http.StatusCreated)
	e.Do("POST", "orgs/acme/repos", map[string]any{"name": "proj"}, oc).Expect(t, http.StatusCreated)
	var team models.Team
	e.Do("POST", "orgs/acme/teams", map[string]any{"name": "devs", "permission": "write",
		"units": []string{"repo.code", "repo.issues"}}, oc).Expect(t, http.StatusCreated).JSON(t, &team)
	e.Do("PUT", fmt.Sprintf("teams/%d/members/carol", team.ID), nil, oc).Expect(t, http.StatusNoContent)

	e.Do("PUT", "user/starred/acme/proj", nil, bc).Expect(t, http.StatusNoContent)
	e.Do("PUT", "repos/acme/proj/subscription", nil, bc).Expect(t, http.StatusOK)
	var is models.Issue
	e.Do("POST", "repos/acme/proj/issues", map[string]any{"title": "by owner"}, oc).Expect(t, http.StatusCreated).JSON(t, &is)
	watchers := getRepo(t, e, "acme/proj", oc).Watchers

	// Only owners, and never a member.
	e.Do("GET", "orgs/acme/blocks", nil, nil).Expect(t, http.StatusUnauthorized)
	e.Do("GET", "orgs/acme/blocks", nil, cc).Expect(t, http.StatusForbidden)
	e.Do("PUT", "orgs/acme/blocks/bob", nil, cc).Expect(t, http.StatusForbidden)
	e.Do("PUT", "orgs/acme/blocks/carol", nil, oc).Expect(t, http.StatusBadRequest)
	e.Do("PUT", "orgs/acme/blocks/nobody", nil, oc).Expect(t, http.StatusNotFound)
	e.Do("GET", "orgs/acme/blocks/bob", nil, oc).Expect(t, http.StatusNotFound)

	e.Do("PUT", "orgs/acme/blocks/bob?note=spam", nil, oc).Expect(t, http.StatusNoContent)
	e.Do("PUT", "orgs/acme/blocks/bob", nil, oc).Expect(t, http.StatusBadRequest) // already
	e.Do("GET", "orgs/acme/blocks/bob", nil, oc).Expect(t, http.StatusNoContent)
	var blocked []*models.User
	r := e.Do("GET", "orgs/acme/blocks", nil, oc).Expect(t, http.StatusOK)
	r.JSON(t, &blocked)
	if len(blocked) != 1 || blocked[0].UserName != "bob" || r.Header.Get("X-Total-Count") != "1" {
		t.Fatalf("acme's blocks: %+v", blocked)
	}
	// The organization's block is not the owner's own.
	e.Do("GET", "user/blocks/bob", nil, oc).Expect(t, http.StatusNotFound)

	// Bob's star, watch and follow are gone, with the counters.
	if rp := getRepo(t, e, "acme/proj", oc); rp.Stars != 0 || rp.Watchers != watchers-1 {
		t.Fatalf("acme/proj after the block: stars %d watchers %d (was %d)", rp.Stars, rp.Watchers, watchers)
	}
	e.Do("GET", "repos/acme/proj/subscription", nil, bc).Expect(t, http.StatusNotFound)
	if u := getUser(t, e, "bob", bc); u.StarredRepos != 0 {
		t.Fatalf("bob after the block: %+v", u)
	}

	// What the block forbids.
	e.Do("PUT", "user/starred/acme/proj", nil, bc).Expect(t, http.StatusForbidden)
	e.Do("PUT", "repos/acme/proj/subscription", nil, bc).Expect(t, http.StatusForbidden)
	e.Do("POST", "repos/acme/proj/issues", map[string]any{"title": "spam"}, bc).Expect(t, http.StatusForbidden)
	e.Do("POST", fmt.Sprintf("repos/acme/proj/issues/%d/comments", is.Index), map[string]any{"body": "spam"}, bc).
		Expect(t, http.StatusForbidden)
	e.Do("PUT", fmt.Sprintf("teams/%d/members/bob", team.ID), nil, oc).Expect(t, http.StatusForbidden)
	// Others are unaffected.
	e.Do("POST", fmt.Sprintf("repos/acme/proj/issues/%d/comments", is.Index), map[string]any{"body": "fine"}, cc).
		Expect(t, http.StatusCreated)

	e.Do("DELETE", "orgs/acme/blocks/bob", nil, cc).Expect(t, http.StatusForbidden)
	e.Do("DELETE", "orgs/acme/blocks/bob", nil, oc).Expect(t, http.StatusNoContent)
	e.Do("DELETE", "orgs/acme/blocks/bob", nil, oc).Expect(t, http.StatusBadRequest)
	e.Do("GET", "orgs/acme/blocks/bob", nil, oc).Expect(t, http.StatusNotFound)
	e.Do("PUT", "user/starred/acme/proj", nil, bc).Expect(t, http.StatusNoContent)
	e.Do("PUT", "repos/acme/proj/subscription", nil, bc).Expect(t, http.StatusOK)
	e.Do("POST", "repos/acme/proj/issues", map[string]any{"title": "welcome back"}, bc).Expect(t, http.StatusCreated)
	e.Do("PUT", fmt.Sprintf("teams/%d/members/bob", team.ID), nil, oc).Expect(t, http.StatusNoContent)
}

// TestUserBlockForbidsIssuesAndComments: a user's block keeps the blocked
// user off the blocker's repositories and issues.
func TestUserBlockForbidsIssuesAndComments(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	alice := e.CreateUser("alice", false)
	bob := e.CreateUser("bob", false)
	ac, bc := apitest.Basic(alice), apitest.Basic(bob)
	e.Do("POST", "user/repos", map[string]any{"name": "proj"}, ac).Expect(t, http.StatusCreated)
	e.Do("PUT", "repos/alice/proj/subscription", nil, bc).Expect(t, http.StatusOK)
	e.Do("PUT", "user/blocks/bob", nil, ac).Expect(t, http.StatusNoContent)
	e.Do("GET", "repos/alice/proj/subscription", nil, bc).Expect(t, http.StatusNotFound)
	e.Do("PUT", "repos/alice/proj/subscription", nil, bc).Expect(t, http.StatusForbidden)
	e.Do("POST", "repos/alice/proj/issues", map[string]any{"title": "spam"}, bc).Expect(t, http.StatusForbidden)
	var is models.Issue
	e.Do("POST", "repos/alice/proj/issues", map[string]any{"title": "mine"}, ac).Expect(t, http.StatusCreated).JSON(t, &is)
	e.Do("POST", fmt.Sprintf("repos/alice/proj/issues/%d/comments", is.Index), map[string]any{"body": "spam"}, bc).
		Expect(t, http.StatusForbidden)
	e.Do("POST", fmt.Sprintf("repos/alice/proj/issues/%d/reactions", is.Index), map[string]any{"content": "+1"}, bc).
		Expect(t, http.StatusForbidden)
	e.Do("POST", fmt.Sprintf("repos/alice/proj/issues/%d/reactions", is.Index), map[string]any{"content": "+1"}, ac).
		Expect(t, http.StatusCreated)
}
