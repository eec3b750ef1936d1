package apitest_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"repohost/apitest"
	"repohost/models"
)

// isWorld is the cast of the issue tests: alice owns the public repository
// alice/pub, the private alice/priv and the organization acme (with the
// public repository acme/tool); carol is a plain member of acme (read
// access to its repositories); bob has no relation to anything.
type isWorld struct {
	e                 *apitest.Env
	alice, bob, carol *apitest.Account
	orgID             int64
}

func isSetup(t *testing.T) *isWorld {
	t.Helper()
	e := apitest.New(t)
	w := &isWorld{e: e, alice: e.CreateUser("alice", false), bob: e.CreateUser("bob", false), carol: e.CreateUser("carol", false)}
	a := apitest.Basic(w.alice)
	roCreateRepo(t, e, a, map[string]any{"name": "pub"})
	roCreateRepo(t, e, a, map[string]any{"name": "priv", "private": true})
	org := roCreateOrg(t, e, a, map[string]any{"username": "acme"})
	w.orgID = org.ID
	e.Do("POST", "orgs/acme/repos", map[string]any{"name": "tool"}, a).Expect(t, http.StatusCreated)
	roAddMember(t, e, org.ID, w.carol, false, false)
	return w
}

// isCreate opens an issue and fails the test unless it answers 201.
func isCreate(t *testing.T, e *apitest.Env, repo string, cred apitest.Cred, body map[string]any) *models.Issue {
	t.Helper()
	var is models.Issue
	e.Do("POST", "repos/"+repo+"/issues", body, cred).Expect(t, http.StatusCreated).JSON(t, &is)
	return &is
}

func isGet(t *testing.T, e *apitest.Env, repo string, n int64, cred apitest.Cred) *models.Issue {
	t.Helper()
	var is models.Issue
	e.Do("GET", fmt.Sprintf("repos/%s/issues/%d", repo, n), nil, cred).Expect(t, http.StatusOK).JSON(t, &is)
	return &is
}

func isRepo(t *testing.T, e *apitest.Env, repo string) *models.Repository {
	t.Helper()
	var r models.Repository
	e.Do("GET", "repos/"+repo, nil, apitest.Basic(e.Admin)).Expect(t, http.StatusOK).JSON(t, &r)
	return &r
}

func TestIssueCreateAndGet(t *testing.T) {
	t.Parallel()
	w := isSetup(t)
	e, a := w.e, apitest.Basic(w.alice)

	is := isCreate(t, e, "alice/pub", a, map[string]any{"title": "first", "body": "hello @bob", "ref": "main"})
	if is.Index != 1 || is.Title != "first" || is.Body != "hello @bob" || is.State != "open" || is.Ref != "main" ||
		is.User.UserName != "alice" || is.Comments != 0 || is.ContentVersion != 0 {
		t.Fatalf("created %+v", is)
	}
	if is.Repository == nil || is.Repository.FullName != "alice/pub" || is.Repository.Owner != "alice" || is.Repository.Name != "pub" {
		t.Fatalf("repository %+v", is.Repository)
	}
	if !strings.HasSuffix(is.HTMLURL, "/alice/pub/issues/1") || !strings.HasSuffix(is.URL, "/api/v1/repos/alice/pub/issues/1") {
		t.Fatalf("urls %q %q", is.HTMLURL, is.URL)
	}

	// The JSON shape of the reference: empty lists, nulls for unset
	// times and for no assignees.
	raw := e.Do("GET", "repos/alice/pub/issues/1", nil, nil).Expect(t, http.StatusOK)
	var m map[string]any
	raw.JSON(t, &m)
	for _, k := range []string{"assignees", "closed_at", "due_date"} {
		if v, ok := m[k]; !ok || v != nil {
			t.Errorf("%s = %v (present %v), want null", k, v, ok)
		}
	}
	for _, k := range []string{"labels", "assets"} {
		if l, ok := m[k].([]any); !ok || len(l) != 0 {
			t.Errorf("%s = %v, want []", k, m[k])
		}
	}
	// Anonymous callers see the poster's placeholder address.
	if u := m["user"].(map[string]any); u["email"] != "alice@noreply.localhost" {
		t.Errorf("anonymous sees poster email %v", u["email"])
	}

	// Numbers count up per repository.
	if n := isCreate(t, e, "alice/pub", a, map[string]any{"title": "second"}).Index; n != 2 {
		t.Fatalf("second issue got number %d", n)
	}
	if n := isCreate(t, e, "alice/priv", a, map[string]any{"title": "other repo"}).Index; n != 1 {
		t.Fatalf("first issue of another repository got number %d", n)
	}

	// Missing, empty or blank titles, and over-long ones, are refused.
	for _, body := range []map[string]any{{}, {"title": ""}, {"title": "   "}, {"title": strings.Repeat("x", 256)}} {
		e.Do("POST", "repos/alice/pub/issues", body, a).Expect(t, http.StatusUnprocessableEntity)
	}
	// Unknown issues and repositories are 404; the private one is 404 to
	// outsiders exactly as a missing one.
	e.Do("GET", "repos/alice/pub/issues/99", nil, a).Expect(t, http.StatusNotFound)
	e.Do("GET", "repos/alice/nothing/issues/1", nil, a).Expect(t, http.StatusNotFound)
	missing := e.Do("GET", "repos/alice/nothing/issues/1", nil, apitest.Basic(w.bob)).Expect(t, http.StatusNotFound)
	hidden := e.Do("GET", "repos/alice/priv/issues/1", nil, apitest.Basic(w.bob)).Expect(t, http.StatusNotFound)
	if string(missing.Body) != string(hidden.Body) {
		t.Errorf("private and missing differ: %s vs %s", hidden.Body, missing.Body)
	}

	if r := isRepo(t, e, "alice/pub"); r.OpenIssues != 2 {
		t.Fatalf("open_issues_count %d, want 2", r.OpenIssues)
	}
}

