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

func isLabel(t *testing.T, e *apitest.Env, repo string, cred apitest.Cred, body map[string]any) *models.Label {
	t.Helper()
	var l models.Label
	e.Do("POST", "repos/"+repo+"/labels", body, cred).Expect(t, http.StatusCreated).JSON(t, &l)
	return &l
}

func isLabelNames(ls []*models.Label) string {
	names := make([]string, 0, len(ls))
	for _, l := range ls {
		names = append(names, l.Name)
	}
	sort.Strings(names)
	return strings.Join(names, ",")
}

func TestIssueLabelCRUD(t *testing.T) {
	t.Parallel()
	w := isSetup(t)
	e, a := w.e, apitest.Basic(w.alice)

	l := isLabel(t, e, "alice/pub", a, map[string]any{"name": "bug", "color": "#FF0000", "description": "broken"})
	if l.Name != "bug" || l.Color != "ff0000" || l.Description != "broken" || l.Exclusive || l.IsArchived ||
		!strings.HasSuffix(l.URL, fmt.Sprintf("/api/v1/repos/alice/pub/labels/%d", l.ID)) {
		t.Fatalf("created %+v", l)
	}
	// Three-digit and hash-less colors are normalised.
	if l2 := isLabel(t, e, "alice/pub", a, map[string]any{"name": "x", "color": "abc"}); l2.Color != "aabbcc" {
		t.Fatalf("color %q", l2.Color)
	}
	for _, body := range []map[string]any{
		{"name": "n"}, {"color": "#000000"}, {"name": "", "color": "#000000"}, {"name": "n", "color": "red"}, {"name": "n", "color": "#12345"},
	} {
		e.Do("POST", "repos/alice/pub/labels", body, a).Expect(t, http.StatusUnprocessableEntity)
	}

	// Callers: reading is open to whoever sees the repository, writing
	// needs write access.
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
		{"owner", a, "acme/tool", 200, 201},
		{"admin", apitest.Basic(e.Admin), "alice/priv", 200, 201},
	} {
		t.Run(c.name, func(t *testing.T) {
			e.Do("GET", "repos/"+c.repo+"/labels", nil, c.cred).Expect(t, c.read)
			e.Do("POST", "repos/"+c.repo+"/labels", map[string]any{"name": "by-" + c.name, "color": "#010203"}, c.cred).Expect(t, c.write)
		})
	}

	path := fmt.Sprintf("repos/alice/pub/labels/%d", l.ID)
	var got models.Label
	e.Do("GET", path, nil, nil).Expect(t, http.StatusOK).JSON(t, &got)
	if got.ID != l.ID || got.Name != "bug" {
		t.Fatalf("get %+v", got)
	}
	e.Do("PATCH", path, map[string]any{"name": "kind/bug", "color": "00ff00", "exclusive": true, "is_archived": true}, a).
		Expect(t, http.StatusOK).JSON(t, &got)
	if got.Name != "kind/bug" || got.Color != "00ff00" || !got.Exclusive || !got.IsArchived || got.Description != "broken" {
		t.Fatalf("edited %+v", got)
	}
	e.Do("PATCH", path, map[string]any{"color": "nope"}, a).Expect(t, http.StatusUnprocessableEntity)
	e.Do("PATCH", path, map[string]any{"name": "x"}, apitest.Basic(w.bob)).Expect(t, http.StatusForbidden)

	// A label of another repository is not found through this one.
	other := isLabel(t, e, "alice/priv", a, map[string]any{"name": "secret", "color": "#000000"})
	e.Do("GET", fmt.Sprintf("repos/alice/pub/labels/%d", other.ID), nil, a).Expect(t, http.StatusNotFound)
	e.Do("DELETE", fmt.Sprintf("repos/alice/pub/labels/%d", other.ID), nil, a).Expect(t, http.StatusNotFound)

	var list []*models.Label
	r := e.Do("GET", "repos/alice/pub/labels?limit=1", nil, nil).Expect(t, http.StatusOK)
	r.JSON(t, &list)
	if len(list) != 1 || r.Header.Get("X-Total-Count") != "2" || !strings.Contains(r.Header.Get("Link"), `rel="next"`) {
		t.Fatalf("paged list %d, headers %v", len(list), r.Header)
	}

	// Deleting a label takes it off its issues.
	isCreate(t, e, "alice/pub", a, map[string]any{"title": "t", "labels": []int64{l.ID}})
	e.Do("DELETE", path, nil, apitest.Basic(w.bob)).Expect(t, http.StatusForbidden)
	e.Do("DELETE", path, nil, a).Expect(t, http.StatusNoContent)
	e.Do("GET", path, nil, a).Expect(t, http.StatusNotFound)
	if is := isGet(t, e, "alice/pub", 1, a); len(is.Labels) != 0 {
		t.Fatalf("deleted label still on the issue: %+v", is.Labels)
	}
}

