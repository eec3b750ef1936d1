package apitest_test

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/go-git/go-git/v6"
	"github.com/go-git/go-git/v6/plumbing"

	"repohost/apitest"
	"repohost/gen/client/repository"
	"repohost/models"
)

// roCreateRepo creates a repository through POST /user/repos and fails the
// test unless it answers 201.
func roCreateRepo(t *testing.T, e *apitest.Env, cred apitest.Cred, body map[string]any) *models.Repository {
	t.Helper()
	var r models.Repository
	e.Do("POST", "user/repos", body, cred).Expect(t, http.StatusCreated).JSON(t, &r)
	return &r
}

// roCreateOrg creates an organization through POST /orgs.
func roCreateOrg(t *testing.T, e *apitest.Env, cred apitest.Cred, body map[string]any) *models.Organization {
	t.Helper()
	var o models.Organization
	e.Do("POST", "orgs", body, cred).Expect(t, http.StatusCreated).JSON(t, &o)
	return &o
}

// roAddMember makes u a member of org directly in the store: an owner
// through the owners team, anyone else through the team "Members", which
// reads every repository of org (apitest.Env.AddOrgMember).
func roAddMember(t *testing.T, e *apitest.Env, orgID int64, u *apitest.Account, owner, public bool) {
	t.Helper()
	e.AddOrgMember(t, orgID, u.User.ID, owner, public)
}

// roGit opens the bare repository of owner/name on disk.
func roGit(t *testing.T, e *apitest.Env, owner, name string) *git.Repository {
	t.Helper()
	path, err := e.Deps.Git.Path(owner, name)
	if err != nil {
		t.Fatal(err)
	}
	r, err := git.PlainOpen(path)
	if err != nil {
		t.Fatalf("open %s/%s: %v", owner, name, err)
	}
	return r
}

func roGitExists(t *testing.T, e *apitest.Env, owner, name string) bool {
	t.Helper()
	path, err := e.Deps.Git.Path(owner, name)
	if err != nil {
		t.Fatal(err)
	}
	_, err = os.Stat(path)
	return err == nil
}

