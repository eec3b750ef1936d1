package apitest_test

import (
	"fmt"
	"net/http"
	"strconv"
	"testing"
	"time"

	"repohost/apitest"
)

// TestCredentialChangesTakeEffect checks that remembered credentials and
// rows never outlive a change: after a password change, a disabled account,
// a revoked token, a repository made private or a new issue, the next
// request of the server that made the change, and within a second any other
// server on the same database, answers as the change says, however often
// the old state was served before (a Basic sign-in is remembered after its
// first bcrypt check; tokens, users and repositories are served from memory
// for a moment). The servers run with the cache `repohost serve` has.
func TestCredentialChangesTakeEffect(t *testing.T) {
	t.Parallel()
	// a serves the requests under test; b makes the changes.
	apitest.CachedServers(t, func(t *testing.T, a, b *apitest.Env, within time.Duration) {
		alice := a.CreateUser("alice", false)
		admin := apitest.Basic(a.Admin)
		eventually := func(what string, ok func() (bool, string)) {
			t.Helper()
			apitest.Eventually(t, within, what, ok)
		}
		status := func(path string, cred apitest.Cred, want int) func() (bool, string) {
			return func() (bool, string) {
				got := a.Do(http.MethodGet, path, nil, cred).Status
				return got == want, fmt.Sprintf("GET %s answered %d, want %d", path, got, want)
			}
		}
		expect := func(what string, cred apitest.Cred, want int) {
			t.Helper()
			eventually(what, status("user", cred, want))
		}
		edit := func(fields map[string]any) {
			t.Helper()
			body := map[string]any{"login_name": "alice", "source_id": 0}
			for k, v := range fields {
				body[k] = v
			}
			b.Do(http.MethodPatch, "admin/users/alice", body, admin).Expect(t, http.StatusOK)
		}

		old := apitest.Basic(alice)
		for i := 0; i < 3; i++ {
			expect("before any change", old, http.StatusOK)
		}
		edit(map[string]any{"password": "a-brand-new-password"})
		expect("old password after the change", old, http.StatusUnauthorized)
		renewed := &apitest.Account{User: alice.User, Password: "a-brand-new-password"}
		current := apitest.Basic(renewed)
		expect("new password after the change", current, http.StatusOK)
		expect("new password, remembered", current, http.StatusOK)

		edit(map[string]any{"prohibit_login": true})
		expect("prohibited from signing in", current, http.StatusForbidden)
		edit(map[string]any{"prohibit_login": false})
		expect("allowed again", current, http.StatusOK)
		edit(map[string]any{"active": false})
		expect("deactivated", current, http.StatusForbidden)
		edit(map[string]any{"active": true, "must_change_password": true})
		expect("must change the password", current, http.StatusForbidden)
		edit(map[string]any{"must_change_password": false})
		expect("password change no longer required", current, http.StatusOK)

		token := a.Token(alice)
		for i := 0; i < 3; i++ {
			expect("token before revocation", apitest.TokenCred(token), http.StatusOK)
		}
		var tokens []struct {
			ID int64 `json:"id"`
		}
		b.Do(http.MethodGet, "users/alice/tokens", nil, current).Expect(t, http.StatusOK).JSON(t, &tokens)
		if len(tokens) != 1 {
			t.Fatalf("alice has %d tokens, want 1", len(tokens))
		}
		b.Do(http.MethodDelete, "users/alice/tokens/"+strconv.FormatInt(tokens[0].ID, 10), nil, current).Expect(t, http.StatusNoContent)
		expect("revoked token", apitest.TokenCred(token), http.StatusUnauthorized)

		// Rows served from memory: a repository seen by an outsider,
		// then made private; its issue count, then a new issue.
		bob := apitest.Basic(a.CreateUser("bob", false))
		b.Do(http.MethodPost, "user/repos", map[string]any{"name": "pub"}, current).Expect(t, http.StatusCreated)
		openIssues := func(want int64) func() (bool, string) {
			return func() (bool, string) {
				var r struct {
					OpenIssues int64 `json:"open_issues_count"`
				}
				a.Do(http.MethodGet, "repos/alice/pub", nil, bob).Expect(t, http.StatusOK).JSON(t, &r)
				return r.OpenIssues == want, fmt.Sprintf("open_issues_count %d, want %d", r.OpenIssues, want)
			}
		}
		for i := 0; i < 3; i++ {
			eventually("public repository", openIssues(0))
		}
		b.Do(http.MethodPost, "repos/alice/pub/issues", map[string]any{"title": "new"}, current).Expect(t, http.StatusCreated)
		eventually("issue count after a new issue", openIssues(1))
		b.Do(http.MethodPatch, "repos/alice/pub", map[string]any{"private": true}, current).Expect(t, http.StatusOK)
		eventually("repository made private, seen by an outsider", status("repos/alice/pub", bob, http.StatusNotFound))
		eventually("repository made private, seen by anonymous", status("repos/alice/pub", nil, http.StatusNotFound))

		b.Do(http.MethodDelete, "admin/users/alice?purge=true", nil, admin).Expect(t, http.StatusNoContent)
		expect("deleted account", current, http.StatusUnauthorized)
	})
}