func TestIssueLabelsOnIssue(t *testing.T) {
	t.Parallel()
	w := isSetup(t)
	e, a := w.e, apitest.Basic(w.alice)
	bug := isLabel(t, e, "alice/pub", a, map[string]any{"name": "bug", "color": "#ff0000"})
	ui := isLabel(t, e, "alice/pub", a, map[string]any{"name": "ui", "color": "#00ff00"})
	docs := isLabel(t, e, "alice/pub", a, map[string]any{"name": "docs", "color": "#0000ff"})
	foreign := isLabel(t, e, "alice/priv", a, map[string]any{"name": "foreign", "color": "#000000"})
	isCreate(t, e, "alice/pub", apitest.Basic(w.bob), map[string]any{"title": "t"})
	path := "repos/alice/pub/issues/1/labels"

	call := func(method string, body any, cred apitest.Cred, status int) []*models.Label {
		t.Helper()
		r := e.Do(method, path, body, cred).Expect(t, status)
		var out []*models.Label
		if status == http.StatusOK {
			r.JSON(t, &out)
		}
		return out
	}
	// Ids and names may be mixed; labels of other repositories and
	// unknown names are ignored.
	if got := call("POST", map[string]any{"labels": []any{bug.ID, "ui", foreign.ID, "nosuch"}}, a, 200); isLabelNames(got) != "bug,ui" {
		t.Fatalf("after add: %s", isLabelNames(got))
	}
	if got := call("POST", map[string]any{"labels": []any{docs.ID}}, a, 200); isLabelNames(got) != "bug,docs,ui" {
		t.Fatalf("add keeps the others: %s", isLabelNames(got))
	}
	var got []*models.Label
	e.Do("GET", path, nil, nil).Expect(t, http.StatusOK).JSON(t, &got)
	if isLabelNames(got) != "bug,docs,ui" {
		t.Fatalf("get: %s", isLabelNames(got))
	}
	if got := call("PUT", map[string]any{"labels": []any{"ui"}}, a, 200); isLabelNames(got) != "ui" {
		t.Fatalf("after replace: %s", isLabelNames(got))
	}
	e.Do("DELETE", fmt.Sprintf("%s/%d", path, ui.ID), nil, a).Expect(t, http.StatusNoContent)
	e.Do("DELETE", fmt.Sprintf("%s/%d", path, foreign.ID), nil, a).Expect(t, http.StatusUnprocessableEntity)
	call("POST", map[string]any{"labels": []any{bug.ID, docs.ID}}, a, 200)
	e.Do("DELETE", path, nil, a).Expect(t, http.StatusNoContent)
	if is := isGet(t, e, "alice/pub", 1, a); len(is.Labels) != 0 {
		t.Fatalf("not cleared: %+v", is.Labels)
	}

	// Only writers change labels, even on their own issue.
	call("POST", map[string]any{"labels": []any{bug.ID}}, apitest.Basic(w.bob), 403)
	call("PUT", map[string]any{"labels": []any{bug.ID}}, apitest.Basic(w.bob), 403)
	e.Do("DELETE", path, nil, apitest.Basic(w.bob)).Expect(t, http.StatusForbidden)
	call("POST", map[string]any{"labels": []any{bug.ID}}, nil, 401)
	// Bad entries are refused.
	call("POST", map[string]any{"labels": []any{true}}, a, 422)
	call("POST", map[string]any{"labels": []any{1.5}}, a, 422)
	e.Do("POST", "repos/alice/pub/issues/9/labels", map[string]any{"labels": []any{bug.ID}}, a).Expect(t, http.StatusNotFound)
}

// TestIssueExclusiveLabels: adding an exclusive scoped label takes off the
// issue's other labels of that scope.
func TestIssueExclusiveLabels(t *testing.T) {
	t.Parallel()
	w := isSetup(t)
	e, a := w.e, apitest.Basic(w.alice)
	high := isLabel(t, e, "alice/pub", a, map[string]any{"name": "priority/high", "color": "#ff0000", "exclusive": true})
	low := isLabel(t, e, "alice/pub", a, map[string]any{"name": "priority/low", "color": "#00ff00", "exclusive": true})
	// Not exclusive, though it shares the prefix: it stays.
	loose := isLabel(t, e, "alice/pub", a, map[string]any{"name": "priority/loose", "color": "#0000ff"})
	other := isLabel(t, e, "alice/pub", a, map[string]any{"name": "kind/bug", "color": "#000000", "exclusive": true})

	is := isCreate(t, e, "alice/pub", a, map[string]any{"title": "t", "labels": []int64{high.ID, low.ID, loose.ID, other.ID}})
	if isLabelNames(is.Labels) != "kind/bug,priority/loose,priority/low" {
		t.Fatalf("create kept %s (the last of a scope should win)", isLabelNames(is.Labels))
	}
	path := fmt.Sprintf("repos/alice/pub/issues/%d/labels", is.Index)
	var got []*models.Label
	e.Do("POST", path, map[string]any{"labels": []any{high.ID}}, a).Expect(t, http.StatusOK).JSON(t, &got)
	if isLabelNames(got) != "kind/bug,priority/high,priority/loose" {
		t.Fatalf("after adding priority/high: %s", isLabelNames(got))
	}
	e.Do("PUT", path, map[string]any{"labels": []any{"priority/low", "priority/high"}}, a).Expect(t, http.StatusOK).JSON(t, &got)
	if isLabelNames(got) != "priority/high" {
		t.Fatalf("after replace: %s", isLabelNames(got))
	}
}
