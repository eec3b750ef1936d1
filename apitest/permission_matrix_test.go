package apitest_test

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"sort"
	"testing"

	"repohost/apitest"
	"repohost/impl/access"
	"repohost/impl/auth"
	"repohost/models"
	"repohost/store"
)

// The permission matrix: every kind of caller against repositories of
// every kind of owner (user or organization; public, limited, private),
// public and private, for every unit. The expected mode of each cell is
// written below as a table of rules (pmExpect), separately from
// impl/access's RepoFor, and the test asserts, on the database it runs on:
// the single-repository check (Checker.Repo), the page check
// (Checker.Repos), the SQL filter (repository search) and GET
// /repos/{owner}/{repo} with its permissions object.

// pmCaller is one kind of caller, set up through the API.
type pmCaller struct {
	name string
	// kind selects the rule of pmExpect.
	kind string
	// collab is the caller's collaborator mode on every repository, team
	// the units_map of its team in every organization (nil: none).
	collab string
	team   map[string]string
	// restricted callers reach only what they are given.
	restricted bool
}

// Team unit maps of the matrix: one unit read, one unit written with code
// hidden, everything written, and an admin team.
var (
	pmCodeRead   = map[string]string{"repo.code": "read"}
	pmIssuesOnly = map[string]string{"repo.code": "none", "repo.issues": "write"}
	pmAllWrite   = map[string]string{"repo.code": "write", "repo.issues": "write", "repo.pulls": "write",
		"repo.releases": "write", "repo.wiki": "write", "repo.projects": "write", "repo.actions": "write", "repo.packages": "write"}
)

var pmCallers = []pmCaller{
	{name: "anonymous", kind: "anonymous"},
	{name: "outsider", kind: "outsider"},
	{name: "restricted", kind: "outsider", restricted: true},
	{name: "collab-read", kind: "collaborator", collab: "read"},
	{name: "collab-write", kind: "collaborator", collab: "write"},
	{name: "collab-admin", kind: "collaborator", collab: "admin"},
	{name: "restricted-collab-write", kind: "collaborator", collab: "write", restricted: true},
	{name: "team-code-read", kind: "team", team: pmCodeRead},
	{name: "team-issues-only", kind: "team", team: pmIssuesOnly},
	{name: "team-all-write", kind: "team", team: pmAllWrite},
	{name: "team-admin", kind: "team-admin"},
	{name: "restricted-team-code-read", kind: "team", team: pmCodeRead, restricted: true},
	{name: "collab-read-team-issues", kind: "team", team: pmIssuesOnly, collab: "read"},
	{name: "org-owner", kind: "org-owner"},
	{name: "site-admin", kind: "site-admin"},
}

// pmRepo is one repository of the matrix.
type pmRepo struct {
	owner, name string
	org         bool
	ownerVis    string
	private     bool
}

func (r pmRepo) full() string { return r.owner + "/" + r.name }

// pmEnabled: no repository uses an external tracker or wiki; private
// repositories have packages switched off, so a disabled unit is a cell
// too.
func pmEnabled(r pmRepo, unit string) bool {
	switch unit {
	case "repo.ext_issues", "repo.ext_wiki":
		return false
	case "repo.packages":
		return !r.private
	}
	return true
}

var pmModes = map[string]store.AccessMode{"none": store.AccessNone, "read": store.AccessRead,
	"write": store.AccessWrite, "admin": store.AccessAdmin, "owner": store.AccessOwner}