// TestIssueCallers runs the main issue operations for every kind of caller.
func TestIssueCallers(t *testing.T) {
	t.Parallel()
	w := isSetup(t)
	e := w.e
	admin := apitest.Basic(e.Admin)
	isCreate(t, e, "alice/pub", apitest.Basic(w.alice), map[string]any{"title": "seed"})
	isCreate(t, e, "alice/priv", apitest.Basic(w.alice), map[string]any{"title": "seed"})
	isCreate(t, e, "acme/tool", apitest.Basic(w.alice), map[string]any{"title": "seed"})

	type want struct{ read, create, editOther, delete int }
	for _, c := range []struct {
		name string
		cred apitest.Cred
		repo string
		want want
	}{
		{"anonymous/public", nil, "alice/pub", want{200, 401, 401, 401}},
		{"anonymous/private", nil, "alice/priv", want{404, 404, 404, 404}},
		{"owner/public", apitest.Basic(w.alice), "alice/pub", want{200, 201, 201, 204}},
		{"owner/private", apitest.Basic(w.alice), "alice/priv", want{200, 201, 201, 204}},
		{"outsider/public", apitest.Basic(w.bob), "alice/pub", want{200, 201, 403, 403}},
		{"outsider/private", apitest.Basic(w.bob), "alice/priv", want{404, 404, 404, 404}},
		{"member/org", apitest.Basic(w.carol), "acme/tool", want{200, 201, 403, 403}},
		{"admin/private", admin, "alice/priv", want{200, 201, 201, 204}},
	} {
		t.Run(c.name, func(t *testing.T) {
			e.Do("GET", "repos/"+c.repo+"/issues/1", nil, c.cred).Expect(t, c.want.read)
			e.Do("GET", "repos/"+c.repo+"/issues", nil, c.cred).Expect(t, c.want.read)
			r := e.Do("POST", "repos/"+c.repo+"/issues", map[string]any{"title": "by " + c.name}, c.cred).Expect(t, c.want.create)
			if c.want.create == http.StatusCreated {
				var is models.Issue
				r.JSON(t, &is)
				// The poster may always edit their own issue.
				e.Do("PATCH", fmt.Sprintf("repos/%s/issues/%d", c.repo, is.Index), map[string]any{"body": "mine"}, c.cred).
					Expect(t, http.StatusCreated)
			}
			// Issue 1 is alice's: others need write access.
			e.Do("PATCH", "repos/"+c.repo+"/issues/1", map[string]any{"title": "renamed"}, c.cred).Expect(t, c.want.editOther)
			seed := isCreate(t, e, c.repo, admin, map[string]any{"title": "to delete"})
			e.Do("DELETE", fmt.Sprintf("repos/%s/issues/%d", c.repo, seed.Index), nil, c.cred).Expect(t, c.want.delete)
		})
	}
}

// TestIssueWriterOnlyFields: a caller without write access gets an issue
// without the labels, milestone, assignees and due date they sent.
func TestIssueWriterOnlyFields(t *testing.T) {
	t.Parallel()
	w := isSetup(t)
	e, a, b := w.e, apitest.Basic(w.alice), apitest.Basic(w.bob)
	var label models.Label
	e.Do("POST", "repos/alice/pub/labels", map[string]any{"name": "bug", "color": "#ff0000"}, a).Expect(t, http.StatusCreated).JSON(t, &label)
	var ms models.Milestone
	e.Do("POST", "repos/alice/pub/milestones", map[string]any{"title": "v1"}, a).Expect(t, http.StatusCreated).JSON(t, &ms)
	var pr models.Project
	e.Do("POST", "repos/alice/pub/projects", map[string]any{"title": "board"}, a).Expect(t, http.StatusCreated).JSON(t, &pr)
	full := map[string]any{"title": "t", "labels": []int64{label.ID}, "milestone": ms.ID, "assignees": []string{"alice"},
		"due_date": "2030-01-02T10:00:00Z", "projects": []int64{pr.ID}}

	is := isCreate(t, e, "alice/pub", b, full)
	if len(is.Labels) != 0 || is.Milestone != nil || len(is.Assignees) != 0 || is.Deadline != nil || len(is.Projects) != 0 {
		t.Fatalf("outsider set writer-only fields: %+v", is)
	}
	is = isCreate(t, e, "alice/pub", a, full)
	if len(is.Labels) != 1 || is.Labels[0].Name != "bug" || is.Labels[0].Color != "ff0000" || is.Milestone == nil || is.Milestone.ID != ms.ID ||
		len(is.Assignees) != 1 || is.Assignee == nil || is.Assignee.UserName != "alice" || is.Deadline == nil ||
		len(is.Projects) != 1 || is.Projects[0].ID != pr.ID || is.Projects[0].NumIssues != 1 {
		t.Fatalf("owner's issue lacks fields: %+v", is)
	}
	if got := time.Time(*is.Deadline).UTC().Format("2006-01-02"); got != "2030-01-02" {
		t.Fatalf("due date %s", got)
	}

	// Bad references are refused, and nothing is created.
	before := isRepo(t, e, "alice/pub").OpenIssues
	for _, body := range []map[string]any{
		{"title": "x", "assignees": []string{"nobody"}},
		{"title": "x", "assignees": []string{"bob"}}, // cannot be assigned: no write access
		{"title": "x", "milestone": 999},
		{"title": "x", "projects": []int64{999}},
	} {
		e.Do("POST", "repos/alice/pub/issues", body, a).Expect(t, http.StatusUnprocessableEntity)
	}
	if after := isRepo(t, e, "alice/pub").OpenIssues; after != before {
		t.Fatalf("refused creates changed the count from %d to %d", before, after)
	}
	// Unknown label ids are ignored, as in the reference.
	if is := isCreate(t, e, "alice/pub", a, map[string]any{"title": "x", "labels": []int64{label.ID, 999}}); len(is.Labels) != 1 {
		t.Fatalf("labels %+v", is.Labels)
	}
	// The deprecated single assignee still works.
	if is := isCreate(t, e, "alice/pub", a, map[string]any{"title": "x", "assignee": "alice"}); is.Assignee == nil {
		t.Fatalf("assignee not set: %+v", is)
	}
}

