package apitest_test

import (
	"bytes"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"repohost/apitest"
	"repohost/models"
)

// TestCommentListCacheFollowsChanges: a server keeping rendered comment
// lists (an issue's and a repository's, impl/listcache) answers a repeated
// list from memory, yet after any change the list shows (a comment
// created, edited or deleted, its poster renamed or given another full
// name), its issue deleted, the issue unit turned off or a repository made
// private, the next list of the server that made
// the change, and within a second that of any other server on the same
// database, answers as the change says. (A comment shows neither its
// reactions nor its attachments.)
func TestCommentListCacheFollowsChanges(t *testing.T) {
	t.Parallel()
	// a serves the lists under test; b makes the changes.
	apitest.CachedServers(t, func(t *testing.T, a, b *apitest.Env, within time.Duration) {
		alice, bob := a.CreateUser("alice", false), a.CreateUser("bob", false)
		al, bo := apitest.Basic(alice), apitest.Basic(bob)
		admin := apitest.Basic(a.Admin)
		roCreateRepo(t, a, al, map[string]any{"name": "pub"})
		isCreate(t, a, "alice/pub", al, map[string]any{"title": "one"})
		isComment(t, a, "alice/pub", 1, bo, "first")
		isComment(t, a, "alice/pub", 1, al, "second")

		const path, repoPath = "repos/alice/pub/issues/1/comments", "repos/alice/pub/issues/comments"
		byBody := func(l []*models.Comment, body string) *models.Comment {
			for _, c := range l {
				if c.Body == body {
					return c
				}
			}
			return nil
		}
		// change warms a's lists (the and the repository's) for
		// cred, makes the change on b, then waits (at most within) for
		// each to show it.
		change := func(what string, cred apitest.Cred, do func(), shows func([]*models.Comment) bool) {
			t.Helper()
			for _, p := range []string{path, repoPath} {
				a.Do(http.MethodGet, p, nil, cred).Expect(t, http.StatusOK)
			}
			apitest.FollowsChange(t, a, within, what, path, cred, do, func(r *apitest.Response) bool {
				var l []*models.Comment
				r.JSON(t, &l)
				return shows(l)
			})
			apitest.Eventually(t, within, what+" (the repository's list)", func() (bool, string) {
				r := a.Do(http.MethodGet, repoPath, nil, cred).Expect(t, http.StatusOK)
				var l []*models.Comment
				r.JSON(t, &l)
				return shows(l), fmt.Sprintf("GET %s answers %s", repoPath, r.Body)
			})
		}

		// Repeated, each list is the same bytes, read from memory.
		for _, p := range []string{path, repoPath} {
			apitest.ServedFromMemory(t, a, b, p, al, func() {
				isComment(t, b, "alice/pub", 1, al, "warm")
			})
		}

		var third models.Comment
		change("a new comment", al, func() {
			b.Do(http.MethodPost, "repos/alice/pub/issues/1/comments", map[string]any{"body": "third"}, bo).
				Expect(t, http.StatusCreated).JSON(t, &third)
		}, func(l []*models.Comment) bool { return byBody(l, "third") != nil })
		change("an edited comment", al, func() {
			b.Do(http.MethodPatch, fmt.Sprintf("repos/alice/pub/issues/comments/%d", third.ID), map[string]any{"body": "third!"}, bo).
				Expect(t, http.StatusOK)
		}, func(l []*models.Comment) bool { return byBody(l, "third!") != nil && byBody(l, "third") == nil })
		change("a deleted comment", al, func() {
			b.Do(http.MethodDelete, fmt.Sprintf("repos/alice/pub/issues/comments/%d", third.ID), nil, bo).
				Expect(t, http.StatusNoContent)
		}, func(l []*models.Comment) bool { return byBody(l, "third!") == nil })
		change("a poster's new full name", al, func() {
			b.Do(http.MethodPatch, "user/settings", map[string]any{"full_name": "Bob B"}, bo).Expect(t, http.StatusOK)
		}, func(l []*models.Comment) bool { c := byBody(l, "first"); return c != nil && c.User.FullName == "Bob B" })
		change("a renamed poster", al, func() {
			b.Do(http.MethodPost, "admin/users/bob/rename", map[string]any{"new_username": "bobby"}, admin).Expect(t, http.StatusNoContent)
		}, func(l []*models.Comment) bool { c := byBody(l, "first"); return c != nil && c.User.UserName == "bobby" })

		// The total and the links of a page, from memory too; a query of
		// its own is an answer of its own. (Four comments: first, second
		// and two warm.)
		page := func(query string) (string, string, []byte) {
			r := a.Do(http.MethodGet, path+"?limit=1&page=2"+query, nil, nil).Expect(t, http.StatusOK)
			return r.Header.Get("X-Total-Count"), r.Header.Get("Link"), r.Body
		}
		total, link, _ := page("")
		if total2, link2, _ := page(""); total != "4" || total2 != total || link2 != link || !strings.Contains(link, "page=3") {
			t.Fatalf("total %q %q, link %q %q", total, total2, link, link2)
		}
		if _, link, _ := page("&extra=x"); !strings.Contains(link, "extra=x") {
			t.Fatalf("the link of another query is that of the first: %q", link)
		}
		if total, _, body := page("&since=2100-01-01T00:00:00Z"); total != "0" || string(bytes.TrimSpace(body)) != "[]" {
			t.Fatalf("comments updated since 2100: %s of them, %s", total, body)
		}
		if total, _, body := page("&before=2000-01-01T00:00:00Z"); total != "0" || string(bytes.TrimSpace(body)) != "[]" {
			t.Fatalf("comments updated before 2000: %s of them, %s", total, body)
		}
		isComment(t, b, "alice/pub", 1, al, "fourth")
		apitest.Eventually(t, within, "a new comment", func() (bool, string) {
			total, _, _ := page("")
			return total == "5", "X-Total-Count " + total + ", want 5"
		})

		// Callers who see different bytes never get each other's: an
		// address is shown to signed-in callers, not to anonymous ones;
		// site admins see more of each user.
		carol := apitest.Basic(a.CreateUser("carol", false))
		for i := 0; i < 2; i++ {
			anon := a.Do(http.MethodGet, path, nil, nil).Expect(t, http.StatusOK)
			signed := a.Do(http.MethodGet, path, nil, carol).Expect(t, http.StatusOK)
			adm := a.Do(http.MethodGet, path, nil, admin).Expect(t, http.StatusOK)
			if bytes.Contains(anon.Body, []byte("bob@example.com")) || !bytes.Contains(signed.Body, []byte("bob@example.com")) {
				t.Fatalf("addresses: anonymous %s\nsigned in %s", anon.Body, signed.Body)
			}
			if bytes.Equal(adm.Body, signed.Body) {
				t.Fatalf("an admin's list is a plain user's:\n%s", adm.Body)
			}
		}

		// An issue deleted, or the issue unit turned off, answers 404.
		isCreate(t, a, "alice/pub", al, map[string]any{"title": "doomed"})
		isComment(t, a, "alice/pub", 2, al, "doomed")
		const doomed = "repos/alice/pub/issues/2/comments"
		a.Do(http.MethodGet, doomed, nil, al).Expect(t, http.StatusOK)
		a.Do(http.MethodGet, doomed, nil, al).Expect(t, http.StatusOK)
		b.Do(http.MethodDelete, "repos/alice/pub/issues/2", nil, al).Expect(t, http.StatusNoContent)
		apitest.Eventually(t, within, "a deleted issue", func() (bool, string) {
			got := a.Do(http.MethodGet, doomed, nil, al).Status
			return got == http.StatusNotFound, fmt.Sprintf("GET %s answered %d", doomed, got)
		})
		a.Do(http.MethodGet, path, nil, al).Expect(t, http.StatusOK)
		b.Do(http.MethodPatch, "repos/alice/pub", map[string]any{"has_issues": false}, al).Expect(t, http.StatusOK)
		apitest.Eventually(t, within, "the issue unit turned off", func() (bool, string) {
			got := a.Do(http.MethodGet, path, nil, al).Status
			return got == http.StatusNotFound, fmt.Sprintf("GET %s answered %d", path, got)
		})
		b.Do(http.MethodPatch, "repos/alice/pub", map[string]any{"has_issues": true}, al).Expect(t, http.StatusOK)
		apitest.Eventually(t, within, "the issue unit turned on", func() (bool, string) {
			got := a.Do(http.MethodGet, path, nil, al).Status
			return got == http.StatusOK, fmt.Sprintf("GET %s answered %d", path, got)
		})

		// A repository made private is refused to outsiders.
		for _, p := range []string{path, repoPath} {
			for _, cred := range []apitest.Cred{nil, carol} {
				a.Do(http.MethodGet, p, nil, cred).Expect(t, http.StatusOK)
			}
		}
		b.Do(http.MethodPatch, "repos/alice/pub", map[string]any{"private": true}, al).Expect(t, http.StatusOK)
		for _, p := range []string{path, repoPath} {
			for _, cred := range []apitest.Cred{nil, carol} {
				apitest.Eventually(t, within, "a repository made private", func() (bool, string) {
					got := a.Do(http.MethodGet, p, nil, cred).Status
					return got == http.StatusNotFound, fmt.Sprintf("GET %s answered %d to an outsider", p, got)
				})
			}
			a.Do(http.MethodGet, p, nil, al).Expect(t, http.StatusOK)
		}
	})
}
