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

// ntDrained waits until the notifications consumer has no job left.
func ntDrained(t *testing.T, e *apitest.Env, admin apitest.Cred) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(30 * time.Millisecond) {
		var consumers []*models.EventConsumer
		e.Do("GET", "admin/events/consumers", nil, admin).Expect(t, http.StatusOK).JSON(t, &consumers)
		for _, c := range consumers {
			if c.Name == "notifications" && c.Pending == 0 {
				if c.Dead != 0 {
					t.Fatalf("dead notification jobs: %+v", c)
				}
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatal("notifications consumer not drained")
		}
	}
}

func ntList(t *testing.T, e *apitest.Env, path string, cred apitest.Cred) []*models.NotificationThread {
	t.Helper()
	var out []*models.NotificationThread
	e.Do("GET", path, nil, cred).Expect(t, http.StatusOK).JSON(t, &out)
	return out
}

func ntSubjects(ts []*models.NotificationThread) string {
	var out []string
	for _, n := range ts {
		s := n.Subject.Type + ":" + n.Subject.Title
		if n.Unread {
			s += ":unread"
		}
		if n.Pinned {
			s += ":pinned"
		}
		out = append(out, s)
	}
	return strings.Join(out, ",")
}

// TestNotifications: a mention, an assignment, a review request and a
// comment on a subscribed issue each give the right users one unread
// thread and the actor none; the thread is updated in place; the status
// transitions; losing access hides the threads.
func TestNotifications(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	alice, bob, carol, dave := e.CreateUser("alice", false), e.CreateUser("bob", false), e.CreateUser("carol", false), e.CreateUser("dave", false)
	ac, bc, cc, dc := apitest.Basic(alice), apitest.Basic(bob), apitest.Basic(carol), apitest.Basic(dave)
	rc := apitest.Basic(e.CreateUser("root", true))
	e.Do("POST", "user/repos", map[string]any{"name": "proj", "auto_init": true, "default_branch": "main"}, ac).Expect(t, http.StatusCreated)
	e.Do("PUT", "repos/alice/proj/collaborators/carol", map[string]any{"permission": "write"}, ac).Expect(t, http.StatusNoContent)
	e.Do("GET", "notifications", nil, nil).Expect(t, http.StatusUnauthorized)

	// A mention: dave and the watcher alice hear of it, bob (the actor) not.
	e.Do("POST", "repos/alice/proj/issues", map[string]any{"title": "bug", "body": "see @dave"}, bc).Expect(t, http.StatusCreated)
	ntDrained(t, e, rc)
	if got := ntSubjects(ntList(t, e, "notifications", dc)); got != "Issue:bug:unread" {
		t.Fatalf("dave after the mention: %s", got)
	}
	if got := ntSubjects(ntList(t, e, "notifications", ac)); got != "Issue:bug:unread" {
		t.Fatalf("alice (watcher) after the issue: %s", got)
	}
	if got := ntList(t, e, "notifications", bc); len(got) != 0 {
		t.Fatalf("bob, the actor: %s", ntSubjects(got))
	}
	// An assignment: the assignee alone.
	e.Do("PATCH", "repos/alice/proj/issues/1", map[string]any{"assignees": []string{"carol"}}, ac).Expect(t, http.StatusCreated)
	ntDrained(t, e, rc)
	carols := ntList(t, e, "notifications", cc)
	if ntSubjects(carols) != "Issue:bug:unread" {
		t.Fatalf("carol after the assignment: %s", ntSubjects(carols))
	}
	var n models.NotificationThread
	e.Do("GET", fmt.Sprintf("notifications/threads/%d", carols[0].ID), nil, cc).Expect(t, http.StatusOK).JSON(t, &n)
	if n.Subject.State != "open" || !strings.HasSuffix(n.Subject.URL, "/api/v1/repos/alice/proj/issues/1") ||
		n.Repository == nil || n.Repository.FullName != "alice/proj" || !strings.HasSuffix(n.URL, fmt.Sprintf("/notifications/threads/%d", n.ID)) {
		t.Fatalf("thread %+v subject %+v", n, n.Subject)
	}
	e.Do("GET", fmt.Sprintf("notifications/threads/%d", carols[0].ID), nil, bc).Expect(t, http.StatusForbidden)
	e.Do("GET", "notifications/threads/999999", nil, bc).Expect(t, http.StatusNotFound)

	// dave reads his thread; carol's comment on the issue (subscribed:
	// bob the poster, dave mentioned, alice watching) makes it unread
	// again, gives bob one, and carol (the actor) nothing new.
	daves := ntList(t, e, "notifications", dc)
	e.Do("PATCH", fmt.Sprintf("notifications/threads/%d", daves[0].ID), nil, dc).Expect(t, http.StatusResetContent).JSON(t, &n)
	if n.Unread || n.Pinned {
		t.Fatalf("read thread %+v", n)
	}
	if got := ntList(t, e, "notifications", dc); len(got) != 0 {
		t.Fatalf("dave's unread after reading: %s", ntSubjects(got))
	}
	if got := ntSubjects(ntList(t, e, "notifications?all=true", dc)); got != "Issue:bug" {
		t.Fatalf("dave's all: %s", got)
	}
	var c models.Comment
	e.Do("POST", "repos/alice/proj/issues/1/comments", map[string]any{"body": "on it"}, cc).Expect(t, http.StatusCreated).JSON(t, &c)
	ntDrained(t, e, rc)
	daves = ntList(t, e, "notifications", dc)
	if ntSubjects(daves) != "Issue:bug:unread" || daves[0].ID != n.ID ||
		!strings.HasSuffix(daves[0].Subject.LatestCommentURL, fmt.Sprintf("/issues/comments/%d", c.ID)) {
		t.Fatalf("dave after the comment: %s %+v", ntSubjects(daves), daves[0].Subject)
	}
	bobs := ntList(t, e, "notifications", bc)
	if ntSubjects(bobs) != "Issue:bug:unread" {
		t.Fatalf("bob after the comment: %s", ntSubjects(bobs))
	}
	if got := ntList(t, e, "notifications?all=true", cc); len(got) != 1 {
		t.Fatalf("carol, the commenter: %s", ntSubjects(got))
	}
	// alice, who watches the repository, unsubscribes from the issue and
	// reads her threads: the next comment tells her nothing, and still
	// tells dave.
	e.Do("DELETE", "repos/alice/proj/issues/1/subscriptions/alice", nil, ac).Expect(t, http.StatusCreated)
	e.Do("PUT", "notifications", nil, ac).Expect(t, http.StatusResetContent)
	e.Do("POST", "repos/alice/proj/issues/1/comments", map[string]any{"body": "still on it"}, cc).Expect(t, http.StatusCreated)
	ntDrained(t, e, rc)
	if got := ntList(t, e, "notifications", ac); len(got) != 0 {
		t.Fatalf("alice, unsubscribed: %s", ntSubjects(got))
	}
	if got := ntSubjects(ntList(t, e, "notifications", dc)); got != "Issue:bug:unread" {
		t.Fatalf("dave after the second comment: %s", got)
	}

	// A review request: the reviewer alone (alice opens and asks).
	e.Do("POST", "repos/alice/proj/contents/f.txt", map[string]any{"content": "aGk=", "branch": "main", "new_branch": "feature"}, ac).
		Expect(t, http.StatusCreated)
	e.Do("POST", "repos/alice/proj/pulls", map[string]any{"head": "feature", "base": "main", "title": "change"}, ac).Expect(t, http.StatusCreated)
	e.Do("POST", "repos/alice/proj/pulls/2/requested_reviewers", map[string]any{"reviewers": []string{"carol"}}, ac).Expect(t, http.StatusCreated)
	ntDrained(t, e, rc)
	if got := ntSubjects(ntList(t, e, "notifications?subject-type=Pull&status-types=Unread", cc)); got != "Pull:change:unread" {
		t.Fatalf("carol after the review request: %s", got)
	}
	if got := ntList(t, e, "notifications?subject-type=pull", ac); len(got) != 0 {
		t.Fatalf("alice, the actor: %s", ntSubjects(got))
	}
	if got := ntList(t, e, "notifications?subject-type=pull", dc); len(got) != 0 {
		t.Fatalf("dave: %s", ntSubjects(got))
	}

	// Status transitions: pinned stays pinned through new activity; a
	// bulk read marks the unread; the count of new ones follows.
	var count models.NotificationCount
	e.Do("GET", "notifications/new", nil, cc).Expect(t, http.StatusOK).JSON(t, &count)
	if count.New != 2 {
		t.Fatalf("carol's new %d", count.New)
	}
	e.Do("PATCH", fmt.Sprintf("notifications/threads/%d?to-status=pinned", daves[0].ID), nil, dc).Expect(t, http.StatusResetContent).JSON(t, &n)
	if !n.Pinned || n.Unread {
		t.Fatalf("pinned thread %+v", n)
	}
	var marked []*models.NotificationThread
	e.Do("PUT", "notifications", nil, cc).Expect(t, http.StatusResetContent).JSON(t, &marked)
	if len(marked) != 2 || marked[0].Unread {
		t.Fatalf("carol marked %s", ntSubjects(marked))
	}
	e.Do("GET", "notifications/new", nil, cc).Expect(t, http.StatusOK).JSON(t, &count)
	if count.New != 0 {
		t.Fatalf("carol's new after reading %d", count.New)
	}
	e.Do("POST", "repos/alice/proj/issues/1/comments", map[string]any{"body": "again"}, bc).Expect(t, http.StatusCreated)
	ntDrained(t, e, rc)
	if got := ntSubjects(ntList(t, e, "notifications", dc)); got != "Issue:bug:pinned" {
		t.Fatalf("dave's pinned thread after new activity: %s", got)
	}
	if got := ntSubjects(ntList(t, e, "repos/alice/proj/notifications?status-types=unread", cc)); got != "Issue:bug:unread" {
		t.Fatalf("carol's repository threads after new activity: %s", got)
	}
	e.Do("PUT", "repos/alice/proj/notifications?to-status=read", nil, cc).Expect(t, http.StatusResetContent)
	e.Do("GET", "repos/alice/proj/notifications", nil, cc).Expect(t, http.StatusOK).JSON(t, &marked)
	if len(marked) != 0 {
		t.Fatalf("carol's repository threads after reading: %s", ntSubjects(marked))
	}

	// Losing access: the repository turns private; bob, no collaborator,
	// no longer sees his thread, carol still does.
	e.Do("PATCH", "repos/alice/proj", map[string]any{"private": true}, ac).Expect(t, http.StatusOK)
	resp := e.Do("GET", "notifications?all=true", nil, bc).Expect(t, http.StatusOK)
	if resp.Header.Get("X-Total-Count") != "0" {
		t.Fatalf("bob's threads after losing access: %s", resp.Body)
	}
	e.Do("GET", fmt.Sprintf("notifications/threads/%d", bobs[0].ID), nil, bc).Expect(t, http.StatusNotFound)
	e.Do("GET", "notifications/new", nil, bc).Expect(t, http.StatusOK).JSON(t, &count)
	if count.New != 0 {
		t.Fatalf("bob's new after losing access %d", count.New)
	}
	if got := ntList(t, e, "notifications?all=true", cc); len(got) != 2 {
		t.Fatalf("carol's threads: %s", ntSubjects(got))
	}
}
