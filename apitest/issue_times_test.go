package apitest_test

import (
	"fmt"
	"net/http"
	"sort"
	"strings"
	"testing"

	"repohost/apitest"
	"repohost/models"
)

func isTimes(t *testing.T, e *apitest.Env, path string, cred apitest.Cred) []*models.TrackedTime {
	t.Helper()
	var out []*models.TrackedTime
	r := e.Do("GET", path, nil, cred).Expect(t, http.StatusOK)
	r.JSON(t, &out)
	if r.Header.Get("X-Total-Count") == "" {
		t.Errorf("%s: no X-Total-Count", path)
	}
	return out
}

func isTimeOwners(ts []*models.TrackedTime) string {
	names := []string{}
	for _, t := range ts {
		names = append(names, fmt.Sprintf("%s:%d", t.UserName, t.Time))
	}
	sort.Strings(names)
	return strings.Join(names, ",")
}

func TestIssueTrackedTime(t *testing.T) {
	t.Parallel()
	w := isSetup(t)
	e, a, b, c := w.e, apitest.Basic(w.alice), apitest.Basic(w.bob), apitest.Basic(w.carol)
	isCreate(t, e, "alice/pub", a, map[string]any{"title": "alice's"})
	isCreate(t, e, "alice/pub", b, map[string]any{"title": "bob's"})
	isCreate(t, e, "acme/tool", a, map[string]any{"title": "org"})

	// The owner tracks; the result carries the issue.
	var tt models.TrackedTime
	e.Do("POST", "repos/alice/pub/issues/1/times", map[string]any{"time": 3600}, a).Expect(t, http.StatusOK).JSON(t, &tt)
	if tt.Time != 3600 || tt.UserName != "alice" || tt.IssueID == 0 || tt.Issue == nil || tt.Issue.Index != 1 || tt.Created == nil {
		t.Fatalf("tracked %+v", tt)
	}
	// Only contributors may track by default: bob is neither a writer
	// nor poster nor assignee of issue 1, but he posted issue 2.
	e.Do("POST", "repos/alice/pub/issues/1/times", map[string]any{"time": 60}, b).Expect(t, http.StatusForbidden)
	e.Do("POST", "repos/alice/pub/issues/2/times", map[string]any{"time": 60}, b).Expect(t, http.StatusOK)
	e.Do("POST", "repos/alice/pub/issues/1/times", map[string]any{"time": 0}, a).Expect(t, http.StatusUnprocessableEntity)
	e.Do("POST", "repos/alice/pub/issues/1/times", map[string]any{}, a).Expect(t, http.StatusUnprocessableEntity)
	e.Do("POST", "repos/alice/pub/issues/1/times", map[string]any{"time": 10}, nil).Expect(t, http.StatusUnauthorized)
	// A backdated entry.
	e.Do("POST", "repos/alice/pub/issues/1/times", map[string]any{"time": 120, "created": "2020-01-02T03:04:05Z"}, a).
		Expect(t, http.StatusOK).JSON(t, &tt)
	if got := tt.Created.String(); got != "2020-01-02T03:04:05Z" {
		t.Fatalf("backdated to %s", got)
	}
	// A repository admin may track for someone else.
	e.Do("POST", "repos/alice/pub/issues/1/times", map[string]any{"time": 30, "user_name": "carol"}, a).Expect(t, http.StatusOK).JSON(t, &tt)
	if tt.UserName != "carol" {
		t.Fatalf("tracked for %s", tt.UserName)
	}
	e.Do("POST", "repos/alice/pub/issues/1/times", map[string]any{"time": 30, "user_name": "nobody"}, a).Expect(t, http.StatusUnprocessableEntity)
	// ... others' user_name is ignored: bob tracks for himself.
	e.Do("POST", "repos/alice/pub/issues/2/times", map[string]any{"time": 5, "user_name": "alice"}, b).Expect(t, http.StatusOK).JSON(t, &tt)
	if tt.UserName != "bob" {
		t.Fatalf("non-admin tracked for %s", tt.UserName)
	}

	// Issue list: writers see everyone; others only themselves, and may
	// not ask for someone else.
	if got := isTimeOwners(isTimes(t, e, "repos/alice/pub/issues/1/times", a)); got != "alice:120,alice:3600,carol:30" {
		t.Fatalf("owner sees %s", got)
	}
	if got := isTimeOwners(isTimes(t, e, "repos/alice/pub/issues/1/times?user=carol", a)); got != "carol:30" {
		t.Fatalf("owner filtering carol sees %s", got)
	}
	if got := isTimeOwners(isTimes(t, e, "repos/alice/pub/issues/2/times", b)); got != "bob:5,bob:60" {
		t.Fatalf("bob sees %s", got)
	}
	if got := isTimes(t, e, "repos/alice/pub/issues/1/times", b); len(got) != 0 {
		t.Fatalf("bob sees others' entries: %s", isTimeOwners(got))
	}
	e.Do("GET", "repos/alice/pub/issues/1/times?user=alice", nil, b).Expect(t, http.StatusForbidden)
	isTimes(t, e, "repos/alice/pub/issues/1/times?user=bob", b)
	e.Do("GET", "repos/alice/pub/issues/1/times?user=nobody", nil, a).Expect(t, http.StatusNotFound)
	e.Do("GET", "repos/alice/pub/issues/1/times", nil, nil).Expect(t, http.StatusUnauthorized)
	e.Do("GET", "repos/alice/pub/issues/1/times?since=soon", nil, a).Expect(t, http.StatusUnprocessableEntity)
	if got := isTimeOwners(isTimes(t, e, "repos/alice/pub/issues/1/times?before=2021-01-01T00:00:00Z", a)); got != "alice:120" {
		t.Fatalf("before 2021: %s", got)
	}
	if got := isTimeOwners(isTimes(t, e, "repos/alice/pub/issues/1/times?since=2021-01-01T00:00:00Z", a)); got != "alice:3600,carol:30" {
		t.Fatalf("since 2021: %s", got)
	}
	if got := isTimes(t, e, "repos/alice/pub/issues/1/times?limit=1&page=2", a); len(got) != 1 {
		t.Fatalf("paged: %d", len(got))
	}

	// Repository lists.
	if got := isTimeOwners(isTimes(t, e, "repos/alice/pub/times", a)); got != "alice:120,alice:3600,bob:5,bob:60,carol:30" {
		t.Fatalf("repository times %s", got)
	}
	if got := isTimeOwners(isTimes(t, e, "repos/alice/pub/times", b)); got != "bob:5,bob:60" {
		t.Fatalf("bob's repository times %s", got)
	}
	e.Do("GET", "repos/alice/pub/times?user=alice", nil, b).Expect(t, http.StatusForbidden)
	if got := isTimeOwners(isTimes(t, e, "repos/alice/pub/times/bob", b)); got != "bob:5,bob:60" {
		t.Fatalf("/times/bob %s", got)
	}
	e.Do("GET", "repos/alice/pub/times/alice", nil, b).Expect(t, http.StatusForbidden)
	if got := isTimeOwners(isTimes(t, e, "repos/alice/pub/times/carol", a)); got != "carol:30" {
		t.Fatalf("/times/carol %s", got)
	}
	e.Do("GET", "repos/alice/priv/times", nil, b).Expect(t, http.StatusNotFound)

	// The caller's own list spans repositories.
	e.Do("POST", "repos/acme/tool/issues/1/times", map[string]any{"time": 7}, a).Expect(t, http.StatusOK)
	mine := isTimes(t, e, "user/times", a)
	if got := isTimeOwners(mine); got != "alice:120,alice:3600,alice:7" {
		t.Fatalf("/user/times %s", got)
	}
	for _, tt := range mine {
		if tt.Issue == nil || tt.Issue.Repository == nil {
			t.Fatalf("entry without issue %+v", tt)
		}
	}
	e.Do("GET", "user/times", nil, nil).Expect(t, http.StatusUnauthorized)

	// Delete one entry: one's own, or anyone's for a site admin.
	mineOnIssue := isTimes(t, e, "repos/alice/pub/issues/2/times", b)
	e.Do("DELETE", fmt.Sprintf("repos/alice/pub/issues/2/times/%d", mineOnIssue[0].ID), nil, b).Expect(t, http.StatusNoContent)
	carols := isTimes(t, e, "repos/alice/pub/times/carol", a)
	e.Do("DELETE", fmt.Sprintf("repos/alice/pub/issues/1/times/%d", carols[0].ID), nil, a).Expect(t, http.StatusForbidden)
	e.Do("DELETE", fmt.Sprintf("repos/alice/pub/issues/2/times/%d", carols[0].ID), nil, apitest.Basic(e.Admin)).Expect(t, http.StatusNotFound)
	e.Do("DELETE", fmt.Sprintf("repos/alice/pub/issues/1/times/%d", carols[0].ID), nil, apitest.Basic(e.Admin)).Expect(t, http.StatusNoContent)
	e.Do("DELETE", "repos/alice/pub/issues/1/times/99999", nil, a).Expect(t, http.StatusNotFound)
	// Reset deletes only the caller's entries.
	e.Do("DELETE", "repos/alice/pub/issues/1/times", nil, a).Expect(t, http.StatusNoContent)
	if got := isTimes(t, e, "repos/alice/pub/issues/1/times", a); len(got) != 0 {
		t.Fatalf("after reset %s", isTimeOwners(got))
	}

	// Permission is checked when the list is read: losing access to a
	// repository hides one's entries there from /user/times.
	e.Do("POST", "repos/acme/tool/issues/1/times", map[string]any{"time": 9, "user_name": "carol"}, apitest.Basic(e.Admin)).Expect(t, http.StatusOK)
	e.Do("PATCH", "repos/acme/tool", map[string]any{"private": true}, a).Expect(t, http.StatusOK)
	if got := isTimeOwners(isTimes(t, e, "user/times", c)); got != "carol:9" {
		t.Fatalf("carol's times as a member: %s", got)
	}
	e.Do("DELETE", "orgs/acme/members/carol", nil, a).Expect(t, http.StatusNoContent)
	if got := isTimes(t, e, "user/times", c); len(got) != 0 {
		t.Fatalf("carol still sees times of a repository she lost: %s", isTimeOwners(got))
	}
}

