package apitest_test

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"repohost/apitest"
	"repohost/models"
)

// isNumbers lists the issues a GET answers, by number, and checks that
// X-Total-Count agrees with a single page.
func isNumbers(t *testing.T, e *apitest.Env, path string, cred apitest.Cred) []int64 {
	t.Helper()
	var got []*models.Issue
	r := e.Do("GET", path, nil, cred).Expect(t, http.StatusOK)
	r.JSON(t, &got)
	nums := []int64{}
	for _, is := range got {
		nums = append(nums, is.Index)
	}
	if r.Header.Get("X-Total-Count") != fmt.Sprint(len(nums)) && !strings.Contains(path, "page=") {
		t.Errorf("%s: %d issues, X-Total-Count %s", path, len(nums), r.Header.Get("X-Total-Count"))
	}
	return nums
}

// TestIssueKeywordSearch: q finds issues by the words of their titles,
// bodies and comments, each word as a prefix, and by number; it combines
// with every other filter of the list; edits and deleted comments are
// reflected by the next request.
func TestIssueKeywordSearch(t *testing.T) {
	t.Parallel()
	w := isSetup(t)
	e, a, b := w.e, apitest.Basic(w.alice), apitest.Basic(w.bob)
	var bug models.Label
	e.Do("POST", "repos/alice/pub/labels", map[string]any{"name": "bug", "color": "#ff0000"}, a).Expect(t, http.StatusCreated).JSON(t, &bug)
	var ms models.Milestone
	e.Do("POST", "repos/alice/pub/milestones", map[string]any{"title": "v1"}, a).Expect(t, http.StatusCreated).JSON(t, &ms)

	isCreate(t, e, "alice/pub", a, map[string]any{"title": "Crash on start-up", "body": "the daemon dies", "labels": []int64{bug.ID}})
	isCreate(t, e, "alice/pub", b, map[string]any{"title": "Slow configuration loading", "body": "ping @alice"})
	isCreate(t, e, "alice/pub", a, map[string]any{"title": "Crash when saving", "assignees": []string{"alice"}, "closed": true})
	isCreate(t, e, "alice/pub", a, map[string]any{"title": "Docs", "body": "explain the configuration file", "milestone": ms.ID})
	var c models.Comment
	e.Do("POST", "repos/alice/pub/issues/4/comments", map[string]any{"body": "segfault seen on arm64"}, b).
		Expect(t, http.StatusCreated).JSON(t, &c)

	list := func(query string, want ...int64) {
		t.Helper()
		got := isNumbers(t, e, "repos/alice/pub/issues?"+query, nil)
		if fmt.Sprint(got) != fmt.Sprint(append([]int64{}, want...)) {
			t.Errorf("?%s: %v, want %v", query, got, want)
		}
	}
	// Words, in title, body and comments; newest first.
	list("state=all&q=crash", 3, 1)
	list("q=crash", 1)
	list("q=daemon", 1)
	list("q=SEGFAULT", 4)
	list("q=configuration", 4, 2)
	list("q=crash+dies", 1)       // every word must match
	list("q=crash+configuration") // in one issue
	list("q=start", 1)            // punctuation separates words
	// Prefixes.
	list("q=conf", 4, 2)
	list("q=seg+arm", 4)
	// Numbers: "#2" is that issue; "4" is issue 4 or any word "4…"
	// ("arm64" has none: a word must begin with it).
	list("q=%232", 2)
	list("q=4", 4)
	list("q=%2399")
	// Combined with the other filters.
	list("state=closed&q=crash", 3)
	list("q=crash&labels=bug", 1)
	list("q=conf&milestones=v1", 4)
	list("q=conf&created_by=bob", 2)
	list("q=conf&mentioned_by=alice", 2)
	list("state=all&q=crash&assigned_by=alice", 3)
	list("q=conf&type=issues", 4, 2)
	list("q=conf&type=pulls")
	list("q=conf&since=2000-01-01T00:00:00Z&before=2999-01-01T00:00:00Z", 4, 2)
	list("q=conf&since=2999-01-01T00:00:00Z")
	list("q=conf&limit=1&page=2", 2)

	// An edit is found at once, and the old words no longer.
	e.Do("PATCH", "repos/alice/pub/issues/4", map[string]any{"title": "Manual", "body": "write the handbook"}, a).
		Expect(t, http.StatusCreated)
	list("q=handbook", 4)
	list("q=configuration", 2)
	e.Do("PATCH", fmt.Sprintf("repos/alice/pub/issues/comments/%d", c.ID), map[string]any{"body": "a panic instead"}, b).
		Expect(t, http.StatusOK)
	list("q=segfault")
	list("q=panic", 4)
	e.Do("DELETE", fmt.Sprintf("repos/alice/pub/issues/comments/%d", c.ID), nil, b).Expect(t, http.StatusNoContent)
	list("q=panic")
}

// TestIssueKeywordSearchVisibility: a keyword never finds an issue of a
// repository the caller cannot see, in the repository's own list (404)
// or across repositories, and finds it for those who may.
func TestIssueKeywordSearchVisibility(t *testing.T) {
	t.Parallel()
	w := isSetup(t)
	e, a := w.e, apitest.Basic(w.alice)
	isCreate(t, e, "alice/pub", a, map[string]any{"title": "quasar in public"})
	isCreate(t, e, "alice/priv", a, map[string]any{"title": "quasar in private", "body": "secret"})
	isCreate(t, e, "acme/tool", apitest.Basic(w.carol), map[string]any{"title": "organisation", "body": "quasar too"})

	search := func(query string, cred apitest.Cred, want int) {
		t.Helper()
		if got := isNumbers(t, e, "repos/issues/search?"+query, cred); len(got) != want {
			t.Errorf("%s: %d issues, want %d", query, len(got), want)
		}
	}
	for _, cred := range []apitest.Cred{nil, apitest.Basic(w.bob), apitest.Basic(w.carol)} {
		search("q=quasar", cred, 2)
		search("q=secret", cred, 0)
		search("q=%231", cred, 2) // issue 1 of pub and of tool
	}
	search("q=quasar", a, 3)
	search("q=secret", a, 1)
	search("q=secret", apitest.Basic(e.Admin), 1)
	search("q=quasar&owner=acme", nil, 1)
	search("q=quasar&owner=alice", nil, 1)
	search("q=quasar&owner=alice", a, 2)
	search("q=quasar&created=true", apitest.Basic(w.carol), 1)
	// A token limited to public data does not reach the private one.
	search("q=secret", apitest.TokenCred(e.Token(w.alice, "public-only", "read:issue", "read:repository")), 0)
	e.Do("GET", "repos/alice/priv/issues?q="+url.QueryEscape("secret"), nil, apitest.Basic(w.bob)).Expect(t, http.StatusNotFound)
	e.Do("GET", "repos/alice/priv/issues?q="+url.QueryEscape("secret"), nil, nil).Expect(t, http.StatusNotFound)
	if got := isNumbers(t, e, "repos/alice/priv/issues?q=secret", a); len(got) != 1 {
		t.Errorf("owner's search of the private repository: %v", got)
	}
}
