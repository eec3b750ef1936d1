package apitest_test

import (
	"fmt"
	"net/http"
	"net/url"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"code.gitea.io/sdk/gitea"

	"repohost/apitest"
	"repohost/models"
)

// brSeed creates owner/name (auto-initialised) and a clone of it, so tests
// can make commits with the git command line.
func brSeed(t *testing.T, e *apitest.Env, git *gitCLI, owner *apitest.Account, token, name string, private bool) string {
	t.Helper()
	roCreateRepo(t, e, apitest.TokenCred(token), map[string]any{"name": name, "auto_init": true, "private": private})
	dir := filepath.Join(t.TempDir(), name)
	git.must(filepath.Dir(dir), "clone", "-q", gitURL(e, owner.User.Name, token, owner.User.Name, name), dir)
	return dir
}

func brPath(owner, repo, branch string) string {
	return fmt.Sprintf("repos/%s/%s/branches/%s", owner, repo, url.PathEscape(branch))
}

func brNames(bs []*models.Branch) []string {
	out := make([]string, 0, len(bs))
	for _, b := range bs {
		out = append(out, b.Name)
	}
	return out
}

func TestBranchReadAccess(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	git := newGitCLI(t)
	alice := e.CreateUser("alice", false)
	bob := e.CreateUser("bob", false)
	tok := e.Token(alice, "write:repository")
	brSeed(t, e, git, alice, tok, "open", false)
	brSeed(t, e, git, alice, tok, "secret", true)

	for _, c := range []struct {
		name       string
		cred       apitest.Cred
		open, priv int
		canPush    bool
	}{
		{"anonymous", nil, http.StatusOK, http.StatusNotFound, false},
		{"owner", apitest.TokenCred(tok), http.StatusOK, http.StatusOK, true},
		{"outsider", apitest.Basic(bob), http.StatusOK, http.StatusNotFound, false},
		{"site admin", apitest.Basic(e.Admin), http.StatusOK, http.StatusOK, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := e.Do("GET", "repos/alice/open/branches", nil, c.cred).Expect(t, c.open)
			var list []*models.Branch
			r.JSON(t, &list)
			if len(list) != 1 || list[0].Name != "main" || list[0].Commit == nil || len(list[0].Commit.ID) != 40 ||
				list[0].UserCanPush != c.canPush || list[0].Protected || r.Header.Get("X-Total-Count") != "1" {
				t.Fatalf("list %+v headers %v", list, r.Header)
			}
			e.Do("GET", "repos/alice/secret/branches", nil, c.cred).Expect(t, c.priv)
			e.Do("GET", brPath("alice", "secret", "main"), nil, c.cred).Expect(t, c.priv)
			b := ghBranch(t, e, c.cred, "alice", "open", "main")
			if b.Commit.Author == nil || b.Commit.Message != "Initial commit\n" || b.Commit.URL == "" {
				t.Fatalf("branch %+v commit %+v", b, b.Commit)
			}
			e.Do("GET", brPath("alice", "open", "nope"), nil, c.cred).Expect(t, http.StatusNotFound)
		})
	}
	// An empty repository has no branches.
	roCreateRepo(t, e, apitest.TokenCred(tok), map[string]any{"name": "blank"})
	var list []*models.Branch
	e.Do("GET", "repos/alice/blank/branches", nil, nil).Expect(t, http.StatusOK).JSON(t, &list)
	if len(list) != 0 {
		t.Fatalf("branches of an empty repository: %v", brNames(list))
	}
}

