package apitest_test

import (
	"fmt"
	"net/http"
	"slices"
	"sort"
	"testing"
	"time"

	"repohost/apitest"
	"repohost/models"
)

// TestWebhookPullRequestSubEvents drives the pull request events of an
// organization's repository one by one: an edit (with what it replaced),
// labels set and cleared, a milestone set and removed, assignees set and
// removed, reviews requesting changes and commenting (and a dismissal,
// which announces nothing), closing and reopening, and a team's review
// request, told as the reference does to each member but the pull
// request's author, and not at all when taken back.
func TestWebhookPullRequestSubEvents(t *testing.T) {
	t.Parallel()
	e := hookEnv(t)
	alice, bob, dave := e.CreateUser("alice", false), e.CreateUser("bob", false), e.CreateUser("dave", false)
	e.CreateUser("carol", false)
	a, b, d := apitest.Basic(alice), apitest.Basic(bob), apitest.Basic(dave)
	org := roCreateOrg(t, e, a, map[string]any{"username": "acme"})
	roAddMember(t, e, org.ID, dave, true, false)
	e.Do("POST", "orgs/acme/repos", map[string]any{"name": "proj", "auto_init": true}, a).Expect(t, http.StatusCreated)
	team := tmTeam(t, e, a, "acme", map[string]any{"name": "reviewers", "units_map": tmAllUnits("write")}, "alice", "bob", "carol", "dave")
	e.Do("PUT", fmt.Sprintf("teams/%d/repos/acme/proj", team.ID), nil, a).Expect(t, http.StatusNoContent)
	e.Do("POST", "repos/acme/proj/branches", map[string]any{"new_branch_name": "feat"}, a).Expect(t, http.StatusCreated)
	e.Do("POST", "repos/acme/proj/contents/a.txt", map[string]any{"content": "b25lCg==", "branch": "feat", "message": "add a"}, a).
		Expect(t, http.StatusCreated)

	rc := newReceiver(t)
	hook := mkHook(t, e, a, "repos/acme/proj/hooks", giteaHook(rc.URL, "pull_request"))
	hookPath := fmt.Sprintf("repos/acme/proj/hooks/%d", hook.ID)
	s := &stepper{t: t, rc: rc}
	const repo = "acme/proj"
	check := func(c hookCall, event string, index int64) map[string]any {
		t.Helper()
		return checkPullDeliveryIn(t, c, event, repo, index, pullPayloadFields)
	}

	var pr models.PullRequest
	e.Do("POST", "repos/acme/proj/pulls", map[string]any{"head": "feat", "base": "main", "title": "Add a", "body": "first body"}, a).
		Expect(t, http.StatusCreated).JSON(t, &pr)
	check(s.expect("open", "pull_request/opened")[0], "pull_request", pr.Index)
	path := fmt.Sprintf("repos/acme/proj/pulls/%d", pr.Index)
	issuePath := fmt.Sprintf("repos/acme/proj/issues/%d", pr.Index)

	// Edited: "changes" names the title and body replaced.
	e.Do("PATCH", path, map[string]any{"title": "Add a, better", "body": "second body"}, a).Expect(t, http.StatusCreated)
	withChanges := append(slices.Clone(pullPayloadFields), "changes")
	sort.Strings(withChanges)
	p := checkPullDeliveryIn(t, s.expect("edit", "pull_request/edited")[0], "pull_request", repo, pr.Index, withChanges)
	if jsonField(p, "changes", "title", "from") != "Add a" || jsonField(p, "changes", "body", "from") != "first body" ||
		jsonField(p, "pull_request", "title") != "Add a, better" || jsonField(p, "pull_request", "body") != "second body" ||
		jsonField(p, "sender", "login") != "alice" || p["requested_reviewer"] != nil || p["review"] != nil || p["commit_id"] != "" {
		t.Errorf("edited payload: changes %v title %q body %q", p["changes"], jsonField(p, "pull_request", "title"), jsonField(p, "pull_request", "body"))
	}
	// Only the title: only it is named.
	e.Do("PATCH", path, map[string]any{"title": "Add a, best"}, a).Expect(t, http.StatusCreated)
	p = checkPullDeliveryIn(t, s.expect("edit title", "pull_request/edited")[0], "pull_request", repo, pr.Index, withChanges)
	if jsonField(p, "changes", "title", "from") != "Add a, better" || !slices.Equal(keysOf(p["changes"]), []string{"title"}) {
		t.Errorf("title-only edit changes %v", p["changes"])
	}

	// Labels: set, then cleared.
	label := isLabel(t, e, repo, a, map[string]any{"name": "bug", "color": "#ff0000"})
	e.Do("POST", issuePath+"/labels", map[string]any{"labels": []int64{label.ID}}, a).Expect(t, http.StatusOK)
	p = check(s.expect("label", "pull_request_label/label_updated")[0], "pull_request", pr.Index)
	labels, _ := jsonAt(p, "pull_request", "labels").([]any)
	if len(labels) != 1 || labels[0].(map[string]any)["name"] != "bug" {
		t.Errorf("labelled pull request labels %v", labels)
	}
	// Taking the last label off is an update; only the clear operation
	// is label_cleared, as in the reference.
	e.Do("DELETE", fmt.Sprintf("%s/labels/%d", issuePath, label.ID), nil, a).Expect(t, http.StatusNoContent)
	p = check(s.expect("remove the last label", "pull_request_label/label_updated")[0], "pull_request", pr.Index)
	if labels, _ := jsonAt(p, "pull_request", "labels").([]any); len(labels) != 0 {
		t.Errorf("unlabelled pull request labels %v", labels)
	}
	e.Do("POST", issuePath+"/labels", map[string]any{"labels": []int64{label.ID}}, a).Expect(t, http.StatusOK)
	s.expect("label again", "pull_request_label/label_updated")
	e.Do("DELETE", issuePath+"/labels", nil, a).Expect(t, http.StatusNoContent)
	p = check(s.expect("clear labels", "pull_request_label/label_cleared")[0], "pull_request", pr.Index)
	if labels, _ := jsonAt(p, "pull_request", "labels").([]any); len(labels) != 0 {
		t.Errorf("cleared pull request labels %v", labels)
	}
	// Clearing no labels changes nothing and announces nothing.
	e.Do("DELETE", issuePath+"/labels", nil, a).Expect(t, http.StatusNoContent)
	rc.quiet(t, s.seen, 300*time.Millisecond)

	// Milestone: set, then removed.
	ms := isMilestone(t, e, repo, a, map[string]any{"title": "v1"})
	e.Do("PATCH", path, map[string]any{"milestone": ms.ID}, a).Expect(t, http.StatusCreated)
	p = check(s.expect("milestone", "pull_request_milestone/milestoned")[0], "pull_request", pr.Index)
	if jsonField(p, "pull_request", "milestone", "title") != "v1" {
		t.Errorf("milestoned pull request milestone %v", jsonAt(p, "pull_request", "milestone"))
	}
	// The pull request edit takes milestone 0 for "unchanged" (the SDK
	// always sends it), as the reference does; the issue edit removes it.
	e.Do("PATCH", path, map[string]any{"milestone": 0}, a).Expect(t, http.StatusCreated)
	rc.quiet(t, s.seen, 300*time.Millisecond)
	e.Do("PATCH", issuePath, map[string]any{"milestone": 0}, a).Expect(t, http.StatusCreated)
	p = check(s.expect("demilestone", "pull_request_milestone/demilestoned")[0], "pull_request", pr.Index)
	if jsonAt(p, "pull_request", "milestone") != nil {
		t.Errorf("demilestoned pull request milestone %v", jsonAt(p, "pull_request", "milestone"))
	}

	// Assignees: set, then removed.
	e.Do("PATCH", path, map[string]any{"assignees": []string{"bob"}}, a).Expect(t, http.StatusCreated)
	p = check(s.expect("assign", "pull_request_assign/assigned")[0], "pull_request", pr.Index)
	if as, _ := jsonAt(p, "pull_request", "assignees").([]any); len(as) != 1 || as[0].(map[string]any)["login"] != "bob" {
		t.Errorf("assigned pull request assignees %v", jsonAt(p, "pull_request", "assignees"))
	}
	// As in the reference, one delivery per user taken off or added.
	e.Do("PATCH", path, map[string]any{"assignees": []string{"carol", "dave"}}, a).Expect(t, http.StatusCreated)
	got := s.expect("reassign", "pull_request_assign/unassigned", "pull_request_assign/assigned", "pull_request_assign/assigned")
	// Queued in that order (workers may send them in any order).
	if ds := hookDeliveries(t, e, a, hookPath); len(ds) < 3 || ds[2].Action != "unassigned" || ds[1].Action != "assigned" || ds[0].Action != "assigned" {
		t.Errorf("reassign: deliveries queued %+v, want unassigned, then assigned twice", ds[:min(len(ds), 3)])
	}
	ids := map[string]bool{}
	for _, c := range got {
		p = check(c, "pull_request", pr.Index)
		ids[c.delivery()] = true
		as, _ := jsonAt(p, "pull_request", "assignees").([]any)
		if len(as) != 2 || jsonField(p, "sender", "login") != "alice" {
			t.Errorf("reassigned pull request assignees %v sender %q", as, jsonField(p, "sender", "login"))
		}
	}
	if len(ids) != 3 {
		t.Errorf("reassign: %d distinct X-Gitea-Delivery ids, want 3", len(ids))
	}
	e.Do("PATCH", path, map[string]any{"assignees": []string{}}, a).Expect(t, http.StatusCreated)
	for _, c := range s.expect("unassign", "pull_request_assign/unassigned", "pull_request_assign/unassigned") {
		p = check(c, "pull_request", pr.Index)
		if as, _ := jsonAt(p, "pull_request", "assignees").([]any); len(as) != 0 {
			t.Errorf("unassigned pull request assignees %v", as)
		}
	}

	// A review requesting changes: pull_request_rejected.
	var review models.PullReview
	e.Do("POST", path+"/reviews", map[string]any{"event": "REQUEST_CHANGES", "body": "needs work"}, b).Expect(t, http.StatusOK).JSON(t, &review)
	c := s.expect("reject", "pull_request_review_rejected/reviewed")[0]
	p = check(c, "pull_request_rejected", pr.Index)
	if jsonField(p, "review", "type") != "pull_request_review_rejected" || jsonField(p, "review", "content") != "needs work" ||
		!slices.Equal(keysOf(p["review"]), []string{"content", "type"}) || jsonField(p, "sender", "login") != "bob" || p["requested_reviewer"] != nil {
		t.Errorf("rejected review %v sender %q", p["review"], jsonField(p, "sender", "login"))
	}

	// Dismissing it announces nothing: the reference's webhook notifier
	// has no handler for dismissals.
	e.Do("POST", fmt.Sprintf("%s/reviews/%d/dismissals", path, review.ID), map[string]any{"message": "outdated"}, a).Expect(t, http.StatusOK)
	rc.quiet(t, s.seen, 500*time.Millisecond)

	// A review that only comments: pull_request_comment on the wire.
	e.Do("POST", path+"/reviews", map[string]any{"event": "COMMENT", "body": "a remark"}, b).Expect(t, http.StatusOK)
	p = check(s.expect("comment review", "pull_request_review_comment/reviewed")[0], "pull_request_comment", pr.Index)
	if jsonField(p, "review", "type") != "pull_request_review_comment" || jsonField(p, "review", "content") != "a remark" {
		t.Errorf("comment review %v", p["review"])
	}

	// Closed without a merge, then reopened.
	e.Do("PATCH", path, map[string]any{"state": "closed"}, a).Expect(t, http.StatusCreated)
	p = check(s.expect("close", "pull_request/closed")[0], "pull_request", pr.Index)
	if jsonAt(p, "pull_request", "merged") != false || jsonField(p, "pull_request", "state") != "closed" {
		t.Errorf("closed pull request merged %v state %q", jsonAt(p, "pull_request", "merged"), jsonField(p, "pull_request", "state"))
	}
	e.Do("PATCH", path, map[string]any{"state": "open"}, a).Expect(t, http.StatusCreated)
	p = check(s.expect("reopen", "pull_request/reopened")[0], "pull_request", pr.Index)
	if jsonField(p, "pull_request", "state") != "open" {
		t.Errorf("reopened pull request state %q", jsonField(p, "pull_request", "state"))
	}

	// A team's review request, made by dave: one delivery for each member
	// but the pull request's author (alice), dave included.
	e.Do("POST", path+"/requested_reviewers", map[string]any{"team_reviewers": []string{"reviewers"}}, d).Expect(t, http.StatusCreated)
	got = s.expect("team review request", "pull_request_review_request/review_requested",
		"pull_request_review_request/review_requested", "pull_request_review_request/review_requested")
	var reviewers []string
	ids = map[string]bool{}
	for _, c := range got {
		p := check(c, "pull_request", pr.Index)
		reviewers = append(reviewers, jsonField(p, "requested_reviewer", "login"))
		ids[c.delivery()] = true
		if jsonField(p, "sender", "login") != "dave" || p["review"] != nil {
			t.Errorf("team review request sender %q review %v", jsonField(p, "sender", "login"), p["review"])
		}
		if teams, _ := jsonAt(p, "pull_request", "requested_reviewers_teams").([]any); len(teams) != 1 || teams[0].(map[string]any)["name"] != "reviewers" {
			t.Errorf("pull request requested_reviewers_teams %v", jsonAt(p, "pull_request", "requested_reviewers_teams"))
		}
		if rr, _ := p["requested_reviewer"].(map[string]any); rr["id"] == nil || rr["email"] == nil {
			t.Errorf("requested_reviewer is not a user: %v", rr)
		}
	}
	sort.Strings(reviewers)
	if !slices.Equal(reviewers, []string{"bob", "carol", "dave"}) || len(ids) != 3 {
		t.Errorf("team review request told %v in %d deliveries, want bob, carol and dave in 3", reviewers, len(ids))
	}
	// Taking it back is not announced (the reference tells nobody).
	e.Do("DELETE", path+"/requested_reviewers", map[string]any{"team_reviewers": []string{"reviewers"}}, d).Expect(t, http.StatusNoContent)
	rc.quiet(t, s.seen, 500*time.Millisecond)
	// A user's request taken back still is.
	e.Do("POST", path+"/requested_reviewers", map[string]any{"reviewers": []string{"carol"}}, a).Expect(t, http.StatusCreated)
	s.expect("user review request", "pull_request_review_request/review_requested")
	e.Do("DELETE", path+"/requested_reviewers", map[string]any{"reviewers": []string{"carol"}}, a).Expect(t, http.StatusNoContent)
	p = check(s.expect("user review request removed", "pull_request_review_request/review_request_removed")[0], "pull_request", pr.Index)
	if jsonField(p, "requested_reviewer", "login") != "carol" {
		t.Errorf("removed request requested_reviewer %v", p["requested_reviewer"])
	}
}
