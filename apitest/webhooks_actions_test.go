package apitest_test

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	runnerv1 "code.gitea.io/actions-proto-go/runner/v1"

	"repohost/apitest"
)

// The reference's WorkflowRunPayload, WorkflowJobPayload and
// ActionWorkflow (modules/structs), field for field; organization and
// pull_request are omitted when empty there too.
var (
	workflowRunPayloadFields = []string{"action", "repository", "sender", "workflow", "workflow_run"}
	workflowJobPayloadFields = []string{"action", "repository", "sender", "workflow_job"}
	workflowFields           = []string{"badge_url", "created_at", "html_url", "id", "name", "path", "state", "updated_at", "url"}
)

// TestWebhookWorkflowRunAndJob: a run a push starts and a runner carries
// out reaches the repository's, the owner's and the system hooks that
// listen for workflow_run and workflow_job, each status change in order,
// signed, shaped as the reference's; hooks that do not listen get none.
func TestWebhookWorkflowRunAndJob(t *testing.T) {
	t.Parallel()
	e := hookEnv(t)
	repo := newClonedRepo(t, e, "ci", nil)
	alice, adm := apitest.Basic(repo.alice), apitest.Basic(e.Admin)
	if err := e.Deps.Events.Settle(t.Context()); err != nil {
		t.Fatal(err)
	}
	repoRC, userRC, sysRC, deafRC := newReceiver(t), newReceiver(t), newReceiver(t), newReceiver(t)
	mkHook(t, e, alice, "repos/alice/ci/hooks", giteaHook(repoRC.URL, "workflow_run", "workflow_job"))
	mkHook(t, e, alice, "user/hooks", giteaHook(userRC.URL, "workflow_run", "workflow_job"))
	sys := giteaHook(sysRC.URL, "workflow_run", "workflow_job")
	sys["config"].(map[string]string)["is_system_webhook"] = "true"
	mkHook(t, e, adm, "admin/hooks", sys)
	others := []string{"create", "delete", "issues", "release", "repository", "status"}
	mkHook(t, e, alice, "repos/alice/ci/hooks", giteaHook(deafRC.URL, others...))
	mkHook(t, e, alice, "user/hooks", giteaHook(deafRC.URL, others...))
	deafSys := giteaHook(deafRC.URL, others...)
	deafSys["config"].(map[string]string)["is_system_webhook"] = "true"
	mkHook(t, e, adm, "admin/hooks", deafSys)

	runner := registerRunner(t, e, regToken(t, e, "repos/alice/ci/actions/runners/registration-token", alice), "r", "linux")
	// Under .github: the payload names the folder the file is in.
	repo.git.commitFile(repo.clone, ".github/workflows/build.yml", "on: push\njobs:\n  build:\n    runs-on: linux\n    steps:\n      - run: make\n", "ci")
	repo.git.must(repo.clone, "push", "-q", "origin", "main")
	runs := listRuns(t, e, "repos/alice/ci/actions/runs", alice)
	if len(runs) != 1 {
		t.Fatalf("runs after the push %s", mustJSON(runs))
	}
	// Each step lands before the next, so the deliveries' order is the
	// events' order whatever the queue does.
	repoRC.waitFor(t, 2, 10*time.Second)
	task := runner.fetch(t)
	if task == nil {
		t.Fatal("no task for the runner")
	}
	repoRC.waitFor(t, 4, 10*time.Second)
	runner.finish(t, task.Id, runnerv1.Result_RESULT_SUCCESS, nil)

	// Each step's events are emitted in one transaction and may be
	// delivered in either order; the steps arrive in order.
	steps := [][]string{
		{"workflow_job/queued", "workflow_run/requested"},
		{"workflow_job/in_progress", "workflow_run/in_progress"},
		{"workflow_job/completed", "workflow_run/completed"},
	}
	n := 0
	for _, st := range steps {
		n += len(st)
	}
	run := apiObject(t, e, nil, fmt.Sprintf("repos/alice/ci/actions/runs/%d", runs[0].ID))
	jobs := listJobs(t, e, "repos/alice/ci/actions/jobs", alice)
	if len(jobs) != 1 {
		t.Fatalf("jobs %s", mustJSON(jobs))
	}
	job := apiObject(t, e, nil, fmt.Sprintf("repos/alice/ci/actions/jobs/%d", jobs[0].ID))
	apiRepo := apiObject(t, e, alice, "repos/alice/ci")
	// The workflow is dated by the run's commit.
	commitTime := apiObject(t, e, alice, "repos/alice/ci/git/commits/"+runs[0].HeadSha)["commit"].(map[string]any)["author"].(map[string]any)["date"]
	for name, rc := range map[string]*receiver{"repository": repoRC, "user": userRC, "system": sysRC} {
		calls := rc.waitFor(t, n, 10*time.Second)
		var got [][]string
		byAction := map[string]hookCall{}
		off := 0
		for _, st := range steps {
			var step []string
			for _, c := range calls[off : off+len(st)] {
				step = append(step, c.typ()+"/"+c.payloadAction())
				byAction[c.typ()+"/"+c.payloadAction()] = c
			}
			off += len(st)
			slices.Sort(step)
			got = append(got, step)
		}
		if !reflect.DeepEqual(got, steps) {
			t.Fatalf("%s hook got %v, want %v", name, got, steps)
		}
		for _, c := range calls {
			checkWorkflowCall(t, c, run, job, apiRepo, commitTime)
		}
		// Done reads the final states: every field as the API shows it.
		if p := byAction["workflow_run/completed"].payload(t); !jsonEqual(p["workflow_run"], run) {
			t.Errorf("%s: completed workflow_run %s\n  differs from the API's %s", name, mustJSON(p["workflow_run"]), mustJSON(run))
		}
		if p := byAction["workflow_job/completed"].payload(t); !jsonEqual(p["workflow_job"], job) {
			t.Errorf("%s: completed workflow_job %s\n  differs from the API's %s", name, mustJSON(p["workflow_job"]), mustJSON(job))
		}
	}
	repoRC.quiet(t, n, 300*time.Millisecond)
	deafRC.quiet(t, 0, 0)
}

