package apitest_test

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"repohost/apitest"
)

// TestActionsPushOverSSH: a branch push and a tag push made with the real
// git over the real ssh client start their workflows as pushes over HTTP
// do (both move refs through the one ref path): the runner is handed the
// pushed commit, the ref and the push event.
func TestActionsPushOverSSH(t *testing.T) {
	t.Parallel()
	requireTools(t, "git", "ssh")
	e := apitest.New(t)
	addr := startSSH(t, e)
	alice := e.CreateUser("alice", false)
	cred := apitest.Basic(alice)
	roCreateRepo(t, e, cred, map[string]any{"name": "ci", "auto_init": true, "private": true})
	key := newSSHClientKey(t)
	e.Do("POST", "user/keys", map[string]any{"title": "laptop", "key": key.line}, cred).Expect(t, http.StatusCreated)
	runner := registerRunner(t, e, regToken(t, e, "repos/alice/ci/actions/runners/registration-token", cred), "ssh-runner", "linux")

	work := t.TempDir()
	clone := filepath.Join(work, "ci")
	mustSSHGit(t, key, work, "clone", "-q", "ssh://git@"+addr+"/alice/ci.git", clone)
	workflow := "on:\n  push:\n    branches: [main]\n    tags: [\"v*\"]\njobs:\n  build:\n    runs-on: linux\n    steps:\n      - run: make\n"
	if err := os.MkdirAll(filepath.Join(clone, ".gitea", "workflows"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(clone, ".gitea", "workflows", "ci.yml"), []byte(workflow), 0o644); err != nil {
		t.Fatal(err)
	}
	mustSSHGit(t, key, clone, "add", ".")
	mustSSHGit(t, key, clone, "commit", "-q", "-m", "ci")
	sha := strings.TrimSpace(mustSSHGit(t, key, clone, "rev-parse", "HEAD"))
	mustSSHGit(t, key, clone, "push", "-q", "origin", "main")

	for _, want := range []struct{ ref, refName string }{{"refs/heads/main", "main"}, {"refs/tags/v1.0", "v1.0"}} {
		if want.ref == "refs/tags/v1.0" {
			mustSSHGit(t, key, clone, "tag", "v1.0")
			mustSSHGit(t, key, clone, "push", "-q", "origin", "v1.0")
		}
		task := runner.fetch(t)
		if task == nil {
			t.Fatalf("push of %s over SSH: the runner got no task", want.ref)
		}
		cx := task.Context.AsMap()
		if cx["sha"] != sha || cx["ref"] != want.ref || cx["ref_name"] != want.refName || cx["event_name"] != "push" || cx["repository"] != "alice/ci" {
			t.Errorf("push of %s over SSH: task context %v, want sha %s", want.ref, cx, sha)
		}
		if extra := runner.fetch(t); extra != nil {
			t.Fatalf("push of %s over SSH: a second task %d", want.ref, extra.Id)
		}
	}
	var runs struct {
		TotalCount int64 `json:"total_count"`
	}
	e.Do("GET", "repos/alice/ci/actions/runs?event=push", nil, cred).Expect(t, http.StatusOK).JSON(t, &runs)
	if runs.TotalCount != 2 {
		t.Errorf("push runs %d, want 2 (the branch and the tag)", runs.TotalCount)
	}
}