// roFile reads a file on branch of a bare repository.
func roFile(t *testing.T, r *git.Repository, branch, file string) string {
	t.Helper()
	ref, err := r.Reference(plumbing.NewBranchReferenceName(branch), true)
	if err != nil {
		t.Fatalf("branch %s: %v", branch, err)
	}
	c, err := r.CommitObject(ref.Hash())
	if err != nil {
		t.Fatal(err)
	}
	f, err := c.File(file)
	if err != nil {
		t.Fatalf("%s on %s: %v", file, branch, err)
	}
	s, err := f.Contents()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func roHead(t *testing.T, r *git.Repository) string {
	t.Helper()
	head, err := r.Storer.Reference(plumbing.HEAD)
	if err != nil {
		t.Fatal(err)
	}
	return head.Target().Short()
}

func roRepoNames(rs []*models.Repository) []string {
	out := make([]string, 0, len(rs))
	for _, r := range rs {
		out = append(out, r.FullName)
	}
	return out
}

func roSorted(s []string) []string {
	out := append([]string(nil), s...)
	sort.Strings(out)
	return out
}

func TestRepoCreate(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	alice := e.CreateUser("alice", false)
	cred := apitest.Basic(alice)

	e.Do("POST", "user/repos", map[string]any{"name": "x"}, nil).Expect(t, http.StatusUnauthorized)
	// A token without repository write scope is refused before the handler.
	e.Do("POST", "user/repos", map[string]any{"name": "x"}, apitest.TokenCred(e.Token(alice, "read:repository"))).
		Expect(t, http.StatusForbidden)

	t.Run("auto_init with templates", func(t *testing.T) {
		c, authw := e.Client(apitest.TokenCred(e.Token(alice, "write:repository")))
		yes := true
		name, desc, ign, lic := "hello", "says hello", "Go, Python", "MIT"
		resp, err := c.Repository.CreateCurrentUserRepo(repository.NewCreateCurrentUserRepoParams().WithBody(&models.CreateRepoOption{
			Name: &name, Description: &desc, AutoInit: &yes, Gitignores: &ign, License: &lic,
		}), authw)
		if err != nil {
			t.Fatal(err)
		}
		r := resp.Payload
		if r.FullName != "alice/hello" || r.Empty || r.DefaultBranch != "main" || r.Private || r.Description != desc ||
			r.ObjectFormatName != "sha1" || r.Owner.UserName != "alice" {
			t.Fatalf("created %+v", r)
		}
		if p := r.Permissions; !p.Admin || !p.Push || !p.Pull {
			t.Fatalf("creator permissions %+v", p)
		}
		g := roGit(t, e, "alice", "hello")
		if got := roFile(t, g, "main", "README.md"); got != "# hello\n\nsays hello" {
			t.Fatalf("README %q", got)
		}
		ignore := roFile(t, g, "main", ".gitignore")
		if !strings.Contains(ignore, "# ---> Go\n") || !strings.Contains(ignore, "# ---> Python\n") || !strings.Contains(ignore, "__pycache__/") {
			t.Fatalf(".gitignore %q", ignore)
		}
		if l := roFile(t, g, "main", "LICENSE"); !strings.HasPrefix(l, "MIT License") || !strings.Contains(l, "alice") {
			t.Fatalf("LICENSE %q", l)
		}
		if h := roHead(t, g); h != "main" {
			t.Fatalf("HEAD -> %s", h)
		}
		// A repository name is unique per owner, case-insensitively.
		for _, n := range []string{"hello", "HELLO"} {
			r := e.Do("POST", "user/repos", map[string]any{"name": n}, cred).Expect(t, http.StatusConflict)
			if !strings.Contains(string(r.Body), "The repository with the same name already exists.") {
				t.Fatalf("duplicate body %s", r.Body)
			}
		}
	})

	t.Run("empty with options", func(t *testing.T) {
		r := roCreateRepo(t, e, cred, map[string]any{
			"name": "Blank", "private": true, "template": true, "default_branch": "develop", "object_format_name": "sha1",
		})
		if !r.Empty || !r.Private || !r.Template || r.DefaultBranch != "develop" || r.Name != "Blank" {
			t.Fatalf("created %+v", r)
		}
		g := roGit(t, e, "alice", "blank")
		if h := roHead(t, g); h != "develop" {
			t.Fatalf("HEAD -> %s", h)
		}
		if _, err := g.Reference(plumbing.NewBranchReferenceName("develop"), true); err == nil {
			t.Fatal("an empty repository has a branch")
		}
		// Empty strings are what many clients send for "not set".
		r = roCreateRepo(t, e, cred, map[string]any{"name": "defaults", "default_branch": "", "readme": "",
			"license": "", "gitignores": "", "object_format_name": "", "trust_model": ""})
		if r.DefaultBranch != "main" || !r.Empty {
			t.Fatalf("created %+v", r)
		}
	})

	t.Run("invalid input", func(t *testing.T) {
		long := strings.Repeat("a", 101)
		for _, body := range []map[string]any{
			{"name": ".."}, {"name": "."}, {"name": "-"}, {"name": "a/b"}, {"name": "x.git"}, {"name": "x.wiki"},
			{"name": ""}, {"name": "a b"}, {"name": long}, {},
			{"name": "tpl", "auto_init": true, "gitignores": "Cobol"},
			{"name": "tpl", "auto_init": true, "license": "No-Such-License"},
			{"name": "tpl", "auto_init": true, "readme": "Fancy"},
			{"name": "tpl", "default_branch": "a..b"},
			{"name": "tpl", "default_branch": "-x"},
			{"name": "tpl", "object_format_name": "md5"},
		} {
			r := e.Do("POST", "user/repos", body, cred)
			if r.Status != http.StatusUnprocessableEntity {
				t.Errorf("%v: status %d, want 422: %s", body, r.Status, r.Body)
			}
		}
		if roGitExists(t, e, "alice", "tpl") {
			t.Fatal("a refused create left a directory behind")
		}
	})

	t.Run("stray directory is kept", func(t *testing.T) {
		path, err := e.Deps.Git.Path("alice", "stray")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(path, 0o755); err != nil {
			t.Fatal(err)
		}
		keep := filepath.Join(path, "precious")
		if err := os.WriteFile(keep, []byte("data"), 0o644); err != nil {
			t.Fatal(err)
		}
		e.Do("POST", "user/repos", map[string]any{"name": "stray", "auto_init": true}, cred).Expect(t, http.StatusConflict)
		if b, err := os.ReadFile(keep); err != nil || string(b) != "data" {
			t.Fatalf("stray data touched: %v %q", err, b)
		}
		e.Do("GET", "repos/alice/stray", nil, cred).Expect(t, http.StatusNotFound)
	})

	t.Run("repository limit", func(t *testing.T) {
		bob := e.CreateUser("bob", false)
		u := *bob.User
		u.MaxRepoCreation = 1
		if err := e.DB.Users().Update(context.Background(), &u); err != nil {
			t.Fatal(err)
		}
		roCreateRepo(t, e, apitest.Basic(bob), map[string]any{"name": "one"})
		e.Do("POST", "user/repos", map[string]any{"name": "two"}, apitest.Basic(bob)).Expect(t, http.StatusForbidden)
		// Site admins are not bound by the limit.
		e.Do("POST", "admin/users/bob/repos", map[string]any{"name": "two"}, apitest.Basic(e.Admin)).Expect(t, http.StatusCreated)
	})
}

func TestRepoCreateInOrg(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	alice, bob, carol := e.CreateUser("alice", false), e.CreateUser("bob", false), e.CreateUser("carol", false)
	acme := roCreateOrg(t, e, apitest.Basic(alice), map[string]any{"username": "acme"})
	roAddMember(t, e, acme.ID, bob, false, true)
	secret := roCreateOrg(t, e, apitest.Basic(alice), map[string]any{"username": "secret", "visibility": "private"})
	roAddMember(t, e, secret.ID, bob, false, false)

	for _, tc := range []struct {
		caller string
		cred   apitest.Cred
		org    string
		want   int
	}{
		{"anonymous", nil, "acme", http.StatusUnauthorized},
		{"outsider", apitest.Basic(carol), "acme", http.StatusForbidden},
		{"outsider, private org", apitest.Basic(carol), "secret", http.StatusNotFound},
		{"member", apitest.Basic(bob), "acme", http.StatusForbidden},
		{"member, private org", apitest.Basic(bob), "secret", http.StatusForbidden},
		{"owner", apitest.Basic(alice), "acme", http.StatusCreated},
		{"owner, private org", apitest.Basic(alice), "secret", http.StatusCreated},
		{"admin", apitest.Basic(e.Admin), "acme", http.StatusCreated},
		{"unknown org", apitest.Basic(alice), "nothing", http.StatusNotFound},
		{"user, not org", apitest.Basic(alice), "alice", http.StatusNotFound},
	} {
		t.Run(tc.caller+" "+tc.org, func(t *testing.T) {
			name := "r-" + strings.ReplaceAll(tc.caller, " ", "")
			name = strings.ReplaceAll(name, ",", "")
			r := e.Do("POST", "orgs/"+tc.org+"/repos", map[string]any{"name": name, "auto_init": true}, tc.cred).Expect(t, tc.want)
			if tc.want != http.StatusCreated {
				return
			}
			var repo models.Repository
			r.JSON(t, &repo)
			if repo.Owner.UserName != tc.org || !repo.Permissions.Admin || repo.Empty {
				t.Fatalf("created %+v", repo)
			}
			if got := roFile(t, roGit(t, e, tc.org, name), "main", "README.md"); got != "# "+name+"\n\n" {
				t.Fatalf("README %q", got)
			}
		})
	}
	e.Do("POST", "orgs/acme/repos", map[string]any{"name": "r-owner"}, apitest.Basic(alice)).Expect(t, http.StatusConflict)
	e.Do("POST", "orgs/acme/repos", map[string]any{"name": "x.git"}, apitest.Basic(alice)).Expect(t, http.StatusUnprocessableEntity)
}

func TestAdminCreateRepo(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	alice := e.CreateUser("alice", false)
	roCreateOrg(t, e, apitest.Basic(alice), map[string]any{"username": "acme", "visibility": "limited"})
	body := map[string]any{"name": "made", "private": true}

	e.Do("POST", "admin/users/alice/repos", body, nil).Expect(t, http.StatusUnauthorized)
	e.Do("POST", "admin/users/alice/repos", body, apitest.Basic(alice)).Expect(t, http.StatusForbidden)
	e.Do("POST", "admin/users/nobody/repos", body, apitest.Basic(e.Admin)).Expect(t, http.StatusNotFound)

	for _, owner := range []string{"alice", "acme"} {
		var r models.Repository
		e.Do("POST", "admin/users/"+owner+"/repos", body, apitest.Basic(e.Admin)).Expect(t, http.StatusCreated).JSON(t, &r)
		if r.FullName != owner+"/made" || !r.Private || !r.Permissions.Admin {
			t.Fatalf("created %+v", r)
		}
		// The owner has full rights on what the admin created for them.
		var got models.Repository
		e.Do("GET", "repos/"+owner+"/made", nil, apitest.Basic(alice)).Expect(t, http.StatusOK).JSON(t, &got)
		if !got.Permissions.Admin {
			t.Fatalf("owner permissions %+v", got.Permissions)
		}
	}
	e.Do("POST", "admin/users/alice/repos", body, apitest.Basic(e.Admin)).Expect(t, http.StatusConflict)
}

// roWorld is a small population of users, organizations and repositories
// with every visibility combination.
type roWorld struct {
	alice, bob, carol *apitest.Account // alice owns; bob is an org member; carol is an outsider
	acme, hidden      *models.Organization
}

func roSetup(t *testing.T, e *apitest.Env) roWorld {
	t.Helper()
	w := roWorld{alice: e.CreateUser("alice", false), bob: e.CreateUser("bob", false), carol: e.CreateUser("carol", false)}
	a := apitest.Basic(w.alice)
	w.acme = roCreateOrg(t, e, a, map[string]any{"username": "acme"})
	roAddMember(t, e, w.acme.ID, w.bob, false, true)
	w.hidden = roCreateOrg(t, e, a, map[string]any{"username": "hidden", "visibility": "private"})
	roAddMember(t, e, w.hidden.ID, w.bob, false, false)
	limited := roCreateOrg(t, e, a, map[string]any{"username": "limited", "visibility": "limited"})
	_ = limited

	roCreateRepo(t, e, a, map[string]any{"name": "alpha-tool", "description": "the first thing", "auto_init": true})
	roCreateRepo(t, e, a, map[string]any{"name": "beta", "private": true})
	roCreateRepo(t, e, a, map[string]any{"name": "gamma", "template": true})
	e.Do("PATCH", "repos/alice/gamma", map[string]any{"archived": true}, a).Expect(t, http.StatusOK)
	e.Do("POST", "orgs/acme/repos", map[string]any{"name": "acme-web"}, a).Expect(t, http.StatusCreated)
	e.Do("POST", "orgs/acme/repos", map[string]any{"name": "acme-secret", "private": true}, a).Expect(t, http.StatusCreated)
	e.Do("POST", "orgs/hidden/repos", map[string]any{"name": "hidden-repo"}, a).Expect(t, http.StatusCreated)
	e.Do("POST", "orgs/limited/repos", map[string]any{"name": "limited-repo"}, a).Expect(t, http.StatusCreated)
	roCreateRepo(t, e, apitest.Basic(w.bob), map[string]any{"name": "bob-tool"})
	return w
}

func TestRepoVisibility(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	w := roSetup(t, e)
	callers := []struct {
		name string
		cred apitest.Cred
		sees map[string]bool
	}{
		{"anonymous", nil, map[string]bool{"alice/alpha-tool": true, "alice/gamma": true, "acme/acme-web": true, "bob/bob-tool": true}},
		{"outsider", apitest.Basic(w.carol), map[string]bool{"alice/alpha-tool": true, "alice/gamma": true, "acme/acme-web": true,
			"bob/bob-tool": true, "limited/limited-repo": true}},
		{"org member", apitest.Basic(w.bob), map[string]bool{"alice/alpha-tool": true, "alice/gamma": true, "acme/acme-web": true,
			"acme/acme-secret": true, "hidden/hidden-repo": true, "bob/bob-tool": true, "limited/limited-repo": true}},
		{"owner", apitest.Basic(w.alice), map[string]bool{"alice/alpha-tool": true, "alice/beta": true, "alice/gamma": true,
			"acme/acme-web": true, "acme/acme-secret": true, "hidden/hidden-repo": true, "bob/bob-tool": true, "limited/limited-repo": true}},
		{"public-only token", apitest.TokenCred(e.Token(w.alice, "public-only", "read:repository")), map[string]bool{
			"alice/alpha-tool": true, "alice/gamma": true, "acme/acme-web": true, "bob/bob-tool": true}},
	}
	all := []string{"alice/alpha-tool", "alice/beta", "alice/gamma", "acme/acme-web", "acme/acme-secret",
		"hidden/hidden-repo", "limited/limited-repo", "bob/bob-tool"}
	for _, c := range callers {
		t.Run(c.name, func(t *testing.T) {
			for _, full := range all {
				want := http.StatusNotFound
				if c.sees[full] {
					want = http.StatusOK
				}
				r := e.Do("GET", "repos/"+full, nil, c.cred)
				if r.Status != want {
					t.Errorf("GET %s: status %d, want %d", full, r.Status, want)
				}
			}
		})
	}
	// Site admins see everything.
	for _, full := range all {
		e.Do("GET", "repos/"+full, nil, apitest.Basic(e.Admin)).Expect(t, http.StatusOK)
	}
	// A hidden repository answers exactly like a missing one.
	hiddenResp := e.Do("GET", "repos/alice/beta", nil, apitest.Basic(w.carol))
	missing := e.Do("GET", "repos/alice/no-such-repo", nil, apitest.Basic(w.carol))
	if hiddenResp.Status != missing.Status || string(hiddenResp.Body) != string(missing.Body) {
		t.Fatalf("hidden %d %s vs missing %d %s", hiddenResp.Status, hiddenResp.Body, missing.Status, missing.Body)
	}
	// Permissions follow the caller.
	for _, tc := range []struct {
		cred              apitest.Cred
		full              string
		admin, push, pull bool
	}{
		{nil, "acme/acme-web", false, false, true},
		{apitest.Basic(w.bob), "acme/acme-web", false, false, true},
		{apitest.Basic(w.alice), "acme/acme-web", true, true, true},
		{apitest.Basic(w.carol), "alice/alpha-tool", false, false, true},
		{apitest.Basic(e.Admin), "bob/bob-tool", true, true, true},
	} {
		var r models.Repository
		e.Do("GET", "repos/"+tc.full, nil, tc.cred).Expect(t, http.StatusOK).JSON(t, &r)
		if p := r.Permissions; p.Admin != tc.admin || p.Push != tc.push || p.Pull != tc.pull {
			t.Errorf("%s: permissions %+v", tc.full, p)
		}
	}
}

func TestRepoEditPermissions(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	w := roSetup(t, e)
	body := map[string]any{"description": "changed"}
	for _, tc := range []struct {
		name string
		cred apitest.Cred
		full string
		want int
	}{
		{"anonymous", nil, "alice/alpha-tool", http.StatusUnauthorized},
		{"outsider, public", apitest.Basic(w.carol), "alice/alpha-tool", http.StatusForbidden},
		{"outsider, private", apitest.Basic(w.carol), "alice/beta", http.StatusNotFound},
		{"org member", apitest.Basic(w.bob), "acme/acme-web", http.StatusForbidden},
		{"missing", apitest.Basic(w.alice), "alice/nothing", http.StatusNotFound},
		{"owner", apitest.Basic(w.alice), "alice/alpha-tool", http.StatusOK},
		{"org owner", apitest.Basic(w.alice), "acme/acme-web", http.StatusOK},
		{"admin", apitest.Basic(e.Admin), "bob/bob-tool", http.StatusOK},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := e.Do("PATCH", "repos/"+tc.full, body, tc.cred).Expect(t, tc.want)
			if tc.want == http.StatusForbidden && !strings.Contains(string(r.Body), "admin") {
				t.Fatalf("403 body %s", r.Body)
			}
		})
	}
}

