package apitest_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"repohost/apitest"
	"repohost/gen/client/issue"
	"repohost/models"
	"repohost/store"
)

func TestIssueProjects(t *testing.T) {
	t.Parallel()
	w := isSetup(t)
	e, a := w.e, apitest.Basic(w.alice)

	var pr models.Project
	e.Do("POST", "repos/alice/pub/projects", map[string]any{"title": "Roadmap", "description": "plans"}, a).
		Expect(t, http.StatusCreated).JSON(t, &pr)
	if pr.Title != "Roadmap" || pr.Description != "plans" || pr.State != "open" || pr.IsClosed || pr.Type != "repository" ||
		pr.CardType != "text_only" || pr.TemplateType != "none" || pr.Creator == nil || pr.Creator.UserName != "alice" ||
		pr.CreatorID != w.alice.User.ID || pr.RepoID == 0 || pr.NumIssues != 0 || pr.Closed != nil || pr.Updated == nil ||
		!strings.HasSuffix(pr.HTMLURL.String(), fmt.Sprintf("/alice/pub/projects/%d", pr.ID)) {
		t.Fatalf("created %+v", pr)
	}
	e.Do("POST", "repos/alice/pub/projects", map[string]any{"title": "  "}, a).Expect(t, http.StatusUnprocessableEntity)
	e.Do("POST", "repos/alice/pub/projects", map[string]any{"title": strings.Repeat("x", 101)}, a).Expect(t, http.StatusUnprocessableEntity)
	e.Do("POST", "repos/alice/pub/projects", map[string]any{"title": "t", "card_type": "huge"}, a).Expect(t, http.StatusUnprocessableEntity)

	for _, c := range []struct {
		name        string
		cred        apitest.Cred
		repo        string
		read, write int
	}{
		{"anonymous", nil, "alice/pub", 200, 401},
		{"outsider", apitest.Basic(w.bob), "alice/pub", 200, 403},
		{"outsider/private", apitest.Basic(w.bob), "alice/priv", 404, 404},
		{"anonymous/private", nil, "alice/priv", 404, 404},
		{"member", apitest.Basic(w.carol), "acme/tool", 200, 403},
		{"admin", apitest.Basic(e.Admin), "alice/priv", 200, 201},
	} {
		t.Run(c.name, func(t *testing.T) {
			e.Do("GET", "repos/"+c.repo+"/projects", nil, c.cred).Expect(t, c.read)
			e.Do("POST", "repos/"+c.repo+"/projects", map[string]any{"title": "by " + c.name}, c.cred).Expect(t, c.write)
		})
	}

	// Counts follow the issues and their states.
	isCreate(t, e, "alice/pub", a, map[string]any{"title": "a", "projects": []int64{pr.ID}})
	isCreate(t, e, "alice/pub", a, map[string]any{"title": "b", "projects": []int64{pr.ID}, "closed": true})
	isCreate(t, e, "alice/pub", a, map[string]any{"title": "c", "projects": []int64{pr.ID}})
	path := fmt.Sprintf("repos/alice/pub/projects/%d", pr.ID)
	get := func() models.Project {
		t.Helper()
		var got models.Project
		e.Do("GET", path, nil, nil).Expect(t, http.StatusOK).JSON(t, &got)
		return got
	}
	if got := get(); got.NumIssues != 3 || got.NumOpenIssues != 2 || got.NumClosedIssues != 1 {
		t.Fatalf("counts %+v", got)
	}
	e.Do("PATCH", "repos/alice/pub/issues/1", map[string]any{"state": "closed"}, a).Expect(t, http.StatusCreated)
	e.Do("PATCH", "repos/alice/pub/issues/3", map[string]any{"projects": []int64{}}, a).Expect(t, http.StatusCreated)
	if got := get(); got.NumIssues != 2 || got.NumOpenIssues != 0 || got.NumClosedIssues != 2 {
		t.Fatalf("counts after close and unlink %+v", got)
	}
	e.Do("DELETE", "repos/alice/pub/issues/2", nil, a).Expect(t, http.StatusNoContent)
	if got := get(); got.NumIssues != 1 || got.NumClosedIssues != 1 {
		t.Fatalf("counts after delete %+v", got)
	}

	// Edit: title, description, state.
	var got models.Project
	e.Do("PATCH", path, map[string]any{"title": "Plan", "state": "closed"}, a).Expect(t, http.StatusOK).JSON(t, &got)
	if got.Title != "Plan" || got.State != "closed" || !got.IsClosed || got.Closed == nil || got.Description != "plans" || got.NumIssues != 1 {
		t.Fatalf("edited %+v", got)
	}
	e.Do("PATCH", path, map[string]any{"state": "open", "description": ""}, a).Expect(t, http.StatusOK).JSON(t, &got)
	if got.State != "open" || got.Closed != nil || got.Description != "" {
		t.Fatalf("reopened %+v", got)
	}
	e.Do("PATCH", path, map[string]any{"state": "archived"}, a).Expect(t, http.StatusUnprocessableEntity)
	e.Do("PATCH", path, map[string]any{"title": "x"}, apitest.Basic(w.bob)).Expect(t, http.StatusForbidden)

	// Lists by state, with paging headers.
	e.Do("PATCH", path, map[string]any{"state": "closed"}, a).Expect(t, http.StatusOK)
	var list []*models.Project
	r := e.Do("GET", "repos/alice/pub/projects", nil, nil).Expect(t, http.StatusOK)
	r.JSON(t, &list)
	if len(list) != 0 || r.Header.Get("X-Total-Count") != "0" {
		t.Fatalf("open projects %d", len(list))
	}
	e.Do("GET", "repos/alice/pub/projects?state=closed", nil, nil).Expect(t, http.StatusOK).JSON(t, &list)
	if len(list) != 1 || list[0].ID != pr.ID {
		t.Fatalf("closed projects %+v", list)
	}

	// Another repository's project is not found here, nor usable on an
	// issue here.
	var other models.Project
	e.Do("POST", "repos/alice/priv/projects", map[string]any{"title": "secret"}, a).Expect(t, http.StatusCreated).JSON(t, &other)
	e.Do("GET", fmt.Sprintf("repos/alice/pub/projects/%d", other.ID), nil, a).Expect(t, http.StatusNotFound)
	e.Do("POST", "repos/alice/pub/issues", map[string]any{"title": "x", "projects": []int64{other.ID}}, a).Expect(t, http.StatusUnprocessableEntity)

	// Delete keeps the issues.
	e.Do("DELETE", path, nil, apitest.Basic(w.bob)).Expect(t, http.StatusForbidden)
	e.Do("DELETE", path, nil, a).Expect(t, http.StatusNoContent)
	e.Do("GET", path, nil, a).Expect(t, http.StatusNotFound)
	if is := isGet(t, e, "alice/pub", 1, a); len(is.Projects) != 0 {
		t.Fatalf("issue still in a deleted project: %+v", is.Projects)
	}

	// Projects turned off: the routes are gone.
	e.Do("PATCH", "repos/alice/pub", map[string]any{"has_projects": false}, a).Expect(t, http.StatusOK)
	e.Do("GET", "repos/alice/pub/projects", nil, a).Expect(t, http.StatusNotFound)
}

