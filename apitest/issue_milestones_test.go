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

func isMilestone(t *testing.T, e *apitest.Env, repo string, cred apitest.Cred, body map[string]any) *models.Milestone {
	t.Helper()
	var m models.Milestone
	e.Do("POST", "repos/"+repo+"/milestones", body, cred).Expect(t, http.StatusCreated).JSON(t, &m)
	return &m
}

func TestIssueMilestones(t *testing.T) {
	t.Parallel()
	w := isSetup(t)
	e, a := w.e, apitest.Basic(w.alice)

	m := isMilestone(t, e, "alice/pub", a, map[string]any{"title": "v1.0", "description": "first", "due_on": "2030-06-01T20:00:00-05:00"})
	if m.Title != "v1.0" || m.Description != "first" || m.State != "open" || m.OpenIssues != 0 || m.ClosedIssues != 0 || m.Closed != nil {
		t.Fatalf("created %+v", m)
	}
	// The deadline is kept to the second as sent, as the reference keeps
	// it (unlike an issue's due date, which is a day).
	if m.Deadline == nil || !time.Time(*m.Deadline).Equal(time.Date(2030, 6, 2, 1, 0, 0, 0, time.UTC)) {
		t.Fatalf("due_on %v", m.Deadline)
	}
	closed := isMilestone(t, e, "alice/pub", a, map[string]any{"title": "v0.9", "state": "closed"})
	if closed.State != "closed" || closed.Closed == nil {
		t.Fatalf("created closed %+v", closed)
	}
	e.Do("POST", "repos/alice/pub/milestones", map[string]any{}, a).Expect(t, http.StatusUnprocessableEntity)
	e.Do("POST", "repos/alice/pub/milestones", map[string]any{"title": "x", "state": "done"}, a).Expect(t, http.StatusUnprocessableEntity)

	for _, c := range []struct {
		name        string
		cred        apitest.Cred
		repo        string
		read, write int
	}{
		{"anonymous", nil, "alice/pub", 200, 401},
		{"outsider", apitest.Basic(w.bob), "alice/pub", 200, 403},
		{"outsider/private", apitest.Basic(w.bob), "alice/priv", 404, 404},
		{"member", apitest.Basic(w.carol), "acme/tool", 200, 403},
		{"admin", apitest.Basic(e.Admin), "alice/priv", 200, 201},
	} {
		t.Run(c.name, func(t *testing.T) {
			e.Do("GET", "repos/"+c.repo+"/milestones", nil, c.cred).Expect(t, c.read)
			e.Do("POST", "repos/"+c.repo+"/milestones", map[string]any{"title": "by " + c.name}, c.cred).Expect(t, c.write)
		})
	}

	list := func(query string) []string {
		t.Helper()
		var got []*models.Milestone
		e.Do("GET", "repos/alice/pub/milestones"+query, nil, nil).Expect(t, http.StatusOK).JSON(t, &got)
		out := []string{}
		for _, m := range got {
			out = append(out, m.Title)
		}
		return out
	}
	if got := fmt.Sprint(list("")); got != "[v1.0]" {
		t.Errorf("default (open) list %s", got)
	}
	if got := fmt.Sprint(list("?state=closed")); got != "[v0.9]" {
		t.Errorf("closed list %s", got)
	}
	if got := fmt.Sprint(list("?state=all")); got != "[v1.0 v0.9]" {
		t.Errorf("all list %s", got)
	}
	if got := fmt.Sprint(list("?state=all&name=1.")); got != "[v1.0]" {
		t.Errorf("name filter %s", got)
	}
	e.Do("GET", "repos/alice/pub/milestones?state=nope", nil, nil).Expect(t, http.StatusUnprocessableEntity)

	// By id or by title.
	var got models.Milestone
	e.Do("GET", fmt.Sprintf("repos/alice/pub/milestones/%d", m.ID), nil, nil).Expect(t, http.StatusOK).JSON(t, &got)
	if got.ID != m.ID {
		t.Fatalf("by id %+v", got)
	}
	e.Do("GET", "repos/alice/pub/milestones/v0.9", nil, nil).Expect(t, http.StatusOK).JSON(t, &got)
	if got.ID != closed.ID {
		t.Fatalf("by title %+v", got)
	}
	e.Do("GET", "repos/alice/pub/milestones/nope", nil, nil).Expect(t, http.StatusNotFound)

	// Counts follow the issues.
	isCreate(t, e, "alice/pub", a, map[string]any{"title": "a", "milestone": m.ID})
	isCreate(t, e, "alice/pub", a, map[string]any{"title": "b", "milestone": m.ID, "closed": true})
	isCreate(t, e, "alice/pub", a, map[string]any{"title": "c", "milestone": m.ID})
	e.Do("GET", fmt.Sprintf("repos/alice/pub/milestones/%d", m.ID), nil, nil).Expect(t, http.StatusOK).JSON(t, &got)
	if got.OpenIssues != 2 || got.ClosedIssues != 1 {
		t.Fatalf("counts %+v", got)
	}

	// Edit: state sets and clears closed_at; counters are kept.
	path := fmt.Sprintf("repos/alice/pub/milestones/%d", m.ID)
	e.Do("PATCH", path, map[string]any{"state": "closed", "title": "v1.0.0"}, a).Expect(t, http.StatusOK).JSON(t, &got)
	if got.State != "closed" || got.Closed == nil || got.Title != "v1.0.0" || got.OpenIssues != 2 || got.ClosedIssues != 1 || got.Description != "first" {
		t.Fatalf("closed %+v", got)
	}
	e.Do("PATCH", path, map[string]any{"state": "open"}, a).Expect(t, http.StatusOK).JSON(t, &got)
	if got.State != "open" || got.Closed != nil {
		t.Fatalf("reopened %+v", got)
	}
	e.Do("PATCH", path, map[string]any{"title": strings.Repeat("x", 300)}, a).Expect(t, http.StatusUnprocessableEntity)
	e.Do("PATCH", path, map[string]any{"title": ""}, a).Expect(t, http.StatusOK).JSON(t, &got)
	if got.Title != "v1.0.0" {
		t.Fatalf("an empty title changed the title to %q", got.Title)
	}
	e.Do("PATCH", path, map[string]any{"title": "x"}, apitest.Basic(w.bob)).Expect(t, http.StatusForbidden)

	// Delete takes the issues out of the milestone.
	e.Do("DELETE", path, nil, apitest.Basic(w.bob)).Expect(t, http.StatusForbidden)
	e.Do("DELETE", path, nil, a).Expect(t, http.StatusNoContent)
	e.Do("GET", path, nil, a).Expect(t, http.StatusNotFound)
	if is := isGet(t, e, "alice/pub", 1, a); is.Milestone != nil {
		t.Fatalf("issue still in a deleted milestone: %+v", is.Milestone)
	}
	isCheckCounters(t, e)
}
