package apitest_test

import (
	"fmt"
	"net/http"
	"slices"
	"testing"

	"repohost/apitest"
	"repohost/models"
)

// tmTeam creates a team of org through the API and adds members to it.
func tmTeam(t *testing.T, e *apitest.Env, owner apitest.Cred, org string, body map[string]any, members ...string) *models.Team {
	t.Helper()
	var team models.Team
	e.Do("POST", "orgs/"+org+"/teams", body, owner).Expect(t, http.StatusCreated).JSON(t, &team)
	for _, m := range members {
		e.Do("PUT", fmt.Sprintf("teams/%d/members/%s", team.ID, m), nil, owner).Expect(t, http.StatusNoContent)
	}
	return &team
}

func tmAllUnits(level string) map[string]string {
	out := map[string]string{}
	for _, u := range pmUnits {
		out[u] = level
	}
	return out
}

// TestRepoAccessByCaller: one private repository of an organization, and
// what each kind of caller may do to it, unit by unit, through the routes:
// see it, write issues (labels), write code (branches), write releases,
// change settings (admin), manage collaborators (admin), and what
// GET …/collaborators/{me}/permission says.
func TestRepoAccessByCaller(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	boss := e.CreateUser("boss", false)
	bc := apitest.Basic(boss)
	names := []string{"outsider", "c-read", "c-write", "c-admin", "t-read", "t-write", "t-admin", "t-issues"}
	accts := map[string]*apitest.Account{}
	for _, n := range names {
		accts[n] = e.CreateUser(n, false)
	}
	roCreateOrg(t, e, bc, map[string]any{"username": "acme"})
	e.Do("POST", "orgs/acme/repos", map[string]any{"name": "tool", "private": true, "auto_init": true}, bc).Expect(t, http.StatusCreated)
	for _, m := range []string{"read", "write", "admin"} {
		e.Do("PUT", "repos/acme/tool/collaborators/c-"+m, map[string]any{"permission": m}, bc).Expect(t, http.StatusNoContent)
	}
	for _, tc := range []struct {
		user string
		body map[string]any
	}{
		{"t-read", map[string]any{"name": "readers", "units_map": tmAllUnits("read")}},
		{"t-write", map[string]any{"name": "writers", "units_map": tmAllUnits("write")}},
		{"t-admin", map[string]any{"name": "admins", "permission": "admin"}},
		{"t-issues", map[string]any{"name": "triage", "units_map": map[string]string{"repo.issues": "write", "repo.code": "read"}}},
	} {
		team := tmTeam(t, e, bc, "acme", tc.body, tc.user)
		if tc.body["permission"] == "admin" {
			expectAllUnits(t, team, "admin")
		}
		e.Do("PUT", fmt.Sprintf("teams/%d/repos/acme/tool", team.ID), nil, bc).Expect(t, http.StatusNoContent)
	}

	const (
		hidden = http.StatusNotFound
		no     = http.StatusForbidden
	)
	for i, c := range []struct {
		name, login                        string
		see, issues, code, releases, admin int
		perm                               string
	}{
		// A private repository is hidden before anything else is checked:
		// an anonymous write is 404, not 401, as in the reference.
		{"anonymous", "", hidden, hidden, hidden, hidden, hidden, ""},
		{"outsider", "outsider", hidden, hidden, hidden, hidden, hidden, ""},
		{"read collaborator", "c-read", 200, no, no, no, no, "read"},
		{"write collaborator", "c-write", 200, 201, 201, 201, no, "write"},
		{"admin collaborator", "c-admin", 200, 201, 201, 201, 200, "admin"},
		{"team units_map read", "t-read", 200, no, no, no, no, "read"},
		{"team units_map write", "t-write", 200, 201, 201, 201, no, "write"},
		{"team admin", "t-admin", 200, 201, 201, 201, 200, "owner"},
		{"team issues write, code read", "t-issues", 200, 201, no, no, no, "read"},
		{"org owner", "boss", 200, 201, 201, 201, 200, "owner"},
		{"site admin", "admin", 200, 201, 201, 201, 200, "owner"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var cred apitest.Cred
			switch c.login {
			case "":
			case "boss":
				cred = bc
			case "admin":
				cred = apitest.Basic(e.Admin)
			default:
				cred = apitest.Basic(accts[c.login])
			}
			e.Do("GET", "repos/acme/tool", nil, cred).Expect(t, c.see)
			e.Do("POST", "repos/acme/tool/labels", map[string]any{"name": fmt.Sprintf("l%d", i), "color": "#00aabb"}, cred).Expect(t, c.issues)
			e.Do("POST", "repos/acme/tool/branches", map[string]any{"new_branch_name": fmt.Sprintf("b%d", i)}, cred).Expect(t, c.code)
			e.Do("POST", "repos/acme/tool/releases", map[string]any{"tag_name": fmt.Sprintf("v%d", i)}, cred).Expect(t, c.releases)
			e.Do("PATCH", "repos/acme/tool", map[string]any{"description": c.name}, cred).Expect(t, c.admin)
			collab := c.admin
			if collab == http.StatusOK {
				collab = http.StatusNoContent
			}
			e.Do("PUT", "repos/acme/tool/collaborators/outsider", map[string]any{"permission": "read"}, cred).Expect(t, collab)
			if collab == http.StatusNoContent {
				e.Do("DELETE", "repos/acme/tool/collaborators/outsider", nil, cred).Expect(t, http.StatusNoContent)
			}
			if c.perm == "" {
				return
			}
			me := c.login
			if me == "admin" {
				me = e.Admin.User.Name
			}
			var got models.RepoCollaboratorPermission
			e.Do("GET", "repos/acme/tool/collaborators/"+me+"/permission", nil, cred).Expect(t, http.StatusOK).JSON(t, &got)
			if got.Permission != c.perm || got.RoleName != c.perm || got.User == nil || got.User.UserName != me {
				t.Errorf("permission of %s: %+v", me, got)
			}
			// Only repository admins ask about others.
			want := http.StatusForbidden
			if c.admin == http.StatusOK {
				want = http.StatusOK
			}
			if me != "c-read" {
				e.Do("GET", "repos/acme/tool/collaborators/c-read/permission", nil, cred).Expect(t, want)
			}
		})
	}

	// The collaborator list, the check, assignees (writers) and reviewers
	// (readers of pull requests).
	var collabs []*models.User
	e.Do("GET", "repos/acme/tool/collaborators", nil, bc).Expect(t, http.StatusOK).JSON(t, &collabs)
	if got := roUserNames(collabs); !slices.Equal(got, []string{"c-admin", "c-read", "c-write"}) {
		t.Errorf("collaborators %v", got)
	}
	e.Do("GET", "repos/acme/tool/collaborators/c-read", nil, bc).Expect(t, http.StatusNoContent)
	e.Do("GET", "repos/acme/tool/collaborators/outsider", nil, bc).Expect(t, http.StatusNotFound)
	e.Do("GET", "repos/acme/tool/collaborators/nobody", nil, bc).Expect(t, http.StatusUnprocessableEntity)
	e.Do("GET", "repos/acme/tool/collaborators", nil, apitest.Basic(accts["outsider"])).Expect(t, http.StatusNotFound)
	var assignees, reviewers []*models.User
	e.Do("GET", "repos/acme/tool/assignees", nil, bc).Expect(t, http.StatusOK).JSON(t, &assignees)
	if got := roUserNames(assignees); !slices.Equal(got, []string{"boss", "c-admin", "c-write", "t-admin", "t-issues", "t-write"}) {
		t.Errorf("assignees %v", got)
	}
	e.Do("GET", "repos/acme/tool/reviewers", nil, bc).Expect(t, http.StatusOK).JSON(t, &reviewers)
	// The caller (an owner, through the Owners team) is listed too.
	if got := roUserNames(reviewers); !slices.Equal(got, []string{"boss", "c-admin", "c-read", "c-write", "t-admin", "t-read", "t-write"}) {
		t.Errorf("reviewers %v", got)
	}
	// An organization or the owner is no collaborator; a bad permission is
	// refused by the spec.
	e.Do("PUT", "repos/acme/tool/collaborators/acme", nil, bc).Expect(t, http.StatusUnprocessableEntity)
	e.Do("PUT", "repos/acme/tool/collaborators/c-read", map[string]any{"permission": "owner"}, bc).Expect(t, http.StatusUnprocessableEntity)
}

