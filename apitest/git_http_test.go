package apitest_test

import (
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"repohost/apitest"
	"repohost/models"
)

// gitCLI runs the real git command line against a test server, isolated
// from the machine: its own HOME, no system config, never a prompt.
type gitCLI struct {
	t    *testing.T
	home string
}

func newGitCLI(t *testing.T) *gitCLI {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	return &gitCLI{t: t, home: t.TempDir()}
}

// run runs git in dir and returns its combined output and error.
func (g *gitCLI) run(dir string, args ...string) (string, error) {
	g.t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "init.defaultBranch=main", "-c", "protocol.version=2"}, args...)...)
	cmd.Dir = dir
	cmd.Env = []string{
		"HOME=" + g.home, "PATH=" + os.Getenv("PATH"), "GIT_CONFIG_NOSYSTEM=1", "GIT_TERMINAL_PROMPT=0",
		"GIT_ASKPASS=/bin/false", "SSH_ASKPASS=/bin/false", "LANG=C", "LC_ALL=C",
		"GIT_AUTHOR_NAME=Tester", "GIT_AUTHOR_EMAIL=tester@example.com",
		"GIT_COMMITTER_NAME=Tester", "GIT_COMMITTER_EMAIL=tester@example.com",
	}
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// must runs git and fails the test when it fails.
func (g *gitCLI) must(dir string, args ...string) string {
	g.t.Helper()
	out, err := g.run(dir, args...)
	if err != nil {
		g.t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

// refuse runs git, expects it to fail, and returns its output.
func (g *gitCLI) refuse(dir string, args ...string) string {
	g.t.Helper()
	out, err := g.run(dir, args...)
	if err == nil {
		g.t.Fatalf("git %s succeeded, want a failure\n%s", strings.Join(args, " "), out)
	}
	return out
}

// gitURL is the clone URL of owner/name, with user:secret when user is set.
func gitURL(e *apitest.Env, user, secret, owner, name string) string {
	u, _ := url.Parse(e.Server.URL)
	if user != "" {
		u.User = url.UserPassword(user, secret)
	}
	u.Path = "/" + owner + "/" + name + ".git"
	return u.String()
}

// commitFile writes file in the work tree dir and commits it.
func (g *gitCLI) commitFile(dir, file, content, msg string) string {
	g.t.Helper()
	if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, file)), 0o755); err != nil {
		g.t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, file), []byte(content), 0o644); err != nil {
		g.t.Fatal(err)
	}
	g.must(dir, "add", file)
	g.must(dir, "commit", "-q", "-m", msg)
	return strings.TrimSpace(g.must(dir, "rev-parse", "HEAD"))
}

func ghBranch(t *testing.T, e *apitest.Env, cred apitest.Cred, owner, repo, branch string) *models.Branch {
	t.Helper()
	var b models.Branch
	e.Do("GET", fmt.Sprintf("repos/%s/%s/branches/%s", owner, repo, url.PathEscape(branch)), nil, cred).
		Expect(t, http.StatusOK).JSON(t, &b)
	return &b
}

// clonedRepo is alice's auto-initialised repository cloned by the git CLI
// with a write token: the starting point of the push tests.
type clonedRepo struct {
	alice *apitest.Account
	git   *gitCLI
	cred  apitest.Cred
	token string
	work  string // the clone's parent directory
	clone string
}

// newClonedRepo creates alice and her repository name (with the extra
// creation options in opts) on e, and clones it.
func newClonedRepo(t *testing.T, e *apitest.Env, name string, opts map[string]any) clonedRepo {
	t.Helper()
	c := clonedRepo{git: newGitCLI(t), work: t.TempDir()}
	c.alice = e.CreateUser("alice", false)
	c.token = e.Token(c.alice, "write:repository")
	c.cred = apitest.TokenCred(c.token)
	body := map[string]any{"name": name, "auto_init": true}
	for k, v := range opts {
		body[k] = v
	}
	roCreateRepo(t, e, c.cred, body)
	c.clone = filepath.Join(c.work, name)
	c.git.must(c.work, "clone", "-q", gitURL(e, "alice", c.token, "alice", name), c.clone)
	return c
}