func TestBranchCreate(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	git := newGitCLI(t)
	alice := e.CreateUser("alice", false)
	bob := e.CreateUser("bob", false)
	tok := e.Token(alice, "write:repository")
	cred := apitest.TokenCred(tok)
	clone := brSeed(t, e, git, alice, tok, "proj", false)
	first := strings.TrimSpace(git.must(clone, "rev-parse", "HEAD"))
	second := git.commitFile(clone, "a.txt", "a\n", "a")
	git.must(clone, "push", "-q", "origin", "main")
	git.must(clone, "tag", "v1", first)
	git.must(clone, "push", "-q", "origin", "v1")

	create := func(body map[string]any, cred apitest.Cred, status int) *models.Branch {
		t.Helper()
		var b models.Branch
		r := e.Do("POST", "repos/alice/proj/branches", body, cred).Expect(t, status)
		if status == http.StatusCreated {
			r.JSON(t, &b)
		}
		return &b
	}
	// From the default branch, a branch, a tag and a commit.
	if b := create(map[string]any{"new_branch_name": "from-default"}, cred, http.StatusCreated); b.Commit.ID != second || !b.UserCanPush {
		t.Fatalf("from default %+v", b)
	}
	if b := create(map[string]any{"new_branch_name": "feature/x", "old_branch_name": "from-default"}, cred, http.StatusCreated); b.Commit.ID != second || b.Name != "feature/x" {
		t.Fatalf("from branch %+v", b)
	}
	if b := create(map[string]any{"new_branch_name": "from-tag", "old_ref_name": "v1"}, cred, http.StatusCreated); b.Commit.ID != first {
		t.Fatalf("from tag %+v", b)
	}
	if b := create(map[string]any{"new_branch_name": "from-sha", "old_ref_name": first[:10]}, cred, http.StatusCreated); b.Commit.ID != first {
		t.Fatalf("from commit %+v", b)
	}
	if b := ghBranch(t, e, nil, "alice", "proj", "feature/x"); b.Commit.ID != second {
		t.Fatalf("nested name read back %+v", b)
	}

	// Refusals.
	create(map[string]any{"new_branch_name": "from-default"}, cred, http.StatusConflict)
	create(map[string]any{"new_branch_name": "feature"}, cred, http.StatusConflict)
	create(map[string]any{"new_branch_name": "y", "old_branch_name": "missing"}, cred, http.StatusNotFound)
	create(map[string]any{"new_branch_name": "y", "old_ref_name": "deadbeef"}, cred, http.StatusNotFound)
	for _, bad := range []string{"", "a..b", "-x", "a b", "x.lock", "a/", strings.Repeat("n", 101), "..", "a\\b"} {
		create(map[string]any{"new_branch_name": bad}, cred, http.StatusUnprocessableEntity)
	}
	create(map[string]any{}, cred, http.StatusUnprocessableEntity)
	create(map[string]any{"new_branch_name": "z"}, nil, http.StatusUnauthorized)
	create(map[string]any{"new_branch_name": "z"}, apitest.Basic(bob), http.StatusForbidden)
	create(map[string]any{"new_branch_name": "z"}, apitest.TokenCred(e.Token(alice, "read:repository")), http.StatusForbidden)

	// A protected name needs push rights on it.
	e.Do("POST", "repos/alice/proj/branch_protections", map[string]any{"rule_name": "locked/*"}, cred).Expect(t, http.StatusCreated)
	create(map[string]any{"new_branch_name": "locked/one"}, cred, http.StatusForbidden)

	// An empty repository has nothing to branch from; an archived one
	// refuses changes.
	roCreateRepo(t, e, cred, map[string]any{"name": "blank"})
	e.Do("POST", "repos/alice/blank/branches", map[string]any{"new_branch_name": "x"}, cred).Expect(t, http.StatusNotFound)
	e.Do("PATCH", "repos/alice/proj", map[string]any{"archived": true}, cred).Expect(t, http.StatusOK)
	create(map[string]any{"new_branch_name": "late"}, cred, http.StatusLocked)

	var list []*models.Branch
	e.Do("GET", "repos/alice/proj/branches", nil, cred).Expect(t, http.StatusOK).JSON(t, &list)
	// Which branches, whatever their order (by commit time, which the
	// clock decides here; TestBranchListOrder holds the order).
	got := brNames(list)
	sort.Strings(got)
	if got := strings.Join(got, ","); got != "feature/x,from-default,from-sha,from-tag,main" {
		t.Fatalf("branches %s", got)
	}
}

