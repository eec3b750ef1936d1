package apitest_test

import (
	"fmt"
	"testing"

	runnerv1 "code.gitea.io/actions-proto-go/runner/v1"
)

// TestActionsPullRequest: opening a pull request into main and pushing to
// its head branch run the pull_request workflow at the head commit on
// refs/pull/N/head; a pull request into another base and a push-only
// workflow do not; the runner's task carries the pull request event.
func TestActionsPullRequest(t *testing.T) {
	t.Parallel()
	p := newPREnv(t, nil)
	alice := p.cred
	onPull := "on:\n  pull_request:\n    branches: [main]\njobs:\n  check:\n    runs-on: linux\n    steps:\n      - run: echo pr\n"
	onPush := "on:\n  push:\n    branches: [main]\njobs:\n  build:\n    runs-on: linux\n    steps:\n      - run: echo push\n"
	p.git.commitFile(p.clone, ".gitea/workflows/pr.yml", onPull, "pr workflow")
	p.git.commitFile(p.clone, ".gitea/workflows/push.yml", onPush, "push workflow")
	p.git.must(p.clone, "push", "-q", "origin", "main")
	runs := "repos/alice/proj/actions/runs"
	if got := listRuns(t, p.e, runs, alice); len(got) != 1 || got[0].Event != "push" {
		t.Fatalf("runs after the push to main %s", mustJSON(got))
	}
	p.branch(t, "other", "main", "base.txt", "other base")
	prRuns := runs + "?event=pull_request"
	if got := listRuns(t, p.e, prRuns, alice); len(got) != 0 {
		t.Fatalf("pull_request runs before any pull request %s", mustJSON(got))
	}

	head := p.branch(t, "feature", "main", "feature.txt", "one")
	pr := p.openPR(t, alice, "feature", "main", "a feature")
	ref := fmt.Sprintf("refs/pull/%d/head", pr.Index)
	got := listRuns(t, p.e, prRuns, alice)
	if len(got) != 1 || got[0].HeadSha != head || got[0].Path != "pr.yml@"+ref || got[0].Event != "pull_request" {
		t.Fatalf("runs after opening the pull request %s, head %s", mustJSON(got), head)
	}

	// A push to the head branch synchronizes the pull request.
	moved := p.push(t, "feature", "feature.txt", "two")
	waitFor(t, func() bool { return len(listRuns(t, p.e, prRuns, alice)) == 2 })
	got = listRuns(t, p.e, prRuns, alice)
	if got[0].HeadSha != moved || got[0].Path != "pr.yml@"+ref {
		t.Fatalf("runs after the synchronizing push %s, head %s", mustJSON(got), moved)
	}

	// A pull request into another base matches no branches filter.
	p.branch(t, "side", "main", "side.txt", "side")
	p.openPR(t, alice, "side", "other", "into other")
	if got := listRuns(t, p.e, prRuns, alice); len(got) != 2 {
		t.Fatalf("runs after a pull request into other %s", mustJSON(got))
	}
	// The push-only workflow never ran for a pull request.
	for _, r := range listRuns(t, p.e, runs, alice) {
		if r.Event != "pull_request" && r.Path != "push.yml@refs/heads/main" {
			t.Fatalf("unexpected run %s", mustJSON(r))
		}
	}

	r := registerRunner(t, p.e, regToken(t, p.e, "repos/alice/proj/actions/runners/registration-token", alice), "r", "linux")
	seen := 0
	for task := r.fetch(t); task != nil; task = r.fetch(t) {
		cx := task.Context.AsMap()
		if cx["event_name"] == "pull_request" {
			seen++
			event := cx["event"].(map[string]any)
			pull, _ := event["pull_request"].(map[string]any)
			if cx["ref"] != ref || cx["ref_name"] != fmt.Sprint(pr.Index) || cx["ref_type"] != "pull" || cx["head_ref"] != "feature" || cx["base_ref"] != "main" ||
				event["number"] != float64(pr.Index) || pull == nil ||
				pull["head"].(map[string]any)["ref"] != "feature" || pull["base"].(map[string]any)["ref"] != "main" {
				t.Fatalf("pull request task context %s", mustJSON(cx))
			}
		}
		r.finish(t, task.Id, runnerv1.Result_RESULT_SUCCESS, nil)
	}
	if seen != 2 {
		t.Fatalf("%d pull_request tasks, want 2", seen)
	}
}
