package sqlstore_test

import (
	"context"
	"fmt"
	"testing"

	"repohost/store"
)

// TestIssueSearchIndex: the index follows creates, edits and deletes of
// issues and comments through the database's triggers alone (the store
// code writes only the rows), a damaged index is reported by
// CheckSearchIndex, and Reindex repairs it.
func TestIssueSearchIndex(t *testing.T) {
	t.Parallel()
	db, _ := open(t)
	ctx := context.Background()
	u := mustCreateUser(t, db, newUser("alice"))
	r := &store.Repository{OwnerID: u.ID, Name: "r", HasIssues: true}
	if err := db.Repos().Create(ctx, r); err != nil {
		t.Fatal(err)
	}
	find := func(kw string) []int64 {
		t.Helper()
		list, total, err := db.Issues().List(ctx, store.IssueFilter{RepoID: r.ID, Keyword: kw}, store.Page{Limit: 50})
		if err != nil {
			t.Fatal(err)
		}
		nums := []int64{}
		for _, is := range list {
			nums = append(nums, is.Index)
		}
		if int64(len(nums)) != total {
			t.Errorf("q=%s: %d issues, total %d", kw, len(nums), total)
		}
		return nums
	}
	expect := func(kw string, want ...int64) {
		t.Helper()
		if got := find(kw); fmt.Sprint(got) != fmt.Sprint(append([]int64{}, want...)) {
			t.Errorf("q=%q: %v, want %v", kw, got, want)
		}
	}
	clean := func() {
		t.Helper()
		if bad, err := db.Issues().CheckSearchIndex(ctx); err != nil || bad != 0 {
			t.Errorf("index check: %d, %v", bad, err)
		}
	}
	var issues []*store.Issue
	for i, text := range [][2]string{{"Crash on start-up", "the daemon dies"}, {"Button colour", "Café menu, ünïcode"}, {"12 apples", ""}} {
		is := &store.Issue{RepoID: r.ID, Index: int64(i + 1), PosterID: u.ID, Title: text[0], Body: text[1]}
		if err := db.Issues().Create(ctx, is); err != nil {
			t.Fatal(err)
		}
		issues = append(issues, is)
	}
	c := &store.Comment{IssueID: issues[0].ID, PosterID: u.ID, Body: "reproduced with configuration.yaml"}
	if err := db.Comments().Create(ctx, c); err != nil {
		t.Fatal(err)
	}
	expect("crash", 1)
	expect("CRA", 1)           // a prefix, in any case
	expect("start up", 1)      // punctuation separates words
	expect("dies crash", 1)    // every word, in any field
	expect("crash button")     // not in one issue
	expect("café", 2)          // in the body
	expect("cafe")             // accents are kept, as on both databases
	expect("ÜNÏCODE menu", 2)  // folded to lower case
	expect("configuration", 1) // in a comment
	expect("#2", 2)            // a number
	expect("12", 3)            // a word and a number
	expect("#1", 1)            // a reference: the issue numbered 1, not the words "1…"
	expect("%")                // no word
	clean()

	// Edits and deletes are followed at once.
	issues[1].Title = "Button color"
	if err := db.Issues().Update(ctx, issues[1]); err != nil {
		t.Fatal(err)
	}
	expect("colour")
	expect("color", 2)
	c.Body = "no longer"
	if err := db.Comments().Update(ctx, c); err != nil {
		t.Fatal(err)
	}
	expect("configuration")
	expect("longer", 1)
	if err := db.Comments().Delete(ctx, c.ID); err != nil {
		t.Fatal(err)
	}
	expect("longer")
	clean()

	// Damage behind the triggers' back, then repair.
	if db.UsesPostgres() {
		if err := db.ExecRaw(ctx, `UPDATE issue_search SET document = to_tsvector('simple', 'stale')`); err != nil {
			t.Fatal(err)
		}
	} else {
		if err := db.ExecRaw(ctx, `INSERT INTO issues_fts (issues_fts, rowid, title, body) VALUES ('delete', ?, ?, ?)`,
			issues[0].ID, issues[0].Title, issues[0].Body); err != nil {
			t.Fatal(err)
		}
	}
	expect("crash")
	if bad, err := db.Issues().CheckSearchIndex(ctx); err != nil || bad == 0 {
		t.Errorf("damaged index: check %d, %v", bad, err)
	}
	if err := db.Issues().Reindex(ctx); err != nil {
		t.Fatal(err)
	}
	expect("crash", 1)
	clean()
}
