package apitest_test

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"repohost/apitest"
	"repohost/impl/app"
	"repohost/models"
)

func isComment(t *testing.T, e *apitest.Env, repo string, index int64, cred apitest.Cred, body string) *models.Comment {
	t.Helper()
	var c models.Comment
	e.Do("POST", fmt.Sprintf("repos/%s/issues/%d/comments", repo, index), map[string]any{"body": body}, cred).
		Expect(t, http.StatusCreated).JSON(t, &c)
	return &c
}

func TestIssueComments(t *testing.T) {
	t.Parallel()
	w := isSetup(t)
	e, a, b := w.e, apitest.Basic(w.alice), apitest.Basic(w.bob)
	isCreate(t, e, "alice/pub", a, map[string]any{"title": "t"})
	isCreate(t, e, "alice/priv", a, map[string]any{"title": "secret"})

	c1 := isComment(t, e, "alice/pub", 1, b, "first")
	if c1.Body != "first" || c1.User.UserName != "bob" || !strings.HasSuffix(c1.HTMLURL, fmt.Sprintf("/alice/pub/issues/1#issuecomment-%d", c1.ID)) ||
		!strings.HasSuffix(c1.IssueURL, "/alice/pub/issues/1") || c1.PRURL != "" {
		t.Fatalf("created %+v", c1)
	}
	c2 := isComment(t, e, "alice/pub", 1, a, "second")
	if is := isGet(t, e, "alice/pub", 1, a); is.Comments != 2 {
		t.Fatalf("comments count %d", is.Comments)
	}
	// Editing the labels or state adds no timeline entries to the list.
	e.Do("PATCH", "repos/alice/pub/issues/1", map[string]any{"state": "closed", "title": "renamed"}, a).Expect(t, http.StatusCreated)

	for _, c := range []struct {
		name              string
		cred              apitest.Cred
		repo              string
		list, create, del int
	}{
		{"anonymous", nil, "alice/pub", 200, 401, 401},
		{"outsider", b, "alice/pub", 200, 201, 403},
		{"outsider/private", b, "alice/priv", 404, 404, 404},
		{"admin/private", apitest.Basic(e.Admin), "alice/priv", 200, 201, 204},
	} {
		t.Run(c.name, func(t *testing.T) {
			e.Do("GET", "repos/"+c.repo+"/issues/1/comments", nil, c.cred).Expect(t, c.list)
			e.Do("POST", "repos/"+c.repo+"/issues/1/comments", map[string]any{"body": "hi"}, c.cred).Expect(t, c.create)
			victim := isComment(t, e, c.repo, 1, a, "alice's")
			e.Do("DELETE", fmt.Sprintf("repos/%s/issues/comments/%d", c.repo, victim.ID), nil, c.cred).Expect(t, c.del)
		})
	}

	var list []*models.Comment
	r := e.Do("GET", "repos/alice/pub/issues/1/comments", nil, nil).Expect(t, http.StatusOK)
	r.JSON(t, &list)
	bodies := []string{}
	for _, c := range list {
		bodies = append(bodies, c.Body)
	}
	// Oldest first; only real comments.
	if got := strings.Join(bodies, ","); got != "first,second,alice's,hi,alice's" {
		t.Fatalf("list %s", got)
	}
	if r.Header.Get("X-Total-Count") != "5" {
		t.Fatalf("X-Total-Count %s", r.Header.Get("X-Total-Count"))
	}
	e.Do("GET", "repos/alice/pub/issues/1/comments?limit=2&page=3", nil, nil).Expect(t, http.StatusOK).JSON(t, &list)
	if len(list) != 1 {
		t.Fatalf("page 3 of 2: %d", len(list))
	}
	e.Do("GET", "repos/alice/pub/issues/1/comments?since=2999-01-01T00:00:00Z", nil, nil).Expect(t, http.StatusOK).JSON(t, &list)
	if len(list) != 0 {
		t.Fatalf("since the future: %d", len(list))
	}

	// Get, edit and delete by id; the poster or a writer only.
	path := fmt.Sprintf("repos/alice/pub/issues/comments/%d", c1.ID)
	var got models.Comment
	e.Do("GET", path, nil, nil).Expect(t, http.StatusOK).JSON(t, &got)
	if got.ID != c1.ID || got.Body != "first" {
		t.Fatalf("get %+v", got)
	}
	e.Do("PATCH", path, map[string]any{"body": "first, edited"}, b).Expect(t, http.StatusOK).JSON(t, &got)
	if got.Body != "first, edited" {
		t.Fatalf("edited %+v", got)
	}
	e.Do("PATCH", path, map[string]any{"body": "by the owner"}, a).Expect(t, http.StatusOK)
	e.Do("PATCH", fmt.Sprintf("repos/alice/pub/issues/comments/%d", c2.ID), map[string]any{"body": "x"}, b).Expect(t, http.StatusForbidden)
	e.Do("PATCH", path, map[string]any{"body": ""}, a).Expect(t, http.StatusUnprocessableEntity)
	e.Do("POST", "repos/alice/pub/issues/1/comments", map[string]any{"body": "  "}, a).Expect(t, http.StatusUnprocessableEntity)
	e.Do("POST", "repos/alice/pub/issues/99/comments", map[string]any{"body": "x"}, a).Expect(t, http.StatusNotFound)

	// A comment of another (private) repository is not reachable through
	// this one, whoever asks.
	secret := isComment(t, e, "alice/priv", 1, a, "secret")
	for _, m := range []string{"GET", "PATCH", "DELETE"} {
		e.Do(m, fmt.Sprintf("repos/alice/pub/issues/comments/%d", secret.ID), map[string]any{"body": "x"}, a).Expect(t, http.StatusNotFound)
	}
	e.Do("GET", fmt.Sprintf("repos/alice/priv/issues/comments/%d", secret.ID), nil, b).Expect(t, http.StatusNotFound)

	e.Do("DELETE", path, nil, b).Expect(t, http.StatusNoContent)
	e.Do("GET", path, nil, nil).Expect(t, http.StatusNotFound)
	if is := isGet(t, e, "alice/pub", 1, a); is.Comments != 4 {
		t.Fatalf("comments count %d after delete", is.Comments)
	}
	isCheckCounters(t, e)
}

