package apitest_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	runnerv1 "code.gitea.io/actions-proto-go/runner/v1"
	"code.gitea.io/actions-proto-go/runner/v1/runnerv1connect"
	"connectrpc.com/connect"
	"google.golang.org/protobuf/types/known/timestamppb"

	"repohost/apitest"
	"repohost/impl/app"
	"repohost/impl/events"
	"repohost/models"
)

// testRunner is a runner written on the official protocol package's
// generated client, as act_runner is.
type testRunner struct {
	name   string
	id     int64
	uuid   string
	token  string
	client runnerv1connect.RunnerServiceClient
}

// runnerHeaders authenticates every call but Register with the runner's
// uuid and token.
func (r *testRunner) headers() connect.UnaryInterceptorFunc {
	return func(next connect.UnaryFunc) connect.UnaryFunc {
		return func(ctx context.Context, req connect.AnyRequest) (connect.AnyResponse, error) {
			if r.uuid != "" {
				req.Header().Set("x-runner-uuid", r.uuid)
				req.Header().Set("x-runner-token", r.token)
			}
			return next(ctx, req)
		}
	}
}

func newTestRunner(e *apitest.Env, name string) *testRunner {
	r := &testRunner{name: name}
	r.client = runnerv1connect.NewRunnerServiceClient(http.DefaultClient, e.URL+"api/actions", connect.WithInterceptors(r.headers()))
	return r
}

// registerRunner registers a runner with a registration token and
// declares its labels.
func registerRunner(t *testing.T, e *apitest.Env, regToken, name string, labels ...string) *testRunner {
	t.Helper()
	r := newTestRunner(e, name)
	res, err := r.client.Register(context.Background(), connect.NewRequest(&runnerv1.RegisterRequest{
		Name: name, Token: regToken, Version: "v0.2.11", Labels: labels}))
	if err != nil {
		t.Fatalf("register %s: %v", name, err)
	}
	got := res.Msg.Runner
	if got.Name != name || got.Uuid == "" || got.Token == "" || got.Id == 0 {
		t.Fatalf("registered %+v", got)
	}
	r.id, r.uuid, r.token = got.Id, got.Uuid, got.Token
	dec, err := r.client.Declare(context.Background(), connect.NewRequest(&runnerv1.DeclareRequest{Version: "v0.2.12", Labels: labels}))
	if err != nil {
		t.Fatalf("declare %s: %v", name, err)
	}
	if dec.Msg.Runner.Version != "v0.2.12" || strings.Join(dec.Msg.Runner.Labels, ",") != strings.Join(labels, ",") {
		t.Fatalf("declared %+v", dec.Msg.Runner)
	}
	return r
}

// fetch asks for a task; nil when none is free for this runner.
func (r *testRunner) fetch(t testing.TB) *runnerv1.Task {
	t.Helper()
	res, err := r.client.FetchTask(context.Background(), connect.NewRequest(&runnerv1.FetchTaskRequest{}))
	if err != nil {
		t.Fatalf("%s fetch: %v", r.name, err)
	}
	return res.Msg.Task
}

// log sends rows starting at line index and returns the acknowledged index.
func (r *testRunner) log(t testing.TB, taskID, index int64, noMore bool, lines ...string) int64 {
	t.Helper()
	rows := make([]*runnerv1.LogRow, len(lines))
	for i, l := range lines {
		rows[i] = &runnerv1.LogRow{Time: timestamppb.Now(), Content: l}
	}
	res, err := r.client.UpdateLog(context.Background(), connect.NewRequest(&runnerv1.UpdateLogRequest{TaskId: taskID, Index: index, Rows: rows, NoMore: noMore}))
	if err != nil {
		t.Fatalf("%s log: %v", r.name, err)
	}
	return res.Msg.AckIndex
}

// finish reports the task's result with one step per log line range.
func (r *testRunner) finish(t testing.TB, taskID int64, result runnerv1.Result, outputs map[string]string) *runnerv1.UpdateTaskResponse {
	t.Helper()
	now := timestamppb.Now()
	res, err := r.client.UpdateTask(context.Background(), connect.NewRequest(&runnerv1.UpdateTaskRequest{
		State: &runnerv1.TaskState{Id: taskID, Result: result, StartedAt: now, StoppedAt: now,
			Steps: []*runnerv1.StepState{{Id: 0, Result: result, StartedAt: now, StoppedAt: now, LogIndex: 0, LogLength: 1}}},
		Outputs: outputs}))
	if err != nil {
		t.Fatalf("%s update task: %v", r.name, err)
	}
	return res.Msg
}

func regToken(t *testing.T, e *apitest.Env, path string, cred apitest.Cred) string {
	t.Helper()
	var tok models.RegistrationToken
	e.Do("POST", path, nil, cred).Expect(t, http.StatusOK).JSON(t, &tok)
	if len(tok.Token) < 20 {
		t.Fatalf("registration token %q", tok.Token)
	}
	return tok.Token
}

func listRunners(t *testing.T, e *apitest.Env, path string, cred apitest.Cred) map[string]*models.ActionRunner {
	t.Helper()
	var out models.ActionRunnersResponse
	e.Do("GET", path, nil, cred).Expect(t, http.StatusOK).JSON(t, &out)
	if int(out.TotalCount) != len(out.Entries) {
		t.Fatalf("%s: total_count %d for %d runners", path, out.TotalCount, len(out.Entries))
	}
	m := map[string]*models.ActionRunner{}
	for _, r := range out.Entries {
		m[r.Name] = r
	}
	return m
}

func runnerNames(m map[string]*models.ActionRunner) string {
	var names []string
	for _, n := range []string{"global", "alice-repo", "alice-user", "acme-org", "bob-user"} {
		if m[n] != nil {
			names = append(names, n)
		}
	}
	return strings.Join(names, ",")
}

func listJobs(t *testing.T, e *apitest.Env, path string, cred apitest.Cred) []*models.ActionWorkflowJob {
	t.Helper()
	var out models.ActionWorkflowJobsResponse
	resp := e.Do("GET", path, nil, cred).Expect(t, http.StatusOK)
	resp.JSON(t, &out)
	if resp.Header.Get("X-Total-Count") != fmt.Sprint(out.TotalCount) {
		t.Fatalf("%s: X-Total-Count %q, total_count %d", path, resp.Header.Get("X-Total-Count"), out.TotalCount)
	}
	return out.Entries
}

