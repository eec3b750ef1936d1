package apitest_test

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-git/go-git/v6/plumbing"

	"repohost/apitest"
	"repohost/models"
)

// genTemplate makes alice/tpl: a template with two commits, topics, two
// protection rules, labels and a git hook.
func genTemplate(t *testing.T, e *apitest.Env, git *gitCLI, alice *apitest.Account, token string) {
	t.Helper()
	cred := apitest.TokenCred(token)
	clone := brSeed(t, e, git, alice, token, "tpl", false)
	git.commitFile(clone, "src/main.go", "package main\n", "code")
	git.must(clone, "push", "-q", "origin", "main")
	e.Do("PATCH", "repos/alice/tpl", map[string]any{"template": true, "description": "a template"}, cred).Expect(t, http.StatusOK)
	e.Do("PUT", "repos/alice/tpl/topics", map[string]any{"topics": []string{"go", "starter"}}, cred).Expect(t, http.StatusNoContent)
	bpCreate(t, e, cred, "alice/tpl", map[string]any{"rule_name": "main", "enable_push": true})
	bpCreate(t, e, cred, "alice/tpl", map[string]any{"rule_name": "release/*"})
	for _, l := range []map[string]any{{"name": "bug", "color": "#ff0000"}, {"name": "kind/feature", "color": "#00ff00", "exclusive": true}} {
		e.Do("POST", "repos/alice/tpl/labels", l, cred).Expect(t, http.StatusCreated)
	}
	path, err := e.Deps.Git.Path("alice", "tpl")
	if err != nil {
		t.Fatal(err)
	}
	hooks := filepath.Join(path, "hooks", "pre-receive.d")
	if err := os.MkdirAll(hooks, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(hooks, "check"), []byte("#!/bin/sh\nexit 0\n"), 0o755); err != nil {
		t.Fatal(err)
	}
}

func genPost(t *testing.T, e *apitest.Env, cred apitest.Cred, tpl string, body map[string]any, status int) *models.Repository {
	t.Helper()
	var r models.Repository
	resp := e.Do("POST", "repos/"+tpl+"/generate", body, cred).Expect(t, status)
	if status == http.StatusCreated {
		resp.JSON(t, &r)
	}
	return &r
}