func TestBranchListPaging(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	git := newGitCLI(t)
	alice := e.CreateUser("alice", false)
	tok := e.Token(alice, "write:repository")
	cred := apitest.TokenCred(tok)
	brSeed(t, e, git, alice, tok, "proj", false)
	for _, n := range []string{"b1", "b2", "b3", "feat-a", "feat-b"} {
		e.Do("POST", "repos/alice/proj/branches", map[string]any{"new_branch_name": n}, cred).Expect(t, http.StatusCreated)
	}
	var list []*models.Branch
	r := e.Do("GET", "repos/alice/proj/branches?page=2&limit=2", nil, nil).Expect(t, http.StatusOK)
	r.JSON(t, &list)
	if strings.Join(brNames(list), ",") != "b3,feat-a" || r.Header.Get("X-Total-Count") != "6" ||
		!strings.Contains(r.Header.Get("Link"), `rel="next"`) {
		t.Fatalf("page 2: %v %v", brNames(list), r.Header)
	}
	r = e.Do("GET", "repos/alice/proj/branches?q=FEAT", nil, nil).Expect(t, http.StatusOK)
	r.JSON(t, &list)
	if strings.Join(brNames(list), ",") != "feat-a,feat-b" || r.Header.Get("X-Total-Count") != "2" {
		t.Fatalf("search: %v %v", brNames(list), r.Header)
	}
	r = e.Do("GET", "repos/alice/proj/branches?page=9", nil, nil).Expect(t, http.StatusOK)
	r.JSON(t, &list)
	if len(list) != 0 || r.Header.Get("X-Total-Count") != "6" {
		t.Fatalf("past the end: %v %v", brNames(list), r.Header)
	}
	// The number of statements does not grow with the page.
	count := func(limit int) int64 {
		before := e.Statements()
		e.Do("GET", fmt.Sprintf("repos/alice/proj/branches?limit=%d", limit), nil, cred).Expect(t, http.StatusOK)
		return e.Statements() - before
	}
	if one, all := count(1), count(50); one != all {
		t.Fatalf("statements: %d for one branch, %d for six", one, all)
	}
}

func TestBranchUpdate(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	git := newGitCLI(t)
	alice := e.CreateUser("alice", false)
	bob := e.CreateUser("bob", false)
	tok := e.Token(alice, "write:repository")
	cred := apitest.TokenCred(tok)
	clone := brSeed(t, e, git, alice, tok, "proj", false)
	base := strings.TrimSpace(git.must(clone, "rev-parse", "HEAD"))
	ahead := git.commitFile(clone, "a.txt", "a\n", "a")
	git.must(clone, "push", "-q", "origin", "HEAD:ahead")
	git.must(clone, "reset", "-q", "--hard", base)
	side := git.commitFile(clone, "b.txt", "b\n", "b")
	git.must(clone, "push", "-q", "origin", "HEAD:side")
	e.Do("POST", "repos/alice/proj/branches", map[string]any{"new_branch_name": "work"}, cred).Expect(t, http.StatusCreated)

	put := func(branch string, body map[string]any, cred apitest.Cred, status int) {
		t.Helper()
		e.Do("PUT", brPath("alice", "proj", branch), body, cred).Expect(t, status)
	}
	put("work", map[string]any{"new_commit_id": ahead}, cred, http.StatusNoContent) // fast-forward
	if b := ghBranch(t, e, cred, "alice", "proj", "work"); b.Commit.ID != ahead {
		t.Fatalf("after fast-forward %s", b.Commit.ID)
	}
	put("work", map[string]any{"new_commit_id": side}, cred, http.StatusUnprocessableEntity) // needs force
	put("work", map[string]any{"new_commit_id": side, "old_commit_id": base, "force": true}, cred, http.StatusUnprocessableEntity)
	put("work", map[string]any{"new_commit_id": side, "old_commit_id": ahead, "force": true}, cred, http.StatusNoContent)
	if b := ghBranch(t, e, cred, "alice", "proj", "work"); b.Commit.ID != side {
		t.Fatalf("after force %s", b.Commit.ID)
	}
	put("work", map[string]any{"new_commit_id": "0123456789012345678901234567890123456789"}, cred, http.StatusUnprocessableEntity)
	put("work", map[string]any{}, cred, http.StatusUnprocessableEntity)
	put("missing", map[string]any{"new_commit_id": side}, cred, http.StatusNotFound)
	put("work", map[string]any{"new_commit_id": base}, nil, http.StatusUnauthorized)
	put("work", map[string]any{"new_commit_id": base}, apitest.Basic(bob), http.StatusForbidden)

	// A protected branch: a fast-forward needs push rights, a rewrite
	// force-push rights.
	e.Do("POST", "repos/alice/proj/branch_protections", map[string]any{"rule_name": "work", "enable_push": true}, cred).Expect(t, http.StatusCreated)
	put("work", map[string]any{"new_commit_id": ahead, "force": true}, cred, http.StatusConflict)
	e.Do("PATCH", "repos/alice/proj/branch_protections/work", map[string]any{"enable_push": false}, cred).Expect(t, http.StatusOK)
	git.must(clone, "fetch", "-q", "origin")
	onSide := git.commitFile(clone, "c.txt", "c\n", "c")
	git.must(clone, "push", "-q", "origin", "HEAD:side")
	put("work", map[string]any{"new_commit_id": onSide}, cred, http.StatusConflict)

	e.Do("PATCH", "repos/alice/proj", map[string]any{"archived": true}, cred).Expect(t, http.StatusOK)
	put("side", map[string]any{"new_commit_id": base, "force": true}, cred, http.StatusLocked)
}