func TestIssueReactions(t *testing.T) {
	t.Parallel()
	w := isSetup(t)
	e, a, b := w.e, apitest.Basic(w.alice), apitest.Basic(w.bob)
	isCreate(t, e, "alice/pub", a, map[string]any{"title": "t"})
	isCreate(t, e, "alice/priv", a, map[string]any{"title": "t"})
	c := isComment(t, e, "alice/pub", 1, a, "comment")

	for _, target := range []string{"repos/alice/pub/issues/1/reactions", fmt.Sprintf("repos/alice/pub/issues/comments/%d/reactions", c.ID)} {
		t.Run(target, func(t *testing.T) {
			var rc models.Reaction
			e.Do("POST", target, map[string]any{"content": "heart"}, b).Expect(t, http.StatusCreated).JSON(t, &rc)
			if rc.Reaction != "heart" || rc.User.UserName != "bob" || rc.Created == nil {
				t.Fatalf("created %+v", rc)
			}
			// The same again: 200 with the existing reaction.
			var again models.Reaction
			e.Do("POST", target, map[string]any{"content": "heart"}, b).Expect(t, http.StatusOK).JSON(t, &again)
			if again.Reaction != "heart" || time.Time(*again.Created) != time.Time(*rc.Created) {
				t.Fatalf("existing %+v", again)
			}
			e.Do("POST", target, map[string]any{"content": "+1"}, a).Expect(t, http.StatusCreated)
			// Outside the allowed set: 403, as the reference answers.
			for _, bad := range []string{"smile", "", "HEART"} {
				e.Do("POST", target, map[string]any{"content": bad}, b).Expect(t, http.StatusForbidden)
			}
			e.Do("POST", target, map[string]any{"content": "heart"}, nil).Expect(t, http.StatusUnauthorized)

			var list []*models.Reaction
			r := e.Do("GET", target, nil, nil).Expect(t, http.StatusOK)
			r.JSON(t, &list)
			if len(list) != 2 || r.Header.Get("X-Total-Count") != "2" || list[0].Reaction != "heart" || list[1].Reaction != "+1" {
				t.Fatalf("list %+v", list)
			}
			e.Do("DELETE", target, map[string]any{"content": "heart"}, b).Expect(t, http.StatusNoContent)
			e.Do("GET", target, nil, nil).Expect(t, http.StatusOK).JSON(t, &list)
			if len(list) != 1 || list[0].User.UserName != "alice" {
				t.Fatalf("after delete %+v", list)
			}
		})
	}
	// Deleting a comment deletes its reactions; they never leak elsewhere.
	e.Do("DELETE", fmt.Sprintf("repos/alice/pub/issues/comments/%d", c.ID), nil, a).Expect(t, http.StatusNoContent)
	e.Do("GET", fmt.Sprintf("repos/alice/pub/issues/comments/%d/reactions", c.ID), nil, a).Expect(t, http.StatusNotFound)
	// Private repositories: 404 to outsiders.
	e.Do("GET", "repos/alice/priv/issues/1/reactions", nil, b).Expect(t, http.StatusNotFound)
	e.Do("POST", "repos/alice/priv/issues/1/reactions", map[string]any{"content": "heart"}, b).Expect(t, http.StatusNotFound)
	e.Do("POST", "repos/alice/pub/issues/7/reactions", map[string]any{"content": "heart"}, b).Expect(t, http.StatusNotFound)
}

