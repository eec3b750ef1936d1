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
	"repohost/store/sqlstore"
)

// TestIssueListCacheFollowsChanges: a server keeping rendered issue lists
// (impl/listcache, on with the read cache) answers a repeated list
// from memory, yet after any change the list shows (an issue created,
// edited, closed, labelled, commented on, put in a milestone, its poster
// renamed) or a repository made private, the next list of the server that
// made the change, and within a second that of any other server on the same
// database, answers as the change says.
func TestIssueListCacheFollowsChanges(t *testing.T) {
	t.Parallel()
	// a serves the lists under test; b makes the changes.
	apitest.CachedServers(t, func(t *testing.T, a, b *apitest.Env, within time.Duration) {
		alice, bob := a.CreateUser("alice", false), a.CreateUser("bob", false)
		al, bo := apitest.Basic(alice), apitest.Basic(bob)
		admin := apitest.Basic(a.Admin)
		roCreateRepo(t, a, al, map[string]any{"name": "pub"})
		isCreate(t, a, "alice/pub", al, map[string]any{"title": "one"})
		isCreate(t, a, "alice/pub", bo, map[string]any{"title": "two"})

		const path = "repos/alice/pub/issues?state=all&limit=50"
		list := func(path string, cred apitest.Cred) (*apitest.Response, []*models.Issue) {
			t.Helper()
			r := a.Do(http.MethodGet, path, nil, cred).Expect(t, http.StatusOK)
			var out []*models.Issue
			r.JSON(t, &out)
			return r, out
		}
		byTitle := func(l []*models.Issue, title string) *models.Issue {
			for _, is := range l {
				if is.Title == title {
					return is
				}
			}
			return nil
		}
		// change warms a's list for cred, makes the change on b, then
		// waits (at most within) for a's list to show it.
		change := func(what string, cred apitest.Cred, do func(), shows func([]*models.Issue) bool) {
			t.Helper()
			apitest.FollowsChange(t, a, within, what, path, cred, do, func(r *apitest.Response) bool {
				var l []*models.Issue
				r.JSON(t, &l)
				return shows(l)
			})
		}

		// Repeated, the list is the same bytes, read from memory.
		apitest.ServedFromMemory(t, a, b, path, al, func() {
			b.Do(http.MethodPost, "repos/alice/pub/issues/1/comments", map[string]any{"body": "warm"}, al).Expect(t, http.StatusCreated)
		})

		change("a new issue", al, func() {
			isCreate(t, b, "alice/pub", al, map[string]any{"title": "three"})
		}, func(l []*models.Issue) bool { return byTitle(l, "three") != nil })
		change("an edited title", al, func() {
			b.Do(http.MethodPatch, "repos/alice/pub/issues/3", map[string]any{"title": "three!"}, al).Expect(t, http.StatusCreated)
		}, func(l []*models.Issue) bool { return byTitle(l, "three!") != nil })
		change("a closed issue", al, func() {
			b.Do(http.MethodPatch, "repos/alice/pub/issues/3", map[string]any{"state": "closed"}, al).Expect(t, http.StatusCreated)
		}, func(l []*models.Issue) bool { is := byTitle(l, "three!"); return is != nil && is.State == "closed" })
		var label models.Label
		b.Do(http.MethodPost, "repos/alice/pub/labels", map[string]any{"name": "bug", "color": "#ff0000"}, al).
			Expect(t, http.StatusCreated).JSON(t, &label)
		change("a label", al, func() {
			b.Do(http.MethodPost, "repos/alice/pub/issues/2/labels", map[string]any{"labels": []int64{label.ID}}, al).Expect(t, http.StatusOK)
		}, func(l []*models.Issue) bool { is := byTitle(l, "two"); return is != nil && len(is.Labels) == 1 })
		// A name in the filter means the label it names now.
		const byName = "repos/alice/pub/issues?state=all&labels=defect"
		if _, l := list(byName, al); len(l) != 3 {
			t.Fatalf("an unknown label filtered %d of 3 issues", len(l))
		}
		b.Do(http.MethodPatch, fmt.Sprintf("repos/alice/pub/labels/%d", label.ID), map[string]any{"name": "defect"}, al).Expect(t, http.StatusOK)
		apitest.Eventually(t, within, "a renamed label", func() (bool, string) {
			_, l := list(byName, al)
			return len(l) == 1 && l[0].Title == "two", fmt.Sprintf("%d issues carry it", len(l))
		})
		change("a comment", al, func() {
			b.Do(http.MethodPost, "repos/alice/pub/issues/2/comments", map[string]any{"body": "hi"}, al).Expect(t, http.StatusCreated)
		}, func(l []*models.Issue) bool { is := byTitle(l, "two"); return is != nil && is.Comments == 1 })
		var ms models.Milestone
		b.Do(http.MethodPost, "repos/alice/pub/milestones", map[string]any{"title": "v1"}, al).Expect(t, http.StatusCreated).JSON(t, &ms)
		change("a milestone", al, func() {
			b.Do(http.MethodPatch, "repos/alice/pub/issues/2", map[string]any{"milestone": ms.ID}, al).Expect(t, http.StatusCreated)
		}, func(l []*models.Issue) bool {
			is := byTitle(l, "two")
			return is != nil && is.Milestone != nil && is.Milestone.ID == ms.ID
		})
		change("a renamed poster", al, func() {
			b.Do(http.MethodPost, "admin/users/bob/rename", map[string]any{"new_username": "bobby"}, admin).Expect(t, http.StatusNoContent)
		}, func(l []*models.Issue) bool { is := byTitle(l, "two"); return is != nil && is.User.UserName == "bobby" })

		// The total and the links of a page, from memory too.
		page := func() (string, string) {
			r, _ := list("repos/alice/pub/issues?state=all&limit=1&page=2", nil)
			return r.Header.Get("X-Total-Count"), r.Header.Get("Link")
		}
		total, link := page()
		if total2, link2 := page(); total != "3" || total2 != total || link2 != link || !strings.Contains(link, "page=3") {
			t.Fatalf("total %q %q, link %q %q", total, total2, link, link2)
		}
		r := a.Do(http.MethodGet, "repos/alice/pub/issues?limit=1&page=2&state=all&extra=x", nil, nil).Expect(t, http.StatusOK)
		if !strings.Contains(r.Header.Get("Link"), "extra=x") {
			t.Fatalf("the link of another query is that of the first: %q", r.Header.Get("Link"))
		}
		isCreate(t, b, "alice/pub", al, map[string]any{"title": "four"})
		apitest.Eventually(t, within, "a new issue", func() (bool, string) {
			total, _ := page()
			return total == "4", "X-Total-Count " + total + ", want 4"
		})

		// Callers who see different bytes never get each other's: an
		// address is shown to signed-in callers, not to anonymous ones;
		// site admins see more of each user.
		carol := apitest.Basic(a.CreateUser("carol", false))
		for i := 0; i < 2; i++ {
			anon, _ := list(path, nil)
			signed, _ := list(path, carol)
			adm, _ := list(path, admin)
			if bytes.Contains(anon.Body, []byte("bob@example.com")) || !bytes.Contains(signed.Body, []byte("bob@example.com")) {
				t.Fatalf("addresses: anonymous %s\nsigned in %s", anon.Body, signed.Body)
			}
			if bytes.Equal(adm.Body, signed.Body) || bytes.Contains(signed.Body, []byte(`"active":true`)) {
				t.Fatalf("an admin's list is a plain user's:\n%s\n%s", adm.Body, signed.Body)
			}
		}

		// A repository made private is refused to outsiders.
		list(path, nil)
		list(path, carol)
		b.Do(http.MethodPatch, "repos/alice/pub", map[string]any{"private": true}, al).Expect(t, http.StatusOK)
		for _, cred := range []apitest.Cred{nil, carol} {
			apitest.Eventually(t, within, "a repository made private", func() (bool, string) {
				got := a.Do(http.MethodGet, path, nil, cred).Status
				return got == http.StatusNotFound, fmt.Sprintf("its list answered %d to an outsider", got)
			})
		}
		list(path, al)
	})
}