func TestBranchDelete(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	git := newGitCLI(t)
	alice := e.CreateUser("alice", false)
	bob := e.CreateUser("bob", false)
	tok := e.Token(alice, "write:repository")
	cred := apitest.TokenCred(tok)
	brSeed(t, e, git, alice, tok, "proj", false)
	for _, n := range []string{"gone", "kept/1", "nested/x"} {
		e.Do("POST", "repos/alice/proj/branches", map[string]any{"new_branch_name": n}, cred).Expect(t, http.StatusCreated)
	}
	e.Do("POST", "repos/alice/proj/branch_protections", map[string]any{"rule_name": "kept/*", "enable_push": true}, cred).Expect(t, http.StatusCreated)

	e.Do("DELETE", brPath("alice", "proj", "gone"), nil, nil).Expect(t, http.StatusUnauthorized)
	e.Do("DELETE", brPath("alice", "proj", "gone"), nil, apitest.Basic(bob)).Expect(t, http.StatusForbidden)
	e.Do("DELETE", brPath("alice", "proj", "main"), nil, cred).Expect(t, http.StatusForbidden)
	e.Do("DELETE", brPath("alice", "proj", "kept/1"), nil, cred).Expect(t, http.StatusForbidden)
	e.Do("DELETE", brPath("alice", "proj", "missing"), nil, cred).Expect(t, http.StatusNotFound)
	e.Do("DELETE", brPath("alice", "proj", "gone"), nil, cred).Expect(t, http.StatusNoContent)
	e.Do("DELETE", brPath("alice", "proj", "nested/x"), nil, apitest.Basic(e.Admin)).Expect(t, http.StatusNoContent)
	e.Do("GET", brPath("alice", "proj", "gone"), nil, cred).Expect(t, http.StatusNotFound)
	e.Do("PATCH", "repos/alice/proj", map[string]any{"archived": true}, cred).Expect(t, http.StatusOK)
	e.Do("DELETE", brPath("alice", "proj", "kept/1"), nil, cred).Expect(t, http.StatusLocked)
}

