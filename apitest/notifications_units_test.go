package apitest_test

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"repohost/apitest"
	"repohost/models"
)

// TestNotificationsByUnit: a user who may still read a repository's code
// but no longer its issues sees none of its issue threads (list, count,
// the thread itself), and sees them again with the unit back; marking a
// thread read or unread moves its updated_at.
func TestNotificationsByUnit(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	admin := apitest.Basic(e.Admin)
	alice := e.CreateUser("alice", false)
	bob := e.CreateUser("bob", false)
	ac, bc := apitest.Basic(alice), apitest.Basic(bob)
	e.Do("POST", "orgs", map[string]any{"username": "acme"}, ac).Expect(t, http.StatusCreated)
	e.Do("POST", "orgs/acme/repos", map[string]any{"name": "proj", "private": true}, ac).Expect(t, http.StatusCreated)
	var team models.Team
	e.Do("POST", "orgs/acme/teams", map[string]any{"name": "readers", "permission": "read",
		"units": []string{"repo.code", "repo.issues"}}, ac).Expect(t, http.StatusCreated).JSON(t, &team)
	e.Do("PUT", fmt.Sprintf("teams/%d/members/bob", team.ID), nil, ac).Expect(t, http.StatusNoContent)
	e.Do("PUT", fmt.Sprintf("teams/%d/repos/acme/proj", team.ID), nil, ac).Expect(t, http.StatusNoContent)
	e.Do("POST", "repos/acme/proj/issues", map[string]any{"title": "look", "body": "@bob please"}, ac).Expect(t, http.StatusCreated)
	ntDrained(t, e, admin)

	list := ntList(t, e, "notifications", bc)
	if len(list) != 1 || list[0].Subject.Type != "Issue" {
		t.Fatalf("bob's threads: %s", ntSubjects(list))
	}
	id := list[0].ID
	before := time.Time(list[0].UpdatedAt)

	// Marking it read, then unread, moves its updated_at.
	time.Sleep(1100 * time.Millisecond)
	var th models.NotificationThread
	e.Do("PATCH", fmt.Sprintf("notifications/threads/%d?to-status=read", id), nil, bc).Expect(t, http.StatusResetContent).JSON(t, &th)
	if th.Unread || !time.Time(th.UpdatedAt).After(before) {
		t.Fatalf("thread after read: unread %v updated %v (was %v)", th.Unread, th.UpdatedAt, before)
	}
	read := time.Time(th.UpdatedAt)
	time.Sleep(1100 * time.Millisecond)
	var marked []*models.NotificationThread
	e.Do("PUT", "notifications?status-types=read&to-status=unread", nil, bc).Expect(t, http.StatusResetContent).JSON(t, &marked)
	if len(marked) != 1 || !marked[0].Unread || !time.Time(marked[0].UpdatedAt).After(read) {
		t.Fatalf("threads after PUT: %+v", marked)
	}
	e.Do("GET", fmt.Sprintf("notifications/threads/%d", id), nil, bc).Expect(t, http.StatusOK).JSON(t, &th)
	if !time.Time(th.UpdatedAt).After(read) {
		t.Fatalf("thread's updated_at %v not after %v", th.UpdatedAt, read)
	}

	// The team keeps the code, not the issues.
	e.Do("PATCH", fmt.Sprintf("teams/%d", team.ID), map[string]any{"name": "readers", "units": []string{"repo.code"}}, ac).
		Expect(t, http.StatusOK)
	e.Do("GET", "repos/acme/proj", nil, bc).Expect(t, http.StatusOK)
	if list := ntList(t, e, "notifications", bc); len(list) != 0 {
		t.Fatalf("bob still sees %s", ntSubjects(list))
	}
	if list := ntList(t, e, "repos/acme/proj/notifications", bc); len(list) != 0 {
		t.Fatalf("bob still sees %s in the repository", ntSubjects(list))
	}
	var count models.NotificationCount
	e.Do("GET", "notifications/new", nil, bc).Expect(t, http.StatusOK).JSON(t, &count)
	if count.New != 0 {
		t.Fatalf("new count %d", count.New)
	}
	e.Do("GET", fmt.Sprintf("notifications/threads/%d", id), nil, bc).Expect(t, http.StatusNotFound)
	e.Do("PATCH", fmt.Sprintf("notifications/threads/%d", id), nil, bc).Expect(t, http.StatusNotFound)

	e.Do("PATCH", fmt.Sprintf("teams/%d", team.ID), map[string]any{"name": "readers", "units": []string{"repo.code", "repo.issues"}}, ac).
		Expect(t, http.StatusOK)
	if list := ntList(t, e, "notifications", bc); len(list) != 1 {
		t.Fatalf("bob's threads with the unit back: %s", ntSubjects(list))
	}
}
