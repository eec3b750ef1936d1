package apitest_test

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/crypto/ssh"

	"repohost/apitest"
	"repohost/impl/gitssh"
)

// requireTools skips t when one of the programs it drives is missing.
func requireTools(t *testing.T, tools ...string) {
	t.Helper()
	for _, tool := range tools {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skip(tool + " is not installed")
		}
	}
}

// startSSH serves git over SSH for e on 127.0.0.1 and returns the
// address.
func startSSH(t *testing.T, e *apitest.Env) string {
	t.Helper()
	hostKey, err := gitssh.LoadHostKey(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	srv := gitssh.New(e.Deps, hostKey)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	return ln.Addr().String()
}

// sshClientKey is an ed25519 key written where ssh -i reads it, with the
// line to upload.
type sshClientKey struct {
	file, line string
}

func newSSHClientKey(t *testing.T) sshClientKey {
	t.Helper()
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	block, err := ssh.MarshalPrivateKey(priv, "")
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "id_ed25519")
	if err := os.WriteFile(file, pem.EncodeToMemory(block), 0o600); err != nil {
		t.Fatal(err)
	}
	signer, _ := ssh.NewSignerFromKey(priv)
	return sshClientKey{file: file, line: strings.TrimSpace(string(ssh.MarshalAuthorizedKey(signer.PublicKey())))}
}