// TestIssueDataGoesWithRepository: deleting a repository removes its
// issue data through the foreign keys, on both databases.
func TestIssueDataGoesWithRepository(t *testing.T) {
	t.Parallel()
	w := isSetup(t)
	e, a := w.e, apitest.Basic(w.alice)
	l := isLabel(t, e, "alice/pub", a, map[string]any{"name": "bug", "color": "#ff0000"})
	m := isMilestone(t, e, "alice/pub", a, map[string]any{"title": "m"})
	var pr models.Project
	e.Do("POST", "repos/alice/pub/projects", map[string]any{"title": "p"}, a).Expect(t, http.StatusCreated).JSON(t, &pr)
	is := isCreate(t, e, "alice/pub", a, map[string]any{"title": "t", "labels": []int64{l.ID}, "milestone": m.ID,
		"projects": []int64{pr.ID}, "assignees": []string{"alice"}})
	c := isComment(t, e, "alice/pub", is.Index, a, "c")
	e.Do("POST", "repos/alice/pub/issues/1/reactions", map[string]any{"content": "heart"}, a).Expect(t, http.StatusCreated)
	e.Do("POST", fmt.Sprintf("repos/alice/pub/issues/comments/%d/reactions", c.ID), map[string]any{"content": "heart"}, a).Expect(t, http.StatusCreated)
	e.Do("POST", "repos/alice/pub/issues/1/times", map[string]any{"time": 5}, a).Expect(t, http.StatusOK)
	other := isCreate(t, e, "alice/priv", a, map[string]any{"title": "stays"})

	e.Do("DELETE", "repos/alice/pub", nil, a).Expect(t, http.StatusNoContent)
	ctx := context.Background()
	if _, err := e.DB.Issues().FindByID(ctx, is.ID); err == nil {
		t.Fatal("issue survived its repository")
	}
	if _, err := e.DB.Comments().FindByID(ctx, c.ID); err == nil {
		t.Fatal("comment survived its repository")
	}
	if ms, err := e.DB.Milestones().FindByIDs(ctx, []int64{m.ID}); err != nil || len(ms) != 0 {
		t.Fatalf("milestone survived: %v %v", ms, err)
	}
	if got, err := e.DB.Labels().ForIssues(ctx, []int64{is.ID}); err != nil || len(got) != 0 {
		t.Fatalf("issue labels survived: %v %v", got, err)
	}
	if _, err := e.DB.Issues().FindByID(ctx, other.ID); err != nil {
		t.Fatalf("another repository's issue went too: %v", err)
	}
	if l, _, err := e.DB.TrackedTimes().List(ctx, store.TimeFilter{UserID: w.alice.User.ID}, store.Page{Limit: 50}); err != nil || len(l) != 0 {
		t.Fatalf("tracked time survived: %d %v", len(l), err)
	}
	isCheckCounters(t, e)
}