// TestIssueDueDate: only the date counts, in the offset the client used.
func TestIssueDueDate(t *testing.T) {
	t.Parallel()
	w := isSetup(t)
	e, a := w.e, apitest.Basic(w.alice)
	for _, c := range []struct{ in, want string }{
		{"2031-03-04T00:30:00+09:00", "2031-03-04"}, // still the 3rd in UTC
		{"2031-03-04T23:30:00-08:00", "2031-03-04"}, // already the 5th in UTC
		{"2031-03-04T12:00:00Z", "2031-03-04"},
	} {
		is := isCreate(t, e, "alice/pub", a, map[string]any{"title": "d", "due_date": c.in})
		if got := time.Time(*is.Deadline).UTC().Format("2006-01-02"); got != c.want {
			t.Errorf("due %s stored as %s, want %s", c.in, got, c.want)
		}
		var edited models.Issue
		e.Do("PATCH", fmt.Sprintf("repos/alice/pub/issues/%d", is.Index), map[string]any{"due_date": c.in}, a).
			Expect(t, http.StatusCreated).JSON(t, &edited)
		if got := time.Time(*edited.Deadline).UTC().Format("2006-01-02"); got != c.want {
			t.Errorf("edited due %s stored as %s, want %s", c.in, got, c.want)
		}
	}
	is := isCreate(t, e, "alice/pub", a, map[string]any{"title": "d", "due_date": "2031-01-01T00:00:00Z"})
	path := fmt.Sprintf("repos/alice/pub/issues/%d", is.Index)
	var edited models.Issue
	e.Do("PATCH", path, map[string]any{"unset_due_date": true}, a).Expect(t, http.StatusCreated).JSON(t, &edited)
	if edited.Deadline != nil {
		t.Fatalf("unset_due_date kept %v", edited.Deadline)
	}
	// The deadline endpoint: writers only; a zero time clears.
	var dl models.IssueDeadline
	e.Do("POST", path+"/deadline", map[string]any{"due_date": "2032-05-06T01:00:00+03:00"}, a).Expect(t, http.StatusCreated).JSON(t, &dl)
	if dl.Deadline == nil || time.Time(*dl.Deadline).UTC().Format("2006-01-02") != "2032-05-06" {
		t.Fatalf("deadline %+v", dl)
	}
	e.Do("POST", path+"/deadline", map[string]any{"due_date": "2032-05-06T01:00:00Z"}, apitest.Basic(w.bob)).Expect(t, http.StatusForbidden)
	e.Do("POST", path+"/deadline", map[string]any{"due_date": "0001-01-01T00:00:00Z"}, a).Expect(t, http.StatusCreated).JSON(t, &dl)
	if dl.Deadline != nil {
		t.Fatalf("zero time kept %v", dl.Deadline)
	}
	if isGet(t, e, "alice/pub", is.Index, a).Deadline != nil {
		t.Fatal("deadline still set")
	}
}