func TestBranchRename(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	git := newGitCLI(t)
	alice := e.CreateUser("alice", false)
	bob := e.CreateUser("bob", false)
	tok := e.Token(alice, "write:repository")
	cred := apitest.TokenCred(tok)
	brSeed(t, e, git, alice, tok, "proj", false)
	for _, n := range []string{"dev", "other", "rel/1"} {
		e.Do("POST", "repos/alice/proj/branches", map[string]any{"new_branch_name": n}, cred).Expect(t, http.StatusCreated)
	}
	var dev models.BranchProtection
	e.Do("POST", "repos/alice/proj/branch_protections", map[string]any{"rule_name": "dev", "enable_push": true}, cred).
		Expect(t, http.StatusCreated).JSON(t, &dev)
	e.Do("POST", "repos/alice/proj/branch_protections", map[string]any{"rule_name": "rel/*"}, cred).Expect(t, http.StatusCreated)

	rename := func(from, to string, cred apitest.Cred, status int) *apitest.Response {
		t.Helper()
		return e.Do("PATCH", brPath("alice", "proj", from), map[string]any{"name": to}, cred).Expect(t, status)
	}
	rename("other", "x", nil, http.StatusUnauthorized)
	rename("other", "x", apitest.Basic(bob), http.StatusForbidden)
	rename("other", "other", cred, http.StatusUnprocessableEntity)
	rename("other", "dev", cred, http.StatusUnprocessableEntity)
	rename("missing", "x", cred, http.StatusNotFound)
	rename("other", "bad..name", cred, http.StatusUnprocessableEntity)
	e.Do("PATCH", brPath("alice", "proj", "other"), map[string]any{}, cred).Expect(t, http.StatusUnprocessableEntity)
	// A glob rule protects even against repository admins.
	r := rename("rel/1", "rel-one", cred, http.StatusForbidden)
	if !strings.Contains(string(r.Body), "glob-based") {
		t.Fatalf("glob refusal %s", r.Body)
	}
	rename("other", "renamed/other", cred, http.StatusNoContent)
	e.Do("GET", brPath("alice", "proj", "other"), nil, cred).Expect(t, http.StatusNotFound)
	ghBranch(t, e, cred, "alice", "proj", "renamed/other")

	// The exact-name rule follows its branch.
	rename("dev", "develop", cred, http.StatusNoContent)
	var bp models.BranchProtection
	e.Do("GET", "repos/alice/proj/branch_protections/develop", nil, cred).Expect(t, http.StatusOK).JSON(t, &bp)
	if bp.ID != dev.ID || bp.RuleName != "develop" || bp.BranchName != "develop" {
		t.Fatalf("rule after rename %+v", bp)
	}
	if b := ghBranch(t, e, cred, "alice", "proj", "develop"); !b.Protected || b.EffectiveBranchProtectionName != "develop" {
		t.Fatalf("renamed branch %+v", b)
	}

	// The default branch: default_branch and HEAD follow.
	rename("main", "trunk", apitest.Basic(e.Admin), http.StatusNoContent)
	var repo models.Repository
	e.Do("GET", "repos/alice/proj", nil, cred).Expect(t, http.StatusOK).JSON(t, &repo)
	if repo.DefaultBranch != "trunk" {
		t.Fatalf("default branch %q", repo.DefaultBranch)
	}
	if head := roHead(t, roGit(t, e, "alice", "proj")); head != "trunk" {
		t.Fatalf("HEAD %q", head)
	}

	roCreateRepo(t, e, cred, map[string]any{"name": "blank"})
	e.Do("PATCH", brPath("alice", "blank", "main"), map[string]any{"name": "x"}, cred).Expect(t, http.StatusNotFound)
	e.Do("PATCH", "repos/alice/proj", map[string]any{"archived": true}, cred).Expect(t, http.StatusOK)
	rename("develop", "dev", cred, http.StatusLocked)
}