// sameTime tells whether two JSON date-times name one instant.
func sameTime(a, b any) bool {
	sa, _ := a.(string)
	sb, _ := b.(string)
	ta, errA := time.Parse(time.RFC3339, sa)
	tb, errB := time.Parse(time.RFC3339, sb)
	return errA == nil && errB == nil && ta.Equal(tb)
}

func jsonEqual(a, b any) bool {
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	var x, y any
	_ = json.Unmarshal(ja, &x)
	_ = json.Unmarshal(jb, &y)
	return reflect.DeepEqual(x, y)
}

// checkWorkflowCall checks one workflow delivery: headers, signature, the
// reference's shape, and that it names the run, job and repository the
// API shows, with the status its action announces.
func checkWorkflowCall(t *testing.T, c hookCall, run, job, repo map[string]any, commitTime any) {
	t.Helper()
	checkSigned(t, c, "s3cret")
	if c.event() != c.typ() {
		t.Errorf("%s: X-Gitea-Event %q", c.typ(), c.event())
	}
	p := c.payload(t)
	action := p["action"]
	if r, _ := p["repository"].(map[string]any); r["id"] != repo["id"] || r["full_name"] != repo["full_name"] {
		t.Errorf("%s %v: repository %s", c.typ(), action, mustJSON(r))
	}
	switch c.typ() {
	case "workflow_run":
		if got := keysOf(p); !slices.Equal(got, workflowRunPayloadFields) {
			t.Errorf("workflow_run payload fields %v, want %v", got, workflowRunPayloadFields)
		}
		if got := keysOf(p["workflow"]); !slices.Equal(got, workflowFields) {
			t.Errorf("workflow fields %v, want %v", got, workflowFields)
		}
		wf := p["workflow"].(map[string]any)
		if wf["id"] != "build.yml" || wf["path"] != ".github/workflows/build.yml" || wf["state"] != "active" ||
			!strings.HasSuffix(wf["html_url"].(string), "/alice/ci/src/branch/main/.github/workflows/build.yml") ||
			!sameTime(wf["created_at"], commitTime) || !sameTime(wf["updated_at"], commitTime) ||
			!strings.HasSuffix(wf["url"].(string), "/api/v1/repos/alice/ci/actions/workflows/build.yml") {
			t.Errorf("workflow %s", mustJSON(wf))
		}
		wr := p["workflow_run"].(map[string]any)
		if got := keysOf(wr); !slices.Equal(got, keysOf(run)) {
			t.Errorf("workflow_run fields %v, want the API's %v", got, keysOf(run))
		}
		status := map[any]string{"requested": "queued", "in_progress": "in_progress", "completed": "completed"}[action]
		if wr["id"] != run["id"] || wr["status"] != status || (status == "completed") != (wr["conclusion"] == "success") {
			t.Errorf("workflow_run %v: %s", action, mustJSON(wr))
		}
		if s, _ := p["sender"].(map[string]any); s["login"] != "alice" {
			t.Errorf("workflow_run sender %s", mustJSON(s))
		}
	case "workflow_job":
		if got := keysOf(p); !slices.Equal(got, workflowJobPayloadFields) {
			t.Errorf("workflow_job payload fields %v, want %v", got, workflowJobPayloadFields)
		}
		wj := p["workflow_job"].(map[string]any)
		if got := keysOf(wj); !slices.Equal(got, keysOf(job)) {
			t.Errorf("workflow_job fields %v, want the API's %v", got, keysOf(job))
		}
		if wj["id"] != job["id"] || wj["run_id"] != run["id"] || wj["status"] != action || (action == "completed") != (wj["conclusion"] == "success") {
			t.Errorf("workflow_job %v: %s", action, mustJSON(wj))
		}
	default:
		t.Errorf("unexpected delivery %s", c.typ())
	}
}

