package apitest_test

import (
	"fmt"
	"net/http"
	"os"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"repohost/apitest"
	"repohost/models"
)

// wrFixture is a repository with one of everything a write route can
// name, and the ids the routes need.
type wrFixture struct {
	ids map[string]string
}

func wrSetup(t *testing.T, e *apitest.Env, owner *apitest.Account) wrFixture {
	t.Helper()
	cred := apitest.Basic(owner)
	full := owner.User.Name + "/wr"
	roCreateRepo(t, e, cred, map[string]any{"name": "wr", "auto_init": true})
	ids := map[string]string{}
	var is models.Issue
	e.Do("POST", "repos/"+full+"/issues", map[string]any{"title": "first"}, cred).Expect(t, http.StatusCreated).JSON(t, &is)
	var c models.Comment
	e.Do("POST", "repos/"+full+"/issues/1/comments", map[string]any{"body": "c"}, cred).Expect(t, http.StatusCreated).JSON(t, &c)
	ids["comment"] = fmt.Sprint(c.ID)
	var l models.Label
	e.Do("POST", "repos/"+full+"/labels", map[string]any{"name": "l", "color": "#00aabb"}, cred).Expect(t, http.StatusCreated).JSON(t, &l)
	ids["label"] = fmt.Sprint(l.ID)
	var m models.Milestone
	e.Do("POST", "repos/"+full+"/milestones", map[string]any{"title": "m"}, cred).Expect(t, http.StatusCreated).JSON(t, &m)
	ids["milestone"] = fmt.Sprint(m.ID)
	var pr models.Project
	e.Do("POST", "repos/"+full+"/projects", map[string]any{"title": "p"}, cred).Expect(t, http.StatusCreated).JSON(t, &pr)
	ids["project"] = fmt.Sprint(pr.ID)
	var rel models.Release
	e.Do("POST", "repos/"+full+"/releases", map[string]any{"tag_name": "v1"}, cred).Expect(t, http.StatusCreated).JSON(t, &rel)
	ids["release"] = fmt.Sprint(rel.ID)
	var tm models.TrackedTime
	e.Do("POST", "repos/"+full+"/issues/1/times", map[string]any{"time": 60}, cred).Expect(t, http.StatusOK).JSON(t, &tm)
	ids["time"] = fmt.Sprint(tm.ID)
	e.Do("POST", "repos/"+full+"/branch_protections", map[string]any{"rule_name": "main"}, cred).Expect(t, http.StatusCreated)
	var readme models.ContentsResponse
	e.Do("GET", "repos/"+full+"/contents/README.md", nil, cred).Expect(t, http.StatusOK).JSON(t, &readme)
	ids["sha"] = readme.SHA
	var b models.Branch
	e.Do("GET", "repos/"+full+"/branches/main", nil, cred).Expect(t, http.StatusOK).JSON(t, &b)
	ids["commit"] = b.Commit.ID
	// A pull request with a review, and a second branch a reader may
	// propose.
	for _, branch := range []string{"feature", "reader-feature"} {
		e.Do("POST", "repos/"+full+"/contents/"+branch+".txt", map[string]any{"content": "aGk=", "new_branch": branch}, cred).
			Expect(t, http.StatusCreated)
	}
	var pull models.PullRequest
	e.Do("POST", "repos/"+full+"/pulls", map[string]any{"head": "feature", "base": "main", "title": "pr"}, cred).
		Expect(t, http.StatusCreated).JSON(t, &pull)
	ids["pull"] = fmt.Sprint(pull.Index)
	var rv models.PullReview
	e.Do("POST", fmt.Sprintf("repos/%s/pulls/%d/reviews", full, pull.Index), map[string]any{"event": "COMMENT", "body": "b",
		"comments": []map[string]any{{"path": "feature.txt", "body": "line", "new_position": 1}}}, cred).
		Expect(t, http.StatusOK).JSON(t, &rv)
	ids["review"] = fmt.Sprint(rv.ID)
	var rcs []*models.PullReviewComment
	e.Do("GET", fmt.Sprintf("repos/%s/pulls/%d/reviews/%d/comments", full, pull.Index, rv.ID), nil, cred).
		Expect(t, http.StatusOK).JSON(t, &rcs)
	ids["rcomment"] = fmt.Sprint(rcs[0].ID)
	return wrFixture{ids: ids}
}