func TestIssueEdit(t *testing.T) {
	t.Parallel()
	w := isSetup(t)
	e, a := w.e, apitest.Basic(w.alice)
	var ms1, ms2 models.Milestone
	e.Do("POST", "repos/alice/pub/milestones", map[string]any{"title": "m1"}, a).Expect(t, http.StatusCreated).JSON(t, &ms1)
	e.Do("POST", "repos/alice/pub/milestones", map[string]any{"title": "m2"}, a).Expect(t, http.StatusCreated).JSON(t, &ms2)
	is := isCreate(t, e, "alice/pub", a, map[string]any{"title": "t", "body": "b0", "milestone": ms1.ID})
	path := fmt.Sprintf("repos/alice/pub/issues/%d", is.Index)
	patch := func(body map[string]any, status int) *models.Issue {
		t.Helper()
		var out models.Issue
		r := e.Do("PATCH", path, body, a).Expect(t, status)
		if status == http.StatusCreated {
			r.JSON(t, &out)
		}
		return &out
	}

	// A body change bumps content_version; a title change does not.
	got := patch(map[string]any{"body": "b1"}, http.StatusCreated)
	if got.Body != "b1" || got.ContentVersion != 1 {
		t.Fatalf("after body edit %+v", got)
	}
	got = patch(map[string]any{"title": "t2"}, http.StatusCreated)
	if got.Title != "t2" || got.ContentVersion != 1 {
		t.Fatalf("after title edit %+v", got)
	}
	// The SDK always sends a title; an empty one leaves it alone.
	if got = patch(map[string]any{"title": "", "body": "b1"}, http.StatusCreated); got.Title != "t2" || got.ContentVersion != 1 {
		t.Fatalf("empty title or same body changed something: %+v", got)
	}

	// A stale content_version answers 409 and changes nothing at all.
	r := e.Do("PATCH", path, map[string]any{"content_version": 0, "title": "lost", "body": "lost", "state": "closed"}, a).
		Expect(t, http.StatusConflict)
	var apiErr models.APIError
	r.JSON(t, &apiErr)
	if apiErr.Message == "" {
		t.Fatalf("409 without message: %s", r.Body)
	}
	if cur := isGet(t, e, "alice/pub", is.Index, a); cur.Title != "t2" || cur.Body != "b1" || cur.State != "open" || cur.ContentVersion != 1 {
		t.Fatalf("a stale edit changed the issue: %+v", cur)
	}
	if got = patch(map[string]any{"content_version": 1, "body": "b2"}, http.StatusCreated); got.ContentVersion != 2 {
		t.Fatalf("current version refused: %+v", got)
	}

	// State: closing sets closed_at and moves the counters; reopening
	// clears it.
	got = patch(map[string]any{"state": "closed"}, http.StatusCreated)
	if got.State != "closed" || got.Closed == nil {
		t.Fatalf("closed %+v", got)
	}
	if rp := isRepo(t, e, "alice/pub"); rp.OpenIssues != 0 {
		t.Fatalf("open issues %d after close", rp.OpenIssues)
	}
	var m models.Milestone
	e.Do("GET", fmt.Sprintf("repos/alice/pub/milestones/%d", ms1.ID), nil, a).Expect(t, http.StatusOK).JSON(t, &m)
	if m.OpenIssues != 0 || m.ClosedIssues != 1 {
		t.Fatalf("milestone after close %+v", m)
	}
	got = patch(map[string]any{"state": "open"}, http.StatusCreated)
	if got.State != "open" || got.Closed != nil {
		t.Fatalf("reopened %+v", got)
	}
	patch(map[string]any{"state": "merged"}, http.StatusPreconditionFailed)

	// Moving between milestones moves the counts.
	got = patch(map[string]any{"milestone": ms2.ID}, http.StatusCreated)
	if got.Milestone == nil || got.Milestone.ID != ms2.ID || got.Milestone.OpenIssues != 1 {
		t.Fatalf("milestone %+v", got.Milestone)
	}
	e.Do("GET", fmt.Sprintf("repos/alice/pub/milestones/%d", ms1.ID), nil, a).Expect(t, http.StatusOK).JSON(t, &m)
	if m.OpenIssues != 0 || m.ClosedIssues != 0 {
		t.Fatalf("old milestone %+v", m)
	}
	if got = patch(map[string]any{"milestone": 0}, http.StatusCreated); got.Milestone != nil {
		t.Fatalf("milestone not cleared %+v", got.Milestone)
	}
	patch(map[string]any{"milestone": 12345}, http.StatusUnprocessableEntity)

	// Assignees are replaced, [] clears them.
	if got = patch(map[string]any{"assignees": []string{"alice"}}, http.StatusCreated); len(got.Assignees) != 1 {
		t.Fatalf("assignees %+v", got.Assignees)
	}
	if got = patch(map[string]any{"assignees": []string{}}, http.StatusCreated); len(got.Assignees) != 0 || got.Assignee != nil {
		t.Fatalf("assignees not cleared %+v", got.Assignees)
	}
	patch(map[string]any{"assignees": []string{"ghost-user"}}, http.StatusUnprocessableEntity)

	// Projects are replaced; unknown ids answer 422.
	var p1, p2 models.Project
	e.Do("POST", "repos/alice/pub/projects", map[string]any{"title": "p1"}, a).Expect(t, http.StatusCreated).JSON(t, &p1)
	e.Do("POST", "repos/alice/pub/projects", map[string]any{"title": "p2"}, a).Expect(t, http.StatusCreated).JSON(t, &p2)
	if got = patch(map[string]any{"projects": []int64{p1.ID, p2.ID}}, http.StatusCreated); len(got.Projects) != 2 {
		t.Fatalf("projects %+v", got.Projects)
	}
	if got = patch(map[string]any{"projects": []int64{p2.ID}}, http.StatusCreated); len(got.Projects) != 1 || got.Projects[0].ID != p2.ID {
		t.Fatalf("projects not replaced %+v", got.Projects)
	}
	patch(map[string]any{"projects": []int64{p1.ID, 999}}, http.StatusUnprocessableEntity)
	if cur := isGet(t, e, "alice/pub", is.Index, a); len(cur.Projects) != 1 || cur.Projects[0].ID != p2.ID {
		t.Fatalf("a refused edit changed the projects: %+v", cur.Projects)
	}

	// ref is kept; an outsider (not the poster) may not edit.
	if got = patch(map[string]any{"ref": "refs/heads/x"}, http.StatusCreated); got.Ref != "refs/heads/x" {
		t.Fatalf("ref %q", got.Ref)
	}
	e.Do("PATCH", path, map[string]any{"title": "x"}, apitest.Basic(w.bob)).Expect(t, http.StatusForbidden)
	e.Do("PATCH", "repos/alice/pub/issues/99", map[string]any{"title": "x"}, a).Expect(t, http.StatusNotFound)
}