func TestGitHTTPCloneCommitPush(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	r := newClonedRepo(t, e, "proj", map[string]any{"private": true})
	git, token, cred, work, clone := r.git, r.token, r.cred, r.work, r.clone
	if _, err := os.Stat(filepath.Join(clone, "README.md")); err != nil {
		t.Fatalf("clone has no README.md: %v", err)
	}
	if head := strings.TrimSpace(git.must(clone, "rev-parse", "--abbrev-ref", "HEAD")); head != "main" {
		t.Fatalf("clone checked out %q, want main", head)
	}

	// A new branch, pushed, is visible through the API.
	git.must(clone, "checkout", "-q", "-b", "feature/x")
	sha := git.commitFile(clone, "docs/a.md", "hello\n", "add a")
	git.must(clone, "push", "-q", "origin", "feature/x")
	if b := ghBranch(t, e, cred, "alice", "proj", "feature/x"); b.Commit == nil || b.Commit.ID != sha {
		t.Fatalf("branch after push %+v", b)
	}

	// A fast-forward of main.
	git.must(clone, "checkout", "-q", "main")
	sha = git.commitFile(clone, "b.txt", "b\n", "add b")
	git.must(clone, "push", "-q", "origin", "main")
	if b := ghBranch(t, e, cred, "alice", "proj", "main"); b.Commit.ID != sha || b.Commit.Message != "add b\n" {
		t.Fatalf("main after push %+v", b.Commit)
	}

	// Tags travel too, and a second clone sees everything.
	git.must(clone, "tag", "-a", "v1", "-m", "release 1")
	git.must(clone, "push", "-q", "origin", "v1")
	second := filepath.Join(work, "second")
	git.must(work, "clone", "-q", gitURL(e, "alice", token, "alice", "proj"), second)
	if out := git.must(second, "tag", "-l"); strings.TrimSpace(out) != "v1" {
		t.Fatalf("tags in second clone %q", out)
	}

	// Fetch with a long local history the server does not have: the
	// negotiation takes several rounds before the pack.
	for i := 0; i < 40; i++ {
		git.commitFile(second, fmt.Sprintf("local/%d.txt", i), "x\n", fmt.Sprintf("local %d", i))
	}
	sha = git.commitFile(clone, "c.txt", "c\n", "add c")
	git.must(clone, "push", "-q", "origin", "main")
	git.must(second, "fetch", "-q", "origin")
	if got := strings.TrimSpace(git.must(second, "rev-parse", "origin/main")); got != sha {
		t.Fatalf("fetched origin/main %s, want %s", got, sha)
	}
	git.must(second, "fsck", "--no-progress")

	// Deleting a branch by push.
	git.must(clone, "push", "-q", "origin", "--delete", "feature/x")
	e.Do("GET", "repos/alice/proj/branches/"+url.PathEscape("feature/x"), nil, cred).Expect(t, http.StatusNotFound)

	// Password sign-in works as well as a token.
	git.must(work, "clone", "-q", gitURL(e, "alice", r.alice.Password, "alice", "proj"), filepath.Join(work, "third"))
}

