package apitest_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"repohost/apitest"
	"repohost/models"
)

// postStatus reports a status of sha in alice/proj and returns it.
func postStatus(t *testing.T, e *apitest.Env, cred apitest.Cred, sha, state, context string) *models.CommitStatus {
	t.Helper()
	var st models.CommitStatus
	e.Do("POST", "repos/alice/proj/statuses/"+sha, map[string]any{"state": state, "context": context,
		"target_url": " https://ci.example.com/" + context + " ", "description": state + " of " + context}, cred).
		Expect(t, http.StatusCreated).JSON(t, &st)
	return &st
}

func combined(t *testing.T, e *apitest.Env, cred apitest.Cred, ref string) *models.CombinedStatus {
	t.Helper()
	var c models.CombinedStatus
	e.Do("GET", "repos/alice/proj/commits/"+ref+"/status", nil, cred).Expect(t, http.StatusOK).JSON(t, &c)
	return &c
}

func TestCommitStatuses(t *testing.T) {
	t.Parallel()
	p := newPREnv(t, nil)
	sha := p.originMain(t)
	bob := p.e.CreateUser("bob", false)
	p.e.Do("PUT", "repos/alice/proj/collaborators/bob", map[string]any{"permission": "read"}, p.cred).Expect(t, http.StatusNoContent)

	if c := combined(t, p.e, p.cred, sha); c.TotalCount != 0 || c.State != "pending" || len(c.Statuses) != 0 || c.SHA != sha {
		t.Fatalf("combined status without statuses: %+v", c)
	}
	// Writing takes write access to the code; reading, read access.
	body := map[string]any{"state": "success", "context": "ci"}
	p.e.Do("POST", "repos/alice/proj/statuses/"+sha, body, nil).Expect(t, http.StatusUnauthorized)
	p.e.Do("POST", "repos/alice/proj/statuses/"+sha, body, apitest.Basic(bob)).Expect(t, http.StatusForbidden)
	p.e.Do("GET", "repos/alice/proj/statuses/"+sha, nil, apitest.Basic(bob)).Expect(t, http.StatusOK)
	readOnly := apitest.TokenCred(p.e.Token(p.alice, "read:repository"))
	p.e.Do("POST", "repos/alice/proj/statuses/"+sha, body, readOnly).Expect(t, http.StatusForbidden)
	// A commit the repository does not have, a bad state, no state.
	p.e.Do("POST", "repos/alice/proj/statuses/"+strings.Repeat("ab", 20), body, p.cred).Expect(t, http.StatusNotFound)
	p.e.Do("POST", "repos/alice/proj/statuses/"+sha, map[string]any{"state": "great"}, p.cred).Expect(t, http.StatusUnprocessableEntity)
	p.e.Do("POST", "repos/alice/proj/statuses/"+sha, map[string]any{"context": "ci"}, p.cred).Expect(t, http.StatusUnprocessableEntity)

	// The SDK's sequence: the newest status of each context counts, and a
	// warning makes the combination a failure.
	postStatus(t, p.e, p.cred, sha, "pending", "ultraCI")
	postStatus(t, p.e, p.cred, sha, "warning", "warn/bot")
	postStatus(t, p.e, p.cred, sha, "failure", "ultraCI")
	postStatus(t, p.e, p.cred, "main", "pending", "ultraCI") // a branch names its commit
	last := postStatus(t, p.e, p.cred, sha[:10], "success", "ultraCI")
	if last.ID != 5 || last.State != "success" || last.TargetURL != "https://ci.example.com/ultraCI" ||
		last.Creator == nil || last.Creator.UserName != "alice" || !strings.HasSuffix(last.URL, "/api/v1/repos/alice/proj/statuses/"+sha) {
		t.Fatalf("created status %+v", last)
	}
	c := combined(t, p.e, p.cred, "main")
	if c.TotalCount != 2 || c.State != "failure" || len(c.Statuses) != 2 || c.Statuses[0].Context != "ultraCI" ||
		c.Statuses[0].State != "success" || c.Repository == nil || c.Repository.FullName != "alice/proj" {
		t.Fatalf("combined status %+v", c)
	}
	postStatus(t, p.e, p.cred, sha, "success", "warn/bot")
	if c := combined(t, p.e, p.cred, sha); c.State != "success" || c.TotalCount != 2 {
		t.Fatalf("combined status when all succeeded: %+v", c)
	}

	// Lists: newest first by default; filters, the reference's sorts, pages.
	list := func(path string) ([]*models.CommitStatus, *apitest.Response) {
		var out []*models.CommitStatus
		r := p.e.Do("GET", path, nil, p.cred).Expect(t, http.StatusOK)
		r.JSON(t, &out)
		return out, r
	}
	all, r := list("repos/alice/proj/statuses/" + sha)
	if len(all) != 6 || all[0].ID != 6 || all[5].ID != 1 || r.Header.Get("X-Total-Count") != "6" {
		t.Fatalf("statuses %d, first %d, total %s", len(all), all[0].ID, r.Header.Get("X-Total-Count"))
	}
	if got, _ := list("repos/alice/proj/commits/main/statuses?state=pending"); len(got) != 2 || got[0].ID != 4 {
		t.Fatalf("pending statuses %+v", got)
	}
	if got, _ := list("repos/alice/proj/statuses/" + sha + "?sort=oldest"); got[0].ID != 1 {
		t.Fatalf("oldest first: %d", got[0].ID)
	}
	if got, _ := list("repos/alice/proj/statuses/" + sha + "?sort=leastindex"); got[0].ID != 6 {
		t.Fatalf("leastindex: %d", got[0].ID)
	}
	if got, _ := list("repos/alice/proj/statuses/" + sha + "?sort=highestindex"); got[0].ID != 1 {
		t.Fatalf("highestindex: %d", got[0].ID)
	}
	page, r := list("repos/alice/proj/statuses/" + sha + "?limit=4&page=2")
	if len(page) != 2 || page[0].ID != 2 || !strings.Contains(r.Header.Get("Link"), `rel="prev"`) {
		t.Fatalf("page 2: %d statuses, Link %q", len(page), r.Header.Get("Link"))
	}
	// A name that is no commit has no statuses.
	if got, _ := list("repos/alice/proj/commits/nosuchbranch/statuses"); len(got) != 0 {
		t.Fatalf("statuses of an unknown ref: %+v", got)
	}
	p.e.Do("GET", "repos/alice/proj/statuses/"+sha+"?state=great", nil, p.cred).Expect(t, http.StatusUnprocessableEntity)

	// A private repository's statuses are as missing to an outsider.
	p.e.Do("PATCH", "repos/alice/proj", map[string]any{"private": true}, p.cred).Expect(t, http.StatusOK)
	carol := apitest.Basic(p.e.CreateUser("carol", false))
	p.e.Do("GET", "repos/alice/proj/commits/"+sha+"/status", nil, carol).Expect(t, http.StatusNotFound)
	p.e.Do("GET", "repos/alice/proj/statuses/"+sha, nil, nil).Expect(t, http.StatusNotFound)
	p.e.Do("POST", "repos/alice/proj/statuses/"+sha, body, carol).Expect(t, http.StatusNotFound)
}

