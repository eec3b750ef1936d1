package sqlstore_test

import (
	"context"
	"slices"
	"testing"

	"repohost/store/sqlstore"
	"repohost/store/sqlstore/sqltest"
)

// TestMigrateV42IssueClasses: migration 42 gives the issues already there
// their repository's class, and the triggers keep it: an inserted issue
// takes its repository's, a repository made private or public, its
// owner's visibility changed, its issue tracker turned off, or an issue
// moved to another repository re-class the issues at once.
func TestMigrateV42IssueClasses(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d, err := sqlstore.Open(sqltest.DSN(t, ""), sqlstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if _, err := d.MigrateUpTo(ctx, 41); err != nil {
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
	// Classes: 0 public repository of a public owner, 1 of a limited one,
	// 2 of a private one, 3 private repository, 4 issues off.
	must(`INSERT INTO users (id, name, lower_name, type, visibility) VALUES (1, 'pub', 'pub', 0, 0), (2, 'lim', 'lim', 1, 1), (3, 'hid', 'hid', 1, 2)`)
	must(`INSERT INTO repositories (id, owner_id, name, lower_name, is_private, has_issues) VALUES
		(10, 1, 'a', 'a', false, true), (11, 2, 'b', 'b', false, true), (12, 3, 'c', 'c', false, true),
		(13, 1, 'd', 'd', true, true), (14, 1, 'e', 'e', false, false)`)
	issue := func(id, repo int) {
		t.Helper()
		must(`INSERT INTO issues (id, repo_id, number, poster_id, created_at) VALUES (?, ?, ?, 1, CURRENT_TIMESTAMP)`, id, repo, id)
	}
	for i, repo := range []int{10, 11, 12, 13, 14} {
		issue(100+i, repo)
	}
	classes := func() []string { return query(t, pool, `SELECT repo_class FROM issues ORDER BY id`) }
	expect := func(step string, want ...string) {
		t.Helper()
		if got := classes(); !slices.Equal(got, want) {
			t.Fatalf("%s: classes %v, want %v", step, got, want)
		}
	}
	if _, err := d.MigrateUpTo(ctx, 42); err != nil {
		t.Fatal(err)
	}
	expect("backfill", "0", "1", "2", "3", "4")
	issue(105, 13)
	expect("insert", "0", "1", "2", "3", "4", "3")
	must(`UPDATE repositories SET is_private = true WHERE id = 10`)
	must(`UPDATE repositories SET is_private = false WHERE id = 13`)
	expect("repositories made private and public", "3", "1", "2", "0", "4", "0")
	must(`UPDATE users SET visibility = 2 WHERE id = 2`)
	must(`UPDATE users SET visibility = 0 WHERE id = 3`)
	expect("owners' visibility", "3", "2", "0", "0", "4", "0")
	must(`UPDATE repositories SET has_issues = true WHERE id = 14`)
	must(`UPDATE repositories SET external_tracker_url = 'https://example.com' WHERE id = 12`)
	expect("issue trackers", "3", "2", "4", "0", "0", "0")
	must(`UPDATE issues SET repo_id = 11 WHERE id = 100`)
	expect("issue moved", "2", "2", "4", "0", "0", "0")
}