// wrRoute is how the test calls one write operation: its path
// parameters and a body that passes binding, so that what answers is the
// permission check.
func (f wrFixture) route(opID, path string) (string, any, bool) {
	id := map[string]string{"issueEditLabel": f.ids["label"], "issueDeleteLabel": f.ids["label"],
		"issueRemoveLabel": f.ids["label"], "issueEditMilestone": f.ids["milestone"], "issueDeleteMilestone": f.ids["milestone"],
		"issueEditComment": f.ids["comment"], "issueDeleteComment": f.ids["comment"], "issuePostCommentReaction": f.ids["comment"],
		"issueDeleteCommentReaction": f.ids["comment"], "issueDeleteTime": f.ids["time"], "repoEditRelease": f.ids["release"],
		"repoDeleteRelease": f.ids["release"], "repoCreateReleaseAttachment": f.ids["release"],
		"repoDeleteReleaseAttachment": f.ids["release"], "repoEditProject": f.ids["project"], "repoDeleteProject": f.ids["project"],
		"repoGetPullReview": f.ids["review"], "repoSubmitPullReview": f.ids["review"], "repoDeletePullReview": f.ids["review"],
		"repoDismissPullReview": f.ids["review"], "repoUnDismissPullReview": f.ids["review"], "repoCreatePullReviewCommentReply": f.ids["rcomment"],
		"repoResolvePullReviewComment": f.ids["rcomment"], "repoUnresolvePullReviewComment": f.ids["rcomment"], "repoDeleteKey": "1", "repoEditHook": "1", "repoDeleteHook": "1", "repoTestHook": "1", "repoRedeliverHookDelivery": "1",
		"repoEditTagProtection": "1", "repoDeleteTagProtection": "1"}[opID]
	index := "1"
	if strings.Contains(path, "/pulls/") {
		index = f.ids["pull"]
	}
	r := strings.NewReplacer("{index}", index, "{id}", id, "{attachment_id}", "1", "{branch}", "main", "{name}", "main",
		"{delivery_id}", "1", "{run}", "1", "{job_id}", "1", "{workflow_id}", "ci.yml", "{topic}", "go", "{filepath}", "README.md", "{tag}", "v1", "{collaborator}", "outsider", "{user}", "outsider", "{team}", "owners", "{sha}", f.ids["commit"], "{position}", "1",
		"{secretname}", "WR_SECRET", "{variablename}", "WR_VARIABLE")
	bodies := map[string]any{
		"repoEdit": map[string]any{"description": "x"}, "issueCreateIssue": map[string]any{"title": "t"},
		"issueEditIssue": map[string]any{"title": "t2"}, "issueEditIssueDeadline": map[string]any{"due_date": "2030-01-01T00:00:00Z"},
		"issueCreateComment": map[string]any{"body": "c"}, "issueEditComment": map[string]any{"body": "c2"},
		"issueCreateLabel": map[string]any{"name": "l2", "color": "#00aabb"}, "issueEditLabel": map[string]any{"name": "l3"},
		"issueAddLabel": map[string]any{"labels": []string{"l"}}, "issueReplaceLabels": map[string]any{"labels": []string{"l"}},
		"issueCreateMilestone": map[string]any{"title": "m2"}, "issueEditMilestone": map[string]any{"title": "m3"},
		"issuePostIssueReaction": map[string]any{"content": "+1"}, "issueDeleteIssueReaction": map[string]any{"content": "+1"},
		"issuePostCommentReaction": map[string]any{"content": "+1"}, "issueDeleteCommentReaction": map[string]any{"content": "+1"},
		"issueAddTime": map[string]any{"time": 60}, "repoCreateBranch": map[string]any{"new_branch_name": "b2"},
		"repoUpdateBranch": map[string]any{"new_commit_id": f.ids["commit"]}, "repoRenameBranch": map[string]any{"name": "b3"},
		"repoCreateBranchProtection": map[string]any{"rule_name": "x*"}, "repoEditBranchProtection": map[string]any{},
		"repoUpdateBranchProtectionPriories": map[string]any{"ids": []int{}}, "repoUpdateTopics": map[string]any{"topics": []string{"a"}},
		"repoCreateFile": map[string]any{"content": "aGk="}, "repoUpdateFile": map[string]any{"content": "aGk=", "sha": f.ids["sha"]},
		"repoDeleteFile": map[string]any{"sha": f.ids["sha"]}, "repoCreateTag": map[string]any{"tag_name": "v2"},
		"repoCreateRelease": map[string]any{"tag_name": "v3"}, "repoEditRelease": map[string]any{"name": "x"},
		"repoCreateProject": map[string]any{"title": "p2"}, "repoEditProject": map[string]any{"title": "p3"},
		"repoAddCollaborator": map[string]any{"permission": "read"}, "repoTransfer": map[string]any{"new_owner": "outsider"},
		"repoCreateKey":         map[string]any{"title": "k", "key": "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIJ0000000000000000000000000000000000000000000"},
		"createFork":            map[string]any{},
		"repoCreatePullRequest": map[string]any{"head": "reader-feature", "base": "main", "title": "from a reader"},
		"repoEditPullRequest":   map[string]any{"title": "x"}, "repoMergePullRequest": map[string]any{"Do": "merge"},
		"repoCreatePullReview": map[string]any{"event": "COMMENT", "body": "from a reader"},
		"repoSubmitPullReview": map[string]any{"event": "APPROVED"}, "repoDismissPullReview": map[string]any{"message": "x"},
		"repoCreatePullReviewRequests":     map[string]any{"reviewers": []string{"outsider"}},
		"repoDeletePullReviewRequests":     map[string]any{"reviewers": []string{"outsider"}},
		"repoCreatePullReviewCommentReply": map[string]any{"body": "reply"},
		"repoCreateHook":                   map[string]any{"type": "gitea", "config": map[string]string{"url": "http://example.com/", "content_type": "json"}},
		"repoEditHook":                     map[string]any{"active": true}, "ActionsDispatchWorkflow": map[string]any{"ref": "main"},
		"repoCreateStatus":        map[string]any{"state": "success", "context": "ci"},
		"repoCreateTagProtection": map[string]any{"name_pattern": "v*"}, "repoEditTagProtection": map[string]any{"name_pattern": "w*"},
		"issueCreateIssueDependencies": map[string]any{"index": 1}, "issueRemoveIssueDependencies": map[string]any{"index": 1},
		"issueCreateIssueBlocking": map[string]any{"index": 1}, "issueRemoveIssueBlocking": map[string]any{"index": 1},
		"updateRepoSecret": map[string]any{"data": "x"}, "createRepoVariable": map[string]any{"value": "x"},
		"updateRepoVariable": map[string]any{"value": "y"},
	}
	if opID == "repoCreateFile" {
		r = strings.NewReplacer("{filepath}", "new.txt")
	}
	// Multipart uploads are left to the releases tests' own check.
	skip := opID == "repoCreateReleaseAttachment"
	return r.Replace(strings.TrimPrefix(path, "/")), bodies[opID], skip
}