// TestTeamVisibility: the service spec's three tiers, for the team list,
// GET /teams/{id} and its members: a private team is seen by its members
// and the organization's owners, a limited one by any member of the
// organization, a public one by anyone signed in.
func TestTeamVisibility(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	boss := e.CreateUser("boss", false)
	bc := apitest.Basic(boss)
	accts := map[string]*apitest.Account{}
	for _, n := range []string{"insider", "member", "outsider"} {
		accts[n] = e.CreateUser(n, false)
	}
	roCreateOrg(t, e, bc, map[string]any{"username": "acme"})
	teams := map[string]*models.Team{}
	for _, vis := range []string{"private", "limited", "public"} {
		teams[vis] = tmTeam(t, e, bc, "acme", map[string]any{"name": vis, "visibility": vis}, "insider")
	}
	tmTeam(t, e, bc, "acme", map[string]any{"name": "other"}, "member")
	for _, c := range []struct {
		name string
		cred apitest.Cred
		sees []string // of private, limited, public
		// denied is the status for a team it may not see: 403 inside the
		// organization, 404 outside.
		denied int
	}{
		{"team member", apitest.Basic(accts["insider"]), []string{"limited", "private", "public"}, 0},
		{"member of another team", apitest.Basic(accts["member"]), []string{"limited", "other", "public"}, http.StatusForbidden},
		{"outsider", apitest.Basic(accts["outsider"]), []string{"public"}, http.StatusNotFound},
		{"org owner", bc, []string{"limited", "other", "Owners", "private", "public"}, 0},
		{"site admin", apitest.Basic(e.Admin), []string{"limited", "other", "Owners", "private", "public"}, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			var list []*models.Team
			e.Do("GET", "orgs/acme/teams", nil, c.cred).Expect(t, http.StatusOK).JSON(t, &list)
			var got []string
			for _, tm := range list {
				got = append(got, tm.Name)
			}
			if !slices.Equal(got, c.sees) {
				t.Errorf("GET /orgs/acme/teams lists %v, want %v", got, c.sees)
			}
			for vis, tm := range teams {
				want := http.StatusOK
				if !slices.Contains(c.sees, vis) {
					want = c.denied
				}
				e.Do("GET", fmt.Sprintf("teams/%d", tm.ID), nil, c.cred).Expect(t, want)
				e.Do("GET", fmt.Sprintf("teams/%d/members", tm.ID), nil, c.cred).Expect(t, want)
			}
		})
	}
	e.Do("GET", "orgs/acme/teams", nil, nil).Expect(t, http.StatusUnauthorized)
	e.Do("GET", fmt.Sprintf("teams/%d", teams["public"].ID), nil, nil).Expect(t, http.StatusUnauthorized)
}