// TestIssueGeneratedClient drives a few operations through the generated
// client, as a consumer of swagger.yml would.
func TestIssueGeneratedClient(t *testing.T) {
	t.Parallel()
	w := isSetup(t)
	c, authw := w.e.Client(apitest.Basic(w.alice))
	title, body := "from the client", "text"
	created, err := c.Issue.IssueCreateIssue(issue.NewIssueCreateIssueParams().WithOwner("alice").WithRepo("pub").
		WithBody(&models.CreateIssueOption{Title: &title, Body: &body}), authw)
	if err != nil {
		t.Fatal(err)
	}
	if created.Payload.Index != 1 || created.Payload.Title != title {
		t.Fatalf("created %+v", created.Payload)
	}
	closed := "closed"
	edited, err := c.Issue.IssueEditIssue(issue.NewIssueEditIssueParams().WithOwner("alice").WithRepo("pub").WithIndex(1).
		WithBody(&models.EditIssueOption{State: &closed}), authw)
	if err != nil {
		t.Fatal(err)
	}
	if edited.Payload.State != "closed" {
		t.Fatalf("edited %+v", edited.Payload)
	}
	stale := int64(7)
	_, err = c.Issue.IssueEditIssue(issue.NewIssueEditIssueParams().WithOwner("alice").WithRepo("pub").WithIndex(1).
		WithBody(&models.EditIssueOption{Body: &body, ContentVersion: &stale}), authw)
	if _, ok := err.(*issue.IssueEditIssueConflict); !ok {
		t.Fatalf("stale content_version: %T %v", err, err)
	}
	list, err := c.Issue.IssueListIssues(issue.NewIssueListIssuesParams().WithOwner("alice").WithRepo("pub").WithState(&closed), authw)
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Payload) != 1 || list.XTotalCount != 1 {
		t.Fatalf("list %d (total %d)", len(list.Payload), list.XTotalCount)
	}
}