func listRuns(t *testing.T, e *apitest.Env, path string, cred apitest.Cred) []*models.ActionWorkflowRun {
	t.Helper()
	var out models.ActionWorkflowRunsResponse
	resp := e.Do("GET", path, nil, cred).Expect(t, http.StatusOK)
	resp.JSON(t, &out)
	if resp.Header.Get("X-Total-Count") != fmt.Sprint(out.TotalCount) {
		t.Fatalf("%s: X-Total-Count %q, total_count %d", path, resp.Header.Get("X-Total-Count"), out.TotalCount)
	}
	return out.Entries
}

func jobNames(jobs []*models.ActionWorkflowJob) string {
	var out []string
	for _, j := range jobs {
		out = append(out, j.Name+"="+j.Status+"/"+j.Conclusion)
	}
	return strings.Join(out, ",")
}

const ciWorkflow = `name: CI
on:
  push:
    branches: [main]
    paths-ignore: ["docs/**"]
jobs:
  build:
    runs-on: ubuntu-latest
    strategy:
      matrix:
        go: ["1.21", "1.22"]
    steps:
      - name: Compile
        run: go build ./...
  test:
    needs: build
    runs-on: [ubuntu-latest]
    steps:
      - run: go test ./...
`

// releaseWorkflow runs only for release branches and v* tags.
const releaseWorkflow = `on:
  push:
    branches: ["release/**"]
    tags: ["v*"]
jobs:
  publish:
    runs-on: windows-latest
    steps:
      - run: echo publish
`

