package sqlstore_test

import (
	"context"
	"strings"
	"testing"

	"repohost/store"
	"repohost/store/secretbox"
	"repohost/store/sqlstore"
)

// TestMigrateV14SealsAuthorizationHeaders: rows an older version kept in
// clear are sealed by migration 14 with the instance key, read back in
// clear through the store, and a database holding such rows is not
// migrated without a key.
func TestMigrateV14SealsAuthorizationHeaders(t *testing.T) {
	ctx := context.Background()
	_, dsn := open(t)
	box, err := secretbox.New("migration test key")
	if err != nil {
		t.Fatal(err)
	}
	keyed, err := sqlstore.Open(dsn, sqlstore.Options{Secrets: box})
	if err != nil {
		t.Fatal(err)
	}
	defer keyed.Close()
	pool, err := keyed.SQL()
	if err != nil {
		t.Fatal(err)
	}
	// The state before version 14: headers in clear, 14 not applied.
	for _, q := range []string{
		`INSERT INTO webhooks (repo_id, owner_id, is_system, type, url, http_method, content_type, secret, meta, events, branch_filter, authorization_header, name, active, created_at, updated_at)
			VALUES (0, 0, false, 'gitea', 'http://example.com/a', 'POST', 'json', '', '{}', '["push"]', '', 'Bearer old-plain-a', '', true, CURRENT_TIMESTAMP, CURRENT_TIMESTAMP)`,
		`INSERT INTO webhooks (repo_id, owner_id, is_system, type, url, http_method, content_type, secret, meta, events, branch_filter, authorization_header, name, active, created_at, updated_at)
			VALUES (0, 0, true, 'gitea', 'http://example.com/b', 'POST', 'json', '', '{}', '["push"]', '', '', '', true, CURRENT_TIMESTAMP, CURRENT_TIMESTAMP)`,
		`DELETE FROM schema_migrations WHERE version = 14`,
	} {
		if _, err := pool.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}

	// Without a key the step fails and leaves the rows as they were.
	bare, err := sqlstore.Open(dsn, sqlstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer bare.Close()
	if _, err := bare.Migrate(ctx); err == nil || !strings.Contains(err.Error(), "secret key") {
		t.Fatalf("migrate without a key: %v, want an error naming the secret key", err)
	}

	n, err := keyed.Migrate(ctx)
	if err != nil || n != 1 {
		t.Fatalf("migrate with the key: %d steps, %v", n, err)
	}
	var values []string
	rows, err := pool.Query(`SELECT authorization_header FROM webhooks ORDER BY id`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var v string
		rows.Scan(&v)
		values = append(values, v)
	}
	rows.Close()
	if len(values) != 2 || !secretbox.IsSealed(values[0]) || strings.Contains(values[0], "old-plain") || values[1] != "" {
		t.Fatalf("columns after migration 14: %q", values)
	}
	hooks, _, err := keyed.Hooks().List(ctx, store.HookFilter{SiteWide: true}, store.Page{Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	if len(hooks) != 2 || hooks[0].AuthorizationHeader != "Bearer old-plain-a" || hooks[1].AuthorizationHeader != "" {
		t.Errorf("hooks read back: %+v", hooks)
	}
	// Another key cannot open the header: the hook still reads (so its
	// repository's other hooks keep their events), marked unreadable and
	// with no header; a hook without a header is unaffected.
	other, _ := secretbox.New("another key")
	wrong, err := sqlstore.Open(dsn, sqlstore.Options{Secrets: other})
	if err != nil {
		t.Fatal(err)
	}
	defer wrong.Close()
	got, err := wrong.Hooks().Find(ctx, hooks[0].ID)
	if err != nil || !got.AuthorizationUnreadable || got.AuthorizationHeader != "" {
		t.Errorf("find under another key: %+v, %v; want the hook marked unreadable without its header", got, err)
	}
	if got, err := wrong.Hooks().Find(ctx, hooks[1].ID); err != nil || got.AuthorizationUnreadable {
		t.Errorf("a hook without a header, under another key: %+v, %v", got, err)
	}
	// A store without a key refuses to write a header it cannot seal.
	h := &store.Hook{Type: "gitea", URL: "http://example.com/c", HTTPMethod: "POST", ContentType: "json", Events: `["push"]`, Meta: "{}",
		AuthorizationHeader: "Bearer x"}
	if err := bare.Hooks().Create(ctx, h); err == nil {
		t.Error("a store without a key wrote an authorization header")
	}
	if h.AuthorizationHeader != "Bearer x" {
		t.Errorf("the caller's hook was left with %q", h.AuthorizationHeader)
	}
}
