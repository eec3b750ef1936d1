package sqlstore_test

import (
	"context"
	"fmt"
	"testing"

	"repohost/store"
	"repohost/store/secretbox"
	"repohost/store/sqlstore"
)

// TestActionSecretsAndReseal: secrets and variables resolve the
// repository's over its owner's; Reseal moves every sealed value to the
// next key at once, and a value that does not open refuses it whole.
func TestActionSecretsAndReseal(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	_, dsn := open(t)
	keyed := keyedDB(t, dsn)
	db := keyed("first")
	owner, repo := ownedRepo(t, db)
	put := func(sc store.ActionScope, name, value string) {
		t.Helper()
		if _, err := db.ActionSecrets().Put(ctx, &store.ActionSecret{Scope: sc, Name: name}, value); err != nil {
			t.Fatal(err)
		}
		if err := db.ActionVariables().Create(ctx, &store.ActionVariable{Scope: sc, Name: name, Data: value}); err != nil {
			t.Fatal(err)
		}
	}
	put(store.ActionScope{OwnerID: owner.ID}, "SHARED", "owner")
	put(store.ActionScope{OwnerID: owner.ID}, "OWNER_ONLY", "o")
	put(store.ActionScope{RepoID: repo.ID}, "SHARED", "repo")
	if err := db.ActionVariables().Create(ctx, &store.ActionVariable{Scope: store.ActionScope{RepoID: repo.ID}, Name: "SHARED"}); err == nil {
		t.Fatal("a second variable of one name in one scope")
	}
	want := "map[OWNER_ONLY:o SHARED:repo]"
	check := func(db *sqlstore.DB) {
		t.Helper()
		secrets, err := db.ActionSecrets().ForRepo(ctx, owner.ID, repo.ID)
		if err != nil {
			t.Fatal(err)
		}
		vars, err := db.ActionVariables().ForRepo(ctx, owner.ID, repo.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got := fmt.Sprint(secrets); got != want {
			t.Fatalf("secrets %s, want %s", got, want)
		}
		if got := fmt.Sprint(vars); got != want {
			t.Fatalf("variables %s, want %s", got, want)
		}
	}
	check(db)
	// A migration under way keeps its source's secret sealed too (its
	// table is keyed by the repository).
	if err := db.Migrations().Create(ctx, &store.RepoMigration{RepoID: repo.ID, DoerID: owner.ID,
		CloneAddr: "https://example.com/a.git", AuthUsername: "u", AuthSecret: "source-token"}); err != nil {
		t.Fatal(err)
	}

	next, _ := secretbox.New("second")
	count, err := db.Reseal(ctx, next)
	if err != nil || count["action_secrets.data"] != 3 || count["repo_migrations.auth_secret"] != 1 {
		t.Fatalf("reseal: %v %v", count, err)
	}
	check(keyed("second"))
	if m, err := keyed("second").Migrations().Find(ctx, repo.ID); err != nil || m.AuthSecret != "source-token" {
		t.Fatalf("the migration's secret under the next key: %+v, %v", m, err)
	}
	if secrets, _ := keyed("first").ActionSecrets().ForRepo(ctx, owner.ID, repo.ID); len(secrets) != 0 {
		t.Fatalf("the old key opens %v", secrets)
	}
	// From a key that opens nothing: refused, nothing moves.
	third, _ := secretbox.New("third")
	if _, err := keyed("wrong").Reseal(ctx, third); err == nil {
		t.Fatal("reseal with a wrong current key")
	}
	check(keyed("second"))
}