// TestIssueArchived: every issue-tracker write on an archived repository
// answers 423 and changes nothing; reads still work.
func TestIssueArchived(t *testing.T) {
	t.Parallel()
	w := isSetup(t)
	e, a := w.e, apitest.Basic(w.alice)
	is := isCreate(t, e, "alice/pub", a, map[string]any{"title": "before"})
	var c models.Comment
	e.Do("POST", "repos/alice/pub/issues/1/comments", map[string]any{"body": "hi"}, a).Expect(t, http.StatusCreated).JSON(t, &c)
	var l models.Label
	e.Do("POST", "repos/alice/pub/labels", map[string]any{"name": "bug", "color": "#ff0000"}, a).Expect(t, http.StatusCreated).JSON(t, &l)
	var ms models.Milestone
	e.Do("POST", "repos/alice/pub/milestones", map[string]any{"title": "m"}, a).Expect(t, http.StatusCreated).JSON(t, &ms)
	var pr models.Project
	e.Do("POST", "repos/alice/pub/projects", map[string]any{"title": "p"}, a).Expect(t, http.StatusCreated).JSON(t, &pr)
	var tt models.TrackedTime
	e.Do("POST", "repos/alice/pub/issues/1/times", map[string]any{"time": 60}, a).Expect(t, http.StatusOK).JSON(t, &tt)
	e.Do("PATCH", "repos/alice/pub", map[string]any{"archived": true}, a).Expect(t, http.StatusOK)

	issue := fmt.Sprintf("repos/alice/pub/issues/%d", is.Index)
	for _, c := range []struct {
		method, path string
		body         any
	}{
		{"POST", "repos/alice/pub/issues", map[string]any{"title": "new"}},
		{"PATCH", issue, map[string]any{"title": "changed"}},
		{"DELETE", issue, nil},
		{"POST", issue + "/deadline", map[string]any{"due_date": "2030-01-01T00:00:00Z"}},
		{"POST", issue + "/comments", map[string]any{"body": "x"}},
		{"PATCH", fmt.Sprintf("repos/alice/pub/issues/comments/%d", c.ID), map[string]any{"body": "x"}},
		{"DELETE", fmt.Sprintf("repos/alice/pub/issues/comments/%d", c.ID), nil},
		{"POST", "repos/alice/pub/labels", map[string]any{"name": "x", "color": "#000000"}},
		{"PATCH", fmt.Sprintf("repos/alice/pub/labels/%d", l.ID), map[string]any{"name": "y"}},
		{"DELETE", fmt.Sprintf("repos/alice/pub/labels/%d", l.ID), nil},
		{"POST", issue + "/labels", map[string]any{"labels": []int64{l.ID}}},
		{"PUT", issue + "/labels", map[string]any{"labels": []int64{l.ID}}},
		{"DELETE", issue + "/labels", nil},
		{"DELETE", fmt.Sprintf("%s/labels/%d", issue, l.ID), nil},
		{"POST", "repos/alice/pub/milestones", map[string]any{"title": "x"}},
		{"PATCH", fmt.Sprintf("repos/alice/pub/milestones/%d", ms.ID), map[string]any{"title": "y"}},
		{"DELETE", fmt.Sprintf("repos/alice/pub/milestones/%d", ms.ID), nil},
		{"POST", issue + "/reactions", map[string]any{"content": "heart"}},
		{"DELETE", issue + "/reactions", map[string]any{"content": "heart"}},
		{"POST", fmt.Sprintf("repos/alice/pub/issues/comments/%d/reactions", c.ID), map[string]any{"content": "heart"}},
		{"DELETE", fmt.Sprintf("repos/alice/pub/issues/comments/%d/reactions", c.ID), map[string]any{"content": "heart"}},
		{"POST", issue + "/times", map[string]any{"time": 10}},
		{"DELETE", issue + "/times", nil},
		{"DELETE", fmt.Sprintf("%s/times/%d", issue, tt.ID), nil},
		{"POST", "repos/alice/pub/projects", map[string]any{"title": "x"}},
		{"PATCH", fmt.Sprintf("repos/alice/pub/projects/%d", pr.ID), map[string]any{"title": "y"}},
		{"DELETE", fmt.Sprintf("repos/alice/pub/projects/%d", pr.ID), nil},
	} {
		r := e.Do(c.method, c.path, c.body, a)
		if r.Status != http.StatusLocked {
			t.Errorf("%s %s: status %d, want 423; body %s", c.method, c.path, r.Status, r.Body)
		}
	}
	cur := isGet(t, e, "alice/pub", is.Index, a)
	if cur.Title != "before" || cur.Comments != 1 || len(cur.Labels) != 0 || cur.Deadline != nil {
		t.Fatalf("archived repository changed: %+v", cur)
	}
	if rp := isRepo(t, e, "alice/pub"); rp.OpenIssues != 1 {
		t.Fatalf("open issues %d", rp.OpenIssues)
	}
	e.Do("GET", "repos/alice/pub/issues", nil, a).Expect(t, http.StatusOK)
	e.Do("GET", "repos/alice/pub/labels", nil, a).Expect(t, http.StatusOK)
}

func TestIssueDeleteKeepsNumbersAndCounters(t *testing.T) {
	t.Parallel()
	w := isSetup(t)
	e, a := w.e, apitest.Basic(w.alice)
	var ms models.Milestone
	e.Do("POST", "repos/alice/pub/milestones", map[string]any{"title": "m"}, a).Expect(t, http.StatusCreated).JSON(t, &ms)
	isCreate(t, e, "alice/pub", a, map[string]any{"title": "1"})
	isCreate(t, e, "alice/pub", a, map[string]any{"title": "2", "milestone": ms.ID, "closed": true})
	e.Do("POST", "repos/alice/pub/issues/2/comments", map[string]any{"body": "c"}, a).Expect(t, http.StatusCreated)
	e.Do("DELETE", "repos/alice/pub/issues/2", nil, a).Expect(t, http.StatusNoContent)
	e.Do("GET", "repos/alice/pub/issues/2", nil, a).Expect(t, http.StatusNotFound)
	e.Do("DELETE", "repos/alice/pub/issues/2", nil, a).Expect(t, http.StatusNotFound)
	// The number of a deleted issue is never handed out again.
	if n := isCreate(t, e, "alice/pub", a, map[string]any{"title": "3"}).Index; n != 3 {
		t.Fatalf("next number %d, want 3", n)
	}
	var m models.Milestone
	e.Do("GET", fmt.Sprintf("repos/alice/pub/milestones/%d", ms.ID), nil, a).Expect(t, http.StatusOK).JSON(t, &m)
	if m.OpenIssues != 0 || m.ClosedIssues != 0 {
		t.Fatalf("milestone after delete %+v", m)
	}
	isCheckCounters(t, w.e)
}