func TestRepoEditFields(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	alice := e.CreateUser("alice", false)
	cred := apitest.Basic(alice)
	orig := roCreateRepo(t, e, cred, map[string]any{"name": "proj", "auto_init": true, "description": "d0"})
	c, authw := e.Client(cred)

	patch := func(t *testing.T, body map[string]any) *models.Repository {
		t.Helper()
		var r models.Repository
		e.Do("PATCH", "repos/alice/proj", body, cred).Expect(t, http.StatusOK).JSON(t, &r)
		var again models.Repository
		e.Do("GET", "repos/alice/proj", nil, cred).Expect(t, http.StatusOK).JSON(t, &again)
		if !reflect.DeepEqual(r, again) {
			t.Fatalf("PATCH answer and later GET differ:\n%+v\n%+v", r, again)
		}
		return &r
	}

	t.Run("empty body changes nothing", func(t *testing.T) {
		r := patch(t, map[string]any{})
		if r.Description != "d0" || r.Name != "proj" || !r.HasIssues || r.DefaultMergeStyle != "merge" || r.ProjectsMode != "all" {
			t.Fatalf("after empty PATCH %+v", r)
		}
	})

	t.Run("basic properties", func(t *testing.T) {
		r := patch(t, map[string]any{"description": "d1", "website": "https://example.com", "private": true, "template": true})
		if r.Description != "d1" || r.Website != "https://example.com" || !r.Private || !r.Template {
			t.Fatalf("%+v", r)
		}
		r = patch(t, map[string]any{"private": false})
		if r.Private || !r.Template || r.Description != "d1" {
			t.Fatalf("absent fields changed: %+v", r)
		}
	})

	t.Run("units", func(t *testing.T) {
		r := patch(t, map[string]any{"has_issues": false, "has_wiki": false, "has_pull_requests": false, "has_projects": false,
			"has_releases": false, "has_packages": false, "has_actions": false, "has_code": false, "projects_mode": "repo"})
		if r.HasIssues || r.HasWiki || r.HasPullRequests || r.HasProjects || r.HasReleases || r.HasPackages || r.HasActions ||
			r.HasCode || r.ProjectsMode != "repo" {
			t.Fatalf("%+v", r)
		}
		if r.InternalTracker != nil || r.ExternalTracker != nil {
			t.Fatalf("trackers shown with issues off: %+v %+v", r.InternalTracker, r.ExternalTracker)
		}
		r = patch(t, map[string]any{"has_issues": true, "has_wiki": true})
		if !r.HasIssues || !r.HasWiki || r.HasCode {
			t.Fatalf("%+v", r)
		}
	})

	t.Run("merge settings", func(t *testing.T) {
		r := patch(t, map[string]any{"allow_merge_commits": false, "allow_rebase": false, "allow_rebase_explicit": false,
			"allow_squash_merge": false, "allow_fast_forward_only_merge": false, "allow_manual_merge": true,
			"autodetect_manual_merge": true, "allow_rebase_update": false, "default_merge_style": "squash",
			"default_delete_branch_after_merge": true, "default_allow_maintainer_edit": true,
			"ignore_whitespace_conflicts": true, "default_target_branch": "main"})
		if r.AllowMerge || r.AllowRebase || r.AllowRebaseMerge || r.AllowSquash || r.AllowFastForwardOnly ||
			!r.AllowManualMerge || !r.AutodetectManualMerge || r.AllowRebaseUpdate || r.DefaultMergeStyle != "squash" ||
			!r.DefaultDeleteBranchAfterMerge || !r.DefaultAllowMaintainerEdit || !r.IgnoreWhitespaceConflicts ||
			r.DefaultTargetBranch != "main" {
			t.Fatalf("%+v", r)
		}
	})

	t.Run("trackers and wiki", func(t *testing.T) {
		r := patch(t, map[string]any{"internal_tracker": map[string]any{"enable_time_tracker": false,
			"allow_only_contributors_to_track_time": false, "enable_issue_dependencies": true}})
		if it := r.InternalTracker; it == nil || it.EnableTimeTracker || it.AllowOnlyContributorsToTrackTime || !it.EnableIssueDependencies {
			t.Fatalf("internal tracker %+v", r.InternalTracker)
		}
		r = patch(t, map[string]any{"external_tracker": map[string]any{"external_tracker_url": "https://bugs.example.com",
			"external_tracker_format": "https://bugs.example.com/{user}/{repo}/{index}", "external_tracker_style": "numeric"},
			"external_wiki": map[string]any{"external_wiki_url": "https://wiki.example.com"}})
		if et := r.ExternalTracker; et == nil || r.InternalTracker != nil || et.ExternalTrackerURL != "https://bugs.example.com" ||
			et.ExternalTrackerStyle != "numeric" {
			t.Fatalf("external tracker %+v / %+v", r.ExternalTracker, r.InternalTracker)
		}
		if r.ExternalWiki == nil || r.ExternalWiki.ExternalWikiURL != "https://wiki.example.com" {
			t.Fatalf("external wiki %+v", r.ExternalWiki)
		}
		// The built-in tracker settings switch back to the built-in tracker.
		r = patch(t, map[string]any{"internal_tracker": map[string]any{"enable_time_tracker": true}})
		if r.ExternalTracker != nil || r.InternalTracker == nil || !r.InternalTracker.EnableTimeTracker {
			t.Fatalf("back to internal: %+v / %+v", r.ExternalTracker, r.InternalTracker)
		}
	})

	t.Run("invalid values", func(t *testing.T) {
		for _, body := range []map[string]any{
			{"projects_mode": "everything"},
			{"default_merge_style": "octopus"},
			{"external_tracker": map[string]any{"external_tracker_url": "not a url"}},
			{"external_tracker": map[string]any{"external_tracker_url": "https://x.example", "external_tracker_style": "roman"}},
			{"external_wiki": map[string]any{"external_wiki_url": "ftp://wiki"}},
			{"default_branch": "bad..name"},
			{"default_branch": "does-not-exist"},
			{"name": ".."},
			{"name": "x.git"},
			{"name": "a/b"},
			{"name": ""},
		} {
			if r := e.Do("PATCH", "repos/alice/proj", body, cred); r.Status != http.StatusUnprocessableEntity {
				t.Errorf("%v: status %d, want 422: %s", body, r.Status, r.Body)
			}
		}
	})

	t.Run("archive", func(t *testing.T) {
		r := patch(t, map[string]any{"archived": true})
		if !r.Archived || r.ArchivedAt == nil {
			t.Fatalf("archived %v at %v", r.Archived, r.ArchivedAt)
		}
		r = patch(t, map[string]any{"archived": false})
		if r.Archived || r.ArchivedAt != nil {
			t.Fatalf("unarchived %v at %v", r.Archived, r.ArchivedAt)
		}
	})

	t.Run("default branch", func(t *testing.T) {
		g := roGit(t, e, "alice", "proj")
		main, err := g.Reference(plumbing.NewBranchReferenceName("main"), true)
		if err != nil {
			t.Fatal(err)
		}
		if err := g.Storer.SetReference(plumbing.NewHashReference(plumbing.NewBranchReferenceName("dev"), main.Hash())); err != nil {
			t.Fatal(err)
		}
		r := patch(t, map[string]any{"default_branch": "dev"})
		if r.DefaultBranch != "dev" || roHead(t, roGit(t, e, "alice", "proj")) != "dev" {
			t.Fatalf("default branch %s", r.DefaultBranch)
		}
		// An empty repository takes any valid name: its first push creates it.
		roCreateRepo(t, e, cred, map[string]any{"name": "void"})
		var v models.Repository
		e.Do("PATCH", "repos/alice/void", map[string]any{"default_branch": "trunk"}, cred).Expect(t, http.StatusOK).JSON(t, &v)
		if v.DefaultBranch != "trunk" || roHead(t, roGit(t, e, "alice", "void")) != "trunk" {
			t.Fatalf("empty repo default branch %s", v.DefaultBranch)
		}
	})

	t.Run("rename", func(t *testing.T) {
		roCreateRepo(t, e, cred, map[string]any{"name": "taken"})
		r := e.Do("PATCH", "repos/alice/proj", map[string]any{"name": "taken"}, cred).Expect(t, http.StatusUnprocessableEntity)
		if !strings.Contains(string(r.Body), "already exists") {
			t.Fatalf("rename onto taken name: %s", r.Body)
		}
		name := "proj2"
		resp, err := c.Repository.RepoEdit(repository.NewRepoEditParams().WithOwner("alice").WithRepo("proj").
			WithBody(&models.EditRepoOption{Name: &name}), authw)
		if err != nil {
			t.Fatal(err)
		}
		if resp.Payload.Name != "proj2" || resp.Payload.FullName != "alice/proj2" || resp.Payload.ID != orig.ID {
			t.Fatalf("renamed %+v", resp.Payload)
		}
		if roGitExists(t, e, "alice", "proj") || !roGitExists(t, e, "alice", "proj2") {
			t.Fatal("git directory not moved")
		}
		if got := roFile(t, roGit(t, e, "alice", "proj2"), "main", "README.md"); got != "# proj\n\nd0" {
			t.Fatalf("README after rename %q", got)
		}
		e.Do("GET", "repos/alice/proj", nil, cred).Expect(t, http.StatusNotFound)
		// A change of case only keeps the directory.
		var r2 models.Repository
		e.Do("PATCH", "repos/alice/proj2", map[string]any{"name": "Proj2"}, cred).Expect(t, http.StatusOK).JSON(t, &r2)
		if r2.Name != "Proj2" || !roGitExists(t, e, "alice", "proj2") {
			t.Fatalf("case rename %+v", r2)
		}
		// A stray directory at the new name is never overwritten.
		path, _ := e.Deps.Git.Path("alice", "occupied")
		if err := os.MkdirAll(filepath.Join(path, "objects"), 0o755); err != nil {
			t.Fatal(err)
		}
		e.Do("PATCH", "repos/alice/proj2", map[string]any{"name": "occupied"}, cred).Expect(t, http.StatusUnprocessableEntity)
		if !roGitExists(t, e, "alice", "proj2") {
			t.Fatal("failed rename lost the repository")
		}
		e.Do("GET", "repos/alice/proj2", nil, cred).Expect(t, http.StatusOK)
	})
}

