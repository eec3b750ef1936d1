package apitest_test

import (
	"bytes"
	"crypto/rand"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"repohost/apitest"
	"repohost/impl/app"
)

var (
	gitLFSOnce sync.Once
	gitLFSErr  error
	gitLFSOut  []byte
)

// requireGitLFS makes sure the real git-lfs client is installed
// (scripts/git-lfs.sh installs Debian's package where it is missing) and
// fails the test when it cannot be.
func requireGitLFS(t *testing.T) {
	t.Helper()
	requireTools(t, "git")
	gitLFSOnce.Do(func() {
		gitLFSOut, gitLFSErr = exec.Command("../scripts/git-lfs.sh", "ensure").CombinedOutput()
	})
	if gitLFSErr != nil {
		t.Fatalf("git-lfs is needed: %v\n%s", gitLFSErr, gitLFSOut)
	}
}

// randomFile writes n random bytes to dir/name and returns them.
func randomFile(t *testing.T, dir, name string, n int) []byte {
	t.Helper()
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
		t.Fatal(err)
	}
	return b
}

func sameFile(t *testing.T, path string, want []byte) {
	t.Helper()
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("%s: %d bytes, not the %d pushed (starts %q)", path, len(got), len(want), got[:min(len(got), 80)])
	}
}

func lfsLimits(c *app.Config) {
	c.LFSMaxFileBytes = 1 << 20
	c.LFSOwnerBytes = 3 << 19 // 1.5 MiB
}

// TestLFSGitClientHTTP drives the real git-lfs client over HTTP: track,
// push, clone with smudge, locks, and the limits.
// Each runs on every storage backend: the local disk, and S3 when a
// service is given, streamed through the server and served direct.
func TestLFSGitClientHTTP(t *testing.T) {
	t.Parallel()
	requireGitLFS(t)
	for _, b := range lfsBackends(t) {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel()
			lfsGitClientHTTP(t, b)
		})
	}
}

// lfsBackends are apitest.Backends and, with S3, S3 serving downloads
// direct (the batch answer points the client at presigned addresses).
func lfsBackends(t *testing.T) []apitest.Backend {
	out := apitest.Backends(t)
	if os.Getenv(apitest.S3Env) != "" {
		out = append(out, apitest.Backend{Name: "s3-direct", Configure: func(d *app.Deps) { d.Objects = apitest.S3Stores(t, true) }})
	}
	return out
}

// withBackend configures the server's stores as b says, after configure.
func withBackend(b apitest.Backend, configure func(*app.Deps)) func(*app.Deps) {
	return func(d *app.Deps) {
		if configure != nil {
			configure(d)
		}
		if b.Configure != nil {
			b.Configure(d)
		}
	}
}

