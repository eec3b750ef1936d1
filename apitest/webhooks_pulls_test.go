package apitest_test

import (
	"fmt"
	"net/http"
	"slices"
	"testing"
	"time"

	"repohost/apitest"
	"repohost/models"
)

// pullPayloadFields are the reference's PullRequestPayload fields
// ("changes" is omitted when empty there too).
var pullPayloadFields = []string{"action", "commit_id", "number", "pull_request", "repository", "requested_reviewer", "review", "sender"}

// TestWebhookPullRequests follows a pull request from fork to merge and
// checks what a hook with the pull request events receives, and that a
// hook without them receives nothing.
func TestWebhookPullRequests(t *testing.T) {
	t.Parallel()
	e := hookEnv(t)
	p := &prEnv{clonedRepo: newClonedRepo(t, e, "proj", nil), e: e}
	bob := e.CreateUser("bob", false)
	bobCred := apitest.Basic(bob)
	e.Do("PUT", "repos/alice/proj/collaborators/bob", map[string]any{"permission": "read"}, apitest.Basic(p.alice)).Expect(t, http.StatusNoContent)

	rc, other := newReceiver(t), newReceiver(t)
	mkHook(t, e, p.cred, "repos/alice/proj/hooks", giteaHook(rc.URL, "pull_request", "fork"))
	mkHook(t, e, p.cred, "repos/alice/proj/hooks", giteaHook(other.URL, "issues", "issue_comment", "release", "repository"))
	s := &stepper{t: t, rc: rc}

	var fork models.Repository
	e.Do("POST", "repos/alice/proj/forks", map[string]any{}, bobCred).Expect(t, http.StatusAccepted).JSON(t, &fork)
	c := s.expect("fork", "fork/")[0]
	checkSigned(t, c, "s3cret")
	fp := c.payload(t)
	if got := keysOf(fp); !slices.Equal(got, []string{"forkee", "repository", "sender"}) {
		t.Errorf("fork payload fields %v", got)
	}
	if c.event() != "fork" || jsonField(fp, "forkee", "full_name") != "alice/proj" || jsonField(fp, "repository", "full_name") != "bob/proj" ||
		jsonField(fp, "sender", "login") != "bob" {
		t.Errorf("fork delivery %s: forkee %q repository %q sender %q", c.event(),
			jsonField(fp, "forkee", "full_name"), jsonField(fp, "repository", "full_name"), jsonField(fp, "sender", "login"))
	}

	p.branch(t, "feat", "main", "a.txt", "one")
	pr := p.openPR(t, p.cred, "feat", "main", "Add a")
	c = s.expect("open", "pull_request/opened")[0]
	op := checkPullDelivery(t, c, "pull_request", pr.Index)
	if jsonField(op, "pull_request", "title") != "Add a" || jsonField(op, "pull_request", "head", "ref") != "feat" {
		t.Errorf("opened pull_request %v", op["pull_request"])
	}

	sha := p.push(t, "feat", "a.txt", "two")
	c = s.expect("sync", "pull_request_sync/synchronized")[0]
	sp := checkPullDelivery(t, c, "pull_request", pr.Index)
	if sp["commit_id"] != sha || jsonField(sp, "pull_request", "head", "sha") != sha {
		t.Errorf("synchronized commit_id %v head %q, want %s", sp["commit_id"], jsonField(sp, "pull_request", "head", "sha"), sha)
	}

	path := fmt.Sprintf("repos/alice/proj/pulls/%d", pr.Index)
	e.Do("POST", path+"/requested_reviewers", map[string]any{"reviewers": []string{"bob"}}, p.cred).Expect(t, http.StatusCreated)
	c = s.expect("request review", "pull_request_review_request/review_requested")[0]
	qp := checkPullDelivery(t, c, "pull_request", pr.Index)
	if jsonField(qp, "requested_reviewer", "login") != "bob" {
		t.Errorf("requested_reviewer %v", qp["requested_reviewer"])
	}

	e.Do("POST", path+"/reviews", map[string]any{"event": "APPROVED", "body": "lgtm"}, bobCred).Expect(t, http.StatusOK)
	c = s.expect("approve", "pull_request_review_approved/reviewed")[0]
	rp := checkPullDelivery(t, c, "pull_request_approved", pr.Index)
	if jsonField(rp, "review", "type") != "pull_request_review_approved" || jsonField(rp, "review", "content") != "lgtm" || jsonField(rp, "sender", "login") != "bob" {
		t.Errorf("review %v sender %v", rp["review"], jsonField(rp, "sender", "login"))
	}

	e.Do("POST", fmt.Sprintf("repos/alice/proj/issues/%d/comments", pr.Index), map[string]any{"body": "thanks"}, apitest.Basic(p.alice)).Expect(t, http.StatusCreated)
	c = s.expect("comment", "pull_request_comment/created")[0]
	checkSigned(t, c, "s3cret")
	cp := c.payload(t)
	if c.event() != "issue_comment" || cp["is_pull"] != true || jsonField(cp, "comment", "body") != "thanks" {
		t.Errorf("comment delivery %s: is_pull %v comment %v", c.event(), cp["is_pull"], cp["comment"])
	}

	e.Do("POST", path+"/merge", map[string]any{"Do": "merge"}, p.cred).Expect(t, http.StatusOK)
	c = s.expect("merge", "pull_request/closed")[0]
	mp := checkPullDelivery(t, c, "pull_request", pr.Index)
	pull, _ := mp["pull_request"].(map[string]any)
	if pull["merged"] != true || pull["state"] != "closed" || jsonField(mp, "sender", "login") != "alice" {
		t.Errorf("merged pull_request merged %v state %v", pull["merged"], pull["state"])
	}

	other.quiet(t, 0, 500*time.Millisecond)
}

// checkPullDelivery checks a pull request delivery's signature, header
// event and top-level fields, and returns its payload.
func checkPullDelivery(t *testing.T, c hookCall, event string, index int64) map[string]any {
	t.Helper()
	return checkPullDeliveryIn(t, c, event, "alice/proj", index, pullPayloadFields)
}

// checkPullDeliveryIn is checkPullDelivery for pull request index of repo
// with payload fields want.
func checkPullDeliveryIn(t *testing.T, c hookCall, event, repo string, index int64, want []string) map[string]any {
	t.Helper()
	checkSigned(t, c, "s3cret")
	if c.event() != event {
		t.Errorf("%s: X-Gitea-Event %q, want %q", c.typ(), c.event(), event)
	}
	p := c.payload(t)
	if got := keysOf(p); !slices.Equal(got, want) {
		t.Errorf("%s payload fields %v, want %v", c.typ(), got, want)
	}
	if p["number"] != float64(index) || jsonField(p, "pull_request", "number") != fmt.Sprint(index) || jsonField(p, "repository", "full_name") != repo {
		t.Errorf("%s: number %v pull_request.number %q repository %q", c.typ(), p["number"], jsonField(p, "pull_request", "number"), jsonField(p, "repository", "full_name"))
	}
	return p
}

// jsonField reads a string or number at path of a JSON object.
func jsonField(m map[string]any, path ...string) string {
	switch v := jsonAt(m, path...).(type) {
	case string:
		return v
	case float64:
		return fmt.Sprint(int64(v))
	}
	return ""
}

// jsonAt reads the value at path of a JSON object (nil when absent).
func jsonAt(m map[string]any, path ...string) any {
	var cur any = m
	for _, k := range path {
		mm, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		cur = mm[k]
	}
	return cur
}