func TestIssueList(t *testing.T) {
	t.Parallel()
	w := isSetup(t)
	e, a := w.e, apitest.Basic(w.alice)
	var bug, ui models.Label
	e.Do("POST", "repos/alice/pub/labels", map[string]any{"name": "bug", "color": "#ff0000"}, a).Expect(t, http.StatusCreated).JSON(t, &bug)
	e.Do("POST", "repos/alice/pub/labels", map[string]any{"name": "ui", "color": "#00ff00"}, a).Expect(t, http.StatusCreated).JSON(t, &ui)
	var ms models.Milestone
	e.Do("POST", "repos/alice/pub/milestones", map[string]any{"title": "v1"}, a).Expect(t, http.StatusCreated).JSON(t, &ms)

	isCreate(t, e, "alice/pub", a, map[string]any{"title": "crash on start", "labels": []int64{bug.ID}, "milestone": ms.ID})
	isCreate(t, e, "alice/pub", a, map[string]any{"title": "button color", "labels": []int64{bug.ID, ui.ID}, "assignees": []string{"alice"}})
	isCreate(t, e, "alice/pub", apitest.Basic(w.bob), map[string]any{"title": "question", "body": "ping @alice, 100% sure"})
	isCreate(t, e, "alice/pub", a, map[string]any{"title": "old", "closed": true})

	list := func(query string, want ...int64) {
		t.Helper()
		var got []*models.Issue
		r := e.Do("GET", "repos/alice/pub/issues"+query, nil, nil).Expect(t, http.StatusOK)
		r.JSON(t, &got)
		nums := []int64{}
		for _, is := range got {
			nums = append(nums, is.Index)
		}
		if fmt.Sprint(nums) != fmt.Sprint(want) {
			t.Errorf("%s: got %v, want %v", query, nums, want)
		}
		// Only the paged query spans more than one page; a single page
		// sends no Link.
		if r.Header.Get("X-Total-Count") == "" || (r.Header.Get("Link") != "") != strings.Contains(query, "page=") {
			t.Errorf("%s: paging headers %v", query, r.Header)
		}
	}
	list("", 3, 2, 1) // open, newest first
	list("?state=closed", 4)
	list("?state=all", 4, 3, 2, 1)
	list("?labels=bug", 2, 1)
	list("?labels=bug,ui", 2)
	list("?labels=bug,nosuchlabel", 2, 1) // unknown names are discarded
	list("?milestones=v1", 1)
	list(fmt.Sprintf("?milestones=%d", ms.ID), 1)
	list("?q=COLOR", 2)
	list("?q=%25") // punctuation is no word: it matches nothing, and is no wildcard
	list("?created_by=bob", 3)
	list("?assigned_by=alice", 2)
	list("?mentioned_by=alice", 3)
	list("?type=pulls")
	list("?type=issues", 3, 2, 1)
	list("?since=2000-01-01T00:00:00Z&before=2999-01-01T00:00:00Z", 3, 2, 1)
	list("?since=2999-01-01T00:00:00Z")
	list("?limit=2&page=2", 1)
	e.Do("GET", "repos/alice/pub/issues?created_by=nobody", nil, nil).Expect(t, http.StatusNotFound)
	e.Do("GET", "repos/alice/pub/issues?since=yesterday", nil, nil).Expect(t, http.StatusUnprocessableEntity)
	e.Do("GET", "repos/alice/pub/issues?state=bogus", nil, nil).Expect(t, http.StatusUnprocessableEntity)
	for _, inj := range []string{"'%20OR%201=1--", "%5C", "_", "*", "%3B%20DROP%20TABLE%20issues"} {
		r := e.Do("GET", "repos/alice/pub/issues?q="+inj+"&labels="+inj+"&milestones="+inj, nil, nil).Expect(t, http.StatusOK)
		if r.Header.Get("X-Total-Count") != "0" {
			t.Errorf("q=%s matched %s issues", inj, r.Header.Get("X-Total-Count"))
		}
	}
}

func TestIssueSearch(t *testing.T) {
	t.Parallel()
	w := isSetup(t)
	e, a := w.e, apitest.Basic(w.alice)
	isCreate(t, e, "alice/pub", a, map[string]any{"title": "public one"})
	isCreate(t, e, "alice/priv", a, map[string]any{"title": "private one"})
	isCreate(t, e, "acme/tool", a, map[string]any{"title": "org one", "assignees": []string{"alice"}})
	isCreate(t, e, "acme/tool", apitest.Basic(w.carol), map[string]any{"title": "carol's", "body": "hey @alice"})

	search := func(query string, cred apitest.Cred, want int) []*models.Issue {
		t.Helper()
		var got []*models.Issue
		r := e.Do("GET", "repos/issues/search"+query, nil, cred).Expect(t, http.StatusOK)
		r.JSON(t, &got)
		if len(got) != want || r.Header.Get("X-Total-Count") != fmt.Sprint(want) {
			t.Errorf("%s: %d issues (X-Total-Count %s), want %d", query, len(got), r.Header.Get("X-Total-Count"), want)
		}
		return got
	}
	search("", nil, 3)
	search("", apitest.Basic(w.bob), 3)
	search("", a, 4)
	search("", apitest.Basic(e.Admin), 4)
	// A token limited to public data sees only public repositories.
	search("", apitest.TokenCred(e.Token(w.alice, "public-only", "read:issue", "read:repository")), 3)
	search("?q=private", apitest.Basic(w.bob), 0)
	search("?owner=acme", a, 2)
	search("?assigned=true", a, 1)
	search("?mentioned=true", a, 1)
	search("?created=true", apitest.Basic(w.carol), 1)
	search("?created_by=carol", nil, 1)
	for _, is := range search("?q=org", nil, 1) {
		if is.Repository.FullName != "acme/tool" {
			t.Errorf("repository %+v", is.Repository)
		}
	}
	e.Do("GET", "repos/issues/search?owner=nobody", nil, nil).Expect(t, http.StatusBadRequest)
}