// TestSDKBranchesAndProtections drives branches, protections, topics and
// template generation with the unchanged official Gitea SDK.
func TestSDKBranchesAndProtections(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	git := newGitCLI(t)
	alice := e.CreateUser("alice", false)
	tok := e.Token(alice, "all")
	brSeed(t, e, git, alice, tok, "proj", false)
	c := sdkClient(t, e, gitea.SetToken(tok))

	b, resp, err := c.CreateBranch("alice", "proj", gitea.CreateBranchOption{BranchName: "feature/sdk"})
	if err != nil || resp.StatusCode != http.StatusCreated || b.Name != "feature/sdk" || b.Commit == nil {
		t.Fatalf("CreateBranch: %v (%v) %+v", err, resp, b)
	}
	if _, resp, err := c.CreateBranch("alice", "proj", gitea.CreateBranchOption{BranchName: "feature/sdk"}); err == nil || resp.StatusCode != http.StatusConflict {
		t.Fatalf("duplicate CreateBranch: %v (%v)", err, resp)
	}
	if got, _, err := c.GetRepoBranch("alice", "proj", "feature/sdk"); err != nil || got.Commit.ID != b.Commit.ID {
		t.Fatalf("GetRepoBranch: %v %+v", err, got)
	}
	list, resp, err := c.ListRepoBranches("alice", "proj", gitea.ListRepoBranchesOptions{})
	if err != nil || len(list) != 2 || resp.Header.Get("X-Total-Count") != "2" {
		t.Fatalf("ListRepoBranches: %v %d", err, len(list))
	}
	ok, resp, err := c.RenameRepoBranch("alice", "proj", "feature/sdk", gitea.RenameRepoBranchOption{Name: "feature/renamed"})
	if err != nil || !ok || resp.StatusCode != http.StatusNoContent {
		t.Fatalf("RenameRepoBranch: %v %v (%v)", err, ok, resp)
	}

	var ids []int64
	for _, name := range []string{"main", "feature/*", "release"} {
		bp, resp, err := c.CreateBranchProtection("alice", "proj", gitea.CreateBranchProtectionOption{RuleName: name, EnablePush: true})
		if err != nil || resp.StatusCode != http.StatusCreated || bp.RuleName != name {
			t.Fatalf("CreateBranchProtection %s: %v (%v)", name, err, resp)
		}
		var withID models.BranchProtection
		e.Do("GET", "repos/alice/proj/branch_protections/"+url.PathEscape(name), nil, apitest.TokenCred(tok)).
			Expect(t, http.StatusOK).JSON(t, &withID)
		ids = append(ids, withID.ID)
	}
	if resp, err := c.UpdateBranchProtectionPriorities("alice", "proj", []int64{ids[2], ids[0], ids[1]}); err != nil || resp.StatusCode != http.StatusNoContent {
		t.Fatalf("UpdateBranchProtectionPriorities: %v (%v)", err, resp)
	}
	bps, _, err := c.ListBranchProtections("alice", "proj", gitea.ListBranchProtectionsOptions{})
	if err != nil || len(bps) != 3 || bps[0].RuleName != "release" || bps[1].RuleName != "main" || bps[2].RuleName != "feature/*" {
		t.Fatalf("ListBranchProtections: %v %+v", err, bps)
	}
	no := false
	if bp, _, err := c.EditBranchProtection("alice", "proj", "main", gitea.EditBranchProtectionOption{EnablePush: &no}); err != nil || bp.EnablePush {
		t.Fatalf("EditBranchProtection: %v %+v", err, bp)
	}
	if resp, err := c.DeleteBranchProtection("alice", "proj", "release"); err != nil || resp.StatusCode != http.StatusNoContent {
		t.Fatalf("DeleteBranchProtection: %v (%v)", err, resp)
	}
	if ok, resp, _ := c.DeleteRepoBranch("alice", "proj", "feature/renamed"); ok || resp.StatusCode != http.StatusForbidden {
		t.Fatalf("DeleteRepoBranch of a protected branch: %v (%v)", ok, resp)
	}

	// Topics.
	if resp, err := c.SetRepoTopics("alice", "proj", []string{"Go", " tools ", "go"}); err != nil || resp.StatusCode != http.StatusNoContent {
		t.Fatalf("SetRepoTopics: %v (%v)", err, resp)
	}
	if _, err := c.AddRepoTopic("alice", "proj", "cli"); err != nil {
		t.Fatalf("AddRepoTopic: %v", err)
	}
	if _, err := c.DeleteRepoTopic("alice", "proj", "tools"); err != nil {
		t.Fatalf("DeleteRepoTopic: %v", err)
	}
	topics, _, err := c.ListRepoTopics("alice", "proj", gitea.ListRepoTopicsOptions{})
	if err != nil || strings.Join(topics, ",") != "cli,go" {
		t.Fatalf("ListRepoTopics: %v %v", err, topics)
	}
	found, _, err := c.SearchTopics(gitea.TopicSearchOptions{Query: "g"})
	if err != nil || len(found.Topics) != 1 || found.Topics[0].Name != "go" || found.Topics[0].RepoCount != 1 {
		t.Fatalf("SearchTopics: %v %+v", err, found)
	}
	if resp, err := c.SetRepoTopics("alice", "proj", []string{"Not Valid"}); err == nil || resp.StatusCode != http.StatusUnprocessableEntity {
		t.Fatalf("invalid topics: %v (%v)", err, resp)
	}

	// Template generation.
	yes := true
	if _, _, err := c.EditRepo("alice", "proj", gitea.EditRepoOption{Template: &yes}); err != nil {
		t.Fatalf("EditRepo: %v", err)
	}
	gen, resp, err := c.CreateRepoFromTemplate("alice", "proj", gitea.CreateRepoFromTemplateOption{
		Owner: "alice", Name: "copy", GitContent: true, Topics: true,
	})
	if err != nil || resp.StatusCode != http.StatusCreated || gen.FullName != "alice/copy" || gen.Empty ||
		strings.Join(gen.Topics, ",") != "cli,go" {
		t.Fatalf("CreateRepoFromTemplate: %v (%v) %+v", err, resp, gen)
	}
	if _, resp, err := c.CreateRepoFromTemplate("alice", "proj", gitea.CreateRepoFromTemplateOption{Owner: "alice", Name: "copy", Topics: true}); err == nil || resp.StatusCode != http.StatusConflict {
		t.Fatalf("CreateRepoFromTemplate onto an existing name: %v (%v)", err, resp)
	}
	if _, resp, err := c.GetRepoTeams("alice", "proj"); err == nil || resp.StatusCode != http.StatusMethodNotAllowed {
		t.Fatalf("GetRepoTeams of a user's repository: %v (%v)", err, resp)
	}
}