func TestActionsRunnersAndWorkflows(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	repo := newClonedRepo(t, e, "ci", nil)
	alice := apitest.Basic(repo.alice)
	admin := apitest.Basic(e.Admin)
	bob := e.CreateUser("bob", false)
	bobCred := apitest.Basic(bob)
	roCreateOrg(t, e, alice, map[string]any{"username": "acme"})
	roCreateRepo(t, e, bobCred, map[string]any{"name": "other", "auto_init": true})

	// Registration tokens: one per scope, the same one on every call.
	globalTok := regToken(t, e, "admin/actions/runners/registration-token", admin)
	if again := regToken(t, e, "admin/actions/runners/registration-token", admin); again != globalTok {
		t.Fatalf("second admin token %q, want %q", again, globalTok)
	}
	repoTok := regToken(t, e, "repos/alice/ci/actions/runners/registration-token", alice)
	userTok := regToken(t, e, "user/actions/runners/registration-token", alice)
	orgTok := regToken(t, e, "orgs/acme/actions/runners/registration-token", alice)
	bobTok := regToken(t, e, "user/actions/runners/registration-token", bobCred)
	if len(map[string]bool{globalTok: true, repoTok: true, userTok: true, orgTok: true, bobTok: true}) != 5 {
		t.Fatal("scopes share a registration token")
	}
	e.Do("POST", "admin/actions/runners/registration-token", nil, bobCred).Expect(t, http.StatusForbidden)
	e.Do("POST", "admin/actions/runners/registration-token", nil, nil).Expect(t, http.StatusUnauthorized)
	e.Do("POST", "orgs/acme/actions/runners/registration-token", nil, bobCred).Expect(t, http.StatusForbidden)
	e.Do("POST", "repos/alice/ci/actions/runners/registration-token", nil, bobCred).Expect(t, http.StatusForbidden)
	// A token limited to public data reaches no runner of any scope.
	publicOnly := apitest.TokenCred(e.Token(repo.alice, "public-only", "write:user", "write:organization", "write:repository"))
	adminPublicOnly := apitest.TokenCred(e.Token(e.Admin, "public-only", "write:admin"))
	for _, c := range []struct {
		method, path string
		cred         apitest.Cred
	}{
		{"GET", "user/actions/runners", publicOnly},
		{"POST", "user/actions/runners/registration-token", publicOnly},
		{"GET", "user/actions/runs", publicOnly},
		{"GET", "orgs/acme/actions/runners", publicOnly},
		{"GET", "repos/alice/ci/actions/runners", publicOnly},
		{"GET", "admin/actions/runners", adminPublicOnly},
		{"POST", "admin/actions/runners/registration-token", adminPublicOnly},
	} {
		e.Do(c.method, c.path, nil, c.cred).Expect(t, http.StatusForbidden)
	}

	// A wrong registration token registers nothing.
	if _, err := newTestRunner(e, "x").client.Register(context.Background(), connect.NewRequest(&runnerv1.RegisterRequest{Name: "x", Token: "nope"})); connect.CodeOf(err) != connect.CodePermissionDenied {
		t.Fatalf("register with a bad token: %v", err)
	}
	// An unregistered runner is refused.
	stranger := newTestRunner(e, "stranger")
	stranger.uuid, stranger.token = "00000000-0000-4000-8000-000000000000", "secret"
	if _, err := stranger.client.FetchTask(context.Background(), connect.NewRequest(&runnerv1.FetchTaskRequest{})); connect.CodeOf(err) != connect.CodeUnauthenticated {
		t.Fatalf("fetch by an unknown runner: %v", err)
	}

	global := registerRunner(t, e, globalTok, "global", "ubuntu-latest:docker://node:20", "self-hosted")
	repoRunner := registerRunner(t, e, repoTok, "alice-repo", "linux")
	userRunner := registerRunner(t, e, userTok, "alice-user", "linux")
	orgRunner := registerRunner(t, e, orgTok, "acme-org", "linux")
	bobRunner := registerRunner(t, e, bobTok, "bob-user", "ubuntu-latest")

	// Each scope's list: the site sees all; a repository its own, its
	// owner's and the site's; an owner its own and the site's.
	for _, c := range []struct {
		path string
		cred apitest.Cred
		want string
	}{
		{"admin/actions/runners", admin, "global,alice-repo,alice-user,acme-org,bob-user"},
		{"repos/alice/ci/actions/runners", alice, "global,alice-repo,alice-user"},
		{"user/actions/runners", alice, "global,alice-user"},
		{"user/actions/runners", bobCred, "global,bob-user"},
		{"orgs/acme/actions/runners", alice, "global,acme-org"},
	} {
		if got := runnerNames(listRunners(t, e, c.path, c.cred)); got != c.want {
			t.Errorf("%s: runners %s, want %s", c.path, got, c.want)
		}
	}
	all := listRunners(t, e, "admin/actions/runners", admin)
	if g := all["global"]; g.Status != "online" || g.Busy || g.Disabled || len(g.Labels) != 2 ||
		g.Labels[0].Name != "ubuntu-latest:docker://node:20" || g.Labels[1].ID != 1 || g.Labels[1].Type != "custom" {
		t.Fatalf("global runner %+v", g)
	}

	// One runner: only at its own scope; ids that are no runner's are 404.
	e.Do("GET", fmt.Sprintf("user/actions/runners/%d", userRunner.id), nil, alice).Expect(t, http.StatusOK)
	e.Do("GET", fmt.Sprintf("user/actions/runners/%d", userRunner.id), nil, bobCred).Expect(t, http.StatusNotFound)
	e.Do("GET", fmt.Sprintf("user/actions/runners/%d", global.id), nil, alice).Expect(t, http.StatusNotFound)
	e.Do("GET", fmt.Sprintf("repos/alice/ci/actions/runners/%d", userRunner.id), nil, alice).Expect(t, http.StatusNotFound)
	e.Do("GET", fmt.Sprintf("repos/alice/ci/actions/runners/%d", repoRunner.id), nil, alice).Expect(t, http.StatusOK)
	e.Do("GET", fmt.Sprintf("orgs/acme/actions/runners/%d", orgRunner.id), nil, alice).Expect(t, http.StatusOK)
	e.Do("GET", fmt.Sprintf("orgs/acme/actions/runners/%d", bobRunner.id), nil, alice).Expect(t, http.StatusNotFound)
	e.Do("GET", fmt.Sprintf("admin/actions/runners/%d", bobRunner.id), nil, admin).Expect(t, http.StatusOK)
	for _, id := range []string{"abc", "0", "-1", "99999", "1e3", "0x10"} {
		e.Do("GET", "admin/actions/runners/"+id, nil, admin).Expect(t, http.StatusNotFound)
	}
	e.Do("GET", fmt.Sprintf("repos/alice/ci/actions/runners/%d", repoRunner.id), nil, bobCred).Expect(t, http.StatusForbidden)
	e.Do("DELETE", fmt.Sprintf("user/actions/runners/%d", userRunner.id), nil, bobCred).Expect(t, http.StatusNotFound)
	e.Do("PATCH", fmt.Sprintf("orgs/acme/actions/runners/%d", orgRunner.id), map[string]any{"disabled": true}, bobCred).Expect(t, http.StatusForbidden)

	// PATCH needs disabled; then it switches the runner off and on.
	e.Do("PATCH", fmt.Sprintf("user/actions/runners/%d", userRunner.id), map[string]any{}, alice).Expect(t, http.StatusUnprocessableEntity)
	e.Do("PATCH", fmt.Sprintf("admin/actions/runners/%d", userRunner.id), nil, admin).Expect(t, http.StatusUnprocessableEntity)
	var edited models.ActionRunner
	e.Do("PATCH", fmt.Sprintf("user/actions/runners/%d", userRunner.id), map[string]any{"disabled": true}, alice).Expect(t, http.StatusOK).JSON(t, &edited)
	if !edited.Disabled || edited.Name != "alice-user" {
		t.Fatalf("edited runner %+v", edited)
	}
	if got := runnerNames(listRunners(t, e, "admin/actions/runners?disabled=true", admin)); got != "alice-user" {
		t.Fatalf("disabled runners %s", got)
	}
	if got := runnerNames(listRunners(t, e, "admin/actions/runners?disabled=false", admin)); got != "global,alice-repo,acme-org,bob-user" {
		t.Fatalf("enabled runners %s", got)
	}
	// Deleting a runner ends its token.
	e.Do("DELETE", fmt.Sprintf("user/actions/runners/%d", bobRunner.id), nil, bobCred).Expect(t, http.StatusNoContent)
	e.Do("DELETE", fmt.Sprintf("user/actions/runners/%d", bobRunner.id), nil, bobCred).Expect(t, http.StatusNotFound)
	if _, err := bobRunner.client.FetchTask(context.Background(), connect.NewRequest(&runnerv1.FetchTaskRequest{})); connect.CodeOf(err) != connect.CodeUnauthenticated {
		t.Fatalf("fetch by a deleted runner: %v", err)
	}

	// Push two workflows; CI runs for main, release does not.
	git := repo.git
	git.commitFile(repo.clone, ".gitea/workflows/ci.yml", ciWorkflow, "add ci")
	sha := git.commitFile(repo.clone, ".gitea/workflows/release.yaml", releaseWorkflow, "add release")
	git.must(repo.clone, "push", "-q", "origin", "main")

	runs := listRuns(t, e, "admin/actions/runs", admin)
	if len(runs) != 1 || runs[0].Path != "ci.yml@refs/heads/main" || runs[0].HeadSha != sha || runs[0].Event != "push" ||
		runs[0].Status != "queued" || runs[0].HeadBranch != "main" || runs[0].RunNumber != 1 || runs[0].DisplayTitle != "add release" ||
		runs[0].Actor == nil || runs[0].Actor.UserName != "alice" {
		t.Fatalf("runs after push %s", mustJSON(runs))
	}
	run1 := runs[0].ID
	jobs := listJobs(t, e, "admin/actions/jobs", admin)
	if got := jobNames(jobs); got != "build (1.21)=queued/,build (1.22)=queued/,test=waiting/" {
		t.Fatalf("jobs after push %s", got)
	}
	if len(listJobs(t, e, "admin/actions/jobs?status=queued", admin)) != 2 || len(listJobs(t, e, "admin/actions/jobs?status=pending", admin)) != 1 ||
		len(listJobs(t, e, "admin/actions/jobs?status=requested", admin)) != 1 || len(listJobs(t, e, "admin/actions/jobs?status=in_progress", admin)) != 0 {
		t.Fatal("status filters disagree with the jobs")
	}
	if desc := listJobs(t, e, "admin/actions/jobs?sort=id&order=desc", admin); desc[0].Name != "test" || desc[2].Name != "build (1.21)" {
		t.Fatalf("jobs desc %s", jobNames(desc))
	}
	e.Do("GET", "admin/actions/jobs?status=bogus", nil, admin).Expect(t, http.StatusBadRequest)
	e.Do("GET", "admin/actions/jobs?sort=name", nil, admin).Expect(t, http.StatusUnprocessableEntity)
	e.Do("GET", "admin/actions/jobs?order=up", nil, admin).Expect(t, http.StatusUnprocessableEntity)
	e.Do("GET", "admin/actions/runs?status=bogus", nil, admin).Expect(t, http.StatusBadRequest)
	e.Do("GET", "admin/actions/runs", nil, alice).Expect(t, http.StatusForbidden)
	e.Do("GET", "admin/actions/jobs", nil, nil).Expect(t, http.StatusUnauthorized)

	// A runner whose labels do not match gets nothing; the disabled one
	// neither; the global runner gets the first build.
	if task := repoRunner.fetch(t); task != nil {
		t.Fatalf("linux runner got task %d", task.Id)
	}
	if task := userRunner.fetch(t); task != nil {
		t.Fatalf("disabled runner got task %d", task.Id)
	}
	task := global.fetch(t)
	if task == nil {
		t.Fatal("global runner got no task")
	}
	cx := task.Context.AsMap()
	if cx["sha"] != sha || cx["ref"] != "refs/heads/main" || cx["event_name"] != "push" || cx["repository"] != "alice/ci" ||
		cx["token"] == "" || task.Secrets["GITEA_TOKEN"] != cx["token"] || !strings.Contains(string(task.WorkflowPayload), "build") ||
		!strings.Contains(string(task.WorkflowPayload), "1.21") || strings.Contains(string(task.WorkflowPayload), "1.22") {
		t.Fatalf("task context %v payload %s secrets %v", cx, task.WorkflowPayload, task.Secrets)
	}
	// The task's token reads its repository (API and git) and nothing
	// else, and only while the task runs.
	taskCred := apitest.TokenCred(cx["token"].(string))
	roCreateRepo(t, e, alice, map[string]any{"name": "secret", "private": true})
	e.Do("GET", "repos/alice/ci", nil, taskCred).Expect(t, http.StatusOK)
	e.Do("GET", "repos/alice/secret", nil, taskCred).Expect(t, http.StatusNotFound)
	e.Do("GET", "repos/alice/ci/actions/runs", nil, taskCred).Expect(t, http.StatusOK)
	e.Do("PATCH", "repos/alice/ci", map[string]any{"description": "x"}, taskCred).Expect(t, http.StatusForbidden)
	git.must(repo.work, "clone", "-q", gitURL(e, "x", cx["token"].(string), "alice", "ci"), repo.work+"/by-task")
	running := listJobs(t, e, "repos/alice/ci/actions/jobs?status=in_progress", alice)
	if len(running) != 1 || running[0].RunnerName != "global" || running[0].RunnerID != global.id || running[0].StartedAt == nil {
		t.Fatalf("running jobs %s", mustJSON(running))
	}
	if g := listRunners(t, e, "admin/actions/runners", admin)["global"]; !g.Busy {
		t.Fatal("global runner not busy while running a task")
	}
	if runs := listRuns(t, e, "repos/alice/ci/actions/runs?status=in_progress", alice); len(runs) != 1 || runs[0].StartedAt == nil {
		t.Fatalf("in-progress runs %s", mustJSON(runs))
	}
	// A run under way cannot be deleted.
	e.Do("DELETE", fmt.Sprintf("repos/alice/ci/actions/runs/%d", run1), nil, alice).Expect(t, http.StatusBadRequest)

	// Logs: rows append, a resent row is acknowledged without a copy.
	if ack := global.log(t, task.Id, 0, false, "compiling", "linking"); ack != 2 {
		t.Fatalf("ack %d", ack)
	}
	if ack := global.log(t, task.Id, 1, false, "linking", "done"); ack != 3 {
		t.Fatalf("ack after resend %d", ack)
	}
	if ack := global.log(t, task.Id, 5, false, "gap"); ack != 3 {
		t.Fatalf("ack past a gap %d", ack)
	}
	if ack := global.log(t, task.Id, 3, true); ack != 3 {
		t.Fatalf("final ack %d", ack)
	}
	if res := global.finish(t, task.Id, runnerv1.Result_RESULT_SUCCESS, map[string]string{"artifact": "app-1.21"}); res.State.Result != runnerv1.Result_RESULT_SUCCESS || len(res.SentOutputs) != 1 {
		t.Fatalf("update task answer %+v", res)
	}
	firstJob := running[0].ID
	e.Do("GET", "repos/alice/ci", nil, taskCred).Expect(t, http.StatusUnauthorized)
	logs := e.Do("GET", fmt.Sprintf("repos/alice/ci/actions/jobs/%d/logs", firstJob), nil, alice).Expect(t, http.StatusOK)
	if lines := strings.Split(strings.TrimSpace(string(logs.Body)), "\n"); len(lines) != 3 || !strings.HasSuffix(lines[0], " compiling") || !strings.HasSuffix(lines[2], " done") {
		t.Fatalf("logs %q", logs.Body)
	}
	var job models.ActionWorkflowJob
	e.Do("GET", fmt.Sprintf("repos/alice/ci/actions/jobs/%d", firstJob), nil, alice).Expect(t, http.StatusOK).JSON(t, &job)
	if job.Status != "completed" || job.Conclusion != "success" || len(job.Steps) != 1 || job.Steps[0].Name != "Compile" || job.CompletedAt == nil {
		t.Fatalf("finished job %s", mustJSON(job))
	}

	// The second build fails: the test job that needs it is skipped and
	// the run fails.
	task2 := global.fetch(t)
	if task2 == nil || !strings.Contains(string(task2.WorkflowPayload), "1.22") {
		t.Fatalf("second task %v", task2)
	}
	global.log(t, task2.Id, 0, true, "error: boom")
	global.finish(t, task2.Id, runnerv1.Result_RESULT_FAILURE, nil)
	if task := global.fetch(t); task != nil {
		t.Fatalf("got task %d after the failure", task.Id)
	}
	if got := jobNames(listJobs(t, e, "admin/actions/jobs", admin)); got != "build (1.21)=completed/success,build (1.22)=completed/failure,test=completed/skipped" {
		t.Fatalf("jobs after the failure %s", got)
	}
	var run models.ActionWorkflowRun
	e.Do("GET", fmt.Sprintf("repos/alice/ci/actions/runs/%d", run1), nil, alice).Expect(t, http.StatusOK).JSON(t, &run)
	if run.Status != "completed" || run.Conclusion != "failure" || run.CompletedAt == nil {
		t.Fatalf("failed run %s", mustJSON(run))
	}

	// Another push (changing only docs/, which CI ignores) runs nothing;
	// a code change runs CI again, and this time everything succeeds.
	git.commitFile(repo.clone, "docs/guide.md", "guide\n", "docs")
	git.must(repo.clone, "push", "-q", "origin", "main")
	if runs := listRuns(t, e, "admin/actions/runs", admin); len(runs) != 1 {
		t.Fatalf("a docs-only push started a run: %s", mustJSON(runs))
	}
	sha2 := git.commitFile(repo.clone, "main.go", "package main\n", "code")
	git.must(repo.clone, "push", "-q", "origin", "main")
	var testTask *runnerv1.Task
	for i := 0; i < 3; i++ {
		tk := global.fetch(t)
		if tk == nil {
			t.Fatalf("fetch %d of the second run: none", i)
		}
		if i == 2 {
			testTask = tk
		} else if tk.Needs != nil && len(tk.Needs) > 0 {
			t.Fatalf("build task with needs %v", tk.Needs)
		}
		if i < 2 {
			global.finish(t, tk.Id, runnerv1.Result_RESULT_SUCCESS, map[string]string{"built": "yes"})
		}
	}
	if need := testTask.Needs["build"]; need == nil || need.Result != runnerv1.Result_RESULT_SUCCESS || need.Outputs["built"] != "yes" {
		t.Fatalf("test task needs %v", testTask.Needs)
	}
	global.finish(t, testTask.Id, runnerv1.Result_RESULT_SUCCESS, nil)

	// A tag runs the release workflow, whose job no runner can take.
	git.must(repo.clone, "tag", "-a", "v1.0", "-m", "v1.0")
	git.must(repo.clone, "push", "-q", "origin", "v1.0")

	// Filters of the runs list.
	for _, c := range []struct {
		query string
		want  int
	}{
		{"", 3},
		{"?status=success", 1},
		{"?status=failure", 1},
		{"?status=completed", 2},
		{"?status=queued", 1},
		{"?event=push", 3},
		{"?event=pull_request", 0},
		{"?branch=main", 2},
		{"?branch=other", 0},
		{"?head_sha=" + sha2, 2}, // the tag points at it too
		{"?actor=alice", 3},
		{"?actor=bob", 0},
		{"?limit=1&page=2", 1},
	} {
		if got := listRuns(t, e, "admin/actions/runs"+c.query, admin); len(got) != c.want {
			t.Errorf("runs%s: %d, want %d", c.query, len(got), c.want)
		}
	}
	e.Do("GET", "admin/actions/runs?actor=nobody", nil, admin).Expect(t, http.StatusNotFound)
	if got := listRuns(t, e, "admin/actions/runs", admin); got[0].Path != "release.yaml@refs/tags/v1.0" || got[0].RunNumber != 3 || got[2].RunNumber != 1 {
		t.Fatalf("runs newest first %s", mustJSON(got))
	}

	// Every scope sees the jobs and runs of its repositories only.
	if n := len(listRuns(t, e, "user/actions/runs", alice)); n != 3 {
		t.Errorf("alice's runs %d", n)
	}
	if n := len(listRuns(t, e, "user/actions/runs", bobCred)); n != 0 {
		t.Errorf("bob's runs %d", n)
	}
	if n := len(listJobs(t, e, "user/actions/jobs?status=success", alice)); n != 4 {
		t.Errorf("alice's successful jobs %d", n)
	}
	if n := len(listRuns(t, e, "orgs/acme/actions/runs", alice)); n != 0 {
		t.Errorf("acme's runs %d", n)
	}
	if n := len(listJobs(t, e, "orgs/acme/actions/jobs", alice)); n != 0 {
		t.Errorf("acme's jobs %d", n)
	}
	e.Do("GET", "orgs/acme/actions/runs", nil, bobCred).Expect(t, http.StatusForbidden)
	if n := len(listRuns(t, e, "repos/bob/other/actions/runs", bobCred)); n != 0 {
		t.Errorf("bob/other runs %d", n)
	}
	if jobs := listJobs(t, e, fmt.Sprintf("repos/alice/ci/actions/runs/%d/jobs?order=desc", run1), alice); jobNames(jobs) != "test=completed/skipped,build (1.22)=completed/failure,build (1.21)=completed/success" {
		t.Fatalf("jobs of run 1 %s", jobNames(jobs))
	}
	// Another repository's run and job ids are not found here.
	e.Do("GET", fmt.Sprintf("repos/bob/other/actions/runs/%d", run1), nil, bobCred).Expect(t, http.StatusNotFound)
	e.Do("GET", fmt.Sprintf("repos/bob/other/actions/jobs/%d/logs", firstJob), nil, bobCred).Expect(t, http.StatusNotFound)

	// A finished run can be deleted, by a writer only.
	e.Do("DELETE", fmt.Sprintf("repos/alice/ci/actions/runs/%d", run1), nil, bobCred).Expect(t, http.StatusForbidden)
	e.Do("DELETE", fmt.Sprintf("repos/alice/ci/actions/runs/%d", run1), nil, alice).Expect(t, http.StatusNoContent)
	e.Do("GET", fmt.Sprintf("repos/alice/ci/actions/runs/%d", run1), nil, alice).Expect(t, http.StatusNotFound)
	e.Do("GET", fmt.Sprintf("repos/alice/ci/actions/jobs/%d/logs", firstJob), nil, alice).Expect(t, http.StatusNotFound)
	if n := len(listJobs(t, e, "admin/actions/jobs", admin)); n != 4 {
		t.Fatalf("jobs after deleting run 1: %d", n)
	}
}

