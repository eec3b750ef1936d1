package apitest_test

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"testing"

	"repohost/apitest"
	"repohost/impl/events"
	"repohost/models"
)

// TestIssueEvents checks that every issue-tracker action announces exactly
// the events impl/issue documents (notify.go), with the repository, the
// actor and the payload naming what changed; that a no-op announces
// nothing; and that a refused request, whether it is refused before its
// transaction or rolled back inside it, announces nothing either.
func TestIssueEvents(t *testing.T) {
	t.Parallel()
	w := isSetup(t)
	e, a, b := w.e, apitest.Basic(w.alice), apitest.Basic(w.bob)
	pub := isRepo(t, e, "alice/pub")
	log := e.RecordEvents()
	var seen []int64 // ids of every event handed out

	// expect takes the events since the last call and checks their kinds,
	// and that each is about alice/pub and was caused by actor.
	expect := func(action string, actor int64, kinds ...events.Kind) []events.Event {
		t.Helper()
		got := log.ExpectKinds(t, action, kinds...)
		for _, ev := range got {
			seen = append(seen, ev.ID)
			if ev.RepoID != pub.ID || ev.ActorID != actor {
				t.Errorf("%s: %s is about repo %d by %d, want repo %d by %d", action, ev.Kind, ev.RepoID, ev.ActorID, pub.ID, actor)
			}
		}
		return got
	}
	alice, bob := w.alice.User.ID, w.bob.User.ID
	named := func(action string, ev events.Event, id int64, name string) {
		t.Helper()
		if p, ok := ev.Payload.(events.Named); !ok || p.ID != id || p.Name != name {
			t.Errorf("%s: payload %#v, want id %d name %q", action, ev.Payload, id, name)
		}
	}
	issueIs := func(action string, evs []events.Event, index int64) {
		t.Helper()
		for _, ev := range evs {
			if p, ok := ev.Payload.(events.Issue); !ok || p.Index != index || p.ID == 0 {
				t.Errorf("%s: %s payload %#v, want issue #%d", action, ev.Kind, ev.Payload, index)
			}
		}
	}

	// Labels.
	bug := isLabel(t, e, "alice/pub", a, map[string]any{"name": "bug", "color": "#ff0000"})
	named("create label", expect("create label", alice, events.LabelCreated)[0], bug.ID, "bug")
	e.Do("POST", "repos/alice/pub/labels", map[string]any{"name": "x", "color": "red"}, a).Expect(t, http.StatusUnprocessableEntity)
	expect("create label with a bad color", alice)
	e.Do("POST", "repos/alice/pub/labels", map[string]any{"name": "x", "color": "#000000"}, b).Expect(t, http.StatusForbidden)
	expect("create label without write access", bob)
	labelPath := fmt.Sprintf("repos/alice/pub/labels/%d", bug.ID)
	e.Do("PATCH", labelPath, map[string]any{"name": "kind/bug"}, a).Expect(t, http.StatusOK)
	named("edit label", expect("edit label", alice, events.LabelEdited)[0], bug.ID, "kind/bug")
	e.Do("PATCH", labelPath, map[string]any{"name": "kind/bug", "color": "ff0000"}, a).Expect(t, http.StatusOK)
	expect("edit label to what it is", alice)
	e.Do("PATCH", labelPath, map[string]any{"name": "other", "color": "nope"}, a).Expect(t, http.StatusUnprocessableEntity)
	expect("edit label with a bad color", alice)
	ui := isLabel(t, e, "alice/pub", a, map[string]any{"name": "ui", "color": "#00ff00"})
	expect("create label", alice, events.LabelCreated)

	// Milestones.
	ms := isMilestone(t, e, "alice/pub", a, map[string]any{"title": "v1"})
	named("create milestone", expect("create milestone", alice, events.MilestoneCreated)[0], ms.ID, "v1")
	msPath := fmt.Sprintf("repos/alice/pub/milestones/%d", ms.ID)
	e.Do("PATCH", msPath, map[string]any{"title": "v1.0", "state": "closed"}, a).Expect(t, http.StatusOK)
	named("edit milestone", expect("edit milestone", alice, events.MilestoneEdited)[0], ms.ID, "v1.0")
	e.Do("PATCH", msPath, map[string]any{"title": "v1.0", "state": "closed"}, a).Expect(t, http.StatusOK)
	expect("edit milestone to what it is", alice)
	e.Do("PATCH", msPath, map[string]any{"title": "x", "state": "open"}, b).Expect(t, http.StatusForbidden)
	expect("edit milestone without write access", bob)

	// Projects.
	var pr models.Project
	e.Do("POST", "repos/alice/pub/projects", map[string]any{"title": "board"}, a).Expect(t, http.StatusCreated).JSON(t, &pr)
	named("create project", expect("create project", alice, events.ProjectCreated)[0], pr.ID, "board")
	e.Do("POST", "repos/alice/pub/projects", map[string]any{"title": " "}, a).Expect(t, http.StatusUnprocessableEntity)
	expect("create project without a title", alice)
	prPath := fmt.Sprintf("repos/alice/pub/projects/%d", pr.ID)
	e.Do("PATCH", prPath, map[string]any{"state": "closed"}, a).Expect(t, http.StatusOK)
	named("edit project", expect("edit project", alice, events.ProjectEdited)[0], pr.ID, "board")
	e.Do("PATCH", prPath, map[string]any{"title": "board", "state": "closed"}, a).Expect(t, http.StatusOK)
	expect("edit project to what it is", alice)

	// Issues: created plain, and created closed with labels, milestone
	// and assignee (one event per aspect, as the reference notifies).
	isCreate(t, e, "alice/pub", b, map[string]any{"title": "first"})
	issueIs("create issue", expect("create issue", bob, events.IssueOpened), 1)
	isCreate(t, e, "alice/pub", a, map[string]any{"title": "second", "closed": true, "labels": []int64{ui.ID},
		"milestone": ms.ID, "assignees": []string{"alice"}, "projects": []int64{pr.ID}})
	issueIs("create a full issue", expect("create a full issue", alice, events.IssueOpened, events.IssueClosed,
		events.IssueLabelsChanged, events.IssueMilestoned, events.IssueAssigned), 2)
	e.Do("POST", "repos/alice/pub/issues", map[string]any{"title": ""}, a).Expect(t, http.StatusUnprocessableEntity)
	expect("create issue without a title", alice)
	e.Do("POST", "repos/alice/pub/issues", map[string]any{"title": "t", "milestone": 9999}, a).Expect(t, http.StatusUnprocessableEntity)
	expect("create issue in a missing milestone", alice)

	// Editing: one event per changed aspect, in a fixed order.
	issue1 := "repos/alice/pub/issues/1"
	edit := func(body map[string]any, status int) {
		t.Helper()
		e.Do("PATCH", issue1, body, a).Expect(t, status)
	}
	edit(map[string]any{"title": "renamed", "state": "closed"}, http.StatusCreated)
	issueIs("edit title and state", expect("edit title and state", alice, events.IssueEdited, events.IssueClosed), 1)
	edit(map[string]any{"title": "renamed", "state": "closed"}, http.StatusCreated)
	expect("close a closed issue", alice)
	edit(map[string]any{"state": "open"}, http.StatusCreated)
	expect("reopen", alice, events.IssueReopened)
	edit(map[string]any{"body": "text"}, http.StatusCreated)
	expect("edit body", alice, events.IssueEdited)
	// Refused inside the transaction (a stale version): rolled back,
	// announced nowhere.
	edit(map[string]any{"content_version": 0, "title": "lost", "state": "closed"}, http.StatusConflict)
	expect("edit with a stale content_version", alice)
	edit(map[string]any{"milestone": 9999}, http.StatusUnprocessableEntity)
	expect("edit into a missing milestone", alice)
	edit(map[string]any{"milestone": ms.ID}, http.StatusCreated)
	expect("set milestone", alice, events.IssueMilestoned)
	edit(map[string]any{"milestone": ms.ID}, http.StatusCreated)
	expect("set the same milestone", alice)
	edit(map[string]any{"assignees": []string{"alice"}}, http.StatusCreated)
	expect("assign", alice, events.IssueAssigned)
	edit(map[string]any{"assignees": []string{"alice"}}, http.StatusCreated)
	expect("assign the same", alice)
	edit(map[string]any{"projects": []int64{pr.ID}}, http.StatusCreated)
	expect("add to a project", alice, events.IssueEdited)
	edit(map[string]any{"projects": []int64{pr.ID}}, http.StatusCreated)
	expect("add to the same project", alice)
	edit(map[string]any{"milestone": 0, "assignees": []string{}, "title": "again", "state": "closed"}, http.StatusCreated)
	expect("edit everything", alice, events.IssueEdited, events.IssueClosed, events.IssueMilestoned, events.IssueAssigned)
	e.Do("POST", issue1+"/deadline", map[string]any{"due_date": "2030-01-02T00:00:00Z"}, a).Expect(t, http.StatusCreated)
	expect("set due date", alice, events.IssueEdited)
	e.Do("POST", issue1+"/deadline", map[string]any{"due_date": "2030-01-02T00:00:00Z"}, a).Expect(t, http.StatusCreated)
	expect("set the same due date", alice)

	// Labels on an issue.
	labels := issue1 + "/labels"
	e.Do("POST", labels, map[string]any{"labels": []any{bug.ID}}, a).Expect(t, http.StatusOK)
	issueIs("add label", expect("add label", alice, events.IssueLabelsChanged), 1)
	e.Do("POST", labels, map[string]any{"labels": []any{"kind/bug"}}, a).Expect(t, http.StatusOK)
	expect("add a label already there", alice)
	e.Do("POST", labels, map[string]any{"labels": []any{ui.ID}}, b).Expect(t, http.StatusForbidden)
	expect("add label without write access", bob)
	e.Do("PUT", labels, map[string]any{"labels": []any{"ui"}}, a).Expect(t, http.StatusOK)
	expect("replace labels", alice, events.IssueLabelsChanged)
	e.Do("DELETE", fmt.Sprintf("%s/%d", labels, bug.ID), nil, a).Expect(t, http.StatusNoContent)
	expect("remove a label not there", alice)
	e.Do("DELETE", fmt.Sprintf("%s/%d", labels, ui.ID), nil, a).Expect(t, http.StatusNoContent)
	expect("remove label", alice, events.IssueLabelsChanged)
	e.Do("DELETE", labels, nil, a).Expect(t, http.StatusNoContent)
	expect("clear no labels", alice)

	// Comments.
	c := isComment(t, e, "alice/pub", 1, b, "hello")
	evs := expect("create comment", bob, events.CommentCreated)
	if p, ok := evs[0].Payload.(events.Comment); !ok || p.ID != c.ID || p.IssueIndex != 1 || p.IssueID == 0 {
		t.Errorf("create comment: payload %#v", evs[0].Payload)
	}
	commentPath := fmt.Sprintf("repos/alice/pub/issues/comments/%d", c.ID)
	e.Do("PATCH", commentPath, map[string]any{"body": "hello!"}, b).Expect(t, http.StatusOK)
	expect("edit comment", bob, events.CommentEdited)
	e.Do("PATCH", commentPath, map[string]any{"body": "hello!"}, b).Expect(t, http.StatusOK)
	expect("edit comment to what it is", bob)
	e.Do("PATCH", commentPath, map[string]any{"body": " "}, b).Expect(t, http.StatusUnprocessableEntity)
	expect("edit comment to nothing", bob)

	// Reactions.
	e.Do("POST", issue1+"/reactions", map[string]any{"content": "heart"}, b).Expect(t, http.StatusCreated)
	issueIs("react", expect("react to an issue", bob, events.IssueReacted), 1)
	e.Do("POST", issue1+"/reactions", map[string]any{"content": "heart"}, b).Expect(t, http.StatusOK)
	expect("react the same way again", bob)
	e.Do("POST", issue1+"/reactions", map[string]any{"content": "smile"}, b).Expect(t, http.StatusForbidden)
	expect("react with a reaction not allowed", bob)
	e.Do("POST", commentPath+"/reactions", map[string]any{"content": "+1"}, a).Expect(t, http.StatusCreated)
	evs = expect("react to a comment", alice, events.CommentReacted)
	if p, ok := evs[0].Payload.(events.Comment); !ok || p.ID != c.ID || p.IssueIndex != 1 {
		t.Errorf("react to a comment: payload %#v", evs[0].Payload)
	}

	// Tracked time.
	var tt models.TrackedTime
	e.Do("POST", issue1+"/times", map[string]any{"time": 60}, a).Expect(t, http.StatusOK).JSON(t, &tt)
	issueIs("track time", expect("track time", alice, events.IssueTimeTracked), 1)
	e.Do("POST", issue1+"/times", map[string]any{"time": 0}, a).Expect(t, http.StatusUnprocessableEntity)
	expect("track no time", alice)
	e.Do("DELETE", fmt.Sprintf("%s/times/%d", issue1, tt.ID), nil, a).Expect(t, http.StatusNoContent)
	expect("delete tracked time", alice, events.IssueTimeDeleted)
	e.Do("DELETE", issue1+"/times", nil, a).Expect(t, http.StatusNoContent)
	expect("reset no tracked time", alice)
	e.Do("POST", issue1+"/times", map[string]any{"time": 60}, a).Expect(t, http.StatusOK)
	e.Do("DELETE", issue1+"/times", nil, a).Expect(t, http.StatusNoContent)
	expect("track and reset", alice, events.IssueTimeTracked, events.IssueTimeDeleted)

	// Deletions announce the deletion only, not a change of each issue
	// that loses the label, milestone or project.
	e.Do("DELETE", commentPath, nil, b).Expect(t, http.StatusNoContent)
	expect("delete comment", bob, events.CommentDeleted)
	e.Do("DELETE", commentPath, nil, b).Expect(t, http.StatusNotFound)
	expect("delete a deleted comment", bob)
	e.Do("DELETE", fmt.Sprintf("repos/alice/pub/labels/%d", ui.ID), nil, a).Expect(t, http.StatusNoContent)
	named("delete label", expect("delete label", alice, events.LabelDeleted)[0], ui.ID, "ui")
	e.Do("DELETE", msPath, nil, a).Expect(t, http.StatusNoContent)
	named("delete milestone", expect("delete milestone", alice, events.MilestoneDeleted)[0], ms.ID, "v1.0")
	e.Do("DELETE", prPath, nil, a).Expect(t, http.StatusNoContent)
	named("delete project", expect("delete project", alice, events.ProjectDeleted)[0], pr.ID, "board")
	e.Do("DELETE", issue1, nil, b).Expect(t, http.StatusForbidden)
	expect("delete issue without admin access", bob)
	e.Do("DELETE", issue1, nil, a).Expect(t, http.StatusNoContent)
	issueIs("delete issue", expect("delete issue", alice, events.IssueDeleted), 1)

	// The outbox holds exactly the events handed out: nothing was written
	// for the refused and rolled-back requests either.
	stored, err := e.DB.Events().ListAfter(context.Background(), seen[0]-1, 1000)
	if err != nil {
		t.Fatal(err)
	}
	ids := make([]int64, 0, len(stored))
	for _, ev := range stored {
		ids = append(ids, ev.ID)
	}
	if !slices.Equal(ids, seen) {
		t.Errorf("outbox holds events %v, handed out %v", ids, seen)
	}
}
