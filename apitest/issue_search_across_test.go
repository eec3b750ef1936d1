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

// TestIssueSearchAcrossReposVisibility: the search across repositories,
// with and without a keyword, in every state, finds the issues of exactly
// the repositories the caller may see (anonymous; signed in; a member of
// an organization, through its team, and an outsider; a member of a
// private organization; the owner; an admin), its X-Total-Count is the
// size of that set on every page, and paging through it two at a time
// yields the one-page answer in the same order, each issue once.
func TestIssueSearchAcrossReposVisibility(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	alice, bob, carol, dave := e.CreateUser("alice", false), e.CreateUser("bob", false), e.CreateUser("carol", false),
		e.CreateUser("dave", false)
	a := apitest.Basic(alice)
	roCreateRepo(t, e, a, map[string]any{"name": "pub"})
	roCreateRepo(t, e, a, map[string]any{"name": "priv", "private": true})
	acme := roCreateOrg(t, e, a, map[string]any{"username": "acme"})
	e.Do("POST", "orgs/acme/repos", map[string]any{"name": "tool"}, a).Expect(t, http.StatusCreated)
	e.Do("POST", "orgs/acme/repos", map[string]any{"name": "vault", "private": true}, a).Expect(t, http.StatusCreated)
	roAddMember(t, e, acme.ID, carol, false, false)
	roCreateOrg(t, e, a, map[string]any{"username": "lim", "visibility": "limited"})
	e.Do("POST", "orgs/lim/repos", map[string]any{"name": "shared"}, a).Expect(t, http.StatusCreated)
	hid := roCreateOrg(t, e, a, map[string]any{"username": "hid", "visibility": "private"})
	e.Do("POST", "orgs/hid/repos", map[string]any{"name": "inside"}, a).Expect(t, http.StatusCreated)
	roAddMember(t, e, hid.ID, dave, false, false)
	// An issue tracker turned off keeps its issues out of every search.
	roCreateRepo(t, e, a, map[string]any{"name": "quiet"})

	repos := []string{"alice/pub", "alice/priv", "acme/tool", "acme/vault", "lim/shared", "hid/inside", "alice/quiet"}
	for _, r := range repos {
		for i := range 3 {
			body := map[string]any{"title": fmt.Sprintf("%s %d", r, i), "body": "plain"}
			if i != 1 {
				body["body"] = "about the nebula"
			}
			is := isCreate(t, e, r, a, body)
			if i == 2 {
				e.Do("PATCH", fmt.Sprintf("repos/%s/issues/%d", r, is.Index), map[string]any{"state": "closed"}, a).
					Expect(t, http.StatusCreated)
			}
		}
	}
	e.Do("PATCH", "repos/alice/quiet", map[string]any{"has_issues": false}, a).Expect(t, http.StatusOK)

	sees := map[string][]string{
		"anonymous": {"alice/pub", "acme/tool"},
		"bob":       {"alice/pub", "acme/tool", "lim/shared"},
		"carol":     {"alice/pub", "acme/tool", "acme/vault", "lim/shared"},
		"dave":      {"alice/pub", "acme/tool", "lim/shared", "hid/inside"},
		"alice":     {"alice/pub", "alice/priv", "acme/tool", "acme/vault", "lim/shared", "hid/inside"},
		"admin":     {"alice/pub", "alice/priv", "acme/tool", "acme/vault", "lim/shared", "hid/inside"},
	}
	creds := map[string]apitest.Cred{"anonymous": nil, "bob": apitest.Basic(bob), "carol": apitest.Basic(carol),
		"dave": apitest.Basic(dave), "alice": a, "admin": apitest.Basic(e.Admin)}
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
	for who, visible := range sees {
		for _, q := range []string{"", "&q=nebula"} {
			for _, state := range []string{"", "&state=closed", "&state=all"} {
				var want []string
				for _, r := range visible {
					for i := range 3 {
						closed := i == 2
						if q != "" && i == 1 || state == "" && closed || state == "&state=closed" && !closed {
							continue
						}
						want = append(want, fmt.Sprintf("%s %d", r, i))
					}
				}
				query := "repos/issues/search?limit=50" + q + state
				all, total := titles(query, creds[who])
				if total != strconv.Itoa(len(want)) {
					t.Errorf("%s, %s: X-Total-Count %s, want %d", who, query, total, len(want))
				}
				sorted := slices.Clone(all)
				slices.Sort(sorted)
				slices.Sort(want)
				if !slices.Equal(sorted, want) {
					t.Errorf("%s, %s:\n got %v\nwant %v", who, query, sorted, want)
				}
				// Pages of two, newest first, make up the same list.
				var paged []string
				for page := 1; page <= (len(want)+1)/2+1; page++ {
					got, total := titles(fmt.Sprintf("repos/issues/search?limit=2&page=%d%s%s", page, q, state), creds[who])
					if total != strconv.Itoa(len(want)) {
						t.Errorf("%s, %s, page %d: X-Total-Count %s, want %d", who, query, page, total, len(want))
					}
					paged = append(paged, got...)
				}
				if !slices.Equal(paged, all) {
					t.Errorf("%s, %s: pages of two give\n %v\nthe list is\n %v", who, query, paged, all)
				}
			}
		}
	}
	// An organization's and a user's searches (owner) hold to the same rule.
	for _, c := range []struct {
		who, owner string
		want       int
	}{{"anonymous", "acme", 2}, {"bob", "acme", 2}, {"carol", "acme", 4}, {"alice", "acme", 4}, {"anonymous", "alice", 2},
		{"alice", "alice", 4}, {"bob", "lim", 2}, {"dave", "hid", 2}} {
		got, total := titles("repos/issues/search?owner="+c.owner, creds[c.who])
		if len(got) != c.want || total != strconv.Itoa(c.want) {
			t.Errorf("%s, owner %s: %d issues, X-Total-Count %s, want %d", c.who, c.owner, len(got), total, c.want)
		}
	}
	for _, c := range []struct{ who, owner string }{{"anonymous", "lim"}, {"anonymous", "hid"}, {"bob", "hid"}, {"carol", "hid"}} {
		e.Do("GET", "repos/issues/search?owner="+c.owner, nil, creds[c.who]).Expect(t, http.StatusBadRequest)
	}
}

