package apitest_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"repohost/apitest"
	"repohost/models"
	"repohost/store/secretbox"
)

// TestWebhookAuthorizationHeaderSealed: a hook's authorization header is
// kept sealed with the instance key in every scope (a default hook's copy
// in a new repository too), is sent in clear to the receiver, and is read
// back over the API only masked.
func TestWebhookAuthorizationHeaderSealed(t *testing.T) {
	t.Parallel()
	e := hookEnv(t)
	alice := e.CreateUser("alice", false)
	a, adm := apitest.Basic(alice), apitest.Basic(e.Admin)
	roCreateRepo(t, e, a, map[string]any{"name": "pub"})
	roCreateOrg(t, e, a, map[string]any{"username": "acme"})
	rc := newReceiver(t)

	withAuth := func(value string, events ...string) map[string]any {
		b := giteaHook(rc.URL, events...)
		b["authorization_header"] = value
		return b
	}
	repoHook := mkHook(t, e, a, "repos/alice/pub/hooks", withAuth("Bearer repo-plain-token", "issues"))
	mkHook(t, e, a, "orgs/acme/hooks", withAuth("Bearer org-plain-token", "push"))
	mkHook(t, e, a, "user/hooks", withAuth("Bearer user-plain-token", "push"))
	sys := withAuth("Bearer system-plain-token", "push")
	sys["config"].(map[string]string)["is_system_webhook"] = "true"
	mkHook(t, e, adm, "admin/hooks", sys)
	mkHook(t, e, adm, "admin/hooks", withAuth("Bearer default-plain-token", "push"))
	// Copied into the repository created now, in the creating transaction.
	roCreateRepo(t, e, a, map[string]any{"name": "later"})

	type row struct {
		ID     int64
		RepoID int64
		Value  string
	}
	columns := func() []row {
		t.Helper()
		pool, err := e.DB.SQL()
		if err != nil {
			t.Fatal(err)
		}
		rows, err := pool.Query(`SELECT id, repo_id, authorization_header FROM webhooks ORDER BY id`)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		var out []row
		for rows.Next() {
			var r row
			if err := rows.Scan(&r.ID, &r.RepoID, &r.Value); err != nil {
				t.Fatal(err)
			}
			out = append(out, r)
		}
		return out
	}
	stored := columns()
	if len(stored) != 6 {
		t.Fatalf("%d webhook rows, want 6 (five created, one default copied)", len(stored))
	}
	seen := map[string]bool{}
	for _, r := range stored {
		if !secretbox.IsSealed(r.Value) || strings.Contains(r.Value, "plain-token") || strings.Contains(r.Value, "Bearer") {
			t.Errorf("hook %d keeps its authorization header as %q, want it sealed", r.ID, r.Value)
		}
		if seen[r.Value] {
			t.Errorf("hook %d: the same sealed value twice (the nonce is not fresh)", r.ID)
		}
		seen[r.Value] = true
	}

	// Delivered in clear: the server opens what it stored.
	isCreate(t, e, "alice/pub", a, map[string]any{"title": "sealed"})
	calls := rc.waitFor(t, 1, 15*time.Second)
	if got := calls[0].Header.Get("Authorization"); got != "Bearer repo-plain-token" {
		t.Errorf("receiver got Authorization %q", got)
	}

	// Read back masked; an edit seals the new value afresh.
	path := fmt.Sprintf("repos/alice/pub/hooks/%d", repoHook.ID)
	var h models.Hook
	r := e.Do("PATCH", path, map[string]any{"authorization_header": "token edited-plain-token"}, a).Expect(t, http.StatusOK)
	r.JSON(t, &h)
	if h.AuthorizationHeader != "token ********" || strings.Contains(string(r.Body), "edited-plain-token") {
		t.Errorf("edited hook shows %q", h.AuthorizationHeader)
	}
	for _, row := range columns() {
		if row.ID != repoHook.ID {
			continue
		}
		if !secretbox.IsSealed(row.Value) || strings.Contains(row.Value, "edited-plain-token") || row.Value == stored[0].Value {
			t.Errorf("edited hook keeps %q", row.Value)
		}
	}
	e.Do("GET", path, nil, a).Expect(t, http.StatusOK).JSON(t, &h)
	if h.AuthorizationHeader != "token ********" {
		t.Errorf("hook reads back %q", h.AuthorizationHeader)
	}
}
