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

// TestRepoListCacheFollowsChanges: a server keeping rendered repository
// lists (impl/listcache, on with the read cache: a user's, an
// organization's, the caller's, a search) answers a repeated list from
// memory, yet after any change a list shows (a repository created, its
// description edited, renamed, made private, deleted; a collaborator
// added; a team member or a team repository added; an organization member
// removed; an owner's visibility changed) the next list of the server that
// made the change, and within a second that of any other server on the same
// database, answers as the change says; and callers who see different
// bytes never get each other's.
func TestRepoListCacheFollowsChanges(t *testing.T) {
	t.Parallel()
	// a serves the lists under test; b makes the changes.
	apitest.CachedServers(t, func(t *testing.T, a, b *apitest.Env, within time.Duration) {
		alice, bob := a.CreateUser("alice", false), a.CreateUser("bob", false)
		carol, dave, erin := a.CreateUser("carol", false), a.CreateUser("dave", false), a.CreateUser("erin", false)
		al, bo, ca := apitest.Basic(alice), apitest.Basic(bob), apitest.Basic(carol)
		da, er := apitest.Basic(dave), apitest.Basic(erin)
		admin := apitest.Basic(a.Admin)
		roCreateRepo(t, a, al, map[string]any{"name": "one", "description": "first"})

		// repos reads a list, or a search's results.
		repos := func(r *apitest.Response) []*models.Repository {
			var out []*models.Repository
			if bytes.HasPrefix(r.Body, []byte("{")) {
				var res models.SearchResults
				r.JSON(t, &res)
				return res.Data
			}
			r.JSON(t, &out)
			return out
		}
		list := func(path string, cred apitest.Cred) (*apitest.Response, []*models.Repository) {
			t.Helper()
			r := a.Do(http.MethodGet, path, nil, cred).Expect(t, http.StatusOK)
			return r, repos(r)
		}
		byName := func(l []*models.Repository, name string) *models.Repository {
			for _, r := range l {
				if r.FullName == name {
					return r
				}
			}
			return nil
		}
		// change warms a's list at path for cred, makes the change on b,
		// then waits (at most within) for a's list to show it (which it
		// must not before).
		change := func(what, path string, cred apitest.Cred, do func(), shows func([]*models.Repository) bool) {
			t.Helper()
			apitest.FollowsChange(t, a, within, what, path, cred, do, func(r *apitest.Response) bool {
				return shows(repos(r))
			})
		}

		// Repeated, each list is the same bytes, read from memory.
		for _, path := range []string{"users/alice/repos", "user/repos", "repos/search?q=one"} {
			apitest.ServedFromMemory(t, a, b, path, al, func() {
				b.Do(http.MethodPatch, "repos/alice/one", map[string]any{"website": "https://example.com/" + path}, al).Expect(t, http.StatusOK)
			})
		}

		const alices = "users/alice/repos"
		change("a new repository", alices, bo, func() {
			b.Do(http.MethodPost, "user/repos", map[string]any{"name": "two"}, al).Expect(t, http.StatusCreated)
		}, func(l []*models.Repository) bool { return byName(l, "alice/two") != nil })
		change("an edited description", alices, bo, func() {
			b.Do(http.MethodPatch, "repos/alice/two", map[string]any{"description": "second"}, al).Expect(t, http.StatusOK)
		}, func(l []*models.Repository) bool {
			r := byName(l, "alice/two")
			return r != nil && r.Description == "second"
		})
		change("a renamed repository", alices, bo, func() {
			b.Do(http.MethodPatch, "repos/alice/two", map[string]any{"name": "deux"}, al).Expect(t, http.StatusOK)
		}, func(l []*models.Repository) bool {
			return byName(l, "alice/deux") != nil && byName(l, "alice/two") == nil
		})
		change("a repository made private", alices, bo, func() {
			b.Do(http.MethodPatch, "repos/alice/deux", map[string]any{"private": true}, al).Expect(t, http.StatusOK)
		}, func(l []*models.Repository) bool {
			return byName(l, "alice/deux") == nil && byName(l, "alice/one") != nil
		})
		change("a collaborator added", alices, ca, func() {
			b.Do(http.MethodPut, "repos/alice/deux/collaborators/carol", map[string]any{"permission": "write"}, al).
				Expect(t, http.StatusNoContent)
		}, func(l []*models.Repository) bool {
			r := byName(l, "alice/deux")
			return r != nil && r.Permissions.Pull && r.Permissions.Push && !r.Permissions.Admin
		})
		if _, l := list("user/repos", ca); byName(l, "alice/deux") == nil {
			t.Fatal("a collaboration is not among the collaborator's repositories")
		}

		// Callers who see different bytes never get each other's: the
		// collaborator and an outsider, anonymous and signed-in callers (an
		// address is shown to the latter), a site admin and a plain user,
		// the owner with a full and with a public-only token.
		publicOnly := apitest.TokenCred(a.Token(alice, "public-only", "read:repository", "read:user"))
		for i := 0; i < 2; i++ {
			_, collab := list(alices, ca)
			_, outsider := list(alices, bo)
			if byName(collab, "alice/deux") == nil || byName(outsider, "alice/deux") != nil {
				t.Fatalf("collaborator %d repositories, outsider %d", len(collab), len(outsider))
			}
			anon, _ := list(alices, nil)
			signed, _ := list(alices, bo)
			if bytes.Contains(anon.Body, []byte("alice@example.com")) || !bytes.Contains(signed.Body, []byte("alice@example.com")) {
				t.Fatalf("addresses: anonymous %s\nsigned in %s", anon.Body, signed.Body)
			}
			adm, admList := list(alices, admin)
			if bytes.Equal(adm.Body, signed.Body) || byName(admList, "alice/deux") == nil || !admList[0].Permissions.Admin {
				t.Fatalf("an admin's list is a plain user's:\n%s\n%s", adm.Body, signed.Body)
			}
			_, own := list(alices, al)
			_, pub := list(alices, publicOnly)
			if byName(own, "alice/deux") == nil || byName(pub, "alice/deux") != nil {
				t.Fatalf("owner %d repositories, public-only token %d", len(own), len(pub))
			}
		}

		change("a deleted repository", alices, al, func() {
			b.Do(http.MethodDelete, "repos/alice/deux", nil, al).Expect(t, http.StatusNoContent)
		}, func(l []*models.Repository) bool {
			return byName(l, "alice/deux") == nil && byName(l, "alice/one") != nil
		})

		// An organization: a public and a private repository, a team that
		// has all of them, a team with chosen ones.
		roCreateOrg(t, a, al, map[string]any{"username": "acme"})
		a.Do(http.MethodPost, "orgs/acme/repos", map[string]any{"name": "open"}, al).Expect(t, http.StatusCreated)
		a.Do(http.MethodPost, "orgs/acme/repos", map[string]any{"name": "secret", "private": true}, al).Expect(t, http.StatusCreated)
		all := tmTeam(t, a, al, "acme", map[string]any{"name": "all", "permission": "write", "includes_all_repositories": true,
			"units_map": tmAllUnits("write")})
		few := tmTeam(t, a, al, "acme", map[string]any{"name": "few", "permission": "read", "units_map": tmAllUnits("read")}, "erin")
		const acmes = "orgs/acme/repos"
		apitest.ServedFromMemory(t, a, b, acmes, al, func() {
			b.Do(http.MethodPatch, "repos/acme/open", map[string]any{"description": "opened"}, al).Expect(t, http.StatusOK)
		})
		change("a team member", acmes, da, func() {
			b.Do(http.MethodPut, fmt.Sprintf("teams/%d/members/dave", all.ID), nil, al).Expect(t, http.StatusNoContent)
		}, func(l []*models.Repository) bool {
			r := byName(l, "acme/secret")
			return r != nil && r.Permissions.Push && !r.Permissions.Admin
		})
		change("a team repository", acmes, er, func() {
			b.Do(http.MethodPut, fmt.Sprintf("teams/%d/repos/acme/secret", few.ID), nil, al).Expect(t, http.StatusNoContent)
		}, func(l []*models.Repository) bool {
			r := byName(l, "acme/secret")
			return r != nil && r.Permissions.Pull && !r.Permissions.Push
		})
		change("an organization member removed", "user/repos", da, func() {
			b.Do(http.MethodDelete, "orgs/acme/members/dave", nil, al).Expect(t, http.StatusNoContent)
		}, func(l []*models.Repository) bool {
			return byName(l, "acme/open") == nil && byName(l, "acme/secret") == nil
		})

		// An owner made private leaves the searches of outsiders.
		const search = "repos/search?q=open&limit=10"
		change("an owner made private", search, bo, func() {
			b.Do(http.MethodPatch, "orgs/acme", map[string]any{"visibility": "private"}, al).Expect(t, http.StatusOK)
		}, func(l []*models.Repository) bool { return byName(l, "acme/open") == nil })
		if _, l := list(search, er); byName(l, "acme/open") == nil {
			t.Fatal("a private organization's repository left its member's search")
		}

		// The total and the links of a page, from memory too.
		for i := 0; i < 3; i++ {
			b.Do(http.MethodPost, "user/repos", map[string]any{"name": fmt.Sprint("r", i)}, al).Expect(t, http.StatusCreated)
		}
		page := func() (string, string) {
			r, _ := list("users/alice/repos?limit=1&page=2", nil)
			return r.Header.Get("X-Total-Count"), r.Header.Get("Link")
		}
		apitest.Eventually(t, within, "new repositories", func() (bool, string) {
			total, _ := page()
			return total == "4", "X-Total-Count " + total + ", want 4"
		})
		total, link := page()
		if total2, link2 := page(); total2 != total || link2 != link || !strings.Contains(link, "page=4") {
			t.Fatalf("total %q %q, link %q %q", total, total2, link, link2)
		}
		r := a.Do(http.MethodGet, "users/alice/repos?page=2&limit=1&extra=x", nil, nil).Expect(t, http.StatusOK)
		if !strings.Contains(r.Header.Get("Link"), "extra=x") {
			t.Fatalf("the link of another query is that of the first: %q", r.Header.Get("Link"))
		}
	})
}