// TestTeamManagement: creating, editing (the service spec's PATCH) and
// deleting teams, their members and repositories, and organization
// membership following team membership.
func TestTeamManagement(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	boss, bob := e.CreateUser("boss", false), e.CreateUser("bob", false)
	bc, bobc := apitest.Basic(boss), apitest.Basic(bob)
	roCreateOrg(t, e, bc, map[string]any{"username": "acme"})
	e.Do("POST", "orgs/acme/repos", map[string]any{"name": "tool", "private": true}, bc).Expect(t, http.StatusCreated)

	// Only owners manage teams; bad levels and duplicates are 422.
	e.Do("POST", "orgs/acme/teams", map[string]any{"name": "devs"}, bobc).Expect(t, http.StatusForbidden)
	e.Do("POST", "orgs/acme/teams", map[string]any{"name": "devs", "units_map": map[string]string{"repo.code": "boss"}}, bc).
		Expect(t, http.StatusUnprocessableEntity)
	e.Do("POST", "orgs/acme/teams", map[string]any{"name": "devs", "units_map": map[string]string{"repo.nope": "read"}}, bc).
		Expect(t, http.StatusUnprocessableEntity)
	e.Do("POST", "orgs/acme/teams", map[string]any{"name": "bad name!"}, bc).Expect(t, http.StatusUnprocessableEntity)
	devs := tmTeam(t, e, bc, "acme", map[string]any{"name": "devs", "description": "developers",
		"units_map": map[string]string{"repo.code": "write", "repo.issues": "read"}})
	if devs.Permission != "read" || devs.Visibility != "private" || devs.UnitsMap["repo.code"] != "write" ||
		devs.Organization == nil || devs.Organization.Name != "acme" || devs.IncludesAllRepositories {
		t.Fatalf("created %+v", devs)
	}
	e.Do("POST", "orgs/acme/teams", map[string]any{"name": "DEVS"}, bc).Expect(t, http.StatusUnprocessableEntity)

	// Bob joins: a member of the organization now, and of the team's repo.
	e.Do("GET", "repos/acme/tool", nil, bobc).Expect(t, http.StatusNotFound)
	e.Do("PUT", fmt.Sprintf("teams/%d/members/bob", devs.ID), nil, bc).Expect(t, http.StatusNoContent)
	e.Do("GET", "orgs/acme/members/bob", nil, bc).Expect(t, http.StatusNoContent)
	e.Do("GET", "repos/acme/tool", nil, bobc).Expect(t, http.StatusNotFound) // the team does not have it yet
	e.Do("PUT", fmt.Sprintf("teams/%d/repos/acme/tool", devs.ID), nil, bc).Expect(t, http.StatusNoContent)
	var r models.Repository
	e.Do("GET", "repos/acme/tool", nil, bobc).Expect(t, http.StatusOK).JSON(t, &r)
	if !r.Permissions.Push || r.Permissions.Admin {
		t.Fatalf("bob's permissions %+v", r.Permissions)
	}
	var repos []*models.Repository
	e.Do("GET", fmt.Sprintf("teams/%d/repos", devs.ID), nil, bobc).Expect(t, http.StatusOK).JSON(t, &repos)
	if len(repos) != 1 || repos[0].FullName != "acme/tool" {
		t.Fatalf("team repos %v", roRepoNames(repos))
	}
	e.Do("GET", fmt.Sprintf("teams/%d/repos/acme/tool", devs.ID), nil, bobc).Expect(t, http.StatusOK)
	e.Do("GET", "repos/acme/tool/teams/devs", nil, bobc).Expect(t, http.StatusOK)
	var mine []*models.Team
	e.Do("GET", "user/teams", nil, bobc).Expect(t, http.StatusOK).JSON(t, &mine)
	if len(mine) != 1 || mine[0].Name != "devs" || mine[0].Organization == nil {
		t.Fatalf("/user/teams %+v", mine)
	}
	var found models.TeamSearchResults
	e.Do("GET", "orgs/acme/teams/search?q=dev", nil, bc).Expect(t, http.StatusOK).JSON(t, &found)
	if !found.OK || len(found.Data) != 1 || found.Data[0].Name != "devs" {
		t.Fatalf("search %+v", found)
	}
	e.Do("GET", "orgs/acme/teams/search?q=velop&include_desc=true", nil, bc).Expect(t, http.StatusOK).JSON(t, &found)
	if len(found.Data) != 1 {
		t.Fatalf("search in descriptions %+v", found)
	}

	// PATCH: permission applies to every unit; visibility stays unless
	// given; includes_all_repositories only together with a permission.
	var edited models.Team
	e.Do("PATCH", fmt.Sprintf("teams/%d", devs.ID), map[string]any{"name": "devs", "visibility": "limited"}, bc).
		Expect(t, http.StatusOK).JSON(t, &edited)
	if edited.Visibility != "limited" || edited.UnitsMap["repo.code"] != "write" {
		t.Fatalf("edited %+v", edited)
	}
	e.Do("PATCH", fmt.Sprintf("teams/%d", devs.ID), map[string]any{"name": "devs", "includes_all_repositories": true}, bc).
		Expect(t, http.StatusOK).JSON(t, &edited)
	if edited.IncludesAllRepositories {
		t.Fatalf("includes_all_repositories applied without a permission: %+v", edited)
	}
	e.Do("PATCH", fmt.Sprintf("teams/%d", devs.ID), map[string]any{"name": "devs", "permission": "admin", "includes_all_repositories": true}, bc).
		Expect(t, http.StatusOK).JSON(t, &edited)
	if edited.Permission != "admin" || edited.Visibility != "limited" || !edited.IncludesAllRepositories {
		t.Fatalf("edited to admin %+v", edited)
	}
	// As the reference answers: an admin team holds every unit at admin,
	// the external tracker and wiki included.
	expectAllUnits(t, &edited, "admin")
	e.Do("GET", "repos/acme/tool", nil, bobc).Expect(t, http.StatusOK).JSON(t, &r)
	if !r.Permissions.Admin {
		t.Fatalf("an admin team's member is no admin: %+v", r.Permissions)
	}
	e.Do("PATCH", fmt.Sprintf("teams/%d", devs.ID), map[string]any{"name": "devs", "permission": "read",
		"units_map": map[string]string{"repo.code": "read", "repo.issues": "write"}}, bc).Expect(t, http.StatusOK).JSON(t, &edited)
	if edited.Permission != "read" || edited.UnitsMap["repo.issues"] != "write" {
		t.Fatalf("edited back %+v", edited)
	}
	e.Do("PATCH", fmt.Sprintf("teams/%d", devs.ID), map[string]any{"name": "devs", "visibility": "secret"}, bc).
		Expect(t, http.StatusUnprocessableEntity)
	e.Do("PATCH", fmt.Sprintf("teams/%d", devs.ID), map[string]any{"name": "devs"}, bobc).Expect(t, http.StatusForbidden)
	e.Do("PATCH", "teams/999999", map[string]any{"name": "devs"}, bc).Expect(t, http.StatusNotFound)

	// The owners team cannot go nor lose its last member, nor change its
	// permission.
	var owners models.Team
	for _, tm := range func() []*models.Team {
		var l []*models.Team
		e.Do("GET", "orgs/acme/teams", nil, bc).Expect(t, http.StatusOK).JSON(t, &l)
		return l
	}() {
		if tm.Name == "Owners" {
			owners = *tm
		}
	}
	e.Do("DELETE", fmt.Sprintf("teams/%d", owners.ID), nil, bc).Expect(t, http.StatusUnprocessableEntity)
	e.Do("DELETE", fmt.Sprintf("teams/%d/members/boss", owners.ID), nil, bc).Expect(t, http.StatusUnprocessableEntity)
	e.Do("PATCH", fmt.Sprintf("teams/%d", owners.ID), map[string]any{"name": "Owners", "permission": "read"}, bc).
		Expect(t, http.StatusOK).JSON(t, &edited)
	if edited.Permission != "owner" || !edited.CanCreateOrgRepo {
		t.Fatalf("owners team changed: %+v", edited)
	}
	// A second owner lets the first go (who stays in devs).
	e.Do("PUT", fmt.Sprintf("teams/%d/members/boss", devs.ID), nil, bc).Expect(t, http.StatusNoContent)
	e.Do("PUT", fmt.Sprintf("teams/%d/members/bob", owners.ID), nil, bc).Expect(t, http.StatusNoContent)
	e.Do("DELETE", fmt.Sprintf("teams/%d/members/boss", owners.ID), nil, bobc).Expect(t, http.StatusNoContent)
	e.Do("PATCH", "orgs/acme", map[string]any{"description": "x"}, bc).Expect(t, http.StatusForbidden)

	// Public members: only oneself publicizes; the list and the check.
	e.Do("PUT", "orgs/acme/public_members/boss", nil, bobc).Expect(t, http.StatusForbidden)
	e.Do("GET", "orgs/acme/public_members/bob", nil, nil).Expect(t, http.StatusNotFound)
	e.Do("PUT", "orgs/acme/public_members/bob", nil, bobc).Expect(t, http.StatusNoContent)
	e.Do("GET", "orgs/acme/public_members/bob", nil, nil).Expect(t, http.StatusNoContent)
	var pub []*models.User
	e.Do("GET", "orgs/acme/public_members", nil, nil).Expect(t, http.StatusOK).JSON(t, &pub)
	if got := roUserNames(pub); !slices.Equal(got, []string{"bob"}) {
		t.Fatalf("public members %v", got)
	}
	e.Do("DELETE", "orgs/acme/public_members/bob", nil, bobc).Expect(t, http.StatusNoContent)
	e.Do("GET", "orgs/acme/public_members/bob", nil, nil).Expect(t, http.StatusNotFound)

	// Boss is still in devs, so still a member; leaving it ends that.
	e.Do("GET", "orgs/acme/members/boss", nil, bobc).Expect(t, http.StatusNoContent)
	e.Do("DELETE", fmt.Sprintf("teams/%d/members/boss", devs.ID), nil, bobc).Expect(t, http.StatusNoContent)
	e.Do("GET", "orgs/acme/members/boss", nil, bobc).Expect(t, http.StatusNotFound)
	e.Do("DELETE", fmt.Sprintf("teams/%d/repos/acme/tool", devs.ID), nil, bobc).Expect(t, http.StatusNoContent)
	e.Do("DELETE", fmt.Sprintf("teams/%d", devs.ID), nil, bobc).Expect(t, http.StatusNoContent)
	e.Do("GET", fmt.Sprintf("teams/%d", devs.ID), nil, bobc).Expect(t, http.StatusNotFound)
}