// sshGit runs the real git over the real ssh client with key.
func sshGit(t *testing.T, key sshClientKey, dir string, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "init.defaultBranch=main"}, args...)...)
	cmd.Dir = dir
	cmd.Env = []string{
		"HOME=" + t.TempDir(), "PATH=" + os.Getenv("PATH"), "GIT_CONFIG_NOSYSTEM=1", "GIT_TERMINAL_PROMPT=0", "LANG=C", "LC_ALL=C",
		"GIT_SSH_COMMAND=ssh -i " + key.file + " -o IdentitiesOnly=yes -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o BatchMode=yes -o LogLevel=ERROR",
		"GIT_AUTHOR_NAME=Tester", "GIT_AUTHOR_EMAIL=tester@example.com",
		"GIT_COMMITTER_NAME=Tester", "GIT_COMMITTER_EMAIL=tester@example.com",
	}
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func mustSSHGit(t *testing.T, key sshClientKey, dir string, args ...string) string {
	t.Helper()
	out, err := sshGit(t, key, dir, args...)
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

func refuseSSHGit(t *testing.T, key sshClientKey, dir string, args ...string) string {
	t.Helper()
	out, err := sshGit(t, key, dir, args...)
	if err == nil {
		t.Fatalf("git %s succeeded, want a refusal\n%s", strings.Join(args, " "), out)
	}
	return out
}

func TestGitSSH(t *testing.T) {
	t.Parallel()
	requireTools(t, "git", "ssh")
	e := apitest.New(t)
	addr := startSSH(t, e)
	alice := e.CreateUser("alice", false)
	bob := e.CreateUser("bob", false)
	roCreateRepo(t, e, apitest.Basic(alice), map[string]any{"name": "proj", "auto_init": true, "private": true})
	roCreateRepo(t, e, apitest.Basic(alice), map[string]any{"name": "other", "auto_init": true, "private": true})
	url := func(repo string) string { return "ssh://git@" + addr + "/alice/" + repo + ".git" }

	aliceKey, bobKey, deployRO, deployRW, unknown := newSSHClientKey(t), newSSHClientKey(t), newSSHClientKey(t), newSSHClientKey(t), newSSHClientKey(t)
	e.Do("POST", "user/keys", map[string]any{"title": "a", "key": aliceKey.line}, apitest.Basic(alice)).Expect(t, http.StatusCreated)
	e.Do("POST", "user/keys", map[string]any{"title": "b", "key": bobKey.line}, apitest.Basic(bob)).Expect(t, http.StatusCreated)
	e.Do("POST", "repos/alice/proj/keys", map[string]any{"title": "ro", "key": deployRO.line, "read_only": true}, apitest.Basic(alice)).Expect(t, http.StatusCreated)
	e.Do("POST", "repos/alice/proj/keys", map[string]any{"title": "rw", "key": deployRW.line, "read_only": false}, apitest.Basic(alice)).Expect(t, http.StatusCreated)

	// The owner clones and pushes.
	work := t.TempDir()
	mustSSHGit(t, aliceKey, work, "clone", "-q", url("proj"), "proj")
	clone := filepath.Join(work, "proj")
	if _, err := os.Stat(filepath.Join(clone, "README.md")); err != nil {
		t.Fatalf("clone over SSH has no README.md: %v", err)
	}
	if err := os.WriteFile(filepath.Join(clone, "a.txt"), []byte("one\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	mustSSHGit(t, aliceKey, clone, "add", "a.txt")
	mustSSHGit(t, aliceKey, clone, "commit", "-q", "-m", "one")
	mustSSHGit(t, aliceKey, clone, "push", "-q", "origin", "main")
	head := strings.TrimSpace(mustSSHGit(t, aliceKey, clone, "rev-parse", "HEAD"))
	if got := ghBranch(t, e, apitest.Basic(alice), "alice", "proj", "main"); got.Commit == nil || got.Commit.ID != head {
		t.Fatalf("main after an SSH push: %+v, want %s", got.Commit, head)
	}
	// A branch created and deleted over SSH (a push with no pack).
	mustSSHGit(t, aliceKey, clone, "push", "-q", "origin", "main:topic")
	mustSSHGit(t, aliceKey, clone, "push", "-q", "origin", ":topic")
	e.Do("GET", "repos/alice/proj/branches/topic", nil, apitest.Basic(alice)).Expect(t, http.StatusNotFound)

	// Branch protection applies as over HTTP.
	e.Do("POST", "repos/alice/proj/branch_protections", map[string]any{"rule_name": "main"}, apitest.Basic(alice)).Expect(t, http.StatusCreated)
	mustSSHGit(t, aliceKey, clone, "commit", "-q", "--allow-empty", "-m", "two")
	out := refuseSSHGit(t, aliceKey, clone, "push", "origin", "main")
	if !strings.Contains(out, "not allowed to push to protected branch main") {
		t.Fatalf("push to a protected branch over SSH: %s", out)
	}

	// Bob may not see alice's private repository: as if it did not exist.
	out = refuseSSHGit(t, bobKey, work, "clone", "-q", url("proj"), "bobs")
	if !strings.Contains(out, "repository not found") {
		t.Fatalf("bob cloning a private repository: %s", out)
	}

	// Deploy keys: both fetch; the read-only one cannot push; neither
	// reaches another repository.
	mustSSHGit(t, deployRO, work, "clone", "-q", url("proj"), "ro")
	out = refuseSSHGit(t, deployRO, filepath.Join(work, "ro"), "push", "origin", "HEAD:refs/heads/from-ro")
	if !strings.Contains(out, "read-only") {
		t.Fatalf("push with a read-only deploy key: %s", out)
	}
	mustSSHGit(t, deployRW, work, "clone", "-q", url("proj"), "rw")
	mustSSHGit(t, deployRW, filepath.Join(work, "rw"), "push", "-q", "origin", "HEAD:refs/heads/from-rw")
	e.Do("GET", "repos/alice/proj/branches/from-rw", nil, apitest.Basic(alice)).Expect(t, http.StatusOK)
	out = refuseSSHGit(t, deployRW, work, "clone", "-q", url("other"), "other")
	if !strings.Contains(out, "repository not found") {
		t.Fatalf("deploy key on another repository: %s", out)
	}

	// An unknown key does not get in.
	out = refuseSSHGit(t, unknown, work, "clone", "-q", url("proj"), "nope")
	if !strings.Contains(out, "Permission denied") {
		t.Fatalf("unknown key: %s", out)
	}
}
