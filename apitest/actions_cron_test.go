package apitest_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	runnerv1 "code.gitea.io/actions-proto-go/runner/v1"
	"connectrpc.com/connect"

	"repohost/apitest"
	"repohost/impl/app"
	"repohost/store"
)

// shiftedClock is the system clock moved forward by a duration the test
// sets, so that tasks and jobs age without waiting.
type shiftedClock struct{ offset atomic.Int64 }

func (c *shiftedClock) Now() time.Time {
	return store.SystemClock{}.Now().Add(time.Duration(c.offset.Load()))
}

func (c *shiftedClock) Precise() time.Time {
	return store.SystemClock{}.Precise().Add(time.Duration(c.offset.Load()))
}

func (c *shiftedClock) set(d time.Duration) { c.offset.Store(int64(d)) }

// progress reports that a task is still running, as a runner does between
// steps.
func (r *testRunner) progress(t *testing.T, taskID int64) *runnerv1.TaskState {
	t.Helper()
	res, err := r.client.UpdateTask(context.Background(), connect.NewRequest(&runnerv1.UpdateTaskRequest{
		State: &runnerv1.TaskState{Id: taskID}}))
	if err != nil {
		t.Fatalf("%s progress: %v", r.name, err)
	}
	return res.Msg.State
}

const endlessWorkflow = `on: [push]
jobs:
  long:
    runs-on: linux
    steps:
      - run: sleep infinity
  orphan:
    runs-on: gpu
    steps:
      - run: nvidia-smi
  after:
    needs: orphan
    runs-on: linux
    steps:
      - run: echo after
`

// TestActionsEndlessTasksAndAbandonedJobs: stop_endless_tasks fails a
// task that has run longer than the endless-task timeout even though its
// runner keeps reporting (stop_zombie_tasks and cleanup_actions leave it;
// stop_zombie_tasks fails a task whose runner fell silent);
// cancel_abandoned_jobs cancels jobs that have waited unchanged longer
// than the abandoned-job timeout (one no runner matches, and the one that
// needs it), and leaves younger ones; runs follow their jobs. Both tasks
// run through POST /admin/cron/{task}, with the server's clock moved on.
func TestActionsEndlessTasksAndAbandonedJobs(t *testing.T) {
	t.Parallel()
	clock := &shiftedClock{}
	e := apitest.NewWithDeps(t, func(d *app.Deps) { d.Clock = clock })
	if d := e.Deps.Config; d.ActionsEndlessTaskTimeout != 3*time.Hour || d.ActionsAbandonedJobTimeout != 24*time.Hour || d.ActionsZombieTimeout != 10*time.Minute {
		t.Fatalf("default timeouts: endless %v, abandoned %v, zombie %v", d.ActionsEndlessTaskTimeout, d.ActionsAbandonedJobTimeout, d.ActionsZombieTimeout)
	}
	repo := newClonedRepo(t, e, "long", nil)
	alice := apitest.Basic(repo.alice)
	r := registerRunner(t, e, regToken(t, e, "repos/alice/long/actions/runners/registration-token", alice), "r", "linux")
	repo.git.commitFile(repo.clone, ".gitea/workflows/long.yml", endlessWorkflow, "long")
	repo.git.must(repo.clone, "push", "-q", "origin", "main")
	runs := listRuns(t, e, "repos/alice/long/actions/runs", alice)
	if len(runs) != 1 {
		t.Fatalf("runs %s", mustJSON(runs))
	}
	first := runs[0].ID
	jobsOf := func(run int64) string {
		return jobNames(listJobs(t, e, fmt.Sprintf("repos/alice/long/actions/runs/%d/jobs", run), alice))
	}
	task := r.fetch(t)
	if task == nil || task.Context.AsMap()["job"] != "long" {
		t.Fatalf("task %v", task)
	}

	// The runner keeps reporting for three hours, last with a log row.
	for _, at := range []time.Duration{time.Hour, 2 * time.Hour} {
		clock.set(at)
		if st := r.progress(t, task.Id); st.Result != runnerv1.Result_RESULT_UNSPECIFIED {
			t.Fatalf("task ended at %v: %v", at, st.Result)
		}
	}
	clock.set(3 * time.Hour)
	if ack := r.log(t, task.Id, 0, false, "still going"); ack != 1 {
		t.Fatalf("log ack %d", ack)
	}
	clock.set(3*time.Hour + 5*time.Minute)
	// Not a zombie: its runner sent a log row five minutes ago.
	runCron(t, e, "cleanup_actions")
	runCron(t, e, "stop_zombie_tasks")
	if got := jobsOf(first); got != "long=in_progress/,orphan=queued/,after=waiting/" {
		t.Fatalf("jobs after the zombie checks %s", got)
	}
	runCron(t, e, "stop_endless_tasks")
	waitFor(t, func() bool { return jobsOf(first) == "long=completed/failure,orphan=queued/,after=waiting/" })
	if st := r.progress(t, task.Id); st.Result != runnerv1.Result_RESULT_FAILURE {
		t.Fatalf("the runner is told %v for its stopped task", st.Result)
	}
	if got := listRuns(t, e, "repos/alice/long/actions/runs?status=queued", alice); len(got) != 1 || got[0].ID != first {
		t.Fatalf("queued runs after stop_endless_tasks %s", mustJSON(got))
	}

	// A second run starts three hours in; a day after the first push only
	// the first run's jobs have waited a whole day.
	repo.git.commitFile(repo.clone, "x.txt", "x\n", "second")
	repo.git.must(repo.clone, "push", "-q", "origin", "main")
	runs = listRuns(t, e, "repos/alice/long/actions/runs", alice)
	second := runs[0].ID
	if second == first {
		t.Fatal("no second run")
	}
	// Its first job's runner falls silent: stop_zombie_tasks fails it
	// a quarter of an hour later.
	if task := r.fetch(t); task == nil || task.Context.AsMap()["run_id"] != fmt.Sprint(second) {
		t.Fatalf("task of the second run %v", task)
	}
	clock.set(3*time.Hour + 20*time.Minute)
	runCron(t, e, "stop_zombie_tasks")
	waitFor(t, func() bool { return jobsOf(second) == "long=completed/failure,orphan=queued/,after=waiting/" })

	clock.set(24*time.Hour + time.Minute)
	runCron(t, e, "cancel_abandoned_jobs")
	waitFor(t, func() bool {
		return jobsOf(first) == "long=completed/failure,orphan=completed/cancelled,after=completed/cancelled"
	})
	var run struct {
		Status, Conclusion string
	}
	e.Do("GET", fmt.Sprintf("repos/alice/long/actions/runs/%d", first), nil, alice).Expect(t, 200).JSON(t, &run)
	if run.Status != "completed" || run.Conclusion != "cancelled" {
		t.Fatalf("first run %+v", run)
	}
	if got := jobsOf(second); got != "long=completed/failure,orphan=queued/,after=waiting/" {
		t.Fatalf("jobs of the younger run %s", got)
	}
	// A day after the second push its jobs go too, and the runner gets
	// nothing more.
	clock.set(27*time.Hour + 10*time.Minute)
	runCron(t, e, "cancel_abandoned_jobs")
	waitFor(t, func() bool {
		return jobsOf(second) == "long=completed/failure,orphan=completed/cancelled,after=completed/cancelled"
	})
	if task := r.fetch(t); task != nil {
		t.Fatalf("task %d after every job was cancelled", task.Id)
	}
	if got := listRuns(t, e, "repos/alice/long/actions/runs?status=cancelled", alice); len(got) != 2 {
		t.Fatalf("cancelled runs %s", mustJSON(got))
	}
}