// pmExpect is the rule table: c's mode on unit of r.
func pmExpect(c pmCaller, r pmRepo, unit string) store.AccessMode {
	if !pmEnabled(r, unit) {
		return store.AccessNone
	}
	// The public floor: what anyone allowed to see the owner reads of a
	// public repository. Restricted users have none.
	ownerSeen := func(member bool) bool {
		switch r.ownerVis {
		case "public":
			return true
		case "limited":
			return member || !c.restricted
		}
		return member
	}
	floor := func(member bool) store.AccessMode {
		if !r.private && !c.restricted && ownerSeen(member) {
			return store.AccessRead
		}
		return store.AccessNone
	}
	switch c.kind {
	case "site-admin":
		return store.AccessOwner
	case "anonymous":
		if !r.private && r.ownerVis == "public" {
			return store.AccessRead
		}
		return store.AccessNone
	case "outsider":
		return floor(false)
	case "collaborator":
		return max(pmModes[c.collab], floor(false))
	case "org-owner", "team-admin":
		if r.org {
			return store.AccessOwner
		}
		return floor(false)
	case "team":
		if !r.org {
			return max(pmModes[c.collab], floor(false))
		}
		return max(pmModes[c.collab], floor(true), pmModes[c.team[unit]])
	}
	panic(c.kind)
}

var pmUnits = []string{"repo.code", "repo.issues", "repo.pulls", "repo.releases", "repo.wiki",
	"repo.projects", "repo.ext_issues", "repo.ext_wiki", "repo.actions", "repo.packages"}

func pmSetup(t *testing.T, e *apitest.Env) ([]pmRepo, map[string]*apitest.Account, apitest.Cred) {
	t.Helper()
	admin := apitest.Basic(e.Admin)
	accts := map[string]*apitest.Account{}
	for _, c := range pmCallers {
		if c.kind == "anonymous" {
			continue
		}
		if c.kind == "site-admin" {
			accts[c.name] = e.Admin
			continue
		}
		accts[c.name] = e.CreateUser(c.name, false)
		if c.restricted {
			e.Do("PATCH", "admin/users/"+c.name, map[string]any{"restricted": true, "login_name": c.name, "source_id": 0}, admin).
				Expect(t, http.StatusOK)
		}
	}
	var repos []pmRepo
	for _, vis := range []string{"public", "limited", "private"} {
		u := e.CreateUser("u"+vis, false)
		e.Do("PATCH", "admin/users/"+u.User.Name, map[string]any{"visibility": vis, "login_name": u.User.Name, "source_id": 0}, admin).
			Expect(t, http.StatusOK)
		for _, private := range []bool{false, true} {
			r := pmRepo{owner: u.User.Name, name: fmt.Sprintf("r-%v", private), ownerVis: vis, private: private}
			roCreateRepo(t, e, apitest.Basic(u), map[string]any{"name": r.name, "private": private})
			repos = append(repos, r)
		}
		boss := apitest.Basic(accts["org-owner"])
		org := "o" + vis
		roCreateOrg(t, e, boss, map[string]any{"username": org, "visibility": vis})
		for _, private := range []bool{false, true} {
			r := pmRepo{owner: org, name: fmt.Sprintf("r-%v", private), org: true, ownerVis: vis, private: private}
			e.Do("POST", "orgs/"+org+"/repos", map[string]any{"name": r.name, "private": private}, boss).Expect(t, http.StatusCreated)
			repos = append(repos, r)
		}
		// One team per team caller; the admin team has every repository
		// of the organization, the others are given each one explicitly.
		for _, c := range pmCallers {
			body := map[string]any{"name": c.name}
			switch c.kind {
			case "team":
				body["units_map"] = c.team
			case "team-admin":
				body["permission"], body["includes_all_repositories"] = "admin", true
			default:
				continue
			}
			var team models.Team
			e.Do("POST", "orgs/"+org+"/teams", body, boss).Expect(t, http.StatusCreated).JSON(t, &team)
			e.Do("PUT", fmt.Sprintf("teams/%d/members/%s", team.ID, c.name), nil, boss).Expect(t, http.StatusNoContent)
			if c.kind == "team" {
				for _, private := range []bool{false, true} {
					e.Do("PUT", fmt.Sprintf("teams/%d/repos/%s/r-%v", team.ID, org, private), nil, boss).Expect(t, http.StatusNoContent)
				}
			}
		}
	}
	// Collaborators on every repository, added by a site admin.
	for _, r := range repos {
		for _, c := range pmCallers {
			if c.collab == "" {
				continue
			}
			e.Do("PUT", "repos/"+r.full()+"/collaborators/"+c.name, map[string]any{"permission": c.collab}, admin).
				Expect(t, http.StatusNoContent)
		}
		if !r.private {
			continue
		}
		// Private repositories have packages off.
		owner := admin
		e.Do("PATCH", "repos/"+r.full(), map[string]any{"has_packages": false}, owner).Expect(t, http.StatusOK)
	}
	return repos, accts, admin
}