func TestRepoDelete(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	w := roSetup(t, e)
	for _, tc := range []struct {
		name string
		cred apitest.Cred
		full string
		want int
	}{
		{"anonymous", nil, "alice/alpha-tool", http.StatusUnauthorized},
		{"outsider, public", apitest.Basic(w.carol), "alice/alpha-tool", http.StatusForbidden},
		{"outsider, private", apitest.Basic(w.carol), "alice/beta", http.StatusNotFound},
		{"org member", apitest.Basic(w.bob), "acme/acme-web", http.StatusForbidden},
		{"missing", apitest.Basic(w.alice), "alice/nothing", http.StatusNotFound},
		{"owner", apitest.Basic(w.alice), "alice/alpha-tool", http.StatusNoContent},
		{"org owner", apitest.Basic(w.alice), "acme/acme-web", http.StatusNoContent},
		{"admin", apitest.Basic(e.Admin), "bob/bob-tool", http.StatusNoContent},
	} {
		t.Run(tc.name, func(t *testing.T) {
			owner, name, _ := strings.Cut(tc.full, "/")
			r := e.Do("DELETE", "repos/"+tc.full, nil, tc.cred).Expect(t, tc.want)
			if tc.want == http.StatusForbidden && !strings.Contains(string(r.Body), "owner of the repo") {
				t.Fatalf("403 body %s", r.Body)
			}
			if tc.want != http.StatusNoContent {
				return
			}
			e.Do("GET", "repos/"+tc.full, nil, apitest.Basic(e.Admin)).Expect(t, http.StatusNotFound)
			if roGitExists(t, e, owner, name) {
				t.Fatal("git directory still there")
			}
		})
	}
	// The name is free again.
	roCreateRepo(t, e, apitest.Basic(w.alice), map[string]any{"name": "alpha-tool", "auto_init": true})
}