// TestBranchListOrder: branches come in the reference's order, the newest
// commit first and equal commit times by name, across pages and with a
// keyword.
func TestBranchListOrder(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	alice := e.CreateUser("alice", false)
	cred := apitest.TokenCred(e.Token(alice, "write:repository"))
	roCreateRepo(t, e, cred, map[string]any{"name": "proj", "auto_init": true})
	// A commit on a new branch, committed at the given time.
	commitAt := func(branch, file, when string) {
		t.Helper()
		e.Do("POST", "repos/alice/proj/contents/"+file, map[string]any{
			"content": "eA==", "branch": "main", "new_branch": branch,
			"dates": map[string]any{"author": when, "committer": when},
		}, cred).Expect(t, http.StatusCreated)
	}
	commitAt("aa-old", "a.txt", "2001-01-01T00:00:00Z")
	commitAt("zz-future", "z.txt", "2099-01-01T00:00:00Z")
	commitAt("mm-mid", "m.txt", "2050-06-01T12:00:00Z")
	// Two branches at main's commit tie on time and go by name.
	e.Do("POST", "repos/alice/proj/branches", map[string]any{"new_branch_name": "dev"}, cred).Expect(t, http.StatusCreated)
	want := "zz-future,mm-mid,dev,main,aa-old"
	var list []*models.Branch
	e.Do("GET", "repos/alice/proj/branches", nil, cred).Expect(t, http.StatusOK).JSON(t, &list)
	if got := strings.Join(brNames(list), ","); got != want {
		t.Fatalf("branches %s, want %s", got, want)
	}
	var pages []string
	for page := 1; page <= 3; page++ {
		e.Do("GET", fmt.Sprintf("repos/alice/proj/branches?limit=2&page=%d", page), nil, cred).Expect(t, http.StatusOK).JSON(t, &list)
		pages = append(pages, brNames(list)...)
	}
	if got := strings.Join(pages, ","); got != want {
		t.Fatalf("paged branches %s, want %s", got, want)
	}
	r := e.Do("GET", "repos/alice/proj/branches?q=m", nil, cred).Expect(t, http.StatusOK)
	r.JSON(t, &list)
	if got := strings.Join(brNames(list), ","); got != "mm-mid,main" || r.Header.Get("X-Total-Count") != "2" {
		t.Fatalf("branches matching m: %s (%s)", got, r.Header.Get("X-Total-Count"))
	}
}