func TestPermissionMatrix(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	repos, accts, _ := pmSetup(t, e)
	ctx := context.Background()
	rows := make([]*store.Repository, 0, len(repos))
	for _, r := range repos {
		row, err := e.DB.Repos().FindByOwnerAndName(ctx, r.owner, r.name)
		if err != nil {
			t.Fatal(err)
		}
		rows = append(rows, row)
	}
	cells := 0
	for _, c := range pmCallers {
		t.Run(c.name, func(t *testing.T) {
			var p *auth.Principal
			var cred apitest.Cred
			if a := accts[c.name]; a != nil {
				u, err := e.DB.Users().FindByID(ctx, a.User.ID)
				if err != nil {
					t.Fatal(err)
				}
				p, cred = &auth.Principal{User: u, Signer: u}, apitest.Basic(a)
			}
			page, err := e.Deps.Access.Repos(ctx, p, rows)
			if err != nil {
				t.Fatal(err)
			}
			var visible []string
			for i, r := range repos {
				one, err := e.Deps.Access.Repo(ctx, p, rows[i])
				if err != nil {
					t.Fatal(err)
				}
				seen := false
				for _, unit := range pmUnits {
					u, _ := access.ParseUnit(unit)
					want := pmExpect(c, r, unit)
					cells++
					if got := one.UnitMode(u); got != want {
						t.Errorf("%s on %s (owner %s, private %v): %s, want %s", unit, r.full(), r.ownerVis, r.private, got, want)
					}
					if got := page[i].UnitMode(u); got != one.UnitMode(u) {
						t.Errorf("%s on %s: the page says %s, the single check %s", unit, r.full(), got, one.UnitMode(u))
					}
					seen = seen || want >= store.AccessRead
				}
				if one.Pull != seen {
					t.Errorf("%s: visible %v, the rules grant %v", r.full(), one.Pull, seen)
				}
				if seen {
					visible = append(visible, r.full())
				}
				// The API agrees: 404 when invisible, else the permissions
				// object derived from the same modes.
				resp := e.Do("GET", "repos/"+r.full(), nil, cred)
				if !seen {
					resp.Expect(t, http.StatusNotFound)
					continue
				}
				var got models.Repository
				resp.Expect(t, http.StatusOK).JSON(t, &got)
				want := models.Permission{Pull: true, Push: pmExpect(c, r, "repo.code") >= store.AccessWrite,
					Admin: one.IsAdmin()}
				if *got.Permissions != want {
					t.Errorf("GET %s permissions %+v, want %+v", r.full(), *got.Permissions, want)
				}
			}
			// The SQL filter keeps exactly the visible repositories.
			found, _, err := e.DB.Repos().Search(ctx, store.RepoSearch{Viewer: access.Viewer(p)}, store.Page{Limit: 100})
			if err != nil {
				t.Fatal(err)
			}
			var listed []string
			for _, r := range found {
				if slices.ContainsFunc(repos, func(m pmRepo) bool { return m.full() == r.Owner.Name+"/"+r.Name }) {
					listed = append(listed, r.Owner.Name+"/"+r.Name)
				}
			}
			sort.Strings(listed)
			sort.Strings(visible)
			if !slices.Equal(listed, visible) {
				t.Errorf("the SQL filter lists %v, the rules grant %v", listed, visible)
			}
		})
	}
	t.Logf("permission matrix: %d cells (%d callers × %d repositories × %d units) on %s",
		cells, len(pmCallers), len(repos), len(pmUnits), apitest.Database())
}