// roSearch runs GET /repos/search with query as cred and returns the page
// and the total.
func roSearch(t *testing.T, e *apitest.Env, cred apitest.Cred, query string) ([]*models.Repository, int, *apitest.Response) {
	t.Helper()
	r := e.Do("GET", "repos/search?"+query, nil, cred).Expect(t, http.StatusOK)
	var res models.SearchResults
	r.JSON(t, &res)
	if !res.OK {
		t.Fatalf("ok=false: %s", r.Body)
	}
	total, err := strconv.Atoi(r.Header.Get("X-Total-Count"))
	if err != nil {
		t.Fatalf("X-Total-Count %q", r.Header.Get("X-Total-Count"))
	}
	return res.Data, total, r
}

func TestRepoSearch(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	w := roSetup(t, e)
	admin := apitest.Basic(e.Admin)
	alice, bob := apitest.Basic(w.alice), apitest.Basic(w.bob)
	ctx := context.Background()
	// Topics have their own store (and API); set some through it.
	for name, topics := range map[string][]string{"alpha-tool": {"go", "cli"}, "gamma": {"golang"}} {
		r, err := e.DB.Repos().FindByName(ctx, w.alice.User.ID, name)
		if err != nil {
			t.Fatal(err)
		}
		err = e.DB.Topics().Update(ctx, r.ID, func([]string) ([]string, error) { return topics, nil })
		if err != nil {
			t.Fatal(err)
		}
	}

	cases := []struct {
		name  string
		cred  apitest.Cred
		query string
		want  []string // in order
	}{
		{"anonymous", nil, "", []string{"acme/acme-web", "alice/alpha-tool", "bob/bob-tool", "alice/gamma"}},
		{"outsider", apitest.Basic(w.carol), "", []string{"acme/acme-web", "alice/alpha-tool", "bob/bob-tool", "alice/gamma", "limited/limited-repo"}},
		{"member", bob, "", []string{"acme/acme-secret", "acme/acme-web", "alice/alpha-tool", "bob/bob-tool", "alice/gamma",
			"hidden/hidden-repo", "limited/limited-repo"}},
		{"owner", alice, "", []string{"acme/acme-secret", "acme/acme-web", "alice/alpha-tool", "alice/beta", "bob/bob-tool",
			"alice/gamma", "hidden/hidden-repo", "limited/limited-repo"}},
		{"admin", admin, "", []string{"acme/acme-secret", "acme/acme-web", "alice/alpha-tool", "alice/beta", "bob/bob-tool",
			"alice/gamma", "hidden/hidden-repo", "limited/limited-repo"}},
		{"keyword", nil, "q=TOOL", []string{"alice/alpha-tool", "bob/bob-tool"}},
		{"keywords", nil, "q=web,bob", []string{"acme/acme-web", "bob/bob-tool"}},
		{"owner/name keyword", nil, "q=acme/web", []string{"acme/acme-web"}},
		{"keyword matches topics", nil, "q=golang", []string{"alice/gamma"}},
		{"description needs includeDesc", nil, "q=first", []string{}},
		{"includeDesc", nil, "q=first&includeDesc=true", []string{"alice/alpha-tool"}},
		{"topic exact", nil, "q=go&topic=true", []string{"alice/alpha-tool"}},
		{"uid exclusive", alice, fmt.Sprintf("uid=%d&exclusive=true", w.alice.User.ID), []string{"alice/alpha-tool", "alice/beta", "alice/gamma"}},
		{"uid owned or member", admin, fmt.Sprintf("uid=%d", w.bob.User.ID), []string{"acme/acme-secret", "acme/acme-web", "bob/bob-tool", "hidden/hidden-repo"}},
		{"uid collaborative", admin, fmt.Sprintf("uid=%d&mode=collaborative", w.bob.User.ID), []string{"acme/acme-secret", "acme/acme-web", "hidden/hidden-repo"}},
		{"uid seen by outsider", nil, fmt.Sprintf("uid=%d", w.bob.User.ID), []string{"acme/acme-web", "bob/bob-tool"}},
		{"is_private", alice, "is_private=true", []string{"acme/acme-secret", "alice/beta"}},
		{"private=false", alice, "private=false", []string{"acme/acme-web", "alice/alpha-tool", "bob/bob-tool", "alice/gamma"}},
		{"template", nil, "template=true", []string{"alice/gamma"}},
		{"archived", nil, "archived=true", []string{"alice/gamma"}},
		{"not archived", nil, "archived=false", []string{"acme/acme-web", "alice/alpha-tool", "bob/bob-tool"}},
		{"forks", nil, "mode=fork", []string{}},
		{"sources", nil, "mode=source", []string{"acme/acme-web", "alice/alpha-tool", "bob/bob-tool", "alice/gamma"}},
		{"mirrors", nil, "mode=mirror", []string{}},
		{"alpha desc", nil, "sort=alpha&order=desc", []string{"alice/gamma", "bob/bob-tool", "alice/alpha-tool", "acme/acme-web"}},
		{"id", nil, "sort=id", []string{"alice/alpha-tool", "alice/gamma", "acme/acme-web", "bob/bob-tool"}},
		{"id desc", nil, "sort=id&order=desc", []string{"bob/bob-tool", "acme/acme-web", "alice/gamma", "alice/alpha-tool"}},
		{"created", nil, "sort=created", []string{"alice/alpha-tool", "alice/gamma", "acme/acme-web", "bob/bob-tool"}},
		{"stars", nil, "sort=stars&order=desc", []string{"alice/alpha-tool", "alice/gamma", "acme/acme-web", "bob/bob-tool"}},
		{"priority owner", nil, fmt.Sprintf("priority_owner_id=%d", w.bob.User.ID), []string{"bob/bob-tool", "acme/acme-web", "alice/alpha-tool", "alice/gamma"}},
		{"starred by", nil, fmt.Sprintf("starredBy=%d", w.bob.User.ID), []string{}},
		{"team", admin, "team_id=1", []string{}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			data, total, _ := roSearch(t, e, tc.cred, tc.query)
			got := roRepoNames(data)
			if !reflect.DeepEqual(got, tc.want) || total != len(tc.want) {
				t.Fatalf("got %v (total %d), want %v", got, total, tc.want)
			}
		})
	}

	t.Run("sort by created ties broken by id", func(t *testing.T) {
		// Rows created within one second share created_at; whatever the
		// column, the order is total and stable.
		data, _, _ := roSearch(t, e, admin, "sort=updated")
		if len(data) != 8 {
			t.Fatalf("%d results", len(data))
		}
	})

	t.Run("bad parameters", func(t *testing.T) {
		for _, q := range []string{"sort=name", "order=sideways", "sort=alpha&order=up", "mode=weird", "page=x", "uid=abc"} {
			e.Do("GET", "repos/search?"+q, nil, nil).Expect(t, http.StatusUnprocessableEntity)
		}
	})

	t.Run("paging", func(t *testing.T) {
		data, total, r := roSearch(t, e, admin, "limit=3&page=2")
		if total != 8 || !reflect.DeepEqual(roRepoNames(data), []string{"alice/beta", "bob/bob-tool", "alice/gamma"}) {
			t.Fatalf("page 2: %v total %d", roRepoNames(data), total)
		}
		link := r.Header.Get("Link")
		for _, rel := range []string{`rel="next"`, `rel="prev"`, `rel="first"`, `rel="last"`, "page=3", "page=1", "limit=3"} {
			if !strings.Contains(link, rel) {
				t.Errorf("Link %q lacks %s", link, rel)
			}
		}
		data, total, _ = roSearch(t, e, admin, "limit=3&page=9")
		if len(data) != 0 || total != 8 {
			t.Fatalf("past the end: %d items, total %d", len(data), total)
		}
		// The cap is 50 whatever is asked.
		data, _, _ = roSearch(t, e, admin, "limit=1000")
		if len(data) != 8 {
			t.Fatalf("%d items", len(data))
		}
	})

	t.Run("generated client", func(t *testing.T) {
		c, authw := e.Client(bob)
		q, limit := "acme", int64(1)
		resp, err := c.Repository.RepoSearch(repository.NewRepoSearchParams().WithQ(&q).WithLimit(&limit), authw)
		if err != nil {
			t.Fatal(err)
		}
		if resp.XTotalCount != 2 || len(resp.Payload.Data) != 1 || resp.Payload.Data[0].FullName != "acme/acme-secret" ||
			!strings.Contains(resp.Link, `rel="next"`) {
			t.Fatalf("%d %+v %s", resp.XTotalCount, roRepoNames(resp.Payload.Data), resp.Link)
		}
		if p := resp.Payload.Data[0].Permissions; p.Admin || !p.Pull {
			t.Fatalf("member permissions %+v", p)
		}
	})

	t.Run("statements do not grow with the page", func(t *testing.T) {
		for _, cred := range []apitest.Cred{nil, bob, admin} {
			count := func(limit int) int64 {
				before := e.Statements()
				data, _, _ := roSearch(t, e, cred, fmt.Sprintf("limit=%d", limit))
				if limit == 1 && len(data) != 1 {
					t.Fatalf("%d items", len(data))
				}
				return e.Statements() - before
			}
			if one, fifty := count(1), count(50); one != fifty {
				t.Fatalf("limit=1: %d statements, limit=50: %d", one, fifty)
			}
		}
	})
}