// wrReaderMay lists the write routes a read collaborator may use, as in
// the reference, with what they answer: opening an issue, commenting,
// reacting; a transfer that is not pending is 404 to anyone who sees it.
var wrReaderMay = map[string]int{
	"issueCreateIssue": http.StatusCreated, "issueCreateComment": http.StatusCreated,
	"issuePostIssueReaction": http.StatusCreated, "issueDeleteIssueReaction": http.StatusNoContent,
	"issuePostCommentReaction": http.StatusCreated, "issueDeleteCommentReaction": http.StatusNoContent,
	"acceptRepoTransfer": http.StatusNotFound, "rejectRepoTransfer": http.StatusNotFound,
	// Pull requests: a reader forks, proposes and reviews; merging is
	// 405 and choosing reviewers 422, as the reference answers.
	"createFork": http.StatusAccepted, "repoCreatePullRequest": http.StatusCreated, "repoCreatePullReview": http.StatusOK,
	"repoMergePullRequest": http.StatusMethodNotAllowed, "repoCreatePullReviewRequests": http.StatusUnprocessableEntity,
	"repoDeletePullReviewRequests": http.StatusUnprocessableEntity,
	// A reader joins a review's conversation but does not resolve it.
	"repoCreatePullReviewCommentReply": http.StatusCreated,
	// Cancelling a scheduled merge when none is scheduled is 404 to
	// anyone who reads the pull request, as the reference answers.
	"repoCancelScheduledAutoMerge": http.StatusNotFound,
	// Dependencies of an issue the caller may not change are not found,
	// as the reference answers.
	"issueCreateIssueDependencies": http.StatusNotFound, "issueRemoveIssueDependencies": http.StatusNotFound,
	"issueCreateIssueBlocking": http.StatusNotFound, "issueRemoveIssueBlocking": http.StatusNotFound,
	// Anyone who sees a repository watches it (another's issue
	// subscription stays refused).
	"userCurrentPutSubscription": http.StatusOK, "userCurrentDeleteSubscription": http.StatusNoContent,
	// Marking one's own notification threads read.
	"notifyReadRepoList": http.StatusResetContent,
}

