package sqlstore_test

import (
	"context"
	"testing"

	"repohost/store/sqlstore"
	"repohost/store/sqlstore/sqltest"
)

// TestMigrateV39OneTimelineIDSpace: events recorded before migration 39
// move above every comment id, keeping their order, and afterwards new
// comments and events, inserted in any interleaving, never share an id.
func TestMigrateV39OneTimelineIDSpace(t *testing.T) {
	ctx := context.Background()
	d, err := sqlstore.Open(sqltest.DSN(t, ""), sqlstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if _, err := d.MigrateUpTo(ctx, 37); err != nil {
		t.Fatal(err)
	}
	pool, err := d.SQL()
	if err != nil {
		t.Fatal(err)
	}
	must := func(q string, args ...any) {
		t.Helper()
		if d.UsesPostgres() {
			q = dollarPlaceholders(q)
		}
		if _, err := pool.Exec(q, args...); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	must(`INSERT INTO users (id, name, lower_name, type) VALUES (1, 'alice', 'alice', 0)`)
	must(`INSERT INTO repositories (id, owner_id, name, lower_name) VALUES (10, 1, 'one', 'one')`)
	must(`INSERT INTO issues (id, repo_id, number, poster_id, created_at) VALUES (100, 10, 1, 1, CURRENT_TIMESTAMP)`)
	comment := func() {
		t.Helper()
		must(`INSERT INTO comments (issue_id, repo_id, poster_id, body, created_at, updated_at) VALUES (100, 10, 1, 'c', CURRENT_TIMESTAMP, CURRENT_TIMESTAMP)`)
	}
	event := func() {
		t.Helper()
		must(`INSERT INTO issue_events (issue_id, repo_id, type, poster_id, created_at, updated_at) VALUES (100, 10, 'close', 1, CURRENT_TIMESTAMP, CURRENT_TIMESTAMP)`)
	}
	comment()
	comment()
	comment()
	event()
	event()
	before := query(t, pool, `SELECT id FROM issue_events ORDER BY id`)
	if len(before) != 2 || before[0] != "1" {
		t.Fatalf("fixture: events %v", before)
	}
	if _, err := d.MigrateUpTo(ctx, 39); err != nil {
		t.Fatal(err)
	}
	if got := query(t, pool, `SELECT id FROM issue_events ORDER BY id`); len(got) != 2 || got[0] != "4" || got[1] != "5" {
		t.Fatalf("events after the migration: %v", got)
	}
	comment()
	event()
	event()
	comment()
	ids := append(query(t, pool, `SELECT id FROM comments`), query(t, pool, `SELECT id FROM issue_events`)...)
	seen := map[string]bool{}
	for _, id := range ids {
		if seen[id] {
			t.Fatalf("id %s is both a comment's and an event's (ids %v)", id, ids)
		}
		seen[id] = true
	}
	if len(ids) != 9 {
		t.Fatalf("ids %v", ids)
	}
	if _, err := d.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
}
