package apitest_test

import (
	"encoding/base64"
	"net/http"
	"strings"
	"testing"

	runnerv1 "code.gitea.io/actions-proto-go/runner/v1"
	"code.gitea.io/sdk/gitea"

	"repohost/apitest"
)

// TestActionsSDK drives runners, runs and jobs of every scope with the
// unchanged official SDK (the runner itself speaks the protocol package).
// The SDK checks EditActionRunnerOption itself, so the 422 of a missing
// disabled never leaves it; the raw-HTTP test covers that answer.
func TestActionsSDK(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	admin := sdkClient(t, e)
	aliceAcc := e.CreateUser("alice", false)
	alice := sdkClient(t, e, gitea.SetBasicAuth("alice", aliceAcc.Password))
	bob := sdkClient(t, e, gitea.SetBasicAuth("bob", e.CreateUser("bob", false).Password))
	if _, _, err := alice.CreateRepo(gitea.CreateRepoOption{Name: "sdkci", AutoInit: true}); err != nil {
		t.Fatalf("CreateRepo: %v", err)
	}
	if _, _, err := alice.CreateOrg(gitea.CreateOrgOption{Name: "sdkorg"}); err != nil {
		t.Fatalf("CreateOrg: %v", err)
	}

	token := func(tok *gitea.RegistrationToken, resp *gitea.Response, err error) string {
		t.Helper()
		if err != nil || resp.StatusCode != http.StatusOK || tok.Token == "" {
			t.Fatalf("registration token: %v (%v)", err, resp)
		}
		return tok.Token
	}
	globalTok := token(admin.CreateAdminActionRunnerRegistrationToken())
	repoTok := token(alice.CreateRepoActionRunnerRegistrationToken("alice", "sdkci"))
	userTok := token(alice.CreateUserActionRunnerRegistrationToken())
	orgTok := token(alice.CreateOrgActionRunnerRegistrationToken("sdkorg"))
	if again := token(admin.CreateAdminActionRunnerRegistrationToken()); again != globalTok {
		t.Fatal("the admin registration token changed")
	}
	global := registerRunner(t, e, globalTok, "global", "ubuntu-latest")
	repoRunner := registerRunner(t, e, repoTok, "alice-repo", "linux")
	userRunner := registerRunner(t, e, userTok, "alice-user", "linux")
	orgRunner := registerRunner(t, e, orgTok, "acme-org", "linux")

	names := func(list *gitea.ActionRunnersResponse, resp *gitea.Response, err error) string {
		t.Helper()
		if err != nil || resp.StatusCode != http.StatusOK || int(list.TotalCount) != len(list.Runners) {
			t.Fatalf("runner list: %v (%v)", err, resp)
		}
		var out []string
		for _, r := range list.Runners {
			out = append(out, r.Name)
		}
		return strings.Join(out, ",")
	}
	for _, c := range []struct{ got, want string }{
		{names(admin.ListAdminActionRunners(gitea.ListActionRunnersOptions{})), "global,alice-repo,alice-user,acme-org"},
		{names(alice.ListRepoActionRunners("alice", "sdkci", gitea.ListActionRunnersOptions{})), "global,alice-repo,alice-user"},
		{names(alice.ListUserActionRunners(gitea.ListActionRunnersOptions{})), "global,alice-user"},
		{names(alice.ListOrgActionRunners("sdkorg", gitea.ListActionRunnersOptions{})), "global,acme-org"},
		{names(bob.ListUserActionRunners(gitea.ListActionRunnersOptions{})), "global"},
	} {
		if c.got != c.want {
			t.Errorf("runners %s, want %s", c.got, c.want)
		}
	}

	// One runner, at its scope only: another's answers the reference's 404.
	r, _, err := alice.GetUserActionRunner(userRunner.id)
	if err != nil || r.Name != "alice-user" || r.Status != "online" || len(r.Labels) != 1 || r.Labels[0].Name != "linux" {
		t.Fatalf("GetUserActionRunner: %v %+v", err, r)
	}
	if _, resp, err := bob.GetUserActionRunner(userRunner.id); err == nil || resp.StatusCode != http.StatusNotFound || !strings.Contains(err.Error(), "Runner not found") {
		t.Fatalf("bob reads alice's runner: %v (%v)", err, resp)
	}
	if _, resp, err := admin.GetAdminActionRunner(999999); err == nil || resp.StatusCode != http.StatusNotFound {
		t.Fatalf("unknown runner: %v (%v)", err, resp)
	}
	if _, resp, err := alice.GetRepoActionRunner("alice", "sdkci", global.id); err == nil || resp.StatusCode != http.StatusNotFound {
		t.Fatalf("the site's runner from a repository: %v (%v)", err, resp)
	}
	yes := true
	if r, _, err := alice.UpdateRepoActionRunner("alice", "sdkci", repoRunner.id, gitea.EditActionRunnerOption{Disabled: &yes}); err != nil || !r.Disabled {
		t.Fatalf("UpdateRepoActionRunner: %v %+v", err, r)
	}
	if _, resp, err := bob.UpdateOrgActionRunner("sdkorg", orgRunner.id, gitea.EditActionRunnerOption{Disabled: &yes}); err == nil || resp.StatusCode != http.StatusForbidden {
		t.Fatalf("bob edits acme's runner: %v (%v)", err, resp)
	}
	if resp, err := alice.DeleteOrgActionRunner("sdkorg", orgRunner.id); err != nil || resp.StatusCode != http.StatusNoContent {
		t.Fatalf("DeleteOrgActionRunner: %v (%v)", err, resp)
	}
	if resp, err := alice.DeleteOrgActionRunner("sdkorg", orgRunner.id); err == nil || resp.StatusCode != http.StatusNotFound {
		t.Fatalf("second DeleteOrgActionRunner: %v (%v)", err, resp)
	}
	if r, _, err := admin.UpdateAdminActionRunner(repoRunner.id, gitea.EditActionRunnerOption{Disabled: new(bool)}); err != nil || r.Disabled {
		t.Fatalf("UpdateAdminActionRunner: %v %+v", err, r)
	}

	// A workflow committed through the contents API runs on the runner.
	wf := "on: push\njobs:\n  hello:\n    runs-on: ubuntu-latest\n    steps:\n      - name: Say hello\n        run: echo hello\n"
	if _, _, err := alice.CreateFile("alice", "sdkci", ".gitea/workflows/hello.yml", gitea.CreateFileOptions{
		FileOptions: gitea.FileOptions{Message: "add workflow"}, Content: base64.StdEncoding.EncodeToString([]byte(wf))}); err != nil {
		t.Fatalf("CreateFile: %v", err)
	}
	runs, _, err := alice.ListRepoActionRuns("alice", "sdkci", gitea.ListRepoActionRunsOptions{})
	if err != nil || runs.TotalCount != 1 || runs.WorkflowRuns[0].Status != "queued" || runs.WorkflowRuns[0].Event != "push" {
		t.Fatalf("ListRepoActionRuns: %v %+v", err, runs)
	}
	runID := runs.WorkflowRuns[0].ID
	task := global.fetch(t)
	if task == nil {
		t.Fatal("no task")
	}
	jobs, _, err := alice.ListRepoActionJobs("alice", "sdkci", gitea.ListRepoActionJobsOptions{Status: "in_progress"})
	if err != nil || jobs.TotalCount != 1 || jobs.Jobs[0].RunnerName != "global" || jobs.Jobs[0].StartedAt.IsZero() {
		t.Fatalf("ListRepoActionJobs in progress: %v %+v", err, jobs)
	}
	jobID := jobs.Jobs[0].ID
	global.log(t, task.Id, 0, true, "hello from the runner")
	global.finish(t, task.Id, runnerv1.Result_RESULT_SUCCESS, nil)

	run, _, err := alice.GetRepoActionRun("alice", "sdkci", runID)
	if err != nil || run.Status != "completed" || run.Conclusion != "success" || run.CompletedAt.IsZero() || run.Actor == nil || run.Actor.UserName != "alice" {
		t.Fatalf("GetRepoActionRun: %v %+v", err, run)
	}
	job, _, err := alice.GetRepoActionJob("alice", "sdkci", jobID)
	if err != nil || job.Conclusion != "success" || len(job.Steps) != 1 || job.Steps[0].Name != "Say hello" {
		t.Fatalf("GetRepoActionJob: %v %+v", err, job)
	}
	logs, _, err := alice.GetRepoActionJobLogs("alice", "sdkci", jobID)
	if err != nil || !strings.Contains(string(logs), "hello from the runner") {
		t.Fatalf("GetRepoActionJobLogs: %v %q", err, logs)
	}
	if jobs, _, err := alice.ListRepoActionRunJobs("alice", "sdkci", runID, gitea.ListRepoActionJobsOptions{}); err != nil || jobs.TotalCount != 1 {
		t.Fatalf("ListRepoActionRunJobs: %v %+v", err, jobs)
	}
	for _, c := range []countCheck{
		count(admin.ListAdminActionJobs(gitea.ListRepoActionJobsOptions{Status: "success"})).as("admin jobs", 1),
		countRuns(admin.ListAdminActionRuns(gitea.ListRepoActionRunsOptions{Branch: "main", Actor: "alice"})).as("admin runs", 1),
		count(alice.ListUserActionJobs(gitea.ListRepoActionJobsOptions{})).as("user jobs", 1),
		countRuns(alice.ListUserActionRuns(gitea.ListRepoActionRunsOptions{Status: "success"})).as("user runs", 1),
		countRuns(bob.ListUserActionRuns(gitea.ListRepoActionRunsOptions{})).as("bob's runs", 0),
		count(alice.ListOrgActionJobs("sdkorg", gitea.ListRepoActionJobsOptions{})).as("org jobs", 0),
		countRuns(alice.ListOrgActionRuns("sdkorg", gitea.ListRepoActionRunsOptions{})).as("org runs", 0),
	} {
		if c.err != nil || c.got != c.want {
			t.Errorf("%s: %d (%v), want %d", c.name, c.got, c.err, c.want)
		}
	}

	// A repository of the organization: its run and jobs are the
	// organization's, and only the organization's runner takes the job.
	if _, _, err := alice.CreateOrgRepo("sdkorg", gitea.CreateRepoOption{Name: "orgci", AutoInit: true}); err != nil {
		t.Fatalf("CreateOrgRepo: %v", err)
	}
	orgWf := "on: push\njobs:\n  org:\n    runs-on: linux\n    steps:\n      - run: echo org\n"
	if _, _, err := alice.CreateFile("sdkorg", "orgci", ".gitea/workflows/org.yml", gitea.CreateFileOptions{
		FileOptions: gitea.FileOptions{Message: "org workflow"}, Content: base64.StdEncoding.EncodeToString([]byte(orgWf))}); err != nil {
		t.Fatalf("CreateFile in the organization: %v", err)
	}
	if c := countRuns(alice.ListOrgActionRuns("sdkorg", gitea.ListRepoActionRunsOptions{Status: "queued"})).as("queued org runs", 1); c.err != nil || c.got != c.want {
		t.Fatalf("%s: %d (%v)", c.name, c.got, c.err)
	}
	if task := userRunner.fetch(t); task != nil {
		t.Fatalf("alice's runner took the organization's job %v", task.Context.AsMap()["repository"])
	}
	if task := repoRunner.fetch(t); task != nil {
		t.Fatalf("sdkci's runner took the organization's job %v", task.Context.AsMap()["repository"])
	}
	orgRunner2 := registerRunner(t, e, orgTok, "acme-org-2", "linux")
	orgTask := orgRunner2.fetch(t)
	if orgTask == nil || orgTask.Context.AsMap()["repository"] != "sdkorg/orgci" {
		t.Fatalf("organization runner's task %v", orgTask)
	}
	if c := count(alice.ListOrgActionJobs("sdkorg", gitea.ListRepoActionJobsOptions{Status: "in_progress"})).as("running org jobs", 1); c.err != nil || c.got != c.want {
		t.Fatalf("%s: %d (%v)", c.name, c.got, c.err)
	}
	orgRunner2.log(t, orgTask.Id, 0, true, "org: failed")
	orgRunner2.finish(t, orgTask.Id, runnerv1.Result_RESULT_FAILURE, nil)
	for _, c := range []countCheck{
		countRuns(alice.ListOrgActionRuns("sdkorg", gitea.ListRepoActionRunsOptions{Status: "failure"})).as("failed org runs", 1),
		count(alice.ListOrgActionJobs("sdkorg", gitea.ListRepoActionJobsOptions{Status: "failure"})).as("failed org jobs", 1),
		countRuns(admin.ListAdminActionRuns(gitea.ListRepoActionRunsOptions{})).as("admin runs", 2),
		count(admin.ListAdminActionJobs(gitea.ListRepoActionJobsOptions{Status: "failure"})).as("failed admin jobs", 1),
		count(alice.ListUserActionJobs(gitea.ListRepoActionJobsOptions{})).as("alice's own jobs", 1),
	} {
		if c.err != nil || c.got != c.want {
			t.Errorf("%s: %d (%v), want %d", c.name, c.got, c.err, c.want)
		}
	}

	// The reference's 400 and 404 answers.
	if _, resp, err := alice.ListOrgActionRuns("nosuchorg", gitea.ListRepoActionRunsOptions{}); err == nil || resp.StatusCode != http.StatusNotFound {
		t.Fatalf("runs of an unknown organization: %v (%v)", err, resp)
	}
	if _, resp, err := alice.ListRepoActionJobs("alice", "nosuch", gitea.ListRepoActionJobsOptions{}); err == nil || resp.StatusCode != http.StatusNotFound {
		t.Fatalf("jobs of an unknown repository: %v (%v)", err, resp)
	}
	if _, resp, err := alice.GetRepoActionJob("alice", "sdkci", jobID+1000); err == nil || resp.StatusCode != http.StatusNotFound {
		t.Fatalf("unknown job: %v (%v)", err, resp)
	}
	if _, resp, err := alice.ListOrgActionJobs("sdkorg", gitea.ListRepoActionJobsOptions{Status: "bogus"}); err == nil || resp.StatusCode != http.StatusBadRequest {
		t.Fatalf("bad org job status: %v (%v)", err, resp)
	}
	if _, resp, err := admin.ListAdminActionJobs(gitea.ListRepoActionJobsOptions{Status: "bogus"}); err == nil || resp.StatusCode != http.StatusBadRequest || !strings.Contains(err.Error(), "Invalid status bogus") {
		t.Fatalf("bad status: %v (%v)", err, resp)
	}
	if _, resp, err := alice.ListRepoActionRuns("alice", "sdkci", gitea.ListRepoActionRunsOptions{Status: "bogus"}); err == nil || resp.StatusCode != http.StatusBadRequest {
		t.Fatalf("bad run status: %v (%v)", err, resp)
	}
	if _, resp, err := alice.GetRepoActionRun("alice", "sdkci", runID+100); err == nil || resp.StatusCode != http.StatusNotFound {
		t.Fatalf("unknown run: %v (%v)", err, resp)
	}
	if _, resp, err := bob.ListAdminActionRunners(gitea.ListActionRunnersOptions{}); err == nil || resp.StatusCode != http.StatusForbidden {
		t.Fatalf("bob lists the site's runners: %v (%v)", err, resp)
	}
	if resp, err := alice.DeleteRepoActionRun("alice", "sdkci", runID); err != nil || resp.StatusCode != http.StatusNoContent {
		t.Fatalf("DeleteRepoActionRun: %v (%v)", err, resp)
	}
	if _, resp, err := alice.GetRepoActionRun("alice", "sdkci", runID); err == nil || resp.StatusCode != http.StatusNotFound {
		t.Fatalf("deleted run: %v (%v)", err, resp)
	}
}

type listCount struct {
	n   int64
	err error
}

// countCheck is one list's size, as seen and as wanted.
type countCheck struct {
	name string
	got  int64
	err  error
	want int64
}

func (l listCount) as(name string, want int64) countCheck { return countCheck{name, l.n, l.err, want} }

func count(r *gitea.ActionWorkflowJobsResponse, _ *gitea.Response, err error) listCount {
	if err != nil {
		return listCount{err: err}
	}
	if int(r.TotalCount) != len(r.Jobs) {
		return listCount{n: -1}
	}
	return listCount{n: r.TotalCount}
}

func countRuns(r *gitea.ActionWorkflowRunsResponse, _ *gitea.Response, err error) listCount {
	if err != nil {
		return listCount{err: err}
	}
	if int(r.TotalCount) != len(r.WorkflowRuns) {
		return listCount{n: -1}
	}
	return listCount{n: r.TotalCount}
}
