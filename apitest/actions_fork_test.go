package apitest_test

import (
	"fmt"
	"maps"
	"net/http"
	"path/filepath"
	"slices"
	"testing"

	runnerv1 "code.gitea.io/actions-proto-go/runner/v1"

	"repohost/apitest"
	"repohost/models"
)

// TestActionsPullRequestFromFork: a pull request from a fork runs its
// pull_request workflow when it is opened, at the fork's head commit on
// refs/pull/N/head, with the workflow file read from that commit (the base
// branch has none), and a runner of the base repository gets the task;
// two quick pushes to the fork's branch run at each pushed commit, and
// reopening runs at the head again.
func TestActionsPullRequestFromFork(t *testing.T) {
	t.Parallel()
	p := newPREnv(t, nil)
	alice := p.cred
	bob := p.e.CreateUser("bob", false)
	bobToken := p.e.Token(bob, "write:repository")
	bobCred := apitest.TokenCred(bobToken)
	var fork models.Repository
	p.e.Do("POST", "repos/alice/proj/forks", map[string]any{}, bobCred).Expect(t, http.StatusAccepted).JSON(t, &fork)

	clone := filepath.Join(p.work, "bobproj")
	p.git.must(p.work, "clone", "-q", gitURL(p.e, "bob", bobToken, "bob", "proj"), clone)
	p.git.must(clone, "checkout", "-q", "-b", "feat")
	onPull := "on:\n  pull_request:\n    branches: [main]\njobs:\n  check:\n    runs-on: linux\n    steps:\n      - run: echo from fork\n"
	head := p.git.commitFile(clone, ".gitea/workflows/pr.yml", onPull, "pr workflow on the fork")
	p.git.must(clone, "push", "-q", "origin", "feat")

	runs := "repos/alice/proj/actions/runs?event=pull_request"
	if got := listRuns(t, p.e, runs, alice); len(got) != 0 {
		t.Fatalf("pull_request runs before the pull request %s", mustJSON(got))
	}
	var pr models.PullRequest
	p.e.Do("POST", "repos/alice/proj/pulls", map[string]any{"head": "bob:feat", "base": "main", "title": "from the fork"}, bobCred).
		Expect(t, http.StatusCreated).JSON(t, &pr)
	ref := fmt.Sprintf("refs/pull/%d/head", pr.Index)
	waitFor(t, func() bool { return len(listRuns(t, p.e, runs, alice)) == 1 })
	got := listRuns(t, p.e, runs, alice)
	if got[0].HeadSha != head || got[0].Path != "pr.yml@"+ref || got[0].Event != "pull_request" {
		t.Fatalf("run after opening the pull request %s, head %s", mustJSON(got), head)
	}

	// The base repository's secrets are withheld from code its author
	// did not write (the task's own token stays); its variables are not
	// secret and reach it.
	p.e.Do("PUT", "repos/alice/proj/actions/secrets/DEPLOY_KEY", map[string]any{"data": secretValue}, alice).Expect(t, http.StatusCreated)
	p.e.Do("POST", "repos/alice/proj/actions/variables/MODE", map[string]any{"value": "ci"}, alice).Expect(t, http.StatusCreated)
	r := registerRunner(t, p.e, regToken(t, p.e, "repos/alice/proj/actions/runners/registration-token", alice), "r", "linux")
	task := r.fetch(t)
	if task == nil {
		t.Fatal("the runner got no task for the fork's pull request")
	}
	if len(task.Secrets) != 2 || task.Secrets["GITEA_TOKEN"] == "" || task.Secrets["GITHUB_TOKEN"] == "" || task.Vars["MODE"] != "ci" {
		t.Fatalf("a fork's task has secrets %v and variables %v", slices.Sorted(maps.Keys(task.Secrets)), task.Vars)
	}
	cx := task.Context.AsMap()
	if cx["event_name"] != "pull_request" || cx["ref"] != ref || cx["sha"] != head || cx["head_ref"] != "feat" || cx["base_ref"] != "main" {
		t.Fatalf("task context %s", mustJSON(cx))
	}
	pull, _ := cx["event"].(map[string]any)["pull_request"].(map[string]any)
	if pull == nil || pull["head"].(map[string]any)["label"] != "bob:feat" {
		t.Fatalf("task event %s", mustJSON(cx["event"]))
	}
	r.finish(t, task.Id, runnerv1.Result_RESULT_SUCCESS, nil)
	if extra := r.fetch(t); extra != nil {
		t.Fatalf("a second task %d after one run", extra.Id)
	}

	// Two pushes to the fork's branch, one right after the other: a run
	// at each pushed commit.
	var pushed []string
	for _, content := range []string{"one\n", "two\n"} {
		pushed = append(pushed, p.git.commitFile(clone, "a.txt", content, "a.txt "+content))
		p.git.must(clone, "push", "-q", "origin", "feat")
	}
	waitFor(t, func() bool { return len(listRuns(t, p.e, runs, alice)) == 3 })
	got = listRuns(t, p.e, runs, alice)
	if got[0].HeadSha != pushed[1] || got[1].HeadSha != pushed[0] || got[0].Path != "pr.yml@"+ref {
		t.Fatalf("runs after two pushes %s, pushed %v", mustJSON(got), pushed)
	}
	for _, want := range pushed {
		task := r.fetch(t)
		if task == nil || task.Context.AsMap()["sha"] != want {
			t.Fatalf("task for the push of %s: %v", want, task)
		}
		r.finish(t, task.Id, runnerv1.Result_RESULT_SUCCESS, nil)
	}
	head = pushed[1]

	// Closing starts nothing; reopening runs the workflow again.
	path := fmt.Sprintf("repos/alice/proj/pulls/%d", pr.Index)
	p.e.Do("PATCH", path, map[string]any{"state": "closed"}, alice).Expect(t, http.StatusCreated)
	p.e.Do("PATCH", path, map[string]any{"state": "open"}, alice).Expect(t, http.StatusCreated)
	waitFor(t, func() bool { return len(listRuns(t, p.e, runs, alice)) == 4 })
	if got := listRuns(t, p.e, runs, alice); got[0].HeadSha != head || got[0].Path != "pr.yml@"+ref {
		t.Fatalf("run after reopening %s", mustJSON(got))
	}
	task = r.fetch(t)
	if task == nil || task.Context.AsMap()["sha"] != head {
		t.Fatalf("task after reopening %v", task)
	}
	r.finish(t, task.Id, runnerv1.Result_RESULT_SUCCESS, nil)
}