// TestRepoComments: GET /repos/{owner}/{repo}/issues/comments lists every
// comment of the repository's issues, oldest first, a page at a time, with
// since and before bounding the time each was last updated, as the
// reference does; the path is its own route, not issues/{index}.
func TestRepoComments(t *testing.T) {
	t.Parallel()
	clock := &shiftedClock{}
	e := apitest.NewWithDeps(t, func(d *app.Deps) { d.Clock = clock })
	alice, bob := e.CreateUser("rcalice", false), e.CreateUser("rcbob", false)
	a := apitest.Basic(alice)
	roCreateRepo(t, e, a, map[string]any{"name": "pub"})
	roCreateRepo(t, e, a, map[string]any{"name": "priv", "private": true})
	for _, title := range []string{"one", "two"} {
		e.Do("POST", "repos/rcalice/pub/issues", map[string]any{"title": title}, a).Expect(t, http.StatusCreated)
	}
	e.Do("POST", "repos/rcalice/priv/issues", map[string]any{"title": "hidden"}, a).Expect(t, http.StatusCreated)
	isComment(t, e, "rcalice/priv", 1, a, "not listed elsewhere")

	t0 := clock.Now().Truncate(time.Second)
	var made []*models.Comment
	for i, index := range []int64{1, 2, 1} {
		clock.set(time.Duration(i) * time.Hour)
		made = append(made, isComment(t, e, "rcalice/pub", index, apitest.Basic(bob), fmt.Sprintf("c%d", i)))
	}
	at := func(d time.Duration) string { return url.QueryEscape(t0.Add(d).Format(time.RFC3339)) }
	list := func(t *testing.T, query string, cred apitest.Cred) ([]string, *apitest.Response) {
		t.Helper()
		var out []*models.Comment
		r := e.Do("GET", "repos/rcalice/pub/issues/comments"+query, nil, cred).Expect(t, http.StatusOK)
		r.JSON(t, &out)
		var bodies []string
		for _, c := range out {
			bodies = append(bodies, c.Body)
		}
		return bodies, r
	}
	expect := func(t *testing.T, got []string, want ...string) {
		t.Helper()
		if strings.Join(got, ",") != strings.Join(want, ",") {
			t.Fatalf("comments %v, want %v", got, want)
		}
	}

	all, r := list(t, "", nil)
	expect(t, all, "c0", "c1", "c2")
	if r.Header.Get("X-Total-Count") != "3" {
		t.Errorf("X-Total-Count %q", r.Header.Get("X-Total-Count"))
	}
	var first []*models.Comment
	r.JSON(t, &first)
	if !strings.HasSuffix(first[1].IssueURL, "/rcalice/pub/issues/2") || first[1].User.UserName != "rcbob" || first[1].ID != made[1].ID {
		t.Errorf("second comment %+v", first[1])
	}

	page, r := list(t, "?limit=2&page=2", a)
	expect(t, page, "c2")
	if r.Header.Get("X-Total-Count") != "3" || !strings.Contains(r.Header.Get("Link"), `rel="first"`) {
		t.Errorf("page 2: X-Total-Count %q Link %q", r.Header.Get("X-Total-Count"), r.Header.Get("Link"))
	}
	since, _ := list(t, "?since="+at(30*time.Minute), a)
	expect(t, since, "c1", "c2")
	before, _ := list(t, "?before="+at(90*time.Minute), a)
	expect(t, before, "c0", "c1")

	// An edit moves the update time, not the place in the list.
	clock.set(3 * time.Hour)
	e.Do("PATCH", fmt.Sprintf("repos/rcalice/pub/issues/comments/%d", made[0].ID), map[string]any{"body": "c0 edited"},
		apitest.Basic(bob)).Expect(t, http.StatusOK)
	edited, _ := list(t, "?since="+at(150*time.Minute), a)
	expect(t, edited, "c0 edited")
	all, _ = list(t, "", a)
	expect(t, all, "c0 edited", "c1", "c2")
	var one models.Comment
	e.Do("GET", fmt.Sprintf("repos/rcalice/pub/issues/comments/%d", made[1].ID), nil, nil).Expect(t, http.StatusOK).JSON(t, &one)
	if one.Body != "c1" {
		t.Errorf("GET comment %+v", one)
	}
	e.Do("DELETE", fmt.Sprintf("repos/rcalice/pub/issues/comments/%d", made[1].ID), nil, a).Expect(t, http.StatusNoContent)
	all, _ = list(t, "", a)
	expect(t, all, "c0 edited", "c2")

	// The private repository's comments: its owner sees them, nobody else
	// learns that it exists.
	var hidden []*models.Comment
	e.Do("GET", "repos/rcalice/priv/issues/comments", nil, a).Expect(t, http.StatusOK).JSON(t, &hidden)
	if len(hidden) != 1 || hidden[0].Body != "not listed elsewhere" {
		t.Errorf("private repository's comments %+v", hidden)
	}
	e.Do("GET", "repos/rcalice/priv/issues/comments", nil, nil).Expect(t, http.StatusNotFound)
	e.Do("GET", "repos/rcalice/priv/issues/comments", nil, apitest.Basic(bob)).Expect(t, http.StatusNotFound)
	e.Do("GET", "repos/rcalice/pub/issues/comments?since=yesterday", nil, a).Expect(t, http.StatusUnprocessableEntity)
}

