package apitest_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"repohost/apitest"
	"repohost/models"
)

func orgLabel(t *testing.T, e *apitest.Env, org string, cred apitest.Cred, body map[string]any) *models.Label {
	t.Helper()
	var l models.Label
	e.Do("POST", "orgs/"+org+"/labels", body, cred).Expect(t, http.StatusCreated).JSON(t, &l)
	return &l
}

// TestOrgLabelsCRUD: an organization's owners create, change and delete
// its labels; whoever sees the organization lists them, a signed-in
// caller who sees it shows one; a private organization is hidden from
// outsiders as if missing.
func TestOrgLabelsCRUD(t *testing.T) {
	t.Parallel()
	w := isSetup(t)
	e, a := w.e, apitest.Basic(w.alice)
	secret := roCreateOrg(t, e, a, map[string]any{"username": "secret", "visibility": "private"})
	roAddMember(t, e, secret.ID, w.carol, false, false)

	l := orgLabel(t, e, "acme", a, map[string]any{"name": "bug", "color": "#F00", "description": "broken"})
	if l.Name != "bug" || l.Color != "ff0000" || l.Description != "broken" || l.Exclusive || l.IsArchived ||
		!strings.HasSuffix(l.URL, fmt.Sprintf("/api/v1/orgs/acme/labels/%d", l.ID)) {
		t.Fatalf("created %+v", l)
	}
	hidden := orgLabel(t, e, "secret", a, map[string]any{"name": "internal", "color": "000000"})
	for _, body := range []map[string]any{
		{"name": "n"}, {"color": "#000000"}, {"name": "", "color": "#000000"}, {"name": "n", "color": "red"},
	} {
		e.Do("POST", "orgs/acme/labels", body, a).Expect(t, http.StatusUnprocessableEntity)
	}

	for _, c := range []struct {
		name                   string
		cred                   apitest.Cred
		org                    string
		id                     int64
		list, get, write, edit int
	}{
		{"anonymous", nil, "acme", l.ID, 200, 401, 401, 401},
		{"outsider", apitest.Basic(w.bob), "acme", l.ID, 200, 200, 403, 403},
		{"member", apitest.Basic(w.carol), "acme", l.ID, 200, 200, 403, 403},
		{"owner", a, "acme", l.ID, 200, 200, 201, 200},
		{"admin", apitest.Basic(e.Admin), "acme", l.ID, 200, 200, 201, 200},
		{"anonymous/private", nil, "secret", hidden.ID, 404, 401, 401, 401},
		{"outsider/private", apitest.Basic(w.bob), "secret", hidden.ID, 404, 404, 404, 404},
		{"member/private", apitest.Basic(w.carol), "secret", hidden.ID, 200, 200, 403, 403},
		{"owner/private", a, "secret", hidden.ID, 200, 200, 201, 200},
	} {
		t.Run(c.name, func(t *testing.T) {
			e.Do("GET", "orgs/"+c.org+"/labels", nil, c.cred).Expect(t, c.list)
			e.Do("GET", fmt.Sprintf("orgs/%s/labels/%d", c.org, c.id), nil, c.cred).Expect(t, c.get)
			e.Do("POST", "orgs/"+c.org+"/labels", map[string]any{"name": "by-" + c.name, "color": "#010203"}, c.cred).Expect(t, c.write)
			e.Do("PATCH", fmt.Sprintf("orgs/%s/labels/%d", c.org, c.id), map[string]any{"description": "seen by " + c.name}, c.cred).Expect(t, c.edit)
			if c.edit != 200 {
				e.Do("DELETE", fmt.Sprintf("orgs/%s/labels/%d", c.org, c.id), nil, c.cred).Expect(t, c.edit)
			}
		})
	}

	// The list is by name and pages.
	var list []*models.Label
	res := e.Do("GET", "orgs/acme/labels?limit=2", nil, nil).Expect(t, http.StatusOK)
	res.JSON(t, &list)
	if isLabelNames(list) != "bug,by-admin" || res.Header.Get("X-Total-Count") != "3" || res.Header.Get("Link") == "" {
		t.Fatalf("first page %q, headers %v", isLabelNames(list), res.Header)
	}

	path := fmt.Sprintf("orgs/acme/labels/%d", l.ID)
	var got models.Label
	e.Do("PATCH", path, map[string]any{"name": "kind/bug", "color": "00ff00", "exclusive": true, "is_archived": true}, a).
		Expect(t, http.StatusOK).JSON(t, &got)
	if got.Name != "kind/bug" || got.Color != "00ff00" || !got.Exclusive || !got.IsArchived || got.ID != l.ID {
		t.Fatalf("edited %+v", got)
	}
	e.Do("GET", path, nil, a).Expect(t, http.StatusOK).JSON(t, &got)
	if got.Name != "kind/bug" || !got.IsArchived {
		t.Fatalf("read back %+v", got)
	}
	e.Do("PATCH", path, map[string]any{"color": "blue"}, a).Expect(t, http.StatusUnprocessableEntity)

	// Another organization's label, or a repository's, is not the
	// organization's.
	repoLabel := isLabel(t, e, "acme/tool", a, map[string]any{"name": "local", "color": "#123456"})
	for _, p := range []string{
		fmt.Sprintf("orgs/acme/labels/%d", hidden.ID),
		fmt.Sprintf("orgs/acme/labels/%d", repoLabel.ID),
		fmt.Sprintf("orgs/secret/labels/%d", l.ID),
		"orgs/acme/labels/999999",
	} {
		e.Do("GET", p, nil, a).Expect(t, http.StatusNotFound)
		e.Do("PATCH", p, map[string]any{"name": "x"}, a).Expect(t, http.StatusNotFound)
		e.Do("DELETE", p, nil, a).Expect(t, http.StatusNotFound)
	}
	e.Do("GET", "orgs/nobody/labels", nil, a).Expect(t, http.StatusNotFound)
	e.Do("GET", "orgs/alice/labels", nil, a).Expect(t, http.StatusNotFound)

	e.Do("DELETE", path, nil, a).Expect(t, http.StatusNoContent)
	e.Do("GET", path, nil, a).Expect(t, http.StatusNotFound)
	var repoLabels []*models.Label
	e.Do("GET", "repos/acme/tool/labels", nil, a).Expect(t, http.StatusOK).JSON(t, &repoLabels)
	if isLabelNames(repoLabels) != "local" {
		t.Fatalf("the repository's labels %q", isLabelNames(repoLabels))
	}
}