// TestIssueListStatementCount: the issue list runs the same number of SQL
// statements for a page of 1 and a page of 50.
func TestIssueListStatementCount(t *testing.T) {
	t.Parallel()
	w := isSetup(t)
	e, a := w.e, apitest.Basic(w.alice)
	var l models.Label
	e.Do("POST", "repos/alice/pub/labels", map[string]any{"name": "bug", "color": "#ff0000"}, a).Expect(t, http.StatusCreated).JSON(t, &l)
	var ms models.Milestone
	e.Do("POST", "repos/alice/pub/milestones", map[string]any{"title": "v1"}, a).Expect(t, http.StatusCreated).JSON(t, &ms)
	var pr models.Project
	e.Do("POST", "repos/alice/pub/projects", map[string]any{"title": "p"}, a).Expect(t, http.StatusCreated).JSON(t, &pr)
	for i := 0; i < 55; i++ {
		poster := a
		if i%2 == 0 {
			poster = apitest.Basic(w.bob)
		}
		is := isCreate(t, e, "alice/pub", poster, map[string]any{"title": fmt.Sprintf("issue %d", i)})
		e.Do("PATCH", fmt.Sprintf("repos/alice/pub/issues/%d", is.Index), map[string]any{
			"milestone": ms.ID, "assignees": []string{"alice"}, "projects": []int64{pr.ID},
		}, a).Expect(t, http.StatusCreated)
		e.Do("POST", fmt.Sprintf("repos/alice/pub/issues/%d/labels", is.Index), map[string]any{"labels": []int64{l.ID}}, a).Expect(t, http.StatusOK)
	}
	for _, path := range []string{"repos/alice/pub/issues", "repos/issues/search"} {
		counts := map[int]int64{}
		for _, limit := range []int{1, 50} {
			before := e.Statements()
			var page []*models.Issue
			e.Do("GET", fmt.Sprintf("%s?limit=%d", path, limit), nil, a).Expect(t, http.StatusOK).JSON(t, &page)
			counts[limit] = e.Statements() - before
			if len(page) != limit || len(page[0].Labels) != 1 || page[0].Milestone == nil || len(page[0].Projects) != 1 || len(page[0].Assignees) != 1 {
				t.Fatalf("%s limit=%d: %d issues, first %+v", path, limit, len(page), page[0])
			}
		}
		t.Logf("%s statements: limit=1 → %d, limit=50 → %d", path, counts[1], counts[50])
		if counts[1] != counts[50] {
			t.Errorf("%s: statement count depends on the page size: %d vs %d", path, counts[1], counts[50])
		}
	}
}

