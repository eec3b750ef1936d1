package sqlstore_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"repohost/store"
)

// TestLabelFilterPages reads every page of label-filtered lists (one label,
// two labels, with a state), forwards and from the end, and holds each page
// and the total to what filtering all the issues in Go gives: the pages are
// read from the label's links (migrateV16), whose copy of each issue's
// creation time must order them as the issues do, ties broken by id.
func TestLabelFilterPages(t *testing.T) {
	t.Parallel()
	db, _ := open(t)
	ctx := context.Background()
	owner := mustCreateUser(t, db, newUser("owner"))
	r := &store.Repository{OwnerID: owner.ID, Name: "r", HasIssues: true}
	if err := db.Repos().Create(ctx, r); err != nil {
		t.Fatal(err)
	}
	bug, ui := &store.Label{RepoID: r.ID, Name: "bug", Color: "#ff0000"}, &store.Label{RepoID: r.ID, Name: "ui", Color: "#00ff00"}
	for _, l := range []*store.Label{bug, ui} {
		if err := db.Labels().Create(ctx, l); err != nil {
			t.Fatal(err)
		}
	}
	base := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	var all []*store.Issue
	labels := map[int64][]int64{}
	for i := 1; i <= 37; i++ {
		// Pairs of issues share a creation time: the id breaks the tie.
		at := base.Add(time.Duration(i/2) * time.Hour)
		is := &store.Issue{RepoID: r.ID, Index: int64(i), PosterID: owner.ID, Title: fmt.Sprint(i), IsClosed: i%3 == 0,
			CreatedAt: at, UpdatedAt: at}
		if err := db.Issues().Create(ctx, is); err != nil {
			t.Fatal(err)
		}
		var ls []int64
		if i%2 == 0 || i%5 == 0 {
			ls = append(ls, bug.ID)
		}
		if i%3 != 1 {
			ls = append(ls, ui.ID)
		}
		if err := db.Labels().AddToIssue(ctx, is.ID, ls); err != nil {
			t.Fatal(err)
		}
		labels[is.ID] = ls
		all = append(all, is)
	}
	slices.SortFunc(all, func(a, b *store.Issue) int {
		if c := b.CreatedAt.Compare(a.CreatedAt); c != 0 {
			return c
		}
		return int(b.ID - a.ID)
	})
	openState, closed := false, true
	for _, c := range []struct {
		name   string
		state  *bool
		labels [][]int64
	}{
		{"bug", nil, [][]int64{{bug.ID}}},
		{"bug, open", &openState, [][]int64{{bug.ID}}},
		{"ui, closed", &closed, [][]int64{{ui.ID}}},
		{"bug and ui, open", &openState, [][]int64{{bug.ID}, {ui.ID}}},
	} {
		var want []int64
		for _, is := range all {
			if c.state != nil && is.IsClosed != *c.state {
				continue
			}
			keep := true
			for _, g := range c.labels {
				keep = keep && slices.ContainsFunc(g, func(id int64) bool { return slices.Contains(labels[is.ID], id) })
			}
			if keep {
				want = append(want, is.ID)
			}
		}
		var got []int64
		for off := 0; off < len(want)+4; off += 4 {
			page, total, err := db.Issues().List(ctx, store.IssueFilter{RepoID: r.ID, IsClosed: c.state, LabelIDs: c.labels},
				store.Page{Offset: off, Limit: 4})
			if err != nil {
				t.Fatal(err)
			}
			if total != int64(len(want)) {
				t.Errorf("%s: total %d, want %d", c.name, total, len(want))
			}
			for _, is := range page {
				got = append(got, is.ID)
			}
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s: pages %v, want %v", c.name, got, want)
		}
	}
}