func lfsGitClientHTTP(t *testing.T, b apitest.Backend) {
	e := apitest.NewWithDeps(t, withBackend(b, func(d *app.Deps) { lfsLimits(&d.Config) }))
	alice := e.CreateUser("alice", false)
	bob := e.CreateUser("bob", false)
	roCreateRepo(t, e, apitest.Basic(alice), map[string]any{"name": "big", "auto_init": true, "private": true})
	e.Do("PUT", "repos/alice/big/collaborators/bob", map[string]any{"permission": "write"}, apitest.Basic(alice)).Expect(t, http.StatusNoContent)

	g := newGitCLI(t)
	g.must("", "lfs", "install", "--skip-repo")
	work := t.TempDir()
	g.must(work, "clone", "-q", gitURL(e, "alice", alice.Password, "alice", "big"), "big")
	clone := filepath.Join(work, "big")
	g.must(clone, "lfs", "track", "*.bin")
	data := randomFile(t, clone, "data.bin", 300<<10)
	g.must(clone, "add", ".gitattributes", "data.bin")
	g.must(clone, "commit", "-q", "-m", "binary")
	g.must(clone, "push", "origin", "main")

	// raw answers the pointer itself.
	raw := e.Do("GET", "repos/alice/big/raw/data.bin", nil, apitest.Basic(alice)).Expect(t, http.StatusOK)
	if !strings.HasPrefix(string(raw.Body), "version https://git-lfs.github.com/spec/v1") {
		t.Fatalf("raw of an LFS file: %q, want the pointer", raw.Body)
	}

	// The contents API names the object a pointer points at.
	var cr struct {
		LfsOid  string `json:"lfs_oid"`
		LfsSize int64  `json:"lfs_size"`
	}
	e.Do("GET", "repos/alice/big/contents/data.bin", nil, apitest.Basic(alice)).Expect(t, http.StatusOK).JSON(t, &cr)
	if cr.LfsOid != oidOf(data) || cr.LfsSize != int64(len(data)) {
		t.Fatalf("contents of an LFS pointer: %+v", cr)
	}

	// media answers the LFS object, and an ordinary file as raw does.
	media := e.Do("GET", "repos/alice/big/media/data.bin", nil, apitest.Basic(alice)).Expect(t, http.StatusOK)
	if !bytes.Equal(media.Body, data) {
		t.Fatalf("media of an LFS file: %d bytes, not the %d pushed", len(media.Body), len(data))
	}
	media = e.Do("GET", "repos/alice/big/media/main/data.bin", nil, apitest.Basic(bob)).Expect(t, http.StatusOK)
	if !bytes.Equal(media.Body, data) {
		t.Fatalf("media with the ref in the path: %d bytes", len(media.Body))
	}
	readme := e.Do("GET", "repos/alice/big/raw/README.md", nil, apitest.Basic(alice)).Expect(t, http.StatusOK)
	if m := e.Do("GET", "repos/alice/big/media/README.md?ref=main", nil, apitest.Basic(alice)).Expect(t, http.StatusOK); !bytes.Equal(m.Body, readme.Body) {
		t.Fatalf("media of an ordinary file: %q, want %q", m.Body, readme.Body)
	}
	e.Do("GET", "repos/alice/big/media/data.bin", nil, nil).Expect(t, http.StatusNotFound)

	// A clone elsewhere smudges the content back, for bob too.
	other := t.TempDir()
	g2 := newGitCLI(t)
	g2.must("", "lfs", "install", "--skip-repo")
	g2.must(other, "clone", "-q", gitURL(e, "bob", bob.Password, "alice", "big"), "big")
	sameFile(t, filepath.Join(other, "big", "data.bin"), data)

	// Locks: alice locks, bob sees it and may not unlock it, even with
	// force (he is no administrator of the repository).
	g.must(clone, "lfs", "lock", "data.bin")
	bobClone := filepath.Join(other, "big")
	if out := g2.must(bobClone, "lfs", "locks"); !strings.Contains(out, "data.bin") || !strings.Contains(out, "alice") {
		t.Fatalf("git lfs locks: %q, want alice's lock of data.bin", out)
	}
	g2.refuse(bobClone, "lfs", "unlock", "data.bin")
	g2.refuse(bobClone, "lfs", "unlock", "--force", "data.bin")
	g.must(clone, "lfs", "unlock", "data.bin")
	if out := g.must(clone, "lfs", "locks"); strings.Contains(out, "data.bin") {
		t.Fatalf("git lfs locks after unlock: %q", out)
	}
	// bob locks; alice, the owner, removes his lock with force.
	g2.must(bobClone, "lfs", "lock", "data.bin")
	g.refuse(clone, "lfs", "unlock", "data.bin")
	g.must(clone, "lfs", "unlock", "--force", "data.bin")
	if out := g2.must(bobClone, "lfs", "locks"); strings.Contains(out, "data.bin") {
		t.Fatalf("git lfs locks after a forced unlock: %q", out)
	}

	// An object over the largest size is refused, and nothing lands.
	randomFile(t, clone, "huge.bin", 1<<20+1)
	g.must(clone, "add", "huge.bin")
	g.must(clone, "commit", "-q", "-m", "huge")
	g.refuse(clone, "push", "origin", "main")
	g.must(clone, "reset", "-q", "--hard", "HEAD~1")

	// Objects past the owner's total are refused: 300 KiB are used,
	// two of 700 KiB would pass 1.5 MiB.
	randomFile(t, clone, "b1.bin", 700<<10)
	randomFile(t, clone, "b2.bin", 700<<10)
	g.must(clone, "add", "b1.bin", "b2.bin")
	g.must(clone, "commit", "-q", "-m", "two")
	g.refuse(clone, "push", "origin", "main")
}