// TestIssueListKeptUnderWritesElsewhere: an issue created in one
// repository does not retire the kept lists of another (the repeated list
// of pub runs no statement beyond a kept answer's), while the list of the
// repository written to shows the new issue at once.
func TestIssueListKeptUnderWritesElsewhere(t *testing.T) {
	t.Parallel()
	a := apitest.NewCached(t)
	alice := a.CreateUser("alice", false)
	al := apitest.Basic(alice)
	roCreateRepo(t, a, al, map[string]any{"name": "pub"})
	roCreateRepo(t, a, al, map[string]any{"name": "busy"})
	isCreate(t, a, "alice/pub", al, map[string]any{"title": "one"})
	const quiet, busy = "repos/alice/pub/issues?limit=50", "repos/alice/busy/issues?limit=50"
	first := a.Do(http.MethodGet, quiet, nil, al).Expect(t, http.StatusOK)
	n := a.Statements()
	a.Do(http.MethodGet, quiet, nil, al).Expect(t, http.StatusOK)
	hit := a.Statements() - n
	// A rendering (another key of the same list) runs more: an answer
	// served with fewer was kept. (A statement of the event consumers may
	// be counted beside a kept answer.)
	n = a.Statements()
	a.Do(http.MethodGet, quiet+"&state=all", nil, al).Expect(t, http.StatusOK)
	rendered := a.Statements() - n
	if rendered <= hit+1 {
		t.Fatalf("a rendering ran %d statements, a kept answer %d", rendered, hit)
	}
	a.Do(http.MethodGet, busy, nil, al).Expect(t, http.StatusOK)
	// A kept answer lives for the cache's TTL: only the rounds that took
	// less tell anything, and a slow machine may need a few.
	checked := 0
	for i := 0; i < 10 && checked < 3; i++ {
		// A key of its own (the same list), so the answer is rendered
		// and kept now, not served from an older entry about to expire.
		path := fmt.Sprintf("repos/alice/pub/issues?limit=%d", 49-i)
		start := time.Now()
		a.Do(http.MethodGet, path, nil, al).Expect(t, http.StatusOK)
		isCreate(t, a, "alice/busy", al, map[string]any{"title": fmt.Sprint("busy ", i)})
		n = a.Statements()
		again := a.Do(http.MethodGet, path, nil, al).Expect(t, http.StatusOK)
		got := a.Statements() - n
		if time.Since(start) < sqlstore.DefaultCacheTTL {
			checked++
			if got >= rendered || !bytes.Equal(again.Body, first.Body) {
				t.Fatalf("after an issue created elsewhere, the kept list ran %d statements (a kept answer %d, a rendering %d)", got, hit, rendered)
			}
		}
		var l []*models.Issue
		a.Do(http.MethodGet, busy, nil, al).Expect(t, http.StatusOK).JSON(t, &l)
		if len(l) != i+1 {
			t.Fatalf("the list of the repository written to shows %d issues, want %d", len(l), i+1)
		}
	}
	if checked == 0 {
		t.Fatalf("no round within the cache's TTL of %s", sqlstore.DefaultCacheTTL)
	}
	// A change not confined to one repository still retires it.
	a.Do(http.MethodPatch, "repos/alice/pub", map[string]any{"description": "d"}, al).Expect(t, http.StatusOK)
	isCreate(t, a, "alice/pub", al, map[string]any{"title": "two"})
	var l []*models.Issue
	a.Do(http.MethodGet, quiet, nil, al).Expect(t, http.StatusOK).JSON(t, &l)
	if len(l) != 2 {
		t.Fatalf("the quiet list after its own write: %d issues", len(l))
	}
}