// TestTeamMayCreateRepos: a member of a team with can_create_org_repo
// creates repositories in the organization, and the team gets them; a
// member of another team may not.
func TestTeamMayCreateRepos(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	boss, maker, other := e.CreateUser("boss", false), e.CreateUser("maker", false), e.CreateUser("other", false)
	bc := apitest.Basic(boss)
	roCreateOrg(t, e, bc, map[string]any{"username": "acme"})
	makers := tmTeam(t, e, bc, "acme", map[string]any{"name": "makers", "can_create_org_repo": true,
		"units_map": tmAllUnits("write")}, "maker")
	tmTeam(t, e, bc, "acme", map[string]any{"name": "others"}, "other")
	e.Do("POST", "orgs/acme/repos", map[string]any{"name": "nope", "private": true}, apitest.Basic(other)).Expect(t, http.StatusForbidden)
	var r models.Repository
	e.Do("POST", "orgs/acme/repos", map[string]any{"name": "made", "private": true}, apitest.Basic(maker)).
		Expect(t, http.StatusCreated).JSON(t, &r)
	if !r.Permissions.Push || r.Permissions.Admin {
		t.Fatalf("the creator's permissions %+v", r.Permissions)
	}
	e.Do("GET", fmt.Sprintf("teams/%d/repos/acme/made", makers.ID), nil, bc).Expect(t, http.StatusOK)
	e.Do("GET", "repos/acme/made", nil, apitest.Basic(other)).Expect(t, http.StatusNotFound)
}

