package apitest_test

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"repohost/apitest"
)

// TestDeployKeyPushWhitelist: a read-write deploy key pushes to a branch
// with a push whitelist only when the rule lists deploy keys, over the
// real git and ssh.
func TestDeployKeyPushWhitelist(t *testing.T) {
	t.Parallel()
	requireTools(t, "git", "ssh")
	e := apitest.New(t)
	addr := startSSH(t, e)
	alice := e.CreateUser("alice", false)
	cred := apitest.Basic(alice)
	roCreateRepo(t, e, cred, map[string]any{"name": "proj", "auto_init": true})
	key := newSSHClientKey(t)
	e.Do("POST", "repos/alice/proj/keys", map[string]any{"title": "ci", "key": key.line, "read_only": false}, cred).Expect(t, http.StatusCreated)
	e.Do("POST", "repos/alice/proj/branch_protections", map[string]any{
		"rule_name": "main", "enable_push": true, "enable_push_whitelist": true, "push_whitelist_usernames": []string{"alice"},
	}, cred).Expect(t, http.StatusCreated)

	work := t.TempDir()
	mustSSHGit(t, key, work, "clone", "-q", "ssh://git@"+addr+"/alice/proj.git", "proj")
	clone := filepath.Join(work, "proj")
	if err := os.WriteFile(filepath.Join(clone, "ci.txt"), []byte("built\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	mustSSHGit(t, key, clone, "add", "ci.txt")
	mustSSHGit(t, key, clone, "commit", "-q", "-m", "ci")
	if out := refuseSSHGit(t, key, clone, "push", "origin", "main"); !strings.Contains(out, "not allowed to push to protected branch main") {
		t.Fatalf("deploy key push past a user whitelist: %s", out)
	}

	e.Do("PATCH", "repos/alice/proj/branch_protections/main", map[string]any{
		"enable_push": true, "enable_push_whitelist": true, "push_whitelist_deploy_keys": true,
	}, cred).Expect(t, http.StatusOK)
	mustSSHGit(t, key, clone, "push", "-q", "origin", "main")
	want := strings.TrimSpace(mustSSHGit(t, key, clone, "rev-parse", "HEAD"))
	if got := ghBranch(t, e, cred, "alice", "proj", "main").Commit.ID; got != want {
		t.Fatalf("main at %s, want %s", got, want)
	}
}
