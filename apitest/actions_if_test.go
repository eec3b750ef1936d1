package apitest_test

import (
	"fmt"
	"strings"
	"testing"

	runnerv1 "code.gitea.io/actions-proto-go/runner/v1"

	"repohost/apitest"
)

// ifWorkflow: b and e follow a plainly; c and d have a job-level if: and
// go to a runner whatever their needs' results, which the runner weighs.
const ifWorkflow = `on: [push]
jobs:
  a:
    runs-on: linux
    outputs:
      word: ${{ steps.s.outputs.word }}
    steps:
      - id: s
        run: echo a
  b:
    needs: a
    runs-on: linux
    steps:
      - run: echo b
  c:
    needs: a
    if: always()
    runs-on: linux
    steps:
      - run: echo c
  d:
    needs: [b]
    if: ${{ !cancelled() }}
    runs-on: linux
    steps:
      - run: echo d
  e:
    needs: [b]
    runs-on: linux
    steps:
      - run: echo e
`

// fetchJob fetches one task and tells which workflow job it runs.
func fetchJob(t *testing.T, r *testRunner) (*runnerv1.Task, string) {
	t.Helper()
	task := r.fetch(t)
	if task == nil {
		t.Fatal("no task")
	}
	jobID, _ := task.Context.AsMap()["job"].(string)
	return task, jobID
}

// TestActionsJobIf: when a job's need fails, a job without if: is
// skipped, and so is one whose need was skipped; a job with if: is queued
// and handed to the runner with its if: in the payload and its needs'
// results and outputs. When every need succeeds, all go to the runner.
func TestActionsJobIf(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	repo := newClonedRepo(t, e, "cond", nil)
	alice := apitest.Basic(repo.alice)
	r := registerRunner(t, e, regToken(t, e, "repos/alice/cond/actions/runners/registration-token", alice), "r", "linux")
	repo.git.commitFile(repo.clone, ".gitea/workflows/if.yml", ifWorkflow, "conditional jobs")
	repo.git.must(repo.clone, "push", "-q", "origin", "main")

	runJobs := func(run int64) string {
		return jobNames(listJobs(t, e, fmt.Sprintf("repos/alice/cond/actions/runs/%d/jobs", run), alice))
	}
	runs := listRuns(t, e, "repos/alice/cond/actions/runs", alice)
	if len(runs) != 1 {
		t.Fatalf("runs %s", mustJSON(runs))
	}
	first := runs[0].ID
	if got := runJobs(first); got != "a=queued/,b=waiting/,c=waiting/,d=waiting/,e=waiting/" {
		t.Fatalf("jobs after the push %s", got)
	}

	// a fails: b is skipped, so is e (its need b was skipped); c and d
	// have an if: and are queued.
	task, job := fetchJob(t, r)
	if job != "a" {
		t.Fatalf("first task runs %s", job)
	}
	r.log(t, task.Id, 0, true, "a failed")
	r.finish(t, task.Id, runnerv1.Result_RESULT_FAILURE, map[string]string{"word": "partial"})
	if got := runJobs(first); got != "a=completed/failure,b=completed/skipped,c=queued/,d=queued/,e=completed/skipped" {
		t.Fatalf("jobs after a failed %s", got)
	}
	if got := listJobs(t, e, "repos/alice/cond/actions/jobs?status=queued", alice); len(got) != 2 {
		t.Fatalf("queued jobs %s", jobNames(got))
	}
	seen := map[string]bool{}
	for i := 0; i < 2; i++ {
		task, job := fetchJob(t, r)
		seen[job] = true
		payload := string(task.WorkflowPayload)
		switch job {
		case "c":
			need := task.Needs["a"]
			if !strings.Contains(payload, "if: always()") || len(task.Needs) != 1 || need == nil ||
				need.Result != runnerv1.Result_RESULT_FAILURE || need.Outputs["word"] != "partial" {
				t.Fatalf("task c: needs %v payload\n%s", task.Needs, payload)
			}
			// The runner finds always() true and runs c.
			r.finish(t, task.Id, runnerv1.Result_RESULT_SUCCESS, nil)
		case "d":
			need := task.Needs["b"]
			if !strings.Contains(payload, "if: ${{ !cancelled() }}") || len(task.Needs) != 1 || need == nil ||
				need.Result != runnerv1.Result_RESULT_SKIPPED {
				t.Fatalf("task d: needs %v payload\n%s", task.Needs, payload)
			}
			// The runner evaluates d's if: and skips it.
			r.finish(t, task.Id, runnerv1.Result_RESULT_SKIPPED, nil)
		default:
			t.Fatalf("task for job %s", job)
		}
	}
	if !seen["c"] || !seen["d"] {
		t.Fatalf("tasks for %v", seen)
	}
	if extra := r.fetch(t); extra != nil {
		t.Fatalf("a task for job %v after the conditional jobs", extra.Context.AsMap()["job"])
	}
	if got := runJobs(first); got != "a=completed/failure,b=completed/skipped,c=completed/success,d=completed/skipped,e=completed/skipped" {
		t.Fatalf("jobs at the end of the first run %s", got)
	}
	runs = listRuns(t, e, "repos/alice/cond/actions/runs", alice)
	if runs[0].Status != "completed" || runs[0].Conclusion != "failure" {
		t.Fatalf("first run %s", mustJSON(runs[0]))
	}

	// Every need succeeds: each job goes to the runner after its needs.
	repo.git.commitFile(repo.clone, "x.txt", "x\n", "again")
	repo.git.must(repo.clone, "push", "-q", "origin", "main")
	runs = listRuns(t, e, "repos/alice/cond/actions/runs", alice)
	second := runs[0].ID
	order := []string{}
	for i := 0; i < 5; i++ {
		task, job := fetchJob(t, r)
		order = append(order, job)
		for need, n := range task.Needs {
			if n.Result != runnerv1.Result_RESULT_SUCCESS {
				t.Fatalf("job %s: need %s %v", job, need, n.Result)
			}
		}
		if job == "c" && task.Needs["a"].Outputs["word"] != "ok" {
			t.Fatalf("job c needs %v", task.Needs)
		}
		out := map[string]string{}
		if job == "a" {
			out["word"] = "ok"
		}
		r.finish(t, task.Id, runnerv1.Result_RESULT_SUCCESS, out)
	}
	if got := strings.Join(order, ","); got != "a,b,c,d,e" {
		t.Fatalf("jobs ran in the order %s", got)
	}
	if got := runJobs(second); got != "a=completed/success,b=completed/success,c=completed/success,d=completed/success,e=completed/success" {
		t.Fatalf("jobs of the second run %s", got)
	}
	if runs := listRuns(t, e, "repos/alice/cond/actions/runs?status=success", alice); len(runs) != 1 || runs[0].ID != second {
		t.Fatalf("successful runs %s", mustJSON(runs))
	}
}