// isCheckCounters compares every stored counter with a COUNT over the rows
// it summarises (the store's doctor): the repositories' issue counts, the
// milestones' open and closed counts, the issues' comment counts, and the
// numbering (unique, never ahead of the counter).
func isCheckCounters(t *testing.T, e *apitest.Env) {
	t.Helper()
	drift, err := e.DB.Issues().CheckCounters(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for name, bad := range drift {
		if bad != 0 {
			t.Errorf("%s: %d rows disagree with COUNT(*)", name, bad)
		}
	}
	if len(drift) < 7 {
		t.Errorf("doctor ran %d checks", len(drift))
	}
}

// TestIssueAuthorDeleted: deleting an account keeps its issues and
// comments in other people's repositories, shown as the reference's Ghost
// user, and removes what means nothing without it (reactions, assignments,
// tracked time); deleting a user with repositories removes their issues.
func TestIssueAuthorDeleted(t *testing.T) {
	t.Parallel()
	w := isSetup(t)
	e, a, b := w.e, apitest.Basic(w.alice), apitest.Basic(w.bob)
	dave := e.CreateUser("dave", false)
	d := apitest.Basic(dave)
	roCreateRepo(t, e, d, map[string]any{"name": "mine"})
	isCreate(t, e, "dave/mine", d, map[string]any{"title": "in dave's repo"})
	isCreate(t, e, "alice/pub", b, map[string]any{"title": "by bob"})
	isComment(t, e, "alice/pub", 1, b, "bob says")
	e.Do("POST", "repos/alice/pub/issues/1/reactions", map[string]any{"content": "heart"}, b).Expect(t, http.StatusCreated)
	e.Do("POST", "repos/alice/pub/issues/1/times", map[string]any{"time": 60}, b).Expect(t, http.StatusOK)
	isComment(t, e, "dave/mine", 1, b, "bob on dave's")

	admin := apitest.Basic(e.Admin)
	e.Do("DELETE", "admin/users/bob", nil, admin).Expect(t, http.StatusNoContent)
	is := isGet(t, e, "alice/pub", 1, a)
	if is.User == nil || is.User.UserName != "Ghost" || is.User.ID != -1 || is.Comments != 1 {
		t.Fatalf("issue of a deleted user %+v (user %+v)", is, is.User)
	}
	var comments []*models.Comment
	e.Do("GET", "repos/alice/pub/issues/1/comments", nil, a).Expect(t, http.StatusOK).JSON(t, &comments)
	if len(comments) != 1 || comments[0].User.UserName != "Ghost" {
		t.Fatalf("comments %+v", comments)
	}
	var reactions []*models.Reaction
	e.Do("GET", "repos/alice/pub/issues/1/reactions", nil, a).Expect(t, http.StatusOK).JSON(t, &reactions)
	if len(reactions) != 0 {
		t.Fatalf("reactions of a deleted user: %d", len(reactions))
	}
	if got := isTimes(t, e, "repos/alice/pub/times", a); len(got) != 0 {
		t.Fatalf("tracked time of a deleted user: %d", len(got))
	}

	e.Do("DELETE", "admin/users/dave?purge=true", nil, admin).Expect(t, http.StatusNoContent)
	e.Do("GET", "repos/dave/mine/issues/1", nil, admin).Expect(t, http.StatusNotFound)
	isCheckCounters(t, e)
}

// TestIssueTrackerDisabled: without an issue tracker (turned off, or an
// external one) issues are gone; with neither issues nor pull requests the
// whole tracker answers 404.
func TestIssueTrackerDisabled(t *testing.T) {
	t.Parallel()
	w := isSetup(t)
	e, a := w.e, apitest.Basic(w.alice)
	isCreate(t, e, "alice/pub", a, map[string]any{"title": "t"})
	e.Do("PATCH", "repos/alice/pub", map[string]any{"has_issues": false}, a).Expect(t, http.StatusOK)
	e.Do("GET", "repos/alice/pub/issues/1", nil, a).Expect(t, http.StatusNotFound)
	e.Do("POST", "repos/alice/pub/issues", map[string]any{"title": "x"}, a).Expect(t, http.StatusForbidden)
	var list []*models.Issue
	e.Do("GET", "repos/alice/pub/issues", nil, a).Expect(t, http.StatusOK).JSON(t, &list)
	if len(list) != 0 {
		t.Fatalf("issues listed while disabled: %d", len(list))
	}
	e.Do("GET", "repos/issues/search", nil, a).Expect(t, http.StatusOK).JSON(t, &list)
	if len(list) != 0 {
		t.Fatalf("search found issues of a disabled tracker: %d", len(list))
	}
	e.Do("PATCH", "repos/alice/pub", map[string]any{"has_pull_requests": false}, a).Expect(t, http.StatusOK)
	e.Do("GET", "repos/alice/pub/issues", nil, a).Expect(t, http.StatusNotFound)
	e.Do("GET", "repos/alice/pub/labels", nil, a).Expect(t, http.StatusNotFound)

	e.Do("PATCH", "repos/alice/pub", map[string]any{"has_issues": true, "external_tracker": map[string]any{
		"external_tracker_url": "https://tracker.example.com/", "external_tracker_format": "https://tracker.example.com/{index}",
	}}, a).Expect(t, http.StatusOK)
	e.Do("GET", "repos/alice/pub/issues/1", nil, a).Expect(t, http.StatusNotFound)
	e.Do("PATCH", "repos/alice/pub", map[string]any{"internal_tracker": map[string]any{"enable_time_tracker": true}}, a).Expect(t, http.StatusOK)
	if is := isGet(t, e, "alice/pub", 1, a); is.Title != "t" {
		t.Fatalf("issue after switching back %+v", is)
	}
}

// TestIssueOutsiderEditsOwnIssue: the poster without write access edits
// title and body; the writer-only fields they send are ignored.
func TestIssueOutsiderEditsOwnIssue(t *testing.T) {
	t.Parallel()
	w := isSetup(t)
	e, a, b := w.e, apitest.Basic(w.alice), apitest.Basic(w.bob)
	ms := isMilestone(t, e, "alice/pub", a, map[string]any{"title": "m"})
	isCreate(t, e, "alice/pub", b, map[string]any{"title": "mine"})
	var got models.Issue
	e.Do("PATCH", "repos/alice/pub/issues/1", map[string]any{"title": "still mine", "body": "b", "milestone": ms.ID,
		"assignees": []string{"alice"}, "due_date": "2030-01-01T00:00:00Z", "state": "closed"}, b).Expect(t, http.StatusCreated).JSON(t, &got)
	if got.Title != "still mine" || got.Body != "b" || got.Milestone != nil || len(got.Assignees) != 0 || got.Deadline != nil || got.State != "closed" {
		t.Fatalf("poster's edit %+v", got)
	}
}

// TestIssueConcurrentContentVersion: of parallel body edits made against
// the same content_version exactly one wins; the others get 409.
func TestIssueConcurrentContentVersion(t *testing.T) {
	t.Parallel()
	w := isSetup(t)
	e, a := w.e, apitest.Basic(w.alice)
	isCreate(t, e, "alice/pub", a, map[string]any{"title": "t", "body": "v0"})
	const n = 10
	statuses := make([]int, n)
	isParallel(n, func(i int) {
		statuses[i] = e.DoFor(t, "PATCH", "repos/alice/pub/issues/1",
			map[string]any{"body": fmt.Sprintf("edit %d", i), "title": fmt.Sprintf("title %d", i), "content_version": 0}, a).Status
	})
	won := -1
	for i, s := range statuses {
		switch s {
		case http.StatusCreated:
			if won >= 0 {
				t.Fatalf("two edits won: %d and %d", won, i)
			}
			won = i
		case http.StatusConflict:
		default:
			t.Fatalf("edit answered %d", s)
		}
	}
	if won < 0 {
		t.Fatal("no edit won")
	}
	is := isGet(t, e, "alice/pub", 1, a)
	if is.Body != fmt.Sprintf("edit %d", won) || is.Title != fmt.Sprintf("title %d", won) || is.ContentVersion != 1 {
		t.Fatalf("after the race: %+v (winner %d)", is, won)
	}
}