func TestOrgListRepos(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	w := roSetup(t, e)
	for _, tc := range []struct {
		name string
		cred apitest.Cred
		org  string
		want []string
		code int
	}{
		{"anonymous", nil, "acme", []string{"acme/acme-web"}, http.StatusOK},
		{"outsider", apitest.Basic(w.carol), "acme", []string{"acme/acme-web"}, http.StatusOK},
		{"member", apitest.Basic(w.bob), "acme", []string{"acme/acme-web", "acme/acme-secret"}, http.StatusOK},
		{"admin", apitest.Basic(e.Admin), "acme", []string{"acme/acme-web", "acme/acme-secret"}, http.StatusOK},
		{"outsider, private org", apitest.Basic(w.carol), "hidden", nil, http.StatusNotFound},
		{"anonymous, limited org", nil, "limited", nil, http.StatusNotFound},
		{"outsider, limited org", apitest.Basic(w.carol), "limited", []string{"limited/limited-repo"}, http.StatusOK},
		{"member, private org", apitest.Basic(w.bob), "hidden", []string{"hidden/hidden-repo"}, http.StatusOK},
		{"unknown", nil, "nothing", nil, http.StatusNotFound},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := e.Do("GET", "orgs/"+tc.org+"/repos", nil, tc.cred).Expect(t, tc.code)
			if tc.code != http.StatusOK {
				return
			}
			var data []*models.Repository
			r.JSON(t, &data)
			if got := roRepoNames(data); !reflect.DeepEqual(got, tc.want) || r.Header.Get("X-Total-Count") != strconv.Itoa(len(tc.want)) {
				t.Fatalf("got %v (X-Total-Count %s), want %v", got, r.Header.Get("X-Total-Count"), tc.want)
			}
		})
	}
	// Paging and a statement count that does not depend on the page size.
	for i := 0; i < 4; i++ {
		e.Do("POST", "orgs/acme/repos", map[string]any{"name": fmt.Sprintf("more-%d", i)}, apitest.Basic(w.alice)).Expect(t, http.StatusCreated)
	}
	r := e.Do("GET", "orgs/acme/repos?limit=1&page=2", nil, apitest.Basic(w.bob)).Expect(t, http.StatusOK)
	if r.Header.Get("X-Total-Count") != "6" || !strings.Contains(r.Header.Get("Link"), `rel="prev"`) {
		t.Fatalf("headers %v", r.Header)
	}
	count := func(limit int) int64 {
		before := e.Statements()
		e.Do("GET", fmt.Sprintf("orgs/acme/repos?limit=%d", limit), nil, apitest.Basic(w.bob)).Expect(t, http.StatusOK)
		return e.Statements() - before
	}
	if one, fifty := count(1), count(50); one != fifty {
		t.Fatalf("limit=1: %d statements, limit=50: %d", one, fifty)
	}
	var names []string
	for page := 1; page <= 3; page++ {
		var data []*models.Repository
		e.Do("GET", fmt.Sprintf("orgs/acme/repos?limit=2&page=%d", page), nil, apitest.Basic(w.bob)).Expect(t, http.StatusOK).JSON(t, &data)
		names = append(names, roRepoNames(data)...)
	}
	if len(names) != 6 || !reflect.DeepEqual(roSorted(names), roSorted([]string{"acme/acme-web", "acme/acme-secret",
		"acme/more-0", "acme/more-1", "acme/more-2", "acme/more-3"})) {
		t.Fatalf("pages %v", names)
	}
}

// TestRepoCreateConcurrent: parallel creates of one name leave exactly one
// repository, with its directory, and answer 409 to every other caller.
func TestRepoCreateConcurrent(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	alice := e.CreateUser("alice", false)
	cred := apitest.TokenCred(e.Token(alice, "write:repository"))
	const n = 8
	statuses := make(chan int, n)
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			statuses <- e.Do("POST", "user/repos", map[string]any{"name": "race", "auto_init": true}, cred).Status
		}()
	}
	wg.Wait()
	close(statuses)
	got := map[int]int{}
	for s := range statuses {
		got[s]++
	}
	if got[http.StatusCreated] != 1 || got[http.StatusConflict] != n-1 {
		t.Fatalf("statuses %v", got)
	}
	if !roGitExists(t, e, "alice", "race") {
		t.Fatal("the winner's directory is gone")
	}
	if roFile(t, roGit(t, e, "alice", "race"), "main", "README.md") != "# race\n\n" {
		t.Fatal("README missing")
	}
	e.Do("GET", "repos/alice/race", nil, cred).Expect(t, http.StatusOK)
}
