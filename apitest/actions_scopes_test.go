package apitest_test

import (
	"encoding/base64"
	"fmt"
	"net/http"
	"strings"
	"testing"

	runnerv1 "code.gitea.io/actions-proto-go/runner/v1"

	"repohost/apitest"
)

const scopeWorkflow = `on: [push]
jobs:
  one:
    runs-on: linux
    steps:
      - run: echo one
  two:
    needs: one
    runs-on: linux
    steps:
      - run: echo two
`

// TestActionsScopesRunAndList: runners registered with an organization's
// and a user's token run the jobs of that owner's repositories only (and
// another user's runner none of them); the organization's, the user's
// and the repository's jobs and runs lists follow the jobs through
// waiting, queued, in progress, success and failure, with the status
// filter, sort and order, and refuse a bad status (400) or a bad sort or
// order (422).
func TestActionsScopesRunAndList(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	aliceAcc := e.CreateUser("alice", false)
	alice := apitest.Basic(aliceAcc)
	bob := apitest.Basic(e.CreateUser("bob", false))
	roCreateOrg(t, e, alice, map[string]any{"username": "acme"})
	e.Do("POST", "orgs/acme/repos", map[string]any{"name": "svc", "auto_init": true}, alice).Expect(t, http.StatusCreated)
	roCreateRepo(t, e, alice, map[string]any{"name": "mine", "auto_init": true})
	roCreateRepo(t, e, bob, map[string]any{"name": "bobs", "auto_init": true})

	orgRunner := registerRunner(t, e, regToken(t, e, "orgs/acme/actions/runners/registration-token", alice), "acme-org", "linux")
	userRunner := registerRunner(t, e, regToken(t, e, "user/actions/runners/registration-token", alice), "alice-user", "linux")
	bobRunner := registerRunner(t, e, regToken(t, e, "user/actions/runners/registration-token", bob), "bob-user", "linux")

	content := base64.StdEncoding.EncodeToString([]byte(scopeWorkflow))
	for _, repo := range []string{"acme/svc", "alice/mine"} {
		e.Do("POST", "repos/"+repo+"/contents/.gitea/workflows/ci.yml", map[string]any{"content": content, "message": "ci"}, alice).
			Expect(t, http.StatusCreated)
	}

	const org, user, repo = "orgs/acme/actions/", "user/actions/", "repos/acme/svc/actions/"
	expectJobs := func(path, want string) {
		t.Helper()
		if got := jobNames(listJobs(t, e, path, alice)); got != want {
			t.Fatalf("%s: %s, want %s", path, got, want)
		}
	}
	expectRuns := func(path string, want int) {
		t.Helper()
		if got := listRuns(t, e, path, alice); len(got) != want {
			t.Fatalf("%s: %d runs, want %d: %s", path, len(got), want, mustJSON(got))
		}
	}
	expectJobs(org+"jobs", "one=queued/,two=waiting/")
	expectJobs(user+"jobs", "one=queued/,two=waiting/")
	expectJobs(org+"jobs?status=pending", "two=waiting/")
	expectJobs(org+"jobs?status=queued", "one=queued/")
	expectJobs(org+"jobs?sort=id&order=desc", "two=waiting/,one=queued/")
	expectJobs(repo+"jobs?sort=id&order=asc", "one=queued/,two=waiting/")
	expectRuns(org+"runs?status=queued", 1)
	expectRuns(user+"runs", 1)

	// Bob's runner sees no job of alice's or acme's; each of alice's
	// runners gets its own owner's job.
	if task := bobRunner.fetch(t); task != nil {
		t.Fatalf("bob's runner got a task of %v", task.Context.AsMap()["repository"])
	}
	// The user's runner asks first: acme's job is the older one, and not
	// hers.
	userTask := userRunner.fetch(t)
	if userTask == nil || userTask.Context.AsMap()["repository"] != "alice/mine" {
		t.Fatalf("user runner's task %v", userTask)
	}
	orgTask := orgRunner.fetch(t)
	if orgTask == nil || orgTask.Context.AsMap()["repository"] != "acme/svc" {
		t.Fatalf("organization runner's task %v", orgTask)
	}
	if task := orgRunner.fetch(t); task != nil {
		t.Fatalf("organization runner got a second task of %v", task.Context.AsMap()["repository"])
	}
	expectJobs(org+"jobs?status=in_progress", "one=in_progress/")
	expectJobs(user+"jobs?status=in_progress", "one=in_progress/")
	expectRuns(org+"runs?status=in_progress", 1)
	expectRuns(repo+"runs?status=in_progress", 1)
	if runners := listRunners(t, e, "orgs/acme/actions/runners", alice); runners["acme-org"] == nil || !runners["acme-org"].Busy {
		t.Fatalf("organization runner while running %s", mustJSON(runners))
	}

	// acme's first job succeeds, its second fails with a log.
	orgRunner.log(t, orgTask.Id, 0, true, "one ok")
	orgRunner.finish(t, orgTask.Id, runnerv1.Result_RESULT_SUCCESS, nil)
	expectJobs(org+"jobs", "one=completed/success,two=queued/")
	two := orgRunner.fetch(t)
	if two == nil || two.Needs["one"] == nil || two.Needs["one"].Result != runnerv1.Result_RESULT_SUCCESS {
		t.Fatalf("second task %v", two)
	}
	orgRunner.log(t, two.Id, 0, true, "two: boom")
	orgRunner.finish(t, two.Id, runnerv1.Result_RESULT_FAILURE, nil)
	expectJobs(org+"jobs?status=success", "one=completed/success")
	expectJobs(org+"jobs?status=failure", "two=completed/failure")
	expectJobs(org+"jobs?status=completed&order=desc", "two=completed/failure,one=completed/success")
	expectRuns(org+"runs?status=failure", 1)
	expectRuns(org+"runs?status=in_progress", 0)
	failed := listJobs(t, e, repo+"jobs?status=failure", alice)
	logs := e.Do("GET", fmt.Sprintf("%sjobs/%d/logs", repo, failed[0].ID), nil, alice).Expect(t, http.StatusOK)
	if !strings.HasSuffix(strings.TrimSpace(string(logs.Body)), " two: boom") {
		t.Fatalf("failed job's log %q", logs.Body)
	}
	// alice's own repository is still under way, and only hers.
	expectJobs(user+"jobs", "one=in_progress/,two=waiting/")
	expectRuns(user+"runs?status=in_progress", 1)
	expectRuns(user+"runs?status=failure", 0)
	userRunner.finish(t, userTask.Id, runnerv1.Result_RESULT_SUCCESS, nil)
	expectJobs(user+"jobs?status=queued", "two=queued/")

	// Bad filters: the reference's 400 for a status, 422 for sort and order.
	for _, base := range []string{org, user, repo} {
		e.Do("GET", base+"jobs?status=bogus", nil, alice).Expect(t, http.StatusBadRequest)
		e.Do("GET", base+"runs?status=bogus", nil, alice).Expect(t, http.StatusBadRequest)
		e.Do("GET", base+"jobs?sort=name", nil, alice).Expect(t, http.StatusUnprocessableEntity)
		e.Do("GET", base+"jobs?order=sideways", nil, alice).Expect(t, http.StatusUnprocessableEntity)
	}
	// Outsiders: bob is not in acme; acme's lists are not his.
	e.Do("GET", org+"jobs", nil, bob).Expect(t, http.StatusForbidden)
	if got := listJobs(t, e, user+"jobs", bob); len(got) != 0 {
		t.Fatalf("bob's jobs %s", jobNames(got))
	}
}