// TestRepoCommentsFollowTheUnits: the repository's comment list holds the
// comments of pull requests only while the caller may read pull requests;
// with the pull request unit off, only the issues' comments remain, as the
// reference filters them.
func TestRepoCommentsFollowTheUnits(t *testing.T) {
	t.Parallel()
	p := newPREnv(t, nil)
	p.branch(t, "feat", "main", "f.txt", "feature")
	pr := p.openPR(t, p.cred, "feat", "main", "A change")
	a := apitest.Basic(p.alice)
	p.e.Do("POST", "repos/alice/proj/issues", map[string]any{"title": "A bug"}, a).Expect(t, http.StatusCreated)
	isComment(t, p.e, "alice/proj", pr.Index, a, "on the pull request")
	isComment(t, p.e, "alice/proj", pr.Index+1, a, "on the issue")
	bodies := func(t *testing.T) []string {
		t.Helper()
		var list []*models.Comment
		p.e.Do("GET", "repos/alice/proj/issues/comments", nil, a).Expect(t, http.StatusOK).JSON(t, &list)
		var out []string
		for _, c := range list {
			out = append(out, c.Body)
		}
		return out
	}
	if got := bodies(t); strings.Join(got, ",") != "on the pull request,on the issue" {
		t.Fatalf("comments %v", got)
	}
	// As the reference renders them: a pull request's comment points at
	// the pull request, an issue's at the issue.
	var list []*models.Comment
	p.e.Do("GET", "repos/alice/proj/issues/comments", nil, a).Expect(t, http.StatusOK).JSON(t, &list)
	prPage := fmt.Sprintf("/alice/proj/pulls/%d", pr.Index)
	if c := list[0]; c.IssueURL != "" || !strings.HasSuffix(c.PRURL, prPage) || !strings.Contains(c.HTMLURL, prPage+"#issuecomment-") {
		t.Errorf("pull request comment: issue_url %q pull_request_url %q html_url %q", c.IssueURL, c.PRURL, c.HTMLURL)
	}
	if c := list[1]; c.PRURL != "" || !strings.HasSuffix(c.IssueURL, fmt.Sprintf("/alice/proj/issues/%d", pr.Index+1)) {
		t.Errorf("issue comment: issue_url %q pull_request_url %q", c.IssueURL, c.PRURL)
	}
	p.e.Do("PATCH", "repos/alice/proj", map[string]any{"has_pull_requests": false}, a).Expect(t, http.StatusOK)
	if got := bodies(t); strings.Join(got, ",") != "on the issue" {
		t.Fatalf("with pull requests off: comments %v", got)
	}
}