// settle waits for the event consumers to finish what was emitted so far.
func settle(t *testing.T, e *apitest.Env) {
	t.Helper()
	if err := e.Deps.Events.Settle(t.Context()); err != nil {
		t.Fatal(err)
	}
}

func TestCommitStatusGatesMerge(t *testing.T) {
	t.Parallel()
	p := newPREnv(t, nil)
	bob := p.e.CreateUser("bob", false)
	p.e.Do("PUT", "repos/alice/proj/collaborators/bob", map[string]any{"permission": "write"}, p.cred).Expect(t, http.StatusNoContent)
	p.e.Do("POST", "repos/alice/proj/branch_protections", map[string]any{"rule_name": "main",
		"enable_status_check": true, "status_check_contexts": []string{"ci/*"}}, p.cred).Expect(t, http.StatusCreated)
	head := p.branch(t, "feat", "main", "feat.txt", "feat\n")
	pr := p.openPR(t, p.cred, "feat", "main", "Feature")
	path := fmt.Sprintf("repos/alice/proj/pulls/%d/merge", pr.Index)
	merge := map[string]any{"Do": "merge"}

	// No status matches the required pattern yet, then only a pending
	// one does; a status of another context does not count.
	p.e.Do("POST", path, merge, p.cred).Expect(t, http.StatusMethodNotAllowed)
	postStatus(t, p.e, p.cred, head, "success", "lint")
	postStatus(t, p.e, p.cred, head, "pending", "ci/build")
	p.e.Do("POST", path, merge, p.cred).Expect(t, http.StatusMethodNotAllowed)

	// Scheduled instead; a second schedule is a conflict; only its
	// scheduler or an admin may cancel it.
	auto := map[string]any{"Do": "merge", "merge_when_checks_succeed": true, "merge_title_field": "Auto merged"}
	p.e.Do("POST", path, auto, p.cred).Expect(t, http.StatusCreated)
	p.e.Do("POST", path, auto, p.cred).Expect(t, http.StatusConflict)
	p.e.Do("DELETE", path, nil, apitest.Basic(bob)).Expect(t, http.StatusForbidden)
	p.e.Do("DELETE", path, nil, p.cred).Expect(t, http.StatusNoContent)
	p.e.Do("DELETE", path, nil, p.cred).Expect(t, http.StatusNotFound)
	p.e.Do("POST", path, auto, apitest.Basic(bob)).Expect(t, http.StatusCreated)

	// A failure or a pending report changes nothing.
	postStatus(t, p.e, p.cred, head, "failure", "ci/build")
	settle(t, p.e)
	if got := p.getPR(t, pr.Index); got.HasMerged {
		t.Fatal("merged while a required check failed")
	}
	// The required context turns green: the consumer merges, as bob.
	postStatus(t, p.e, p.cred, head, "success", "ci/build")
	deadline := time.Now().Add(30 * time.Second)
	var got *models.PullRequest
	for {
		settle(t, p.e)
		if got = p.getPR(t, pr.Index); got.HasMerged || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if !got.HasMerged || got.MergedBy == nil || got.MergedBy.UserName != "bob" || got.MergedCommitID == nil || *got.MergedCommitID != p.originMain(t) {
		t.Fatalf("pull request after its checks succeeded: %+v", got)
	}
	if msg := p.git.must(p.clone, "log", "-1", "--format=%s", *got.MergedCommitID); strings.TrimSpace(msg) != "Auto merged" {
		t.Fatalf("merge commit title %q", msg)
	}
	// The merge took the schedule with it.
	p.e.Do("DELETE", path, nil, p.cred).Expect(t, http.StatusNotFound)

	// Checks that are green already merge at once.
	head2 := p.branch(t, "feat2", "main", "feat2.txt", "feat2\n")
	pr2 := p.openPR(t, p.cred, "feat2", "main", "Feature 2")
	postStatus(t, p.e, p.cred, head2, "success", "ci/build")
	p.e.Do("POST", fmt.Sprintf("repos/alice/proj/pulls/%d/merge", pr2.Index), auto, p.cred).Expect(t, http.StatusOK)
	if got := p.getPR(t, pr2.Index); !got.HasMerged {
		t.Fatal("pull request with green checks not merged")
	}
}

func TestCommitStatusWebhook(t *testing.T) {
	t.Parallel()
	e := hookEnv(t)
	rc := newReceiver(t)
	c := newClonedRepo(t, e, "proj", nil)
	mkHook(t, e, c.cred, "repos/alice/proj/hooks", giteaHook(rc.URL, "status"))
	c.git.must(c.clone, "fetch", "-q", "origin")
	sha := strings.TrimSpace(c.git.must(c.clone, "rev-parse", "origin/main"))
	st := postStatus(t, e, c.cred, sha, "success", "ci/build")
	calls := rc.waitFor(t, 1, 30*time.Second)
	call := calls[0]
	checkSigned(t, call, "s3cret")
	if call.event() != "status" || call.typ() != "status" {
		t.Fatalf("event %q type %q", call.event(), call.typ())
	}
	pl := call.payload(t)
	commit, _ := pl["commit"].(map[string]any)
	repo, _ := pl["repository"].(map[string]any)
	sender, _ := pl["sender"].(map[string]any)
	if pl["sha"] != sha || pl["state"] != "success" || pl["context"] != "ci/build" || pl["target_url"] != "https://ci.example.com/ci/build" ||
		pl["description"] != "success of ci/build" || pl["id"] == nil || pl["created_at"] == nil || pl["updated_at"] == nil ||
		commit == nil || commit["id"] != sha || repo == nil || repo["full_name"] != "alice/proj" || sender == nil || sender["login"] != "alice" {
		t.Fatalf("status payload %v", pl)
	}
	_ = st
	rc.quiet(t, 1, 300*time.Millisecond)
}
