package sqlstore_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"repohost/store"
)

// TestIssueAudience: the poster, the repository's watchers and those who
// subscribed to the issue, less those who unsubscribed, with the issue's
// repository and kind; a missing issue is ErrNotFound.
func TestIssueAudience(t *testing.T) {
	t.Parallel()
	db, _ := open(t)
	ctx := context.Background()
	owner, repo := ownedRepo(t, db)
	carol, dave, erin := mustCreateUser(t, db, newUser("carol")), mustCreateUser(t, db, newUser("dave")), mustCreateUser(t, db, newUser("erin"))
	is := &store.Issue{RepoID: repo.ID, Index: 1, PosterID: owner.ID, Title: "t", IsPull: true,
		CreatedAt: time.Now().UTC(), UpdatedAt: time.Now().UTC()}
	if err := db.Issues().Create(ctx, is); err != nil {
		t.Fatal(err)
	}
	for _, u := range []*store.User{carol, dave} {
		if _, err := db.Watches().Watch(ctx, u.ID, repo.ID); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Watches().SetIssueWatch(ctx, dave.ID, is.ID, false); err != nil {
		t.Fatal(err)
	}
	if err := db.Watches().SetIssueWatch(ctx, erin.ID, is.ID, true); err != nil {
		t.Fatal(err)
	}
	a, err := db.Watches().IssueAudience(ctx, is.ID)
	if err != nil {
		t.Fatal(err)
	}
	want := []int64{owner.ID, carol.ID, erin.ID}
	slices.Sort(want)
	if a.RepoID != repo.ID || !a.IsPull || !slices.Equal(a.UserIDs, want) {
		t.Errorf("audience %+v, want repository %d, a pull request, users %v", a, repo.ID, want)
	}
	if _, err := db.Watches().IssueAudience(ctx, is.ID+1000); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("audience of a missing issue: %v, want ErrNotFound", err)
	}
}