// TestActionsFetchRace: four runners fetching at once, two from each of two
// server processes on one database, share 100 jobs, each run exactly once.
func TestActionsFetchRace(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	twin := e.Twin(t)
	repo := newClonedRepo(t, e, "many", nil)
	tok := regToken(t, e, "repos/alice/many/actions/runners/registration-token", apitest.Basic(repo.alice))
	var runners []*testRunner
	for i, server := range []*apitest.Env{e, e, twin, twin} {
		runners = append(runners, registerRunner(t, server, tok, fmt.Sprintf("r%d", i), "linux"))
	}
	var values []string
	for i := 0; i < 100; i++ {
		values = append(values, fmt.Sprint(i))
	}
	wf := "on: push\njobs:\n  work:\n    runs-on: linux\n    strategy:\n      matrix:\n        n: [" + strings.Join(values, ", ") + "]\n    steps:\n      - run: echo ${{ matrix.n }}\n"
	repo.git.commitFile(repo.clone, ".github/workflows/many.yml", wf, "many")
	repo.git.must(repo.clone, "push", "-q", "origin", "main")

	var mu sync.Mutex
	seen := map[int64]string{}
	var dup []string
	var wg sync.WaitGroup
	errs := make(chan error, len(runners))
	for _, r := range runners {
		wg.Add(1)
		go func(r *testRunner) {
			defer wg.Done()
			for {
				res, err := r.client.FetchTask(context.Background(), connect.NewRequest(&runnerv1.FetchTaskRequest{}))
				if err != nil {
					errs <- err
					return
				}
				task := res.Msg.Task
				if task == nil {
					return
				}
				mu.Lock()
				if prev, ok := seen[task.Id]; ok {
					dup = append(dup, fmt.Sprintf("task %d: %s and %s", task.Id, prev, r.name))
				}
				seen[task.Id] = r.name
				mu.Unlock()
				now := timestamppb.Now()
				if _, err := r.client.UpdateTask(context.Background(), connect.NewRequest(&runnerv1.UpdateTaskRequest{
					State: &runnerv1.TaskState{Id: task.Id, Result: runnerv1.Result_RESULT_SUCCESS, StoppedAt: now}})); err != nil {
					errs <- err
					return
				}
			}
		}(r)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if len(dup) > 0 {
		t.Fatalf("tasks handed out twice: %v", dup)
	}
	if len(seen) != 100 {
		t.Fatalf("%d tasks run, want 100", len(seen))
	}
	// Every job ran exactly once: 100 distinct jobs, all successful, each
	// on one runner.
	admin := apitest.Basic(e.Admin)
	done := 0
	for page := 1; page <= 2; page++ {
		for _, j := range listJobs(t, e, fmt.Sprintf("admin/actions/jobs?status=success&limit=50&page=%d", page), admin) {
			if j.RunAttempt != 1 || j.RunnerName == "" {
				t.Fatalf("job %s", mustJSON(j))
			}
			done++
		}
	}
	if done != 100 {
		t.Fatalf("%d successful jobs, want 100", done)
	}
	if runs := listRuns(t, e, "admin/actions/runs?status=success", admin); len(runs) != 1 {
		t.Fatalf("runs %s", mustJSON(runs))
	}
	// A page of 1 and a page of 50 cost the same statements.
	for _, path := range []string{"admin/actions/jobs", "repos/alice/many/actions/jobs", "user/actions/jobs", "admin/actions/runners", "repos/alice/many/actions/runs"} {
		var counts [2]int64
		for i, limit := range []int{1, 50} {
			cred := admin
			if !strings.HasPrefix(path, "admin/") {
				cred = apitest.Basic(repo.alice)
			}
			before := e.Statements()
			e.Do("GET", fmt.Sprintf("%s?limit=%d", path, limit), nil, cred).Expect(t, http.StatusOK)
			counts[i] = e.Statements() - before
		}
		if counts[0] != counts[1] {
			t.Errorf("%s: limit=1 ran %d statements, limit=50 ran %d", path, counts[0], counts[1])
		}
	}
}

// TestActionsCleanupTasks: a task whose runner went silent is failed by
// cleanup_actions; delete_old_actions removes finished runs past the
// retention only.
func TestActionsCleanupTasks(t *testing.T) {
	t.Parallel()
	e := apitest.NewWithConfig(t, func(c *app.Config) {
		c.ActionsZombieTimeout = time.Nanosecond
		c.ActionsRetention = time.Nanosecond
	})
	repo := newClonedRepo(t, e, "zombie", nil)
	alice := apitest.Basic(repo.alice)
	r := registerRunner(t, e, regToken(t, e, "repos/alice/zombie/actions/runners/registration-token", alice), "z", "linux")
	repo.git.commitFile(repo.clone, ".gitea/workflows/a.yml", "on: [push]\njobs:\n  a:\n    runs-on: linux\n    steps:\n      - run: true\n", "a")
	repo.git.must(repo.clone, "push", "-q", "origin", "main")
	if task := r.fetch(t); task == nil {
		t.Fatal("no task")
	}
	time.Sleep(1100 * time.Millisecond)
	runCron(t, e, "cleanup_actions")
	waitFor(t, func() bool {
		runs := listRuns(t, e, "repos/alice/zombie/actions/runs", alice)
		return len(runs) == 1 && runs[0].Conclusion == "failure"
	})
	runCron(t, e, "delete_old_actions")
	waitFor(t, func() bool { return len(listRuns(t, e, "repos/alice/zombie/actions/runs", alice)) == 0 })
}

func waitFor(t *testing.T, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatal(errors.New("condition not reached in 10s"))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestActionsDispatch starts workflows by hand: only those with on:
// workflow_dispatch, with their declared inputs, by writers.
func TestActionsDispatch(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	repo := newClonedRepo(t, e, "manual", nil)
	alice := apitest.Basic(repo.alice)
	bob := apitest.Basic(e.CreateUser("bob", false))
	manual := "on:\n  workflow_dispatch:\n    inputs:\n      level:\n        default: info\n      target:\n        required: true\njobs:\n  deploy:\n    runs-on: linux\n    steps:\n      - run: echo deploy\n"
	repo.git.commitFile(repo.clone, ".gitea/workflows/manual.yml", manual, "manual")
	repo.git.commitFile(repo.clone, ".gitea/workflows/push.yml", "on: push\njobs:\n  a:\n    runs-on: linux\n    steps:\n      - run: true\n", "push")
	repo.git.must(repo.clone, "push", "-q", "origin", "main")
	if runs := listRuns(t, e, "repos/alice/manual/actions/runs", alice); len(runs) != 1 || runs[0].Path != "push.yml@refs/heads/main" {
		t.Fatalf("runs after the push %s", mustJSON(runs))
	}
	path := "repos/alice/manual/actions/workflows/manual.yml/dispatches"
	e.Do("POST", path, map[string]any{"ref": "main"}, alice).Expect(t, http.StatusUnprocessableEntity)
	e.Do("POST", path, map[string]any{}, alice).Expect(t, http.StatusUnprocessableEntity)
	e.Do("POST", path, map[string]any{"ref": "nope", "inputs": map[string]string{"target": "x"}}, alice).Expect(t, http.StatusNotFound)
	e.Do("POST", "repos/alice/manual/actions/workflows/gone.yml/dispatches", map[string]any{"ref": "main"}, alice).Expect(t, http.StatusNotFound)
	e.Do("POST", "repos/alice/manual/actions/workflows/push.yml/dispatches", map[string]any{"ref": "main"}, alice).Expect(t, http.StatusUnprocessableEntity)
	e.Do("POST", path, map[string]any{"ref": "main", "inputs": map[string]string{"target": "x"}}, bob).Expect(t, http.StatusForbidden)
	e.Do("POST", path, map[string]any{"ref": "refs/heads/main", "inputs": map[string]string{"target": "x"}}, alice).Expect(t, http.StatusNoContent)
	var details models.RunDetails
	e.Do("POST", path+"?return_run_details=true", map[string]any{"ref": "main", "inputs": map[string]string{"target": "prod"}}, alice).
		Expect(t, http.StatusOK).JSON(t, &details)
	var run models.ActionWorkflowRun
	e.Do("GET", fmt.Sprintf("repos/alice/manual/actions/runs/%d", details.WorkflowRunID), nil, alice).Expect(t, http.StatusOK).JSON(t, &run)
	if run.Event != "workflow_dispatch" || run.RunNumber != 3 || !strings.HasSuffix(details.RunURL, fmt.Sprintf("/actions/runs/%d", run.ID)) {
		t.Fatalf("dispatched run %s, details %+v", mustJSON(run), details)
	}
	if n := len(listRuns(t, e, "repos/alice/manual/actions/runs?event=workflow_dispatch", alice)); n != 2 {
		t.Fatalf("%d dispatched runs", n)
	}
	r := registerRunner(t, e, regToken(t, e, "repos/alice/manual/actions/runners/registration-token", alice), "r", "linux")
	log := e.RecordEvents()
	var inputs []map[string]any
	for task := r.fetch(t); task != nil; task = r.fetch(t) {
		cx := task.Context.AsMap()
		if cx["event_name"] == "workflow_dispatch" {
			inputs = append(inputs, cx["event"].(map[string]any)["inputs"].(map[string]any))
		}
		r.finish(t, task.Id, runnerv1.Result_RESULT_SUCCESS, nil)
	}
	if len(inputs) != 2 || inputs[0]["level"] != "info" || inputs[0]["target"] != "x" || inputs[1]["target"] != "prod" {
		t.Fatalf("dispatch inputs %v", inputs)
	}
	// Every status change of a job and its run was announced, with the
	// API's status words: three runs, each started and finished.
	var kinds []events.Kind
	got := log.Take()
	for range 3 {
		kinds = append(kinds, events.ActionsJobStatus, events.ActionsRunStatus, events.ActionsJobStatus, events.ActionsRunStatus)
	}
	if len(got) != len(kinds) {
		t.Fatalf("%d events, want %d", len(got), len(kinds))
	}
	for i, ev := range got {
		if ev.Kind != kinds[i] {
			t.Fatalf("event %d is %s, want %s", i, ev.Kind, kinds[i])
		}
	}
	if j := got[0].Payload.(events.ActionsJob); j.Status != "in_progress" || j.RunnerID != r.id {
		t.Fatalf("first job event %+v", j)
	}
	if run := got[3].Payload.(events.ActionsRun); run.Status != "completed" || run.Conclusion != "success" || run.Event == "" {
		t.Fatalf("run event %+v", run)
	}
}

// TestActionsEphemeralAndDeletion: an ephemeral runner goes after its one
// task; a deleted repository takes its runs and runners along.
func TestActionsEphemeralAndDeletion(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	repo := newClonedRepo(t, e, "short", nil)
	alice := apitest.Basic(repo.alice)
	admin := apitest.Basic(e.Admin)
	tok := regToken(t, e, "repos/alice/short/actions/runners/registration-token", alice)
	keeper := registerRunner(t, e, tok, "keeper", "other")
	eph := newTestRunner(e, "eph")
	res, err := eph.client.Register(context.Background(), connect.NewRequest(&runnerv1.RegisterRequest{Name: "eph", Token: tok, Labels: []string{"linux"}, Ephemeral: true}))
	if err != nil {
		t.Fatal(err)
	}
	eph.uuid, eph.token = res.Msg.Runner.Uuid, res.Msg.Runner.Token
	if r := listRunners(t, e, "admin/actions/runners", admin)["eph"]; r == nil || !r.Ephemeral {
		t.Fatalf("ephemeral runner listed as %+v", r)
	}
	repo.git.commitFile(repo.clone, ".gitea/workflows/a.yml", "on: push\njobs:\n  a:\n    runs-on: linux\n    steps:\n      - run: true\n  b:\n    runs-on: linux\n    steps:\n      - run: true\n", "a")
	repo.git.must(repo.clone, "push", "-q", "origin", "main")
	task := eph.fetch(t)
	if task == nil {
		t.Fatal("no task")
	}
	eph.finish(t, task.Id, runnerv1.Result_RESULT_SUCCESS, nil)
	if m := listRunners(t, e, "admin/actions/runners", admin); len(m) != 1 || m["keeper"] == nil {
		t.Fatalf("runners after the ephemeral task: %v", m)
	}
	if _, err := eph.client.FetchTask(context.Background(), connect.NewRequest(&runnerv1.FetchTaskRequest{})); connect.CodeOf(err) != connect.CodeUnauthenticated {
		t.Fatalf("fetch after the ephemeral task: %v", err)
	}

	e.Do("DELETE", "repos/alice/short", nil, alice).Expect(t, http.StatusNoContent)
	waitFor(t, func() bool {
		return len(listRuns(t, e, "admin/actions/runs", admin)) == 0 && len(listJobs(t, e, "admin/actions/jobs", admin)) == 0 &&
			len(listRunners(t, e, "admin/actions/runners", admin)) == 0
	})
	if _, err := keeper.client.FetchTask(context.Background(), connect.NewRequest(&runnerv1.FetchTaskRequest{})); connect.CodeOf(err) != connect.CodeUnauthenticated {
		t.Fatalf("fetch by a deleted repository's runner: %v", err)
	}
}

// TestActionsRerun: a finished run, its failed jobs or one job run again,
// with the jobs that need them; a run under way cannot be rerun.
func TestActionsRerun(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	repo := newClonedRepo(t, e, "again", nil)
	alice := apitest.Basic(repo.alice)
	bob := apitest.Basic(e.CreateUser("bob", false))
	r := registerRunner(t, e, regToken(t, e, "repos/alice/again/actions/runners/registration-token", alice), "r", "linux")
	wf := "on: push\njobs:\n  a:\n    runs-on: linux\n    steps:\n      - run: a\n  b:\n    needs: a\n    runs-on: linux\n    steps:\n      - run: b\n  c:\n    runs-on: linux\n    steps:\n      - run: c\n"
	repo.git.commitFile(repo.clone, ".gitea/workflows/w.yml", wf, "w")
	repo.git.must(repo.clone, "push", "-q", "origin", "main")
	runID := listRuns(t, e, "repos/alice/again/actions/runs", alice)[0].ID
	base := fmt.Sprintf("repos/alice/again/actions/runs/%d", runID)
	jobsOf := func() string { return jobNames(listJobs(t, e, base+"/jobs", alice)) }

	ta := r.fetch(t)
	e.Do("POST", base+"/rerun", nil, alice).Expect(t, http.StatusConflict)
	r.finish(t, ta.Id, runnerv1.Result_RESULT_FAILURE, nil)
	r.finish(t, r.fetch(t).Id, runnerv1.Result_RESULT_SUCCESS, nil)
	if got := jobsOf(); got != "a=completed/failure,b=completed/skipped,c=completed/success" {
		t.Fatalf("jobs %s", got)
	}
	e.Do("POST", base+"/rerun-failed-jobs", nil, bob).Expect(t, http.StatusForbidden)
	e.Do("POST", base+"/rerun-failed-jobs", nil, alice).Expect(t, http.StatusCreated)
	if got := jobsOf(); got != "a=queued/,b=waiting/,c=completed/success" {
		t.Fatalf("jobs after rerunning the failed ones %s", got)
	}
	var run models.ActionWorkflowRun
	e.Do("GET", base, nil, alice).Expect(t, http.StatusOK).JSON(t, &run)
	if run.Status != "queued" || run.RunAttempt != 2 || run.CompletedAt != nil {
		t.Fatalf("run after rerun %s", mustJSON(run))
	}
	for i := 0; i < 2; i++ {
		r.finish(t, r.fetch(t).Id, runnerv1.Result_RESULT_SUCCESS, nil)
	}
	if got := jobsOf(); got != "a=completed/success,b=completed/success,c=completed/success" {
		t.Fatalf("jobs after the second attempt %s", got)
	}
	jobs := listJobs(t, e, base+"/jobs", alice)
	if jobs[0].RunAttempt != 2 || jobs[2].RunAttempt != 1 {
		t.Fatalf("attempts %s", mustJSON(jobs))
	}

	// One job again: c alone, nothing needs it.
	var job models.ActionWorkflowJob
	e.Do("POST", fmt.Sprintf("%s/jobs/%d/rerun", base, jobs[2].ID), nil, alice).Expect(t, http.StatusCreated).JSON(t, &job)
	if job.Name != "c" || job.Status != "queued" {
		t.Fatalf("rerun job %s", mustJSON(job))
	}
	e.Do("POST", fmt.Sprintf("%s/jobs/%d/rerun", base, jobs[0].ID), nil, alice).Expect(t, http.StatusConflict)
	r.finish(t, r.fetch(t).Id, runnerv1.Result_RESULT_SUCCESS, nil)
	e.Do("POST", fmt.Sprintf("%s/jobs/%d/rerun", base, 999999), nil, alice).Expect(t, http.StatusNotFound)

	// The whole run again.
	e.Do("POST", base+"/rerun", nil, alice).Expect(t, http.StatusCreated).JSON(t, &run)
	if run.Status != "queued" || run.RunAttempt != 4 {
		t.Fatalf("rerun run %s", mustJSON(run))
	}
	if got := jobsOf(); got != "a=queued/,b=waiting/,c=queued/" {
		t.Fatalf("jobs after rerunning the run %s", got)
	}
	e.Do("POST", fmt.Sprintf("repos/alice/again/actions/runs/%d/rerun", runID+1), nil, alice).Expect(t, http.StatusNotFound)
}

// TestActionsRepoRunnerEditNeedsOwner: editing a repository's runner is
// the repository owner's; a collaborator with admin permission is refused
// and the runner stays as it was.
func TestActionsRepoRunnerEditNeedsOwner(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	alice := e.CreateUser("alice", false)
	bob := e.CreateUser("bob", false)
	a, b := apitest.Basic(alice), apitest.Basic(bob)
	roCreateRepo(t, e, a, map[string]any{"name": "ci", "auto_init": true})
	e.Do("PUT", "repos/alice/ci/collaborators/bob", map[string]any{"permission": "admin"}, a).Expect(t, http.StatusNoContent)
	// bob's admin permission is real: he may change the repository's settings.
	e.Do("PATCH", "repos/alice/ci", map[string]any{"description": "by bob"}, b).Expect(t, http.StatusOK)

	r := registerRunner(t, e, regToken(t, e, "repos/alice/ci/actions/runners/registration-token", a), "repo-runner", "linux")
	path := fmt.Sprintf("repos/alice/ci/actions/runners/%d", r.id)
	e.Do("PATCH", path, map[string]any{"disabled": true}, b).Expect(t, http.StatusForbidden)
	var got models.ActionRunner
	e.Do("GET", path, nil, a).Expect(t, http.StatusOK).JSON(t, &got)
	if got.Disabled {
		t.Fatalf("runner disabled by a repository admin: %+v", got)
	}
	e.Do("PATCH", path, map[string]any{"disabled": true}, a).Expect(t, http.StatusOK).JSON(t, &got)
	if !got.Disabled || got.ID != r.id {
		t.Fatalf("runner after the owner's edit %+v", got)
	}
}