func TestGenerateFromTemplate(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	git := newGitCLI(t)
	alice := e.CreateUser("alice", false)
	token := e.Token(alice, "write:repository", "write:issue")
	cred := apitest.TokenCred(token)
	genTemplate(t, e, git, alice, token)

	all := map[string]any{"owner": "alice", "name": "full", "description": "from tpl", "private": true,
		"git_content": true, "topics": true, "labels": true, "git_hooks": true, "protected_branch": true,
		"webhooks": true, "avatar": true}
	r := genPost(t, e, cred, "alice/tpl", all, http.StatusCreated)
	if r.FullName != "alice/full" || !r.Private || r.Empty || r.Template || r.DefaultBranch != "main" ||
		r.Description != "from tpl" || strings.Join(r.Topics, ",") != "go,starter" ||
		r.Permissions == nil || !r.Permissions.Admin || !r.Permissions.Push || !r.Permissions.Pull {
		t.Fatalf("generated %+v", r)
	}
	// The tree is the template's, as one fresh commit by the caller.
	g := roGit(t, e, "alice", "full")
	if got := roFile(t, g, "main", "src/main.go"); got != "package main\n" {
		t.Fatalf("src/main.go %q", got)
	}
	ref, err := g.Reference(plumbing.NewBranchReferenceName("main"), true)
	if err != nil {
		t.Fatal(err)
	}
	c, err := g.CommitObject(ref.Hash())
	if err != nil {
		t.Fatal(err)
	}
	tplG := roGit(t, e, "alice", "tpl")
	tplRef, _ := tplG.Reference(plumbing.NewBranchReferenceName("main"), true)
	tplC, _ := tplG.CommitObject(tplRef.Hash())
	if c.NumParents() != 0 || c.Message != "Initial commit\n" || c.Author.Name != "alice" || c.TreeHash != tplC.TreeHash {
		t.Fatalf("generated commit %+v", c)
	}
	var bps []*models.BranchProtection
	e.Do("GET", "repos/alice/full/branch_protections", nil, cred).Expect(t, http.StatusOK).JSON(t, &bps)
	if bpOrder(bps) != "main:1,release/*:2" {
		t.Fatalf("copied rules %s", bpOrder(bps))
	}
	var labels []*models.Label
	e.Do("GET", "repos/alice/full/labels", nil, cred).Expect(t, http.StatusOK).JSON(t, &labels)
	if len(labels) != 2 || labels[0].Name != "bug" || labels[1].Name != "kind/feature" || !labels[1].Exclusive {
		t.Fatalf("copied labels %+v", labels)
	}
	newPath, _ := e.Deps.Git.Path("alice", "full")
	if b, err := os.ReadFile(filepath.Join(newPath, "hooks", "pre-receive.d", "check")); err != nil || !strings.Contains(string(b), "exit 0") {
		t.Fatalf("copied hook: %v %q", err, b)
	}
	// The template is unchanged.
	if got := tpList(t, e, nil, "alice/tpl"); strings.Join(got, ",") != "go,starter" {
		t.Fatalf("template topics %v", got)
	}

	// Only topics: an empty repository, on the requested default branch.
	r = genPost(t, e, cred, "alice/tpl", map[string]any{"owner": "alice", "name": "bare", "topics": true, "default_branch": "trunk"}, http.StatusCreated)
	if !r.Empty || r.DefaultBranch != "trunk" || r.Private || strings.Join(r.Topics, ",") != "go,starter" {
		t.Fatalf("topics only %+v", r)
	}
	if _, err := os.Stat(filepath.Join(newPath, "..", "bare.git", "hooks", "pre-receive.d")); err == nil {
		t.Fatal("hooks copied without git_hooks")
	}
	// Git content on another default branch: the tree lands there.
	genPost(t, e, cred, "alice/tpl", map[string]any{"owner": "alice", "name": "dev", "git_content": true, "default_branch": "develop"}, http.StatusCreated)
	if got := roFile(t, roGit(t, e, "alice", "dev"), "develop", "README.md"); !strings.Contains(got, "tpl") {
		t.Fatalf("README on develop %q", got)
	}
	if head := roHead(t, roGit(t, e, "alice", "dev")); head != "develop" {
		t.Fatalf("HEAD %q", head)
	}
}