// TestOrgLabelsOnIssues: an organization's label goes on the issues of its
// repositories through the issue label routes, shows among the issue's
// labels and filters the issue list by name; it is ignored on another
// owner's repository, as a label of another repository is; deleting it
// takes it off its issues.
func TestOrgLabelsOnIssues(t *testing.T) {
	t.Parallel()
	w := isSetup(t)
	e, a := w.e, apitest.Basic(w.alice)
	roCreateOrg(t, e, a, map[string]any{"username": "other"})
	l := orgLabel(t, e, "acme", a, map[string]any{"name": "org-bug", "color": "#ff0000"})
	foreign := orgLabel(t, e, "other", a, map[string]any{"name": "elsewhere", "color": "#00ff00"})
	local := isLabel(t, e, "acme/tool", a, map[string]any{"name": "local", "color": "#123456"})
	labelURL := fmt.Sprintf("/api/v1/orgs/acme/labels/%d", l.ID)

	one := isCreate(t, e, "acme/tool", a, map[string]any{"title": "one", "labels": []int64{l.ID, foreign.ID}})
	if isLabelNames(one.Labels) != "org-bug" || !strings.HasSuffix(one.Labels[0].URL, labelURL) {
		t.Fatalf("created with %+v", one.Labels)
	}
	two := isCreate(t, e, "acme/tool", a, map[string]any{"title": "two"})
	isCreate(t, e, "acme/tool", a, map[string]any{"title": "three", "labels": []int64{local.ID}})

	var labels []*models.Label
	e.Do("POST", fmt.Sprintf("repos/acme/tool/issues/%d/labels", two.Index), map[string]any{"labels": []any{l.ID, foreign.ID}}, a).
		Expect(t, http.StatusOK).JSON(t, &labels)
	if isLabelNames(labels) != "org-bug" {
		t.Fatalf("added %q", isLabelNames(labels))
	}
	e.Do("PUT", fmt.Sprintf("repos/acme/tool/issues/%d/labels", two.Index), map[string]any{"labels": []any{l.ID, "local"}}, a).
		Expect(t, http.StatusOK).JSON(t, &labels)
	if isLabelNames(labels) != "local,org-bug" {
		t.Fatalf("replaced %q", isLabelNames(labels))
	}
	// By name too.
	e.Do("PUT", fmt.Sprintf("repos/acme/tool/issues/%d/labels", two.Index), map[string]any{"labels": []any{"org-bug", "local", "elsewhere"}}, a).
		Expect(t, http.StatusOK).JSON(t, &labels)
	if isLabelNames(labels) != "local,org-bug" {
		t.Fatalf("replaced by name %q", isLabelNames(labels))
	}
	e.Do("GET", fmt.Sprintf("repos/acme/tool/issues/%d/labels", two.Index), nil, a).Expect(t, http.StatusOK).JSON(t, &labels)
	if isLabelNames(labels) != "local,org-bug" {
		t.Fatalf("issue labels %q", isLabelNames(labels))
	}
	if got := isGet(t, e, "acme/tool", two.Index, a); isLabelNames(got.Labels) != "local,org-bug" {
		t.Fatalf("issue shows %q", isLabelNames(got.Labels))
	}

	// The repository's own list leaves the organization's out.
	e.Do("GET", "repos/acme/tool/labels", nil, a).Expect(t, http.StatusOK).JSON(t, &labels)
	if isLabelNames(labels) != "local" {
		t.Fatalf("repository labels %q", isLabelNames(labels))
	}

	titles := func(query string) string {
		t.Helper()
		var list []*models.Issue
		e.Do("GET", "repos/acme/tool/issues?state=all&"+query, nil, a).Expect(t, http.StatusOK).JSON(t, &list)
		var out []string
		for _, is := range list {
			out = append(out, is.Title)
		}
		return strings.Join(out, ",")
	}
	if got := titles("labels=org-bug"); got != "two,one" {
		t.Fatalf("labels=org-bug: %q", got)
	}
	if got := titles("labels=org-bug,local"); got != "two" {
		t.Fatalf("labels=org-bug,local: %q", got)
	}

	// Another owner's repository does not take it.
	pub := isCreate(t, e, "alice/pub", a, map[string]any{"title": "elsewhere", "labels": []int64{l.ID}})
	if len(pub.Labels) != 0 {
		t.Fatalf("a user's repository took an organization's label: %+v", pub.Labels)
	}
	e.Do("POST", fmt.Sprintf("repos/alice/pub/issues/%d/labels", pub.Index), map[string]any{"labels": []any{l.ID}}, a).
		Expect(t, http.StatusOK).JSON(t, &labels)
	if len(labels) != 0 {
		t.Fatalf("added to another owner's issue: %+v", labels)
	}
	e.Do("DELETE", fmt.Sprintf("repos/alice/pub/issues/%d/labels/%d", pub.Index, l.ID), nil, a).Expect(t, http.StatusUnprocessableEntity)

	// Taken off one issue by id; deleting the label takes it off the rest.
	e.Do("DELETE", fmt.Sprintf("repos/acme/tool/issues/%d/labels/%d", two.Index, l.ID), nil, a).Expect(t, http.StatusNoContent)
	if got := isGet(t, e, "acme/tool", two.Index, a); isLabelNames(got.Labels) != "local" {
		t.Fatalf("after taking it off: %q", isLabelNames(got.Labels))
	}
	e.Do("DELETE", fmt.Sprintf("orgs/acme/labels/%d", l.ID), nil, a).Expect(t, http.StatusNoContent)
	if got := isGet(t, e, "acme/tool", one.Index, a); len(got.Labels) != 0 {
		t.Fatalf("a deleted label still on the issue: %+v", got.Labels)
	}
	// The name now names no label usable here, so the filter drops it
	// (as the reference documents for unknown names).
	if got := titles("labels=org-bug"); got != "three,two,one" {
		t.Fatalf("labels=org-bug after deletion: %q", got)
	}
}