// TestLFSGitClientSSH drives the real git-lfs client over SSH, which
// authenticates to the HTTP API with git-lfs-authenticate's token.
func TestLFSGitClientSSH(t *testing.T) {
	t.Parallel()
	requireGitLFS(t)
	requireTools(t, "ssh")
	for _, b := range lfsBackends(t) {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel()
			lfsGitClientSSH(t, b)
		})
	}
}

func lfsGitClientSSH(t *testing.T, b apitest.Backend) {
	e := apitest.NewWithDeps(t, withBackend(b, nil))
	addr := startSSH(t, e)
	alice := e.CreateUser("alice", false)
	bob := e.CreateUser("bob", false)
	roCreateRepo(t, e, apitest.Basic(alice), map[string]any{"name": "big", "auto_init": true, "private": true})
	e.Do("PUT", "repos/alice/big/collaborators/bob", map[string]any{"permission": "read"}, apitest.Basic(alice)).Expect(t, http.StatusNoContent)
	aliceKey, bobKey := newSSHClientKey(t), newSSHClientKey(t)
	e.Do("POST", "user/keys", map[string]any{"title": "a", "key": aliceKey.line}, apitest.Basic(alice)).Expect(t, http.StatusCreated)
	e.Do("POST", "user/keys", map[string]any{"title": "b", "key": bobKey.line}, apitest.Basic(bob)).Expect(t, http.StatusCreated)
	url := "ssh://git@" + addr + "/alice/big.git"

	home := t.TempDir()
	lfs := func(key sshClientKey, dir string, args ...string) (string, error) {
		cmd := exec.Command("git", append([]string{"-c", "init.defaultBranch=main"}, args...)...)
		cmd.Dir = dir
		cmd.Env = []string{
			"HOME=" + home, "PATH=" + os.Getenv("PATH"), "GIT_CONFIG_NOSYSTEM=1", "GIT_TERMINAL_PROMPT=0", "LANG=C", "LC_ALL=C",
			"GIT_SSH_COMMAND=ssh -i " + key.file + " -o IdentitiesOnly=yes -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o BatchMode=yes -o LogLevel=ERROR",
			"GIT_AUTHOR_NAME=Tester", "GIT_AUTHOR_EMAIL=tester@example.com",
			"GIT_COMMITTER_NAME=Tester", "GIT_COMMITTER_EMAIL=tester@example.com",
		}
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	must := func(key sshClientKey, dir string, args ...string) string {
		t.Helper()
		out, err := lfs(key, dir, args...)
		if err != nil {
			t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return out
	}
	must(aliceKey, "", "lfs", "install", "--skip-repo")
	work := t.TempDir()
	must(aliceKey, work, "clone", "-q", url, "big")
	clone := filepath.Join(work, "big")
	must(aliceKey, clone, "lfs", "track", "*.bin")
	data := randomFile(t, clone, "data.bin", 200<<10)
	must(aliceKey, clone, "add", ".gitattributes", "data.bin")
	must(aliceKey, clone, "commit", "-q", "-m", "binary")
	must(aliceKey, clone, "push", "origin", "main")
	other := t.TempDir()
	must(bobKey, other, "clone", "-q", url, "big")
	sameFile(t, filepath.Join(other, "big", "data.bin"), data)

	must(aliceKey, clone, "lfs", "lock", "data.bin")
	if out := must(bobKey, filepath.Join(other, "big"), "lfs", "locks"); !strings.Contains(out, "data.bin") {
		t.Fatalf("git lfs locks over SSH: %q", out)
	}
	must(aliceKey, clone, "lfs", "unlock", "data.bin")

	// bob reads only: his push of an LFS object is refused.
	bobClone := filepath.Join(other, "big")
	randomFile(t, bobClone, "more.bin", 10<<10)
	must(bobKey, bobClone, "add", "more.bin")
	must(bobKey, bobClone, "commit", "-q", "-m", "more")
	if out, err := lfs(bobKey, bobClone, "push", "origin", "main"); err == nil {
		t.Fatalf("a read-only push over SSH succeeded:\n%s", out)
	}
}