// TestWebhookWorkflowFormats: chat receivers get a message naming the
// workflow run or job and what happened to it.
func TestWebhookWorkflowFormats(t *testing.T) {
	t.Parallel()
	e := hookEnv(t)
	repo := newClonedRepo(t, e, "ci", nil)
	alice := apitest.Basic(repo.alice)
	rcs := map[string]*receiver{}
	for _, typ := range []string{"slack", "discord", "msteams", "matrix", "telegram", "dingtalk", "feishu", "wechatwork"} {
		rc := newReceiver(t)
		rcs[typ] = rc
		config := map[string]string{"url": rc.URL + "/" + typ, "content_type": "json"}
		if typ == "slack" {
			config["channel"] = "#dev"
		}
		mkHook(t, e, alice, "repos/alice/ci/hooks", map[string]any{"type": typ, "active": true,
			"events": []string{"workflow_run", "workflow_job"}, "config": config})
	}
	repo.git.commitFile(repo.clone, ".gitea/workflows/build.yml", "on: push\njobs:\n  compile:\n    runs-on: linux\n    steps:\n      - run: make\n", "ci")
	repo.git.must(repo.clone, "push", "-q", "origin", "main")
	for typ, rc := range rcs {
		for _, c := range rc.waitFor(t, 2, 10*time.Second) {
			body := string(c.Body)
			want := map[string][]string{"workflow_run": {"alice/ci", "Workflow run #1 requested", "build.yml", "by alice"},
				"workflow_job": {"alice/ci", "Workflow job compile queued"}}[c.event()]
			if want == nil {
				t.Errorf("%s receiver got event %q", typ, c.event())
			}
			for _, w := range want {
				if !strings.Contains(body, w) {
					t.Errorf("%s receiver's %s message lacks %q:\n%s", typ, c.event(), w, body)
				}
			}
		}
	}
}
