package apitest_test

import (
	"fmt"
	"net/http"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"repohost/apitest"
	"repohost/models"
)

// TestTagProtection: the rules' API, and their enforcement on every path
// a tag moves by: the tag API, a push over HTTP with the real git client,
// and publishing a release.
func TestTagProtection(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	git := newGitCLI(t)
	alice, bob, carol := e.CreateUser("alice", false), e.CreateUser("bob", false), e.CreateUser("carol", false)
	ac, bc, cc := apitest.Basic(alice), apitest.Basic(bob), apitest.Basic(carol)
	e.Do("POST", "orgs", map[string]any{"username": "acme"}, ac).Expect(t, http.StatusCreated)
	var repo models.Repository
	e.Do("POST", "orgs/acme/repos", map[string]any{"name": "proj", "auto_init": true}, ac).Expect(t, http.StatusCreated).JSON(t, &repo)
	tmTeam(t, e, ac, "acme", map[string]any{"name": "rel", "includes_all_repositories": true, "units_map": tmAllUnits("write")}, "carol")
	e.Do("PUT", "repos/acme/proj/collaborators/bob", map[string]any{"permission": "write"}, ac).Expect(t, http.StatusNoContent)
	const base = "repos/acme/proj/tag_protections"

	// Create, with its refusals.
	var rule models.TagProtection
	e.Do("POST", base, map[string]any{"name_pattern": " v* ", "whitelist_usernames": []string{"alice"}, "whitelist_teams": []string{"rel"}}, ac).
		Expect(t, http.StatusCreated).JSON(t, &rule)
	if rule.ID == 0 || rule.NamePattern != "v*" || strings.Join(rule.WhitelistUsernames, ",") != "alice" ||
		strings.Join(rule.WhitelistTeams, ",") != "rel" || rule.Created.String() == "" {
		t.Fatalf("rule %+v", rule)
	}
	for _, c := range []struct {
		body   map[string]any
		status int
	}{
		{map[string]any{"name_pattern": "  "}, http.StatusBadRequest},
		{map[string]any{"name_pattern": "/[/"}, http.StatusUnprocessableEntity},
		{map[string]any{"name_pattern": "v[", "whitelist_usernames": []string{"alice"}}, http.StatusUnprocessableEntity},
		{map[string]any{"name_pattern": "v*"}, http.StatusForbidden},
		{map[string]any{"name_pattern": "x*", "whitelist_usernames": []string{"nobody"}}, http.StatusUnprocessableEntity},
		{map[string]any{"name_pattern": "x*", "whitelist_teams": []string{"nobody"}}, http.StatusUnprocessableEntity},
	} {
		e.Do("POST", base, c.body, ac).Expect(t, c.status)
	}
	e.Do("POST", base, map[string]any{"name_pattern": "x*"}, bc).Expect(t, http.StatusForbidden) // a writer, not an admin
	e.Do("GET", base, nil, bc).Expect(t, http.StatusForbidden)
	e.Do("GET", base, nil, nil).Expect(t, http.StatusUnauthorized)
	var list []*models.TagProtection
	e.Do("GET", base, nil, ac).Expect(t, http.StatusOK).JSON(t, &list)
	if len(list) != 1 || !reflect.DeepEqual(*list[0], rule) {
		t.Fatalf("list %+v, want %+v", list, rule)
	}
	var got models.TagProtection
	e.Do("GET", fmt.Sprintf("%s/%d", base, rule.ID), nil, ac).Expect(t, http.StatusOK).JSON(t, &got)
	if got.NamePattern != "v*" {
		t.Fatalf("get %+v", got)
	}
	e.Do("GET", fmt.Sprintf("%s/%d", base, rule.ID+100), nil, ac).Expect(t, http.StatusNotFound)

	// The tag API: bob (a writer, not allowed) is refused, carol (team
	// rel) and alice (listed) are not; other tags stay free.
	e.Do("POST", "repos/acme/proj/tags", map[string]any{"tag_name": "v1"}, bc).Expect(t, http.StatusUnprocessableEntity)
	e.Do("GET", "repos/acme/proj/tags/v1", nil, ac).Expect(t, http.StatusNotFound)
	e.Do("POST", "repos/acme/proj/tags", map[string]any{"tag_name": "other"}, bc).Expect(t, http.StatusCreated)
	e.Do("POST", "repos/acme/proj/tags", map[string]any{"tag_name": "v1"}, cc).Expect(t, http.StatusCreated)
	e.Do("POST", "repos/acme/proj/tags", map[string]any{"tag_name": "v1.1", "message": "annotated"}, ac).Expect(t, http.StatusCreated)
	e.Do("DELETE", "repos/acme/proj/tags/v1", nil, bc).Expect(t, http.StatusUnprocessableEntity)
	e.Do("GET", "repos/acme/proj/tags/v1", nil, ac).Expect(t, http.StatusOK)

	// A release on a new protected tag is refused to bob, and leaves
	// neither tag nor release; on a free tag it is published.
	e.Do("POST", "repos/acme/proj/releases", map[string]any{"tag_name": "v2", "name": "two"}, bc).Expect(t, http.StatusUnprocessableEntity)
	e.Do("GET", "repos/acme/proj/tags/v2", nil, ac).Expect(t, http.StatusNotFound)
	e.Do("GET", "repos/acme/proj/releases/tags/v2", nil, ac).Expect(t, http.StatusNotFound)
	e.Do("POST", "repos/acme/proj/releases", map[string]any{"tag_name": "r2", "name": "two"}, bc).Expect(t, http.StatusCreated)
	e.Do("POST", "repos/acme/proj/releases", map[string]any{"tag_name": "v2", "name": "two"}, cc).Expect(t, http.StatusCreated)

	// A push over HTTP with git: the protected tag is refused and does
	// not appear, the free one goes through.
	btok := e.Token(bob, "write:repository")
	dir := filepath.Join(t.TempDir(), "proj")
	git.must(filepath.Dir(dir), "clone", "-q", gitURL(e, "bob", btok, "acme", "proj"), dir)
	git.must(dir, "tag", "v3")
	git.must(dir, "tag", "free3")
	out := git.refuse(dir, "push", "origin", "v3", "free3")
	if !strings.Contains(out, "tag v3 is protected") {
		t.Fatalf("push output: %s", out)
	}
	e.Do("GET", "repos/acme/proj/tags/v3", nil, ac).Expect(t, http.StatusNotFound)
	e.Do("GET", "repos/acme/proj/tags/free3", nil, ac).Expect(t, http.StatusOK)
	// Deleting a protected tag by push is refused too.
	git.refuse(dir, "push", "origin", ":refs/tags/v1")
	e.Do("GET", "repos/acme/proj/tags/v1", nil, ac).Expect(t, http.StatusOK)

	// Edit to a regular expression and another allow-list; an absent list
	// stays.
	var edited models.TagProtection
	e.Do("PATCH", fmt.Sprintf("%s/%d", base, rule.ID), map[string]any{"name_pattern": "/^v[0-9]+$/", "whitelist_usernames": []string{"bob"}}, ac).
		Expect(t, http.StatusOK).JSON(t, &edited)
	if edited.NamePattern != "/^v[0-9]+$/" || strings.Join(edited.WhitelistUsernames, ",") != "bob" || strings.Join(edited.WhitelistTeams, ",") != "rel" {
		t.Fatalf("edited %+v", edited)
	}
	e.Do("PATCH", fmt.Sprintf("%s/%d", base, rule.ID), map[string]any{"name_pattern": "/(/"}, ac).Expect(t, http.StatusUnprocessableEntity)
	git.must(dir, "tag", "v4")
	git.must(dir, "push", "-q", "origin", "v4") // bob is listed now
	dtok := e.Token(e.CreateUser("erin", false), "write:repository")
	e.Do("PUT", "repos/acme/proj/collaborators/erin", map[string]any{"permission": "write"}, ac).Expect(t, http.StatusNoContent)
	edir := filepath.Join(t.TempDir(), "erin")
	git.must(filepath.Dir(edir), "clone", "-q", gitURL(e, "erin", dtok, "acme", "proj"), edir)
	git.must(edir, "tag", "v5")
	git.must(edir, "tag", "v5-beta")
	git.refuse(edir, "push", "origin", "v5")
	git.must(edir, "push", "-q", "origin", "v5-beta") // the expression does not match it

	// Delete: the tags are free again.
	e.Do("DELETE", fmt.Sprintf("%s/%d", base, rule.ID), nil, bc).Expect(t, http.StatusForbidden)
	e.Do("DELETE", fmt.Sprintf("%s/%d", base, rule.ID), nil, ac).Expect(t, http.StatusNoContent)
	e.Do("DELETE", fmt.Sprintf("%s/%d", base, rule.ID), nil, ac).Expect(t, http.StatusNotFound)
	git.must(edir, "push", "-q", "origin", "v5")
}
