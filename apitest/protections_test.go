package apitest_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"sync"
	"testing"

	"repohost/apitest"
	"repohost/models"
	"repohost/store"
)

func bpCreate(t *testing.T, e *apitest.Env, cred apitest.Cred, repo string, body map[string]any) *models.BranchProtection {
	t.Helper()
	var bp models.BranchProtection
	e.Do("POST", "repos/"+repo+"/branch_protections", body, cred).Expect(t, http.StatusCreated).JSON(t, &bp)
	return &bp
}

func bpList(t *testing.T, e *apitest.Env, cred apitest.Cred, repo string) []*models.BranchProtection {
	t.Helper()
	var list []*models.BranchProtection
	e.Do("GET", "repos/"+repo+"/branch_protections", nil, cred).Expect(t, http.StatusOK).JSON(t, &list)
	return list
}

func bpOrder(list []*models.BranchProtection) string {
	var parts []string
	for _, bp := range list {
		parts = append(parts, fmt.Sprintf("%s:%d", bp.RuleName, bp.Priority))
	}
	return strings.Join(parts, ",")
}

func TestBranchProtectionCRUD(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	alice := e.CreateUser("alice", false)
	bob := e.CreateUser("bob", false)
	cred := apitest.Basic(alice)
	roCreateRepo(t, e, cred, map[string]any{"name": "proj", "auto_init": true})
	roCreateRepo(t, e, cred, map[string]any{"name": "secret", "auto_init": true, "private": true})
	e.Do("POST", "repos/alice/proj/branches", map[string]any{"new_branch_name": "release/1/hotfix"}, cred).Expect(t, http.StatusCreated)

	// Only repository admins manage rules; a private repository stays
	// invisible.
	for _, c := range []struct {
		name         string
		cred         apitest.Cred
		open, secret int
	}{
		// A private repository is hidden before the need of a token shows.
		{"anonymous", nil, http.StatusUnauthorized, http.StatusNotFound},
		{"outsider", apitest.Basic(bob), http.StatusForbidden, http.StatusNotFound},
		{"read token", apitest.TokenCred(e.Token(alice, "read:repository")), http.StatusOK, http.StatusOK},
		{"owner", cred, http.StatusOK, http.StatusOK},
		{"site admin", apitest.Basic(e.Admin), http.StatusOK, http.StatusOK},
	} {
		t.Run(c.name, func(t *testing.T) {
			e.Do("GET", "repos/alice/proj/branch_protections", nil, c.cred).Expect(t, c.open)
			e.Do("GET", "repos/alice/secret/branch_protections", nil, c.cred).Expect(t, c.secret)
		})
	}
	e.Do("POST", "repos/alice/proj/branch_protections", map[string]any{"rule_name": "x"}, apitest.Basic(bob)).Expect(t, http.StatusForbidden)

	main := bpCreate(t, e, cred, "alice/proj", map[string]any{
		"rule_name": "main", "enable_push": true, "enable_push_whitelist": true, "push_whitelist_usernames": []string{"alice", "bob"},
		"required_approvals": 2, "status_check_contexts": []string{"ci"}, "enable_status_check": true,
		"enable_force_push": true, "enable_force_push_allowlist": true, "force_push_allowlist_usernames": []string{"alice"},
		"protected_file_patterns": "*.lock",
	})
	// bob cannot write to the repository, so the whitelist drops him, as
	// the reference does.
	if main.ID == 0 || main.Priority != 1 || main.RuleName != "main" || main.BranchName != "main" ||
		strings.Join(main.PushWhitelistUsernames, ",") != "alice" || !main.EnablePushWhitelist ||
		main.RequiredApprovals != 2 || strings.Join(main.StatusCheckContexts, ",") != "ci" ||
		strings.Join(main.ForcePushAllowlistUsernames, ",") != "alice" || main.ProtectedFilePatterns != "*.lock" || main.Created == nil {
		t.Fatalf("created %+v", main)
	}
	// The legacy branch_name field names a rule too; without push the
	// whitelist flags are off.
	legacy := bpCreate(t, e, cred, "alice/proj", map[string]any{"branch_name": "dev", "enable_push_whitelist": true, "enable_force_push": true})
	if legacy.RuleName != "dev" || legacy.Priority != 2 || legacy.EnablePushWhitelist || legacy.EnableForcePush {
		t.Fatalf("legacy %+v", legacy)
	}
	glob := bpCreate(t, e, cred, "alice/proj", map[string]any{"rule_name": "release/**", "priority": 10})
	if glob.Priority != 10 {
		t.Fatalf("explicit priority %+v", glob)
	}

	e.Do("POST", "repos/alice/proj/branch_protections", map[string]any{"rule_name": "main"}, cred).Expect(t, http.StatusForbidden)
	e.Do("POST", "repos/alice/proj/branch_protections", map[string]any{}, cred).Expect(t, http.StatusUnprocessableEntity)
	e.Do("POST", "repos/alice/proj/branch_protections", map[string]any{"rule_name": "x", "push_whitelist_usernames": []string{"nobody"}}, cred).
		Expect(t, http.StatusUnprocessableEntity)
	e.Do("POST", "repos/alice/proj/branch_protections", map[string]any{"rule_name": strings.Repeat("r", 256)}, cred).
		Expect(t, http.StatusUnprocessableEntity)

	var got models.BranchProtection
	e.Do("GET", "repos/alice/proj/branch_protections/"+url.PathEscape("release/**"), nil, cred).Expect(t, http.StatusOK).JSON(t, &got)
	if got.ID != glob.ID {
		t.Fatalf("get by name %+v", got)
	}
	e.Do("GET", "repos/alice/proj/branch_protections/nope", nil, cred).Expect(t, http.StatusNotFound)

	// Edit: absent fields stay, turning push off clears its whitelist.
	var edited models.BranchProtection
	e.Do("PATCH", "repos/alice/proj/branch_protections/main", map[string]any{"required_approvals": 1}, cred).
		Expect(t, http.StatusOK).JSON(t, &edited)
	if edited.RequiredApprovals != 1 || !edited.EnablePushWhitelist || strings.Join(edited.PushWhitelistUsernames, ",") != "alice" {
		t.Fatalf("edit one field %+v", edited)
	}
	e.Do("PATCH", "repos/alice/proj/branch_protections/main", map[string]any{"enable_push": false, "push_whitelist_usernames": []string{}}, cred).
		Expect(t, http.StatusOK).JSON(t, &edited)
	if edited.EnablePush || edited.EnablePushWhitelist || len(edited.PushWhitelistUsernames) != 0 || edited.ID != main.ID {
		t.Fatalf("edit push off %+v", edited)
	}
	e.Do("PATCH", "repos/alice/proj/branch_protections/nope", map[string]any{"enable_push": true}, cred).Expect(t, http.StatusNotFound)
	e.Do("PATCH", "repos/alice/proj/branch_protections/main", map[string]any{"merge_whitelist_usernames": []string{"ghost"}}, cred).
		Expect(t, http.StatusUnprocessableEntity)

	if got := bpOrder(bpList(t, e, cred, "alice/proj")); got != "main:1,dev:2,release/**:10" {
		t.Fatalf("list %s", got)
	}
	r := e.Do("GET", "repos/alice/proj/branch_protections?limit=1&page=2", nil, cred).Expect(t, http.StatusOK)
	if r.Header.Get("X-Total-Count") != "3" || !strings.Contains(string(r.Body), `"dev"`) {
		t.Fatalf("paged list %s %v", r.Body, r.Header)
	}

	// The number of statements does not grow with the page (the listed
	// users are loaded together).
	count := func(limit int) int64 {
		before := e.Statements()
		e.Do("GET", fmt.Sprintf("repos/alice/proj/branch_protections?limit=%d", limit), nil, cred).Expect(t, http.StatusOK)
		return e.Statements() - before
	}
	if one, all := count(1), count(50); one != all {
		t.Fatalf("statements: %d for one rule, %d for three", one, all)
	}

	// The branch shows its rule; a glob rule covers nested names.
	if b := ghBranch(t, e, cred, "alice", "proj", "release/1/hotfix"); !b.Protected || b.EffectiveBranchProtectionName != "release/**" || b.UserCanPush {
		t.Fatalf("branch under a glob %+v", b)
	}
	if b := ghBranch(t, e, cred, "alice", "proj", "main"); !b.Protected || b.RequiredApprovals != 1 ||
		strings.Join(b.StatusCheckContexts, ",") != "ci" || b.UserCanPush {
		t.Fatalf("main %+v", b)
	}

	e.Do("DELETE", "repos/alice/proj/branch_protections/dev", nil, apitest.Basic(bob)).Expect(t, http.StatusForbidden)
	e.Do("DELETE", "repos/alice/proj/branch_protections/dev", nil, cred).Expect(t, http.StatusNoContent)
	e.Do("DELETE", "repos/alice/proj/branch_protections/dev", nil, cred).Expect(t, http.StatusNotFound)

	// An archived repository keeps its rules readable but refuses changes.
	e.Do("PATCH", "repos/alice/proj", map[string]any{"archived": true}, cred).Expect(t, http.StatusOK)
	e.Do("POST", "repos/alice/proj/branch_protections", map[string]any{"rule_name": "late"}, cred).Expect(t, http.StatusLocked)
	e.Do("PATCH", "repos/alice/proj/branch_protections/main", map[string]any{"enable_push": true}, cred).Expect(t, http.StatusLocked)
	bpList(t, e, cred, "alice/proj")
}

