package apitest_test

import (
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"repohost/apitest"
)

// plEntry matches one entry of a Link header: <url>; rel="name".
var plEntry = regexp.MustCompile(`^<([^>]+)>; rel="([a-z]+)"$`)

// plParse splits a Link header into "rel=page" items, in header order, and
// checks every URL keeps the list's path and its other query parameters.
func plParse(t *testing.T, link, path string, limit int) []string {
	t.Helper()
	if link == "" {
		return nil
	}
	var out []string
	for _, entry := range strings.Split(link, ",") {
		m := plEntry.FindStringSubmatch(entry)
		if m == nil {
			t.Fatalf("malformed Link entry %q in %q", entry, link)
		}
		u, err := url.Parse(m[1])
		if err != nil || u.Path != "/api/v1/"+path || u.Query().Get("limit") != fmt.Sprint(limit) {
			t.Fatalf("Link entry %q does not point into /api/v1/%s with limit %d", entry, path, limit)
		}
		out = append(out, m[2]+"="+u.Query().Get("page"))
	}
	return out
}

// TestLinkHeaderFollowsReference: next and last only when a later page
// exists, first and prev only when an earlier one does, in the order
// next, last, first, prev; no Link at all when everything fits on one page.
func TestLinkHeaderFollowsReference(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	alice := e.CreateUser("alice", false)
	e.CreateUser("empty", false)
	for i := 1; i <= 5; i++ {
		roCreateRepo(t, e, apitest.Basic(alice), map[string]any{"name": fmt.Sprintf("r%d", i)})
	}
	// Five repositories, two a page: pages 1, 2 and 3.
	cases := []struct {
		name        string
		path        string
		page, limit int
		want        string
	}{
		{"one page", "users/alice/repos", 1, 10, ""},
		{"empty list", "users/empty/repos", 1, 2, ""},
		{"first of three", "users/alice/repos", 1, 2, "next=2 last=3"},
		{"middle", "users/alice/repos", 2, 2, "next=3 last=3 first=1 prev=1"},
		{"last", "users/alice/repos", 3, 2, "first=1 prev=2"},
		{"beyond the end", "users/alice/repos", 5, 2, "first=1 prev=3"},
		{"beyond the end of an empty list", "users/empty/repos", 2, 2, "first=1 prev=1"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := e.Do("GET", fmt.Sprintf("%s?page=%d&limit=%d", c.path, c.page, c.limit), nil, nil).Expect(t, http.StatusOK)
			if _, present := r.Header["Link"]; c.want == "" && present {
				t.Fatalf("Link %q on a list that fits on one page", r.Header.Get("Link"))
			}
			if got := strings.Join(plParse(t, r.Header.Get("Link"), c.path, c.limit), " "); got != c.want {
				t.Fatalf("Link %q: got %q, want %q", r.Header.Get("Link"), got, c.want)
			}
		})
	}
}