func TestGitHTTPAccess(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	git := newGitCLI(t)
	alice := e.CreateUser("alice", false)
	bob := e.CreateUser("bob", false)
	aliceTok := e.Token(alice, "write:repository")
	bobTok := e.Token(bob, "write:repository")
	roCreateRepo(t, e, apitest.TokenCred(aliceTok), map[string]any{"name": "secret", "auto_init": true, "private": true})
	roCreateRepo(t, e, apitest.TokenCred(aliceTok), map[string]any{"name": "open", "auto_init": true})
	work := t.TempDir()

	// Anonymous: a public repository clones, a private one does not (and
	// looks exactly like a missing one).
	git.must(work, "clone", "-q", gitURL(e, "", "", "alice", "open"), filepath.Join(work, "open"))
	for _, name := range []string{"secret", "missing"} {
		out := git.refuse(work, "clone", "-q", gitURL(e, "", "", "alice", name), filepath.Join(work, "anon-"+name))
		if !strings.Contains(out, "could not read Username") && !strings.Contains(out, "Authentication failed") {
			t.Fatalf("anonymous clone of %s: %s", name, out)
		}
	}
	// Another user: the private repository is not found; the public one
	// clones but refuses a push.
	out := git.refuse(work, "clone", "-q", gitURL(e, "bob", bobTok, "alice", "secret"), filepath.Join(work, "bob-secret"))
	if !strings.Contains(out, "not found") {
		t.Fatalf("bob cloning a private repository: %s", out)
	}
	bobClone := filepath.Join(work, "bob-open")
	git.must(work, "clone", "-q", gitURL(e, "bob", bobTok, "alice", "open"), bobClone)
	git.commitFile(bobClone, "x.txt", "x\n", "x")
	if out := git.refuse(bobClone, "push", "origin", "main"); !strings.Contains(out, "403") {
		t.Fatalf("push without write access: %s", out)
	}
	// Anonymous push is asked for credentials.
	git.must(bobClone, "remote", "set-url", "origin", gitURL(e, "", "", "alice", "open"))
	git.refuse(bobClone, "push", "origin", "main")

	// A read-only token reads but cannot push; bad credentials are refused.
	readTok := e.Token(alice, "read:repository")
	ro := filepath.Join(work, "ro")
	git.must(work, "clone", "-q", gitURL(e, "alice", readTok, "alice", "secret"), ro)
	git.commitFile(ro, "y.txt", "y\n", "y")
	if out := git.refuse(ro, "push", "origin", "main"); !strings.Contains(out, "403") {
		t.Fatalf("push with a read token: %s", out)
	}
	git.refuse(work, "clone", "-q", gitURL(e, "alice", "wrong-password", "alice", "secret"), filepath.Join(work, "bad"))
	// The same holds for a token sent as a Bearer or "token" header: the
	// scope is checked whatever the form.
	bearer := filepath.Join(work, "bearer")
	git.must(work, "-c", "http.extraHeader=Authorization: Bearer "+readTok, "clone", "-q", gitURL(e, "", "", "alice", "secret"), bearer)
	git.commitFile(bearer, "w.txt", "w\n", "w")
	if out := git.refuse(bearer, "-c", "http.extraHeader=Authorization: Bearer "+readTok, "push", "origin", "main"); !strings.Contains(out, "403") {
		t.Fatalf("push with a read token as Bearer: %s", out)
	}
	git.must(bearer, "-c", "http.extraHeader=Authorization: token "+aliceTok, "push", "-q", "origin", "main")
	publicOnly := e.Token(alice, "public-only", "write:repository")
	out = git.refuse(work, "-c", "http.extraHeader=Authorization: Bearer "+publicOnly, "clone", "-q", gitURL(e, "", "", "alice", "secret"), filepath.Join(work, "po"))
	if !strings.Contains(out, "not found") {
		t.Fatalf("public-only token on a private repository: %s", out)
	}

	// An archived repository still clones but refuses pushes.
	e.Do("PATCH", "repos/alice/open", map[string]any{"archived": true}, apitest.TokenCred(aliceTok)).Expect(t, http.StatusOK)
	arch := filepath.Join(work, "arch")
	git.must(work, "clone", "-q", gitURL(e, "alice", aliceTok, "alice", "open"), arch)
	git.commitFile(arch, "z.txt", "z\n", "z")
	if out := git.refuse(arch, "push", "origin", "main"); !strings.Contains(out, "403") {
		t.Fatalf("push to an archived repository: %s", out)
	}

	// Raw protocol answers: a dumb-protocol request and a wrong content
	// type are refused, a bad path is not found.
	for _, c := range []struct {
		method, path, ctype string
		status              int
	}{
		{"GET", "/alice/open.git/info/refs", "", http.StatusForbidden},
		{"POST", "/alice/open.git/git-upload-pack", "text/plain", http.StatusUnsupportedMediaType},
		{"GET", "/alice/nope.git/info/refs?service=git-upload-pack", "", http.StatusUnauthorized},
	} {
		req, _ := http.NewRequest(c.method, e.Server.URL+c.path, strings.NewReader(""))
		if c.ctype != "" {
			req.Header.Set("Content-Type", c.ctype)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != c.status {
			t.Fatalf("%s %s: %d, want %d", c.method, c.path, resp.StatusCode, c.status)
		}
		if c.status == http.StatusUnauthorized && !strings.Contains(resp.Header.Get("WWW-Authenticate"), "Basic") {
			t.Fatalf("401 without a Basic challenge: %v", resp.Header)
		}
	}
}

func TestGitHTTPPushToEmptyRepository(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	git := newGitCLI(t)
	alice := e.CreateUser("alice", false)
	token := e.Token(alice, "write:repository")
	cred := apitest.TokenCred(token)
	r := roCreateRepo(t, e, cred, map[string]any{"name": "blank"})
	if !r.Empty || r.DefaultBranch != "main" {
		t.Fatalf("new repository %+v", r)
	}
	work := t.TempDir()
	clone := filepath.Join(work, "blank")
	out := git.must(work, "clone", gitURL(e, "alice", token, "alice", "blank"), clone)
	if !strings.Contains(out, "empty repository") {
		t.Logf("clone of an empty repository said: %s", out)
	}
	// The first push is to "trunk", not the configured "main": it becomes
	// the default branch.
	git.must(clone, "checkout", "-q", "-b", "trunk")
	git.commitFile(clone, "a.txt", "a\n", "first")
	git.must(clone, "push", "-q", "origin", "trunk")
	var got models.Repository
	e.Do("GET", "repos/alice/blank", nil, cred).Expect(t, http.StatusOK).JSON(t, &got)
	if got.Empty || got.DefaultBranch != "trunk" {
		t.Fatalf("after the first push: empty=%v default=%q", got.Empty, got.DefaultBranch)
	}
	other := filepath.Join(work, "other")
	git.must(work, "clone", "-q", gitURL(e, "alice", token, "alice", "blank"), other)
	if head := strings.TrimSpace(git.must(other, "rev-parse", "--abbrev-ref", "HEAD")); head != "trunk" {
		t.Fatalf("clone checked out %q", head)
	}
	// The default branch cannot be deleted by a push.
	if out := git.refuse(clone, "push", "origin", "--delete", "trunk"); !strings.Contains(out, "default branch") {
		t.Fatalf("deleting the default branch: %s", out)
	}
}

func TestGitHTTPProtectedBranches(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	r := newClonedRepo(t, e, "proj", nil)
	git, cred, clone := r.git, r.cred, r.clone
	git.must(clone, "push", "-q", "origin", "main:release/1", "main:keep")
	before := ghBranch(t, e, cred, "alice", "proj", "main").Commit.ID

	// main: nobody may push.
	e.Do("POST", "repos/alice/proj/branch_protections", map[string]any{"rule_name": "main"}, cred).Expect(t, http.StatusCreated)
	git.commitFile(clone, "a.txt", "a\n", "a")
	out := git.refuse(clone, "push", "origin", "main")
	if !strings.Contains(out, "not allowed to push to protected branch main") {
		t.Fatalf("push to a protected branch: %s", out)
	}
	if got := ghBranch(t, e, cred, "alice", "proj", "main"); got.Commit.ID != before || !got.Protected || got.UserCanPush {
		t.Fatalf("protected main after a refused push: %+v", got)
	}

	// release/*: pushes allowed, force pushes and deletion not.
	e.Do("POST", "repos/alice/proj/branch_protections", map[string]any{"rule_name": "release/*", "enable_push": true}, cred).
		Expect(t, http.StatusCreated)
	git.must(clone, "push", "-q", "origin", "HEAD:release/1")
	git.must(clone, "reset", "-q", "--hard", "HEAD~1")
	git.commitFile(clone, "b.txt", "b\n", "b")
	out = git.refuse(clone, "push", "--force", "origin", "HEAD:release/1")
	if !strings.Contains(out, "protected from force push") {
		t.Fatalf("force push to a protected branch: %s", out)
	}
	out = git.refuse(clone, "push", "origin", "--delete", "release/1")
	if !strings.Contains(out, "protected from deletion") {
		t.Fatalf("deleting a protected branch: %s", out)
	}

	// An unprotected branch takes a force push; a push with one refused
	// ref still applies the others.
	git.must(clone, "push", "-q", "--force", "origin", "HEAD:keep")
	out = git.refuse(clone, "push", "--force", "origin", "HEAD:keep2", "HEAD:release/1")
	if !strings.Contains(out, "protected from force push") {
		t.Fatalf("mixed push: %s", out)
	}
	ghBranch(t, e, cred, "alice", "proj", "keep2")

	// Allowing force pushes lets it through.
	e.Do("PATCH", "repos/alice/proj/branch_protections/"+url.PathEscape("release/*"), map[string]any{"enable_force_push": true}, cred).
		Expect(t, http.StatusOK)
	git.must(clone, "push", "-q", "--force", "origin", "HEAD:release/1")

	// A push whitelist admits only the listed users.
	e.Do("PATCH", "repos/alice/proj/branch_protections/main", map[string]any{
		"enable_push": true, "enable_push_whitelist": true, "push_whitelist_usernames": []string{"alice"},
	}, cred).Expect(t, http.StatusOK)
	git.must(clone, "push", "-q", "origin", "HEAD:main")
}

// Fetches are git's own upload-pack: a shallow clone and deepening it
// work, and a malformed request is a 400 that says nothing of the server.
func TestGitHTTPShallowCloneAndMalformedFetch(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	r := newClonedRepo(t, e, "deep", map[string]any{"private": true})
	git := r.git
	git.commitFile(r.clone, "a.txt", "a\n", "a")
	tip := git.commitFile(r.clone, "b.txt", "b\n", "b")
	git.must(r.clone, "tag", "-a", "-m", "v1", "v1")
	git.must(r.clone, "push", "-q", "origin", "main", "v1")

	shallow := filepath.Join(r.work, "shallow")
	git.must(r.work, "clone", "-q", "--depth", "1", gitURL(e, "alice", r.token, "alice", "deep"), shallow)
	if n := strings.TrimSpace(git.must(shallow, "rev-list", "--count", "HEAD")); n != "1" {
		t.Fatalf("--depth 1 clone has %s commits", n)
	}
	if got := strings.TrimSpace(git.must(shallow, "rev-parse", "HEAD")); got != tip {
		t.Fatalf("shallow clone at %s, want %s", got, tip)
	}
	git.must(shallow, "fetch", "-q", "--unshallow", "--tags")
	if n := strings.TrimSpace(git.must(shallow, "rev-list", "--count", "HEAD")); n != "3" {
		t.Fatalf("unshallowed clone has %s commits", n)
	}
	if got := strings.TrimSpace(git.must(shallow, "rev-parse", "v1^{commit}")); got != tip {
		t.Fatalf("tag v1 at %s, want %s", got, tip)
	}

	for _, c := range []struct {
		path   string
		status int
	}{
		{"/alice/deep.git/git-upload-pack", http.StatusBadRequest},
		{"/alice/nope.git/git-upload-pack", http.StatusNotFound},
	} {
		req, _ := http.NewRequest("POST", e.Server.URL+c.path, strings.NewReader("garbage"))
		req.Header.Set("Content-Type", "application/x-git-upload-pack-request")
		req.SetBasicAuth("alice", r.token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != c.status || strings.Contains(string(body), "/") {
			t.Fatalf("POST %s: %d %q, want %d", c.path, resp.StatusCode, body, c.status)
		}
	}
}