func TestGenerateRefusals(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	git := newGitCLI(t)
	alice := e.CreateUser("alice", false)
	bob := e.CreateUser("bob", false)
	carol := e.CreateUser("carol", false)
	token := e.Token(alice, "write:repository", "write:issue")
	cred := apitest.TokenCred(token)
	genTemplate(t, e, git, alice, token)
	roCreateRepo(t, e, cred, map[string]any{"name": "plain", "auto_init": true})
	roCreateRepo(t, e, cred, map[string]any{"name": "hidden", "auto_init": true, "private": true, "template": true})
	org := roCreateOrg(t, e, apitest.Basic(carol), map[string]any{"username": "acme"})
	roAddMember(t, e, org.ID, alice, false, false)
	roCreateOrg(t, e, apitest.Basic(alice), map[string]any{"username": "mine"})
	item := func(owner, name string) map[string]any {
		return map[string]any{"owner": owner, "name": name, "git_content": true}
	}

	genPost(t, e, nil, "alice/tpl", item("alice", "x"), http.StatusUnauthorized)
	genPost(t, e, apitest.Basic(bob), "alice/hidden", item("bob", "x"), http.StatusNotFound)
	genPost(t, e, cred, "alice/nope", item("alice", "x"), http.StatusNotFound)
	genPost(t, e, cred, "alice/plain", item("alice", "x"), http.StatusUnprocessableEntity)
	genPost(t, e, cred, "alice/tpl", map[string]any{"owner": "alice", "name": "x", "private": true}, http.StatusUnprocessableEntity)
	genPost(t, e, cred, "alice/tpl", map[string]any{"owner": "alice", "name": "x", "git_content": false, "topics": false}, http.StatusUnprocessableEntity)
	r := e.Do("POST", "repos/alice/tpl/generate", item("ghost", "x"), cred).Expect(t, http.StatusNotFound)
	if !strings.Contains(string(r.Body), "request owner `ghost` does not exist") {
		t.Fatalf("unknown owner %s", r.Body)
	}
	genPost(t, e, cred, "alice/tpl", item("bob", "x"), http.StatusForbidden)
	genPost(t, e, cred, "alice/tpl", item("acme", "x"), http.StatusForbidden)
	genPost(t, e, cred, "alice/tpl", item("mine", "x"), http.StatusCreated)
	genPost(t, e, apitest.Basic(e.Admin), "alice/tpl", item("bob", "gift"), http.StatusCreated)
	genPost(t, e, apitest.Basic(bob), "alice/tpl", item("bob", "own"), http.StatusCreated)
	r = e.Do("POST", "repos/alice/tpl/generate", item("alice", "plain"), cred).Expect(t, http.StatusConflict)
	if !strings.Contains(string(r.Body), "The repository with the same name already exists.") {
		t.Fatalf("409 body %s", r.Body)
	}
	for _, bad := range []string{"", "..", "a/b", "../evil", "x.git", ".hidden", "a b", strings.Repeat("n", 101), "%2e%2e"} {
		genPost(t, e, cred, "alice/tpl", item("alice", bad), http.StatusUnprocessableEntity)
	}
	genPost(t, e, cred, "alice/tpl", map[string]any{"name": "x", "git_content": true}, http.StatusUnprocessableEntity)
	genPost(t, e, cred, "alice/tpl", map[string]any{"owner": "alice", "git_content": true}, http.StatusUnprocessableEntity)
	genPost(t, e, cred, "alice/tpl", map[string]any{"owner": "alice", "name": "y", "git_content": true, "default_branch": "a..b"}, http.StatusUnprocessableEntity)

	// Stray files at the target are never overwritten or removed.
	stray, _ := e.Deps.Git.Path("alice", "stray")
	if err := os.MkdirAll(stray, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(stray, "keep"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	genPost(t, e, cred, "alice/tpl", item("alice", "stray"), http.StatusConflict)
	if _, err := os.Stat(filepath.Join(stray, "keep")); err != nil {
		t.Fatalf("stray files touched: %v", err)
	}
	e.Do("GET", "repos/alice/stray", nil, cred).Expect(t, http.StatusNotFound)
}

func TestGenerateExpandsTemplateVariables(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	git := newGitCLI(t)
	alice := e.CreateUser("alice", false)
	token := e.Token(alice, "write:repository")
	cred := apitest.TokenCred(token)
	clone := brSeed(t, e, git, alice, token, "go-tpl", false)
	git.commitFile(clone, ".gitea/template", "# expanded files\n**.md\nsrc/*.go\n", "template globs")
	git.commitFile(clone, "NOTES.md", "$REPO_NAME by ${REPO_OWNER} from $TEMPLATE_NAME ($REPO_NAME_PASCAL, ${REPO_NAME_SNAKE}) costs $$5\n", "notes")
	git.commitFile(clone, "src/main.go", "package $REPO_NAME_SNAKE\n", "code")
	git.commitFile(clone, "src/deep/x.go", "package $REPO_NAME\n", "deep code")
	git.commitFile(clone, "run.sh", "echo $HOME\n", "script")
	git.must(clone, "push", "-q", "origin", "main")
	e.Do("PATCH", "repos/alice/go-tpl", map[string]any{"template": true}, cred).Expect(t, http.StatusOK)

	genPost(t, e, cred, "alice/go-tpl", map[string]any{"owner": "alice", "name": "my-app", "git_content": true}, http.StatusCreated)
	g := roGit(t, e, "alice", "my-app")
	for file, want := range map[string]string{
		"NOTES.md":      "my-app by alice from go-tpl (MyApp, my_app) costs $5\n",
		"src/main.go":   "package my_app\n",
		"src/deep/x.go": "package $REPO_NAME\n", // src/*.go does not cross directories
		"run.sh":        "echo $HOME\n",
	} {
		if got := roFile(t, g, "main", file); got != want {
			t.Fatalf("%s: %q, want %q", file, got, want)
		}
	}
	ref, _ := g.Reference(plumbing.NewBranchReferenceName("main"), true)
	c, _ := g.CommitObject(ref.Hash())
	if _, err := c.File(".gitea/template"); err == nil {
		t.Fatal("the template file was copied")
	}
	tree, _ := c.Tree()
	if _, err := tree.Tree(".gitea"); err == nil {
		t.Fatal("an empty .gitea directory was kept")
	}
}