// expectAllUnits fails unless tm lists every repository unit, each at mode
// in units_map.
func expectAllUnits(t *testing.T, tm *models.Team, mode string) {
	t.Helper()
	all := []string{"repo.code", "repo.issues", "repo.ext_issues", "repo.wiki", "repo.ext_wiki", "repo.pulls",
		"repo.releases", "repo.projects", "repo.packages", "repo.actions"}
	if len(tm.UnitsMap) != len(all) {
		t.Fatalf("team %s: units_map %v, want the %d units", tm.Name, tm.UnitsMap, len(all))
	}
	for _, u := range all {
		if tm.UnitsMap[u] != mode {
			t.Fatalf("team %s: units_map[%s] = %q, want %q (%v)", tm.Name, u, tm.UnitsMap[u], mode, tm.UnitsMap)
		}
	}
}

// TestTeamCreatedWithUnits: a team created with a list of units renders
// its permission as the reference does: the given permission, each listed
// unit at it; without a permission, "none" (the reference reads an absent
// permission as none) and the listed units at none.
func TestTeamCreatedWithUnits(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	boss := e.CreateUser("boss", false)
	bc := apitest.Basic(boss)
	roCreateOrg(t, e, bc, map[string]any{"username": "acme"})
	for _, c := range []struct {
		name, permission, want string
	}{{"writers", "write", "write"}, {"readers", "read", "read"}, {"unset", "", "none"}} {
		body := map[string]any{"name": c.name, "units": []string{"repo.code", "repo.issues"}}
		if c.permission != "" {
			body["permission"] = c.permission
		}
		var tm models.Team
		e.Do("POST", "orgs/acme/teams", body, bc).Expect(t, http.StatusCreated).JSON(t, &tm)
		if tm.Permission != c.want || tm.UnitsMap["repo.code"] != c.want || tm.UnitsMap["repo.issues"] != c.want ||
			!slices.Contains(tm.Units, "repo.code") || !slices.Contains(tm.Units, "repo.issues") {
			t.Errorf("team %s: permission %q, units %v, units_map %v; want %q for both units", c.name, tm.Permission, tm.Units, tm.UnitsMap, c.want)
		}
	}
}
