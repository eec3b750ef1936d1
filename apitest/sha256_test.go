package apitest_test

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"repohost/apitest"
	"repohost/models"
)

var sha256ID = regexp.MustCompile(`^[0-9a-f]{64}$`)

// TestSHA256Repositories: SHA-256 repositories are created empty, stored
// and answered as such, adopted with their history, cloned and fetched
// by the real git client over HTTP and SSH; pushes and the API's object
// operations, which go-git cannot do on them, are refused with a clear
// 4xx, never a 500.
func TestSHA256Repositories(t *testing.T) {
	t.Parallel()
	requireTools(t, "git", "ssh")
	e := apitest.New(t)
	addr := startSSH(t, e)
	g := newGitCLI(t)
	alice := e.CreateUser("alice", false)
	cred := apitest.Basic(alice)
	key := newSSHClientKey(t)
	e.Do("POST", "user/keys", map[string]any{"title": "a", "key": key.line}, cred).Expect(t, http.StatusCreated)
	sshURL := func(repo string) string { return "ssh://git@" + addr + "/alice/" + repo + ".git" }

	// Creation: sha256 on request, sha1 explicitly or by default, anything
	// else refused; the format is stored and in every answer.
	if r := roCreateRepo(t, e, cred, map[string]any{"name": "h", "object_format_name": "sha256"}); r.ObjectFormatName != "sha256" || !r.Empty {
		t.Fatalf("created: format %q empty %v, want sha256 and empty", r.ObjectFormatName, r.Empty)
	}
	if r := roCreateRepo(t, e, cred, map[string]any{"name": "one", "object_format_name": "sha1", "auto_init": true}); r.ObjectFormatName != "sha1" {
		t.Fatalf("sha1 repository answers %q", r.ObjectFormatName)
	}
	if r := roCreateRepo(t, e, cred, map[string]any{"name": "dflt", "object_format_name": ""}); r.ObjectFormatName != "sha1" {
		t.Fatalf("default repository answers %q", r.ObjectFormatName)
	}
	for _, body := range []map[string]any{
		{"name": "bad", "object_format_name": "md5"},
		{"name": "bad", "object_format_name": "SHA256"},
		{"name": "bad", "object_format_name": "sha256", "auto_init": true},
	} {
		e.Do("POST", "user/repos", body, cred).Expect(t, http.StatusUnprocessableEntity)
	}
	if roGitExists(t, e, "alice", "bad") {
		t.Fatal("a refused create left a directory behind")
	}
	var got models.Repository
	e.Do("GET", "repos/alice/h", nil, cred).Expect(t, http.StatusOK).JSON(t, &got)
	if got.ObjectFormatName != "sha256" {
		t.Fatalf("GET answers object_format_name %q", got.ObjectFormatName)
	}
	var mine []*models.Repository
	e.Do("GET", "user/repos", nil, cred).Expect(t, http.StatusOK).JSON(t, &mine)
	formats := map[string]string{}
	for _, r := range mine {
		formats[r.Name] = r.ObjectFormatName
	}
	if formats["h"] != "sha256" || formats["one"] != "sha1" || formats["dflt"] != "sha1" {
		t.Fatalf("listed formats %v", formats)
	}
	dir, err := e.Deps.Git.Path("alice", "h")
	if err != nil {
		t.Fatal(err)
	}
	if f := strings.TrimSpace(g.must(dir, "rev-parse", "--show-object-format")); f != "sha256" {
		t.Fatalf("repository on disk has object format %q", f)
	}

	// The default branch of the empty repository moves.
	e.Do("PATCH", "repos/alice/h", map[string]any{"default_branch": "trunk"}, cred).Expect(t, http.StatusOK).JSON(t, &got)
	if head := strings.TrimSpace(g.must(dir, "symbolic-ref", "HEAD")); got.DefaultBranch != "trunk" || head != "refs/heads/trunk" {
		t.Fatalf("default branch %q, HEAD %q", got.DefaultBranch, head)
	}

	// The empty repository clones over HTTP and SSH; a push to it is
	// refused with the reason, over both.
	work := t.TempDir()
	g.must(work, "clone", "-q", gitURL(e, "alice", alice.Password, "alice", "h"), "h")
	mustSSHGit(t, key, work, "clone", "-q", sshURL("h"), "h-ssh")
	local := filepath.Join(work, "local")
	g.must(work, "init", "-q", "--object-format=sha256", "-b", "trunk", "local")
	first := g.commitFile(local, "a.txt", "one\n", "one")
	if !sha256ID.MatchString(first) {
		t.Fatalf("local commit id %q", first)
	}
	if out := g.refuse(local, "push", gitURL(e, "alice", alice.Password, "alice", "h"), "trunk"); !strings.Contains(out, "SHA-256 repository") {
		t.Fatalf("HTTP push refused without the reason:\n%s", out)
	}
	if out := refuseSSHGit(t, key, local, "push", sshURL("h"), "trunk"); !strings.Contains(out, "SHA-256 repository") {
		t.Fatalf("SSH push refused without the reason:\n%s", out)
	}

	// A SHA-256 directory with history is adopted with its format, branch
	// and emptiness, then cloned and fetched over HTTP and SSH.
	adopted, err := e.Deps.Git.Path("alice", "old")
	if err != nil {
		t.Fatal(err)
	}
	g.must(work, "clone", "-q", "--bare", local, adopted)
	e.Do("POST", "admin/unadopted/alice/old", nil, apitest.Basic(e.Admin)).Expect(t, http.StatusNoContent)
	e.Do("GET", "repos/alice/old", nil, cred).Expect(t, http.StatusOK).JSON(t, &got)
	if got.ObjectFormatName != "sha256" || got.DefaultBranch != "trunk" || got.Empty {
		t.Fatalf("adopted: format %q branch %q empty %v", got.ObjectFormatName, got.DefaultBranch, got.Empty)
	}
	g.must(work, "clone", "-q", gitURL(e, "alice", alice.Password, "alice", "old"), "old-http")
	mustSSHGit(t, key, work, "clone", "-q", sshURL("old"), "old-ssh")
	for _, c := range []string{"old-http", "old-ssh"} {
		clone := filepath.Join(work, c)
		if h := strings.TrimSpace(g.must(clone, "rev-parse", "HEAD")); h != first {
			t.Fatalf("%s: HEAD %s, want %s", c, h, first)
		}
		if b, err := os.ReadFile(filepath.Join(clone, "a.txt")); err != nil || string(b) != "one\n" {
			t.Fatalf("%s: a.txt %q %v", c, b, err)
		}
	}
	second := g.commitFile(local, "b.txt", "two\n", "two")
	g.must(local, "push", "-q", adopted, "trunk") // straight into the directory, as an upstream would
	g.must(filepath.Join(work, "old-http"), "fetch", "-q", "origin")
	mustSSHGit(t, key, filepath.Join(work, "old-ssh"), "fetch", "-q", "origin")
	for _, c := range []string{"old-http", "old-ssh"} {
		if h := strings.TrimSpace(g.must(filepath.Join(work, c), "rev-parse", "origin/trunk")); h != second {
			t.Fatalf("%s fetched %s, want %s", c, h, second)
		}
	}

	// What needs the repository's objects through the API is refused with
	// the reason, never a 500.
	for _, op := range []struct{ method, path string }{
		{"GET", "repos/alice/old/branches"},
		{"GET", "repos/alice/old/branches/trunk"},
		{"GET", "repos/alice/old/contents/a.txt"},
		{"GET", "repos/alice/old/raw/a.txt"},
		{"GET", "repos/alice/old/commits"},
		{"GET", "repos/alice/old/compare/trunk...trunk"},
		{"GET", "repos/alice/old/archive/trunk.zip"},
		{"GET", "repos/alice/old/archive/trunk.tar.gz"},
		{"GET", "repos/alice/old/tags"},
		{"GET", "repos/alice/old/languages"},
		{"POST", "repos/alice/old/branches"},
		{"POST", "repos/alice/old/contents/c.txt"},
		{"POST", "repos/alice/old/pulls"},
		{"POST", "repos/alice/old/forks"},
	} {
		var body any
		switch op.method + " " + op.path {
		case "POST repos/alice/old/branches":
			body = map[string]any{"new_branch_name": "x"}
		case "POST repos/alice/old/contents/c.txt":
			body = map[string]any{"content": "aGk="}
		case "POST repos/alice/old/pulls":
			body = map[string]any{"head": "feature", "base": "trunk", "title": "t"}
		case "POST repos/alice/old/forks":
			body = map[string]any{"name": "fork"}
		}
		r := e.Do(op.method, op.path, body, cred)
		if r.Status != http.StatusUnprocessableEntity || !strings.Contains(string(r.Body), "SHA-256 repository") {
			t.Errorf("%s %s: %d %s, want 422 naming SHA-256", op.method, op.path, r.Status, r.Body)
		}
	}

	// Deleting removes the files.
	e.Do("DELETE", "repos/alice/old", nil, cred).Expect(t, http.StatusNoContent)
	e.Do("DELETE", "repos/alice/h", nil, cred).Expect(t, http.StatusNoContent)
	if roGitExists(t, e, "alice", "old") || roGitExists(t, e, "alice", "h") {
		t.Fatal("a deleted SHA-256 repository left its directory")
	}
}

// TestSHA256WebhookTest: the test delivery of a SHA-256 repository's hook
// names the format's zero id, 64 digits.
func TestSHA256WebhookTest(t *testing.T) {
	t.Parallel()
	e := hookEnv(t)
	alice := e.CreateUser("alice", false)
	a := apitest.Basic(alice)
	roCreateRepo(t, e, a, map[string]any{"name": "h", "object_format_name": "sha256"})
	rc := newReceiver(t)
	h := mkHook(t, e, a, "repos/alice/h/hooks", giteaHook(rc.URL, "push"))
	e.Do("POST", fmt.Sprintf("repos/alice/h/hooks/%d/tests", h.ID), nil, a).Expect(t, http.StatusNoContent)
	test := rc.waitFor(t, 1, 10*time.Second)[0]
	p := checkShape(t, test)
	zero := strings.Repeat("0", 64)
	if test.typ() != "push" || p["before"] != zero || p["after"] != zero || p["ref"] != "refs/heads/main" {
		t.Errorf("test delivery %s", test.Body)
	}
}
