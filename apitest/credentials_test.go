package apitest_test

import (
	"net/http"
	"strconv"
	"testing"
	"time"

	"repohost/apitest"
)

// TestCredentialChangesTakeEffect checks that remembered credentials never
// outlive a change: after a password change, a disabled account or a revoked
// token, the next request of the server that made the change, and within a
// second any other server on the same database, answers as the change says,
// however often the old credentials were accepted before (a Basic sign-in is
// remembered after its first bcrypt check).
func TestCredentialChangesTakeEffect(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name   string
		twin   bool
		within time.Duration
	}{{"same server", false, 0}, {"another server on the same database", true, time.Second}} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			// a serves the requests under test; b makes the changes.
			a := apitest.New(t)
			b := a
			if c.twin {
				b = a.Twin(t)
			}
			alice := a.CreateUser("alice", false)
			admin := apitest.Basic(a.Admin)
			get := func(cred apitest.Cred) int { return a.Do(http.MethodGet, "user", nil, cred).Status }
			expect := func(what string, cred apitest.Cred, want int) {
				t.Helper()
				deadline := time.Now().Add(c.within)
				for {
					got := get(cred)
					if got == want {
						return
					}
					if !time.Now().Before(deadline) {
						t.Fatalf("%s: GET /user answered %d, want %d (within %v)", what, got, want, c.within)
					}
					time.Sleep(150 * time.Millisecond)
				}
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

			b.Do(http.MethodDelete, "admin/users/alice", nil, admin).Expect(t, http.StatusNoContent)
			expect("deleted account", current, http.StatusUnauthorized)
		})
	}
}