func TestBranchProtectionPriority(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	alice := e.CreateUser("alice", false)
	bob := e.CreateUser("bob", false)
	cred := apitest.Basic(alice)
	roCreateRepo(t, e, cred, map[string]any{"name": "proj", "auto_init": true})
	roCreateRepo(t, e, cred, map[string]any{"name": "other", "auto_init": true})
	var ids []int64
	for _, n := range []string{"a", "b", "c"} {
		ids = append(ids, bpCreate(t, e, cred, "alice/proj", map[string]any{"rule_name": n}).ID)
	}
	foreign := bpCreate(t, e, cred, "alice/other", map[string]any{"rule_name": "z"})

	post := func(body any, cred apitest.Cred, status int) {
		t.Helper()
		e.Do("POST", "repos/alice/proj/branch_protections/priority", body, cred).Expect(t, status)
	}
	// Unknown ids and another repository's rule are ignored.
	post(map[string]any{"ids": []int64{ids[2], 999999, foreign.ID, ids[0], ids[1]}}, cred, http.StatusNoContent)
	if got := bpOrder(bpList(t, e, cred, "alice/proj")); got != "c:1,a:4,b:5" {
		t.Fatalf("after reorder %s", got)
	}
	if got := bpOrder(bpList(t, e, cred, "alice/other")); got != "z:1" {
		t.Fatalf("other repository %s", got)
	}
	post(map[string]any{"ids": []int64{ids[0], ids[1], ids[2]}}, cred, http.StatusNoContent)
	if got := bpOrder(bpList(t, e, cred, "alice/proj")); got != "a:1,b:2,c:3" {
		t.Fatalf("after second reorder %s", got)
	}

	// Malformed input.
	post(map[string]any{"ids": "1,2"}, cred, http.StatusUnprocessableEntity)
	post(map[string]any{"ids": []any{"x"}}, cred, http.StatusUnprocessableEntity)
	post(map[string]any{}, cred, http.StatusUnprocessableEntity)
	post(map[string]any{"ids": []int64{ids[0], ids[0]}}, cred, http.StatusUnprocessableEntity)
	post("{", cred, http.StatusUnprocessableEntity)
	post(map[string]any{"ids": []int64{}}, cred, http.StatusNoContent)
	// Permissions.
	post(map[string]any{"ids": ids}, nil, http.StatusUnauthorized)
	post(map[string]any{"ids": ids}, apitest.Basic(bob), http.StatusForbidden)

	// Concurrent reorders end as one of them: a permutation.
	orders := [][]int64{{ids[0], ids[1], ids[2]}, {ids[2], ids[1], ids[0]}, {ids[1], ids[2], ids[0]}, {ids[1], ids[0], ids[2]}}
	var wg sync.WaitGroup
	for i := 0; i < 12; i++ {
		wg.Add(1)
		go func(order []int64) {
			defer wg.Done()
			r := e.Do("POST", "repos/alice/proj/branch_protections/priority", map[string]any{"ids": order}, cred)
			if r.Status != http.StatusNoContent {
				t.Errorf("concurrent reorder: %d %s", r.Status, r.Body)
			}
		}(orders[i%len(orders)])
	}
	wg.Wait()
	var prios []int
	for _, bp := range bpList(t, e, cred, "alice/proj") {
		prios = append(prios, int(bp.Priority))
	}
	sort.Ints(prios)
	if fmt.Sprint(prios) != "[1 2 3]" {
		t.Fatalf("priorities after concurrent reorders %v", prios)
	}

	// Archived: 423 and nothing changes.
	before := bpOrder(bpList(t, e, cred, "alice/proj"))
	e.Do("PATCH", "repos/alice/proj", map[string]any{"archived": true}, cred).Expect(t, http.StatusOK)
	post(map[string]any{"ids": []int64{ids[2], ids[0], ids[1]}}, cred, http.StatusLocked)
	if after := bpOrder(bpList(t, e, cred, "alice/proj")); after != before {
		t.Fatalf("archived repository changed: %s -> %s", before, after)
	}
}