// TestWriteRoutesRefuseReadCollaborators walks every write operation of
// swagger.yml under /repos/{owner}/{repo} (so a new route is covered the
// day it is added) as a read collaborator and a read-only token of the
// owner: each answers 403, except the few readers may use.
func TestWriteRoutesRefuseReadCollaborators(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	owner, reader := e.CreateUser("owner", false), e.CreateUser("reader", false)
	e.CreateUser("outsider", false)
	f := wrSetup(t, e, owner)
	e.Do("PUT", "repos/owner/wr/collaborators/reader", map[string]any{"permission": "read"}, apitest.Basic(owner)).
		Expect(t, http.StatusNoContent)
	raw, err := os.ReadFile("../swagger.yml")
	if err != nil {
		t.Fatal(err)
	}
	var spec struct {
		Paths map[string]map[string]struct {
			OperationID string `yaml:"operationId"`
		} `yaml:"paths"`
	}
	if err := yaml.Unmarshal(raw, &spec); err != nil {
		t.Fatal(err)
	}
	routes := 0
	for path, ops := range spec.Paths {
		if !strings.HasPrefix(path, "/repos/{owner}/{repo}") {
			continue
		}
		for method, op := range ops {
			if method == "get" || method == "parameters" || op.OperationID == "" {
				continue
			}
			url, body, skip := f.route(op.OperationID, strings.Replace(strings.Replace(path, "{owner}", "owner", 1), "{repo}", "wr", 1))
			if skip {
				continue
			}
			routes++
			want, ok := wrReaderMay[op.OperationID]
			if !ok {
				want = http.StatusForbidden
			}
			r := e.Do(strings.ToUpper(method), url, body, apitest.Basic(reader))
			if r.Status != want {
				t.Errorf("%s %s (%s) as a read collaborator: %d %s, want %d", strings.ToUpper(method), url, op.OperationID, r.Status, r.Body, want)
			}
		}
	}
	if routes < 50 {
		t.Fatalf("only %d write routes walked", routes)
	}
	t.Logf("%d write routes refuse a read collaborator", routes)
}
