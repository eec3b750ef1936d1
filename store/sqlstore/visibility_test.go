package sqlstore_test

import (
	"context"
	"testing"

	"repohost/store"
)

// TestOwnerVisibilityFollowsOwner: the copy of an owner's visibility that
// each repository carries (migration 17, kept by triggers) follows the
// owner through a visibility change, a transfer and a creation, so the
// lists built on it show each repository to exactly whom its owner allows.
func TestOwnerVisibilityFollowsOwner(t *testing.T) {
	t.Parallel()
	db, _ := open(t)
	ctx := context.Background()
	alice := mustCreateUser(t, db, newUser("alice"))
	bob := mustCreateUser(t, db, newUser("bob"))
	org := newUser("org")
	org.Type = store.UserTypeOrganization
	mustCreateUser(t, db, org)
	repo := &store.Repository{OwnerID: org.ID, Name: "r", LowerName: "r", HasIssues: true}
	if err := db.Repos().Create(ctx, repo); err != nil {
		t.Fatal(err)
	}

	// seen says whether viewer finds the repository in a search, and
	// checks the count agrees with the page.
	seen := func(viewer store.RepoViewer) bool {
		t.Helper()
		out, total, err := db.Repos().Search(ctx, store.RepoSearch{Viewer: viewer, OrderBy: "repositories.id ASC"},
			store.Page{Limit: 10})
		if err != nil {
			t.Fatal(err)
		}
		if int64(len(out)) != total {
			t.Fatalf("search for %+v: %d repositories on the page, total %d", viewer, len(out), total)
		}
		for _, r := range out {
			if r.ID == repo.ID {
				return true
			}
		}
		return false
	}
	setVisibility := func(u *store.User, v store.Visibility) {
		t.Helper()
		err := db.WithTx(ctx, func(ctx context.Context) error {
			row, err := db.Users().FindByIDForUpdate(ctx, u.ID)
			if err != nil {
				return err
			}
			row.Visibility = v
			return db.Users().Update(ctx, row)
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	anonymous, signedIn := store.RepoViewer{}, store.RepoViewer{UserID: bob.ID}
	check := func(step string, wantAnonymous, wantSignedIn bool) {
		t.Helper()
		if got := seen(anonymous); got != wantAnonymous {
			t.Errorf("%s: anonymous sees the repository: %v, want %v", step, got, wantAnonymous)
		}
		if got := seen(signedIn); got != wantSignedIn {
			t.Errorf("%s: a signed-in outsider sees the repository: %v, want %v", step, got, wantSignedIn)
		}
	}

	check("public organization", true, true)
	setVisibility(org, store.VisibilityPrivate)
	check("organization made private", false, false)
	setVisibility(org, store.VisibilityLimited)
	check("organization made limited", false, true)

	// A transfer to a private owner hides the repository.
	setVisibility(alice, store.VisibilityPrivate)
	err := db.WithTx(ctx, func(ctx context.Context) error {
		r, err := db.Repos().FindByIDForUpdate(ctx, repo.ID)
		if err != nil {
			return err
		}
		r.OwnerID = alice.ID
		return db.Repos().Update(ctx, r)
	})
	if err != nil {
		t.Fatal(err)
	}
	check("transferred to a private user", false, false)
	setVisibility(alice, store.VisibilityPublic)
	check("its new owner made public", true, true)

	// A repository created under a private owner starts hidden.
	setVisibility(org, store.VisibilityPrivate)
	repo = &store.Repository{OwnerID: org.ID, Name: "s", LowerName: "s"}
	if err := db.Repos().Create(ctx, repo); err != nil {
		t.Fatal(err)
	}
	check("created under a private organization", false, false)
}