// TestIssueSearchAcrossReposKeptFollowsChanges: with rendered searches
// kept (a server with the read cache), a search across repositories
// answers at once as each change says: an issue created, edited and
// closed, a repository made private, a collaborator added.
func TestIssueSearchAcrossReposKeptFollowsChanges(t *testing.T) {
	t.Parallel()
	e := apitest.NewCached(t)
	alice, bob := e.CreateUser("alice", false), e.CreateUser("bob", false)
	a, b := apitest.Basic(alice), apitest.Basic(bob)
	roCreateRepo(t, e, a, map[string]any{"name": "pub"})
	isCreate(t, e, "alice/pub", a, map[string]any{"title": "first"})
	search := func(cred apitest.Cred, want ...string) {
		t.Helper()
		for _, q := range []string{"", "&q=first"} {
			var got []*models.Issue
			r := e.Do("GET", "repos/issues/search?limit=10"+q, nil, cred).Expect(t, http.StatusOK)
			r.JSON(t, &got)
			titles := []string{}
			for _, is := range got {
				titles = append(titles, is.Title)
			}
			exp := want
			if q != "" {
				exp = nil
				for _, w := range want {
					if w == "first" || w == "first again" {
						exp = append(exp, w)
					}
				}
			}
			if !slices.Equal(titles, append([]string{}, exp...)) || r.Header.Get("X-Total-Count") != strconv.Itoa(len(exp)) {
				t.Fatalf("search%s: %v (X-Total-Count %s), want %v", q, titles, r.Header.Get("X-Total-Count"), exp)
			}
		}
	}
	search(b, "first")
	search(b, "first") // kept
	isCreate(t, e, "alice/pub", a, map[string]any{"title": "second"})
	search(b, "second", "first")
	e.Do("PATCH", "repos/alice/pub/issues/1", map[string]any{"title": "first again"}, a).Expect(t, http.StatusCreated)
	search(b, "second", "first again")
	e.Do("PATCH", "repos/alice/pub/issues/2", map[string]any{"state": "closed"}, a).Expect(t, http.StatusCreated)
	search(b, "first again")
	e.Do("PATCH", "repos/alice/pub", map[string]any{"private": true}, a).Expect(t, http.StatusOK)
	search(b)
	search(nil)
	search(a, "first again")
	e.Do("PUT", "repos/alice/pub/collaborators/bob", map[string]any{"permission": "read"}, a).Expect(t, http.StatusNoContent)
	search(b, "first again")
}