func TestRepoListTeams(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	alice := e.CreateUser("alice", false)
	carol := e.CreateUser("carol", false)
	bob := e.CreateUser("bob", false)
	cred := apitest.Basic(alice)
	org := roCreateOrg(t, e, cred, map[string]any{"username": "acme"})
	roAddMember(t, e, org.ID, carol, false, false)
	e.Do("POST", "orgs/acme/repos", map[string]any{"name": "tool", "auto_init": true}, cred).Expect(t, http.StatusCreated)
	roCreateRepo(t, e, cred, map[string]any{"name": "mine"})

	for _, c := range []struct {
		name   string
		cred   apitest.Cred
		status int
		teams  string
	}{
		{"anonymous", nil, http.StatusUnauthorized, ""},
		{"owner", cred, http.StatusOK, "Members,Owners"},
		{"site admin", apitest.Basic(e.Admin), http.StatusOK, "Members,Owners"},
		// Both teams are private: listed to their members and the
		// organization's owners.
		{"member", apitest.Basic(carol), http.StatusOK, "Members"},
		{"outsider", apitest.Basic(bob), http.StatusOK, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := e.Do("GET", "repos/acme/tool/teams", nil, c.cred).Expect(t, c.status)
			if c.status != http.StatusOK {
				return
			}
			var teams []*models.Team
			r.JSON(t, &teams)
			var names []string
			for _, tm := range teams {
				names = append(names, tm.Name)
			}
			if strings.Join(names, ",") != c.teams {
				t.Fatalf("teams %v", names)
			}
			for _, tm := range teams {
				if tm.Name != "Owners" {
					continue
				}
				if tm.Permission != "owner" || !tm.IncludesAllRepositories || !tm.CanCreateOrgRepo || tm.Organization != nil ||
					tm.UnitsMap["repo.code"] != "owner" || tm.UnitsMap["repo.ext_wiki"] != "owner" || len(tm.Units) != len(tm.UnitsMap) {
					t.Fatalf("owners team %+v", tm)
				}
			}
		})
	}
	r := e.Do("GET", "repos/alice/mine/teams", nil, cred).Expect(t, http.StatusMethodNotAllowed)
	if !strings.Contains(string(r.Body), "not owned by an organization") {
		t.Fatalf("405 body %s", r.Body)
	}
	e.Do("GET", "repos/acme/nope/teams", nil, cred).Expect(t, http.StatusNotFound)

	// A push whitelist may name the owners team.
	bp := bpCreate(t, e, cred, "acme/tool", map[string]any{"rule_name": "main", "enable_push": true,
		"enable_push_whitelist": true, "push_whitelist_teams": []string{"owners"}})
	if strings.Join(bp.PushWhitelistTeams, ",") != "Owners" {
		t.Fatalf("team whitelist %+v", bp)
	}
	if b := ghBranch(t, e, cred, "acme", "tool", "main"); !b.UserCanPush {
		t.Fatalf("owner listed through a team cannot push: %+v", b)
	}
	e.Do("POST", "repos/acme/tool/branch_protections", map[string]any{"rule_name": "x", "push_whitelist_teams": []string{"nope"}}, cred).
		Expect(t, http.StatusUnprocessableEntity)

	// Organizations that existed before teams got their owners team from
	// the migration; new ones get it on creation. Either way it goes with
	// the organization.
	teams, _, err := e.DB.Teams().ListForRepo(context.Background(), org.ID, 0, store.TeamViewer{IsAdmin: true}, store.Page{Limit: 50})
	if err != nil || len(teams) != 2 || teams[1].Name != "Owners" {
		t.Fatalf("owners team of a new organization (beside Members): %v %d", err, len(teams))
	}
}