// TestIssueTimeTrackerSettings: the repository's internal_tracker settings
// switch tracking off, or open it to everyone.
func TestIssueTimeTrackerSettings(t *testing.T) {
	t.Parallel()
	w := isSetup(t)
	e, a, b := w.e, apitest.Basic(w.alice), apitest.Basic(w.bob)
	isCreate(t, e, "alice/pub", a, map[string]any{"title": "t"})
	tracker := func(enable, onlyContributors bool) {
		e.Do("PATCH", "repos/alice/pub", map[string]any{"internal_tracker": map[string]any{
			"enable_time_tracker": enable, "allow_only_contributors_to_track_time": onlyContributors, "enable_issue_dependencies": true,
		}}, a).Expect(t, http.StatusOK)
	}
	tracker(true, false)
	e.Do("POST", "repos/alice/pub/issues/1/times", map[string]any{"time": 60}, b).Expect(t, http.StatusOK)
	tracker(true, true)
	e.Do("POST", "repos/alice/pub/issues/1/times", map[string]any{"time": 60}, b).Expect(t, http.StatusForbidden)
	tracker(false, true)
	e.Do("POST", "repos/alice/pub/issues/1/times", map[string]any{"time": 60}, a).Expect(t, http.StatusBadRequest)
	e.Do("DELETE", "repos/alice/pub/issues/1/times", nil, a).Expect(t, http.StatusBadRequest)
	e.Do("GET", "repos/alice/pub/issues/1/times", nil, a).Expect(t, http.StatusNotFound)
	e.Do("GET", "repos/alice/pub/times", nil, a).Expect(t, http.StatusBadRequest)
	if got := isTimes(t, e, "user/times", b); len(got) != 0 {
		t.Fatalf("time of a repository with tracking off still listed: %d", len(got))
	}
}
