package sqlstore_test

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"testing"

	"repohost/store/sqlstore"
	"repohost/store/sqlstore/sqltest"
)

// TestMigrateV36KeepsLabelsAndTheirLinks: a database at version 35
// holding labels linked to issues comes out of migration 36 with every
// label (id, repository, name) and every issue's link as they were, the
// labels' id sequence still past its highest id, and labels that may now
// belong to an organization instead, one owner each, going with it.
func TestMigrateV36KeepsLabelsAndTheirLinks(t *testing.T) {
	ctx := context.Background()
	d, err := sqlstore.Open(sqltest.DSN(t, ""), sqlstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if _, err := d.MigrateUpTo(ctx, 35); err != nil {
		t.Fatal(err)
	}
	pool, err := d.SQL()
	if err != nil {
		t.Fatal(err)
	}
	exec := func(q string, args ...any) error {
		if d.UsesPostgres() {
			q = dollarPlaceholders(q)
		}
		_, err := pool.Exec(q, args...)
		return err
	}
	must := func(q string, args ...any) {
		t.Helper()
		if err := exec(q, args...); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	must(`INSERT INTO users (id, name, lower_name, type) VALUES (1, 'alice', 'alice', 0), (2, 'acme', 'acme', 1)`)
	must(`INSERT INTO repositories (id, owner_id, name, lower_name) VALUES (10, 1, 'one', 'one'), (11, 2, 'two', 'two')`)
	must(`INSERT INTO issues (id, repo_id, number, poster_id, created_at) VALUES (100, 10, 1, 1, CURRENT_TIMESTAMP), (101, 10, 2, 1, CURRENT_TIMESTAMP), (102, 11, 1, 1, CURRENT_TIMESTAMP)`)
	must(`INSERT INTO labels (id, repo_id, name, created_at, updated_at) VALUES (3, 10, 'bug', CURRENT_TIMESTAMP, CURRENT_TIMESTAMP),
		(7, 10, 'feature', CURRENT_TIMESTAMP, CURRENT_TIMESTAMP), (12, 11, 'bug', CURRENT_TIMESTAMP, CURRENT_TIMESTAMP),
		(40, 11, 'gone', CURRENT_TIMESTAMP, CURRENT_TIMESTAMP)`)
	must(`DELETE FROM labels WHERE id = 40`)
	must(`INSERT INTO issue_labels (issue_id, label_id, issue_created_at) VALUES (100, 3, CURRENT_TIMESTAMP), (100, 7, CURRENT_TIMESTAMP),
		(101, 3, CURRENT_TIMESTAMP), (102, 12, CURRENT_TIMESTAMP)`)
	if d.UsesPostgres() {
		must(`SELECT setval('labels_id_seq', 40)`)
	}

	snapshot := func() (labels, links []string) {
		t.Helper()
		labels = query(t, pool, `SELECT id, repo_id, name FROM labels ORDER BY id`)
		links = query(t, pool, `SELECT issue_id, label_id FROM issue_labels ORDER BY issue_id, label_id`)
		return labels, links
	}
	labelsBefore, linksBefore := snapshot()
	if len(labelsBefore) != 3 || len(linksBefore) != 4 {
		t.Fatalf("fixture: labels %v, links %v", labelsBefore, linksBefore)
	}
	if n, err := d.MigrateUpTo(ctx, 36); err != nil || n != 1 {
		t.Fatalf("migration 36: %d steps, %v", n, err)
	}
	labelsAfter, linksAfter := snapshot()
	if !slices.Equal(labelsBefore, labelsAfter) {
		t.Errorf("labels before %v, after %v", labelsBefore, labelsAfter)
	}
	if !slices.Equal(linksBefore, linksAfter) {
		t.Errorf("links before %v, after %v", linksBefore, linksAfter)
	}

	// An organization's label: no repository. A label of no owner or of
	// both is refused.
	must(`INSERT INTO labels (org_id, name, created_at, updated_at) VALUES (2, 'org-wide', CURRENT_TIMESTAMP, CURRENT_TIMESTAMP)`)
	if err := exec(`INSERT INTO labels (name) VALUES ('orphan')`); err == nil {
		t.Error("a label of no owner was stored")
	}
	if err := exec(`INSERT INTO labels (repo_id, org_id, name) VALUES (10, 2, 'both')`); err == nil {
		t.Error("a label of a repository and an organization was stored")
	}
	var id int64
	if err := pool.QueryRow(`SELECT id FROM labels WHERE org_id = 2`).Scan(&id); err != nil {
		t.Fatal(err)
	}
	if id <= 40 {
		t.Errorf("the new label's id %d reuses an id at or below the highest one given before (40)", id)
	}
	must(`INSERT INTO issue_labels (issue_id, label_id, issue_created_at) VALUES (102, ?, CURRENT_TIMESTAMP)`, id)

	// Deleting the organization takes its labels and their links; the
	// repositories' labels and links stay.
	must(`DELETE FROM repositories WHERE id = 11`)
	must(`DELETE FROM users WHERE id = 2`)
	if got := query(t, pool, `SELECT id, repo_id, name FROM labels ORDER BY id`); !slices.Equal(got, labelsBefore[:2]) {
		t.Errorf("labels after deleting the organization: %v", got)
	}
	if got := query(t, pool, `SELECT issue_id, label_id FROM issue_labels ORDER BY issue_id, label_id`); !slices.Equal(got, linksBefore[:3]) {
		t.Errorf("links after deleting the organization: %v", got)
	}

	// The rest of the migrations still apply on top.
	if _, err := d.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
}

// query returns each row of q as its columns joined by spaces.
func query(t *testing.T, pool *sql.DB, q string) []string {
	t.Helper()
	rows, err := pool.Query(q)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	var out []string
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		s := ""
		for i, v := range vals {
			if i > 0 {
				s += " "
			}
			if b, ok := v.([]byte); ok {
				v = string(b)
			}
			s += fmt.Sprint(v)
		}
		out = append(out, s)
	}
	return out
}

// dollarPlaceholders numbers the ? placeholders of q for PostgreSQL.
func dollarPlaceholders(q string) string {
	out, n := "", 0
	for _, c := range q {
		if c == '?' {
			n++
			out += fmt.Sprintf("$%d", n)
			continue
		}
		out += string(c)
	}
	return out
}