// TestIssueListKeptUnderEveryWriteElsewhere: every kind of write confined
// to one repository's issue tracker (an issue edited, closed, reopened and
// given a deadline; a comment created, edited and deleted; a reaction; a
// label created, edited, put on an issue and taken off; a milestone
// created and edited) leaves another repository's kept list kept, while
// the written repository's own list shows the write at once.
func TestIssueListKeptUnderEveryWriteElsewhere(t *testing.T) {
	t.Parallel()
	a := apitest.NewCached(t)
	alice := a.CreateUser("alice", false)
	al := apitest.Basic(alice)
	roCreateRepo(t, a, al, map[string]any{"name": "pub"})
	roCreateRepo(t, a, al, map[string]any{"name": "busy"})
	isCreate(t, a, "alice/pub", al, map[string]any{"title": "one"})
	isCreate(t, a, "alice/busy", al, map[string]any{"title": "target"})
	const quiet, busy = "repos/alice/pub/issues?limit=50", "repos/alice/busy/issues?limit=50&state=all"
	first := a.Do(http.MethodGet, quiet, nil, al).Expect(t, http.StatusOK)
	n := a.Statements()
	a.Do(http.MethodGet, quiet+"&state=all", nil, al).Expect(t, http.StatusOK)
	rendered := a.Statements() - n

	var comment models.Comment
	var label models.Label
	writes := []struct {
		name  string
		write func()
		// shows tells whether the busy list shows the write.
		shows func(l []*models.Issue) bool
	}{
		{"issue edited", func() {
			a.Do(http.MethodPatch, "repos/alice/busy/issues/1", map[string]any{"title": "edited"}, al).Expect(t, http.StatusCreated)
		}, func(l []*models.Issue) bool { return l[0].Title == "edited" }},
		{"issue closed", func() {
			a.Do(http.MethodPatch, "repos/alice/busy/issues/1", map[string]any{"state": "closed"}, al).Expect(t, http.StatusCreated)
		}, func(l []*models.Issue) bool { return l[0].State == "closed" }},
		{"issue reopened", func() {
			a.Do(http.MethodPatch, "repos/alice/busy/issues/1", map[string]any{"state": "open"}, al).Expect(t, http.StatusCreated)
		}, func(l []*models.Issue) bool { return l[0].State == "open" }},
		{"deadline set", func() {
			a.Do(http.MethodPost, "repos/alice/busy/issues/1/deadline", map[string]any{"due_date": "2030-01-02T00:00:00Z"}, al).
				Expect(t, http.StatusCreated)
		}, func(l []*models.Issue) bool { return l[0].Deadline != nil }},
		{"comment created", func() {
			a.Do(http.MethodPost, "repos/alice/busy/issues/1/comments", map[string]any{"body": "hello"}, al).
				Expect(t, http.StatusCreated).JSON(t, &comment)
		}, func(l []*models.Issue) bool { return l[0].Comments == 1 }},
		{"comment edited", func() {
			a.Do(http.MethodPatch, fmt.Sprintf("repos/alice/busy/issues/comments/%d", comment.ID), map[string]any{"body": "hi"}, al).
				Expect(t, http.StatusOK)
		}, nil},
		{"reaction", func() {
			a.Do(http.MethodPost, "repos/alice/busy/issues/1/reactions", map[string]any{"content": "heart"}, al).
				Expect(t, http.StatusCreated)
		}, nil},
		{"comment deleted", func() {
			a.Do(http.MethodDelete, fmt.Sprintf("repos/alice/busy/issues/comments/%d", comment.ID), nil, al).
				Expect(t, http.StatusNoContent)
		}, func(l []*models.Issue) bool { return l[0].Comments == 0 }},
		{"label created", func() {
			a.Do(http.MethodPost, "repos/alice/busy/labels", map[string]any{"name": "bug", "color": "#ff0000"}, al).
				Expect(t, http.StatusCreated).JSON(t, &label)
		}, nil},
		{"label put on", func() {
			a.Do(http.MethodPost, "repos/alice/busy/issues/1/labels", map[string]any{"labels": []int64{label.ID}}, al).
				Expect(t, http.StatusOK)
		}, func(l []*models.Issue) bool { return len(l[0].Labels) == 1 }},
		{"label edited", func() {
			a.Do(http.MethodPatch, fmt.Sprintf("repos/alice/busy/labels/%d", label.ID), map[string]any{"name": "defect"}, al).
				Expect(t, http.StatusOK)
		}, func(l []*models.Issue) bool { return len(l[0].Labels) == 1 && l[0].Labels[0].Name == "defect" }},
		{"label taken off", func() {
			a.Do(http.MethodDelete, fmt.Sprintf("repos/alice/busy/issues/1/labels/%d", label.ID), nil, al).
				Expect(t, http.StatusNoContent)
		}, func(l []*models.Issue) bool { return len(l[0].Labels) == 0 }},
		{"milestone created", func() {
			a.Do(http.MethodPost, "repos/alice/busy/milestones", map[string]any{"title": "v1"}, al).Expect(t, http.StatusCreated)
		}, nil},
		{"milestone set", func() {
			a.Do(http.MethodPatch, "repos/alice/busy/issues/1", map[string]any{"milestone": 1}, al).Expect(t, http.StatusCreated)
		}, func(l []*models.Issue) bool { return l[0].Milestone != nil && l[0].Milestone.Title == "v1" }},
		{"milestone edited", func() {
			a.Do(http.MethodPatch, "repos/alice/busy/milestones/1", map[string]any{"title": "v2"}, al).Expect(t, http.StatusOK)
		}, func(l []*models.Issue) bool { return l[0].Milestone != nil && l[0].Milestone.Title == "v2" }},
	}
	checked := 0
	for i, w := range writes {
		// A key of its own (the same list), rendered and kept now; a kept
		// answer lives for the cache's TTL, so only a round that took
		// less tells anything.
		path := fmt.Sprintf("repos/alice/pub/issues?limit=%d", 49-i)
		start := time.Now()
		a.Do(http.MethodGet, path, nil, al).Expect(t, http.StatusOK)
		w.write()
		n = a.Statements()
		again := a.Do(http.MethodGet, path, nil, al).Expect(t, http.StatusOK)
		got := a.Statements() - n
		if time.Since(start) < sqlstore.DefaultCacheTTL {
			checked++
			if got >= rendered || !bytes.Equal(again.Body, first.Body) {
				t.Errorf("after %s elsewhere, the kept list ran %d statements (a rendering %d)", w.name, got, rendered)
			}
		}
		if w.shows != nil {
			var l []*models.Issue
			a.Do(http.MethodGet, busy, nil, al).Expect(t, http.StatusOK).JSON(t, &l)
			if len(l) != 1 || !w.shows(l) {
				t.Errorf("after %s, the list of the repository written to does not show it", w.name)
			}
		}
	}
	if checked < len(writes)/2 {
		t.Fatalf("only %d of %d rounds within the cache's TTL of %s", checked, len(writes), sqlstore.DefaultCacheTTL)
	}
}
