package sqlstore_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"repohost/store"
)

// TestRepoIssueTotals: the sums of issue counters kept per class of
// repositories (migration 33) follow issue creates, state changes, a
// repository made private, its issues turned off, its owner's visibility
// and its deletion; a damaged sum is reported by CheckCounters and set
// right by RecountCounters.
func TestRepoIssueTotals(t *testing.T) {
	t.Parallel()
	db, _ := open(t)
	ctx := context.Background()
	check := func(step string) {
		t.Helper()
		bad, err := db.Issues().CheckCounters(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if bad["repo_issue_totals"] != 0 {
			t.Fatalf("%s: %d sums disagree with the repositories", step, bad["repo_issue_totals"])
		}
	}
	u := mustCreateUser(t, db, newUser("totals"))
	var repos []*store.Repository
	for i := range 3 {
		r := &store.Repository{OwnerID: u.ID, Name: fmt.Sprint("r", i), HasIssues: true}
		if err := db.Repos().Create(ctx, r); err != nil {
			t.Fatal(err)
		}
		repos = append(repos, r)
	}
	now := time.Now().UTC()
	for i := range 7 {
		r := repos[i%3]
		closed := i%2 == 1
		is := &store.Issue{RepoID: r.ID, PosterID: u.ID, Title: fmt.Sprint("issue ", i), IsClosed: closed, CreatedAt: now, UpdatedAt: now}
		var c int64
		if closed {
			c = 1
		}
		if err := db.WithTx(ctx, func(ctx context.Context) error { return db.Issues().CreateNumbered(ctx, is, 1, c) }); err != nil {
			t.Fatal(err)
		}
	}
	check("after creates")
	if err := db.Issues().AdjustRepoCounts(ctx, repos[0].ID, 0, 1); err != nil {
		t.Fatal(err)
	}
	check("after a close")
	for _, change := range []struct {
		step string
		edit func(r *store.Repository)
	}{
		{"made private", func(r *store.Repository) { r.IsPrivate = true }},
		{"issues off", func(r *store.Repository) { r.HasIssues = false }},
		{"issues on again", func(r *store.Repository) { r.HasIssues = true }},
		{"external tracker", func(r *store.Repository) { r.ExternalTrackerURL = "https://tracker.example/" }},
	} {
		r, err := db.Repos().FindByID(ctx, repos[1].ID)
		if err != nil {
			t.Fatal(err)
		}
		change.edit(r)
		if err := db.Repos().Update(ctx, r); err != nil {
			t.Fatal(err)
		}
		check(change.step)
	}
	if err := db.ExecRaw(ctx, "UPDATE users SET visibility = ? WHERE id = ?", store.VisibilityLimited, u.ID); err != nil {
		t.Fatal(err)
	}
	check("owner limited")
	if err := db.Repos().Delete(ctx, repos[2].ID); err != nil {
		t.Fatal(err)
	}
	check("after a delete")
	if err := db.ExecRaw(ctx, "UPDATE repo_issue_totals SET num_issues = num_issues + 5 WHERE stripe = 3"); err != nil {
		t.Fatal(err)
	}
	bad, err := db.Issues().CheckCounters(ctx)
	if err != nil || bad["repo_issue_totals"] == 0 {
		t.Fatalf("damaged sums not reported: %v, %v", bad, err)
	}
	fixed, err := db.Issues().RecountCounters(ctx)
	if err != nil || fixed["repo_issue_totals"] == 0 {
		t.Fatalf("recount: %v, %v", fixed, err)
	}
	check("after the recount")
}
