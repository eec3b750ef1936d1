package apitest_test

import (
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"testing"

	"repohost/apitest"
	"repohost/models"
)

// TestIssueSearchAcrossNewestInPrivate: the newest issues of the site are
// in a private repository (the page then merges the classes of
// repositories the caller sees wholesale with the repositories it was
// given). An anonymous caller and an outsider get exactly the public
// issues, newest first, on every page; a collaborator of the private
// repository gets its issues merged in order; and a repository made
// public or private, or an organization made private, changes every
// caller's answer at once.
func TestIssueSearchAcrossNewestInPrivate(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	alice, bob, carol := e.CreateUser("alice", false), e.CreateUser("bob", false), e.CreateUser("carol", false)
	a := apitest.Basic(alice)
	roCreateRepo(t, e, a, map[string]any{"name": "old"})
	roCreateOrg(t, e, a, map[string]any{"username": "acme"})
	e.Do("POST", "orgs/acme/repos", map[string]any{"name": "tool"}, a).Expect(t, http.StatusCreated)
	roCreateRepo(t, e, a, map[string]any{"name": "hot", "private": true})
	e.Do("PUT", "repos/alice/hot/collaborators/bob", map[string]any{"permission": "read"}, a).Expect(t, http.StatusNoContent)

	// Issues are created oldest first: old's, then tool's, then hot's,
	// one of each repository's closed.
	var old, tool, hot []string // titles, newest first
	create := func(repo string, n int, into *[]string) {
		for i := range n {
			title := fmt.Sprintf("%s %d", repo, i)
			is := isCreate(t, e, repo, a, map[string]any{"title": title})
			if i == 1 {
				e.Do("PATCH", fmt.Sprintf("repos/%s/issues/%d", repo, is.Index), map[string]any{"state": "closed"}, a).
					Expect(t, http.StatusCreated)
			}
			*into = append([]string{title}, *into...)
		}
	}
	create("alice/old", 3, &old)
	create("acme/tool", 2, &tool)
	create("alice/hot", 12, &hot)
	concat := func(lists ...[]string) []string {
		var out []string
		for _, l := range lists {
			out = append(out, l...)
		}
		return out
	}
	open := func(list []string) []string {
		return slices.DeleteFunc(slices.Clone(list), func(s string) bool { return s[len(s)-2:] == " 1" })
	}
	creds := map[string]apitest.Cred{"anonymous": nil, "carol (outsider)": apitest.Basic(carol), "bob (collaborator)": apitest.Basic(bob),
		"alice (owner)": a, "admin": apitest.Basic(e.Admin)}
	titles := func(path string, cred apitest.Cred) ([]string, string) {
		t.Helper()
		var got []*models.Issue
		r := e.Do("GET", path, nil, cred).Expect(t, http.StatusOK)
		r.JSON(t, &got)
		out := []string{}
		for _, is := range got {
			out = append(out, is.Title)
		}
		return out, r.Header.Get("X-Total-Count")
	}
	// check holds every caller to want (the whole list, newest first, in
	// state=all) on pages of 1, 4 and 50, and in the open state.
	check := func(step string, want map[string][]string) {
		t.Helper()
		for who, all := range want {
			for _, state := range []string{"all", "open"} {
				list := all
				if state == "open" {
					list = open(all)
				}
				for _, limit := range []int{1, 4, 50} {
					var paged []string
					for page := 1; page <= len(list)/limit+2; page++ {
						got, total := titles(fmt.Sprintf("repos/issues/search?state=%s&limit=%d&page=%d", state, limit, page), creds[who])
						if total != strconv.Itoa(len(list)) {
							t.Errorf("%s, %s, state %s, limit %d, page %d: X-Total-Count %s, want %d",
								step, who, state, limit, page, total, len(list))
						}
						paged = append(paged, got...)
					}
					if !slices.Equal(paged, list) && (len(paged) > 0 || len(list) > 0) {
						t.Errorf("%s, %s, state %s, pages of %d:\n got %v\nwant %v", step, who, state, limit, paged, list)
					}
				}
			}
		}
	}
	public := concat(tool, old)
	everything := concat(hot, tool, old)
	check("hot private", map[string][]string{"anonymous": public, "carol (outsider)": public,
		"bob (collaborator)": everything, "alice (owner)": everything, "admin": everything})

	// Made public: every caller sees hot's issues at once.
	e.Do("PATCH", "repos/alice/hot", map[string]any{"private": false}, a).Expect(t, http.StatusOK)
	check("hot public", map[string][]string{"anonymous": everything, "carol (outsider)": everything,
		"bob (collaborator)": everything, "admin": everything})

	// old made private, acme made private: only the owner, the members
	// and the collaborators see them.
	e.Do("PATCH", "repos/alice/old", map[string]any{"private": true}, a).Expect(t, http.StatusOK)
	e.Do("PATCH", "orgs/acme", map[string]any{"visibility": "private"}, a).Expect(t, http.StatusOK)
	// An issue created now takes hot's class (public) at once.
	isCreate(t, e, "alice/hot", a, map[string]any{"title": "alice/hot new"})
	hot = append([]string{"alice/hot new"}, hot...)
	everything = concat(hot, tool, old)
	public = concat(tool, old)
	check("old private, acme private", map[string][]string{"anonymous": hot, "carol (outsider)": hot,
		"bob (collaborator)": hot, "alice (owner)": everything, "admin": everything})

	// The owner's search (owner=alice) reads alice's repositories only.
	got, total := titles("repos/issues/search?state=all&owner=alice&limit=50", nil)
	if !slices.Equal(got, hot) || total != strconv.Itoa(len(hot)) {
		t.Errorf("owner=alice, anonymous: %v (X-Total-Count %s), want %v", got, total, hot)
	}
	got, _ = titles("repos/issues/search?state=all&owner=alice&limit=50", a)
	if want := concat(hot, old); !slices.Equal(got, want) {
		t.Errorf("owner=alice, alice: %v, want %v", got, want)
	}

	// Issues turned off in hot: its issues leave every search.
	e.Do("PATCH", "repos/alice/hot", map[string]any{"has_issues": false}, a).Expect(t, http.StatusOK)
	check("hot without issues", map[string][]string{"anonymous": nil, "carol (outsider)": nil,
		"alice (owner)": public, "admin": public})
}
