package apitest_test

import (
	"net/http"
	"testing"
	"time"

	"code.gitea.io/sdk/gitea"

	"repohost/apitest"
)

// TestIssueSDKFlow drives the issue tracker with the unchanged official
// Gitea SDK: create, edit, close, comment, label, react and track time,
// and the reference's status codes for the awkward cases (409 on a stale
// content_version, 423 on an archived repository, 201 then 200 for the
// same reaction).
func TestIssueSDKFlow(t *testing.T) {
	t.Parallel()
	w := isSetup(t)
	e := w.e
	c := sdkClient(t, e, gitea.SetBasicAuth("alice", w.alice.Password))
	bob := sdkClient(t, e, gitea.SetBasicAuth("bob", w.bob.Password))

	label, resp, err := c.CreateLabel("alice", "pub", gitea.CreateLabelOption{Name: "bug", Color: "#ee0701", Description: "broken"})
	if err != nil || resp.StatusCode != http.StatusCreated || label.Color != "ee0701" {
		t.Fatalf("CreateLabel: %v (%v) %+v", err, resp, label)
	}
	ms, resp, err := c.CreateMilestone("alice", "pub", gitea.CreateMilestoneOption{Title: "v1"})
	if err != nil || resp.StatusCode != http.StatusCreated || ms.State != gitea.StateOpen {
		t.Fatalf("CreateMilestone: %v (%v) %+v", err, resp, ms)
	}
	due := time.Date(2030, 5, 6, 15, 0, 0, 0, time.FixedZone("", -7*3600))
	is, resp, err := c.CreateIssue("alice", "pub", gitea.CreateIssueOption{
		Title: "SDK issue", Body: "made by the SDK", Labels: []int64{label.ID}, Milestone: ms.ID,
		Assignees: []string{"alice"}, Deadline: &due,
	})
	if err != nil || resp.StatusCode != http.StatusCreated {
		t.Fatalf("CreateIssue: %v (%v)", err, resp)
	}
	if is.Index != 1 || is.Title != "SDK issue" || is.State != gitea.StateOpen || len(is.Labels) != 1 || is.Milestone == nil ||
		len(is.Assignees) != 1 || is.Poster == nil || is.Poster.UserName != "alice" || is.Deadline == nil ||
		is.Deadline.UTC().Format("2006-01-02") != "2030-05-06" || is.Repository == nil || is.Repository.FullName != "alice/pub" {
		t.Fatalf("created %+v", is)
	}

	got, _, err := c.GetIssue("alice", "pub", 1)
	if err != nil || got.ID != is.ID || got.Body != "made by the SDK" {
		t.Fatalf("GetIssue: %v %+v", err, got)
	}
	body := "edited by the SDK"
	edited, resp, err := c.EditIssue("alice", "pub", 1, gitea.EditIssueOption{Body: &body})
	if err != nil || resp.StatusCode != http.StatusCreated || edited.Body != body || edited.Title != "SDK issue" {
		t.Fatalf("EditIssue: %v (%v) %+v", err, resp, edited)
	}
	closed := gitea.StateClosed
	edited, _, err = c.EditIssue("alice", "pub", 1, gitea.EditIssueOption{State: &closed})
	if err != nil || edited.State != gitea.StateClosed || edited.Closed == nil || len(edited.Assignees) != 1 {
		t.Fatalf("close: %v %+v", err, edited)
	}
	open := gitea.StateOpen
	if edited, _, err = c.EditIssue("alice", "pub", 1, gitea.EditIssueOption{State: &open}); err != nil || edited.State != gitea.StateOpen {
		t.Fatalf("reopen: %v %+v", err, edited)
	}

	// A stale content_version: the SDK has no field for it, so the raw
	// request shows what it sees; the status and body are the reference's.
	r := e.Do("PATCH", "repos/alice/pub/issues/1", map[string]any{"body": "x", "content_version": 0}, apitest.Basic(w.alice))
	if r.Status != http.StatusConflict {
		t.Fatalf("stale content_version: %d %s", r.Status, r.Body)
	}

	list, resp, err := c.ListRepoIssues("alice", "pub", gitea.ListIssueOption{State: gitea.StateAll, Labels: []string{"bug"}})
	if err != nil || len(list) != 1 || resp.Header.Get("X-Total-Count") != "1" {
		t.Fatalf("ListRepoIssues: %v %d", err, len(list))
	}
	found, _, err := c.ListIssues(gitea.ListIssueOption{KeyWord: "SDK"})
	if err != nil || len(found) != 1 {
		t.Fatalf("ListIssues (search): %v %d", err, len(found))
	}

	// Comments.
	cm, resp, err := bob.CreateIssueComment("alice", "pub", 1, gitea.CreateIssueCommentOption{Body: "from bob"})
	if err != nil || resp.StatusCode != http.StatusCreated || cm.Poster.UserName != "bob" {
		t.Fatalf("CreateIssueComment: %v (%v) %+v", err, resp, cm)
	}
	if cm, _, err = bob.EditIssueComment("alice", "pub", cm.ID, gitea.EditIssueCommentOption{Body: "from bob, edited"}); err != nil || cm.Body != "from bob, edited" {
		t.Fatalf("EditIssueComment: %v %+v", err, cm)
	}
	comments, _, err := c.ListIssueComments("alice", "pub", 1, gitea.ListIssueCommentOptions{})
	if err != nil || len(comments) != 1 {
		t.Fatalf("ListIssueComments: %v %d", err, len(comments))
	}
	if got, _, _ = c.GetIssue("alice", "pub", 1); got.Comments != 1 {
		t.Fatalf("comment count %d", got.Comments)
	}

	// Labels on the issue.
	other, _, err := c.CreateLabel("alice", "pub", gitea.CreateLabelOption{Name: "ui", Color: "#00ff00"})
	if err != nil {
		t.Fatal(err)
	}
	labels, _, err := c.AddIssueLabels("alice", "pub", 1, gitea.IssueLabelsOption{Labels: []int64{other.ID}})
	if err != nil || len(labels) != 2 {
		t.Fatalf("AddIssueLabels: %v %d", err, len(labels))
	}
	if labels, _, err = c.ReplaceIssueLabels("alice", "pub", 1, gitea.IssueLabelsOption{Labels: []int64{other.ID}}); err != nil || len(labels) != 1 {
		t.Fatalf("ReplaceIssueLabels: %v %d", err, len(labels))
	}
	if _, err = c.DeleteIssueLabel("alice", "pub", 1, other.ID); err != nil {
		t.Fatalf("DeleteIssueLabel: %v", err)
	}
	if labels, _, err = c.GetIssueLabels("alice", "pub", 1, gitea.ListLabelsOptions{}); err != nil || len(labels) != 0 {
		t.Fatalf("GetIssueLabels: %v %d", err, len(labels))
	}
	if _, _, err = bob.AddIssueLabels("alice", "pub", 1, gitea.IssueLabelsOption{Labels: []int64{label.ID}}); err == nil {
		t.Fatal("an outsider labelled the issue")
	}

	// Reactions: 201 when new, 200 with the existing one after.
	rc, resp, err := bob.PostIssueReaction("alice", "pub", 1, "heart")
	if err != nil || resp.StatusCode != http.StatusCreated || rc.Reaction != "heart" || rc.User.UserName != "bob" {
		t.Fatalf("PostIssueReaction: %v (%v) %+v", err, resp, rc)
	}
	if rc, resp, err = bob.PostIssueReaction("alice", "pub", 1, "heart"); err != nil || resp.StatusCode != http.StatusOK || rc.Reaction != "heart" {
		t.Fatalf("PostIssueReaction again: %v (%v) %+v", err, resp, rc)
	}
	if _, resp, err = bob.PostIssueReaction("alice", "pub", 1, "smile"); err == nil || resp.StatusCode != http.StatusForbidden {
		t.Fatalf("disallowed reaction: %v (%v)", err, resp)
	}
	if _, resp, err = bob.PostIssueCommentReaction("alice", "pub", cm.ID, "+1"); err != nil || resp.StatusCode != http.StatusCreated {
		t.Fatalf("PostIssueCommentReaction: %v (%v)", err, resp)
	}
	reactions, _, err := c.ListIssueReactions("alice", "pub", 1, gitea.ListIssueReactionsOptions{})
	if err != nil || len(reactions) != 1 {
		t.Fatalf("ListIssueReactions: %v %d", err, len(reactions))
	}
	if reactions, _, err = c.GetIssueCommentReactions("alice", "pub", cm.ID); err != nil || len(reactions) != 1 {
		t.Fatalf("GetIssueCommentReactions: %v %d", err, len(reactions))
	}
	if _, err = bob.DeleteIssueReaction("alice", "pub", 1, "heart"); err != nil {
		t.Fatalf("DeleteIssueReaction: %v", err)
	}

	// Tracked time.
	tt, resp, err := c.AddTime("alice", "pub", 1, gitea.AddTimeOption{Time: 1800})
	if err != nil || resp.StatusCode != http.StatusOK || tt.Time != 1800 || tt.UserName != "alice" || tt.Issue == nil {
		t.Fatalf("AddTime: %v (%v) %+v", err, resp, tt)
	}
	times, _, err := c.ListIssueTrackedTimes("alice", "pub", 1, gitea.ListTrackedTimesOptions{})
	if err != nil || len(times) != 1 {
		t.Fatalf("ListIssueTrackedTimes: %v %d", err, len(times))
	}
	if times, _, err = c.ListRepoTrackedTimes("alice", "pub", gitea.ListTrackedTimesOptions{}); err != nil || len(times) != 1 {
		t.Fatalf("ListRepoTrackedTimes: %v %d", err, len(times))
	}
	if times, _, err = c.ListMyTrackedTimes(gitea.ListTrackedTimesOptions{}); err != nil || len(times) != 1 {
		t.Fatalf("ListMyTrackedTimes: %v %d", err, len(times))
	}
	if _, err = c.DeleteTime("alice", "pub", 1, tt.ID); err != nil {
		t.Fatalf("DeleteTime: %v", err)
	}
	if _, err = c.ResetIssueTime("alice", "pub", 1); err != nil {
		t.Fatalf("ResetIssueTime: %v", err)
	}

	// Milestones through the SDK, by id and by name.
	if m, _, err := c.GetMilestoneByName("alice", "pub", "v1"); err != nil || m.ID != ms.ID || m.OpenIssues != 1 {
		t.Fatalf("GetMilestoneByName: %v %+v", err, m)
	}
	desc := "first release"
	if m, _, err := c.EditMilestone("alice", "pub", ms.ID, gitea.EditMilestoneOption{Description: &desc}); err != nil || m.Description != desc || m.Title != "v1" {
		t.Fatalf("EditMilestone: %v %+v", err, m)
	}

	// Deadline endpoint.
	if dl, resp, err := c.UpdateIssueDeadline("alice", "pub", 1, gitea.EditDeadlineOption{Deadline: &due}); err != nil || resp.StatusCode != http.StatusCreated || dl == nil {
		t.Fatalf("UpdateIssueDeadline: %v (%v)", err, resp)
	}

	// An archived repository refuses changes with 423.
	yes := true
	if _, _, err = c.EditRepo("alice", "pub", gitea.EditRepoOption{Archived: &yes}); err != nil {
		t.Fatal(err)
	}
	if _, resp, err = c.CreateIssue("alice", "pub", gitea.CreateIssueOption{Title: "too late"}); err == nil || resp.StatusCode != http.StatusLocked {
		t.Fatalf("CreateIssue on an archived repository: %v (%v)", err, resp)
	}
	if _, resp, err = bob.CreateIssueComment("alice", "pub", 1, gitea.CreateIssueCommentOption{Body: "x"}); err == nil || resp.StatusCode != http.StatusLocked {
		t.Fatalf("comment on an archived repository: %v (%v)", err, resp)
	}
	no := false
	if _, _, err = c.EditRepo("alice", "pub", gitea.EditRepoOption{Archived: &no}); err != nil {
		t.Fatal(err)
	}

	// Delete.
	if resp, err = bob.DeleteIssue("alice", "pub", 1); err == nil || resp.StatusCode != http.StatusForbidden {
		t.Fatalf("outsider DeleteIssue: %v (%v)", err, resp)
	}
	if resp, err = c.DeleteIssue("alice", "pub", 1); err != nil || resp.StatusCode != http.StatusNoContent {
		t.Fatalf("DeleteIssue: %v (%v)", err, resp)
	}
	if _, resp, err = c.GetIssue("alice", "pub", 1); err == nil || resp.StatusCode != http.StatusNotFound {
		t.Fatalf("deleted issue: %v (%v)", err, resp)
	}
	isCheckCounters(t, e)
}
