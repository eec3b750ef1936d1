package sqlstore_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"repohost/store"
	"repohost/store/secretbox"
	"repohost/store/sqlstore"
)

// TestMirrorCredentialsSealed: the credentials of pull and push mirrors
// are stored sealed, read back in clear, carried to the next key by
// Reseal; due mirrors come in order of their time.
func TestMirrorCredentialsSealed(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	_, dsn := open(t)
	keyed := keyedDB(t, dsn)
	db := keyed("first")
	_, repo := ownedRepo(t, db)
	now := time.Now().UTC().Truncate(time.Second)
	past := now.Add(-time.Minute)
	if err := db.Mirrors().Create(ctx, &store.Mirror{RepoID: repo.ID, RemoteAddress: "https://example.com/a.git",
		AuthUsername: "u", AuthSecret: "pull-secret", EnablePrune: true, NextUpdate: &past}); err != nil {
		t.Fatal(err)
	}
	pm := &store.PushMirror{RepoID: repo.ID, RemoteName: "remote_mirror_x", RemoteAddress: "https://example.com/b.git",
		AuthUsername: "v", AuthSecret: "push-secret", Interval: time.Hour, NextUpdate: &past}
	if err := db.Mirrors().CreatePush(ctx, pm); err != nil {
		t.Fatal(err)
	}
	pool, err := db.SQL()
	if err != nil {
		t.Fatal(err)
	}
	raw := func(q string) string {
		t.Helper()
		var v string
		if err := pool.QueryRow(q).Scan(&v); err != nil {
			t.Fatal(err)
		}
		return v
	}
	for _, q := range []string{`SELECT auth_secret FROM repo_mirrors`, `SELECT auth_secret FROM push_mirrors`} {
		if v := raw(q); strings.Contains(v, "secret") || !secretbox.IsSealed(v) {
			t.Fatalf("%s: %q is not sealed", q, v)
		}
	}
	check := func(db *sqlstore.DB) {
		t.Helper()
		m, err := db.Mirrors().Find(ctx, repo.ID)
		if err != nil || m.AuthSecret != "pull-secret" || m.AuthUsername != "u" {
			t.Fatalf("pull mirror %+v, %v", m, err)
		}
		p, err := db.Mirrors().FindPush(ctx, repo.ID, "remote_mirror_x")
		if err != nil || p.AuthSecret != "push-secret" || p.Interval != time.Hour {
			t.Fatalf("push mirror %+v, %v", p, err)
		}
	}
	check(db)
	if ids, err := db.Mirrors().Due(ctx, now, 10); err != nil || len(ids) != 1 || ids[0] != repo.ID {
		t.Fatalf("due %v, %v", ids, err)
	}
	if due, err := db.Mirrors().DuePush(ctx, now, 10); err != nil || len(due) != 1 || due[0].AuthSecret != "push-secret" {
		t.Fatalf("due push %v, %v", due, err)
	}
	later := now.Add(time.Hour)
	if err := db.Mirrors().Synced(ctx, repo.ID, now, &later); err != nil {
		t.Fatal(err)
	}
	if err := db.Mirrors().Pushed(ctx, pm.ID, now, "", nil); err != nil {
		t.Fatal(err)
	}
	if ids, _ := db.Mirrors().Due(ctx, now, 10); len(ids) != 0 {
		t.Fatalf("due after the sync: %v", ids)
	}
	if due, _ := db.Mirrors().DuePush(ctx, now.Add(100*time.Hour), 10); len(due) != 0 {
		t.Fatalf("a push mirror with no next time is due: %v", due)
	}
	r, err := db.Repos().FindByID(ctx, repo.ID)
	if err != nil || r.MirrorUpdated == nil || !r.MirrorUpdated.Equal(now) {
		t.Fatalf("mirror_updated %v, %v", r.MirrorUpdated, err)
	}
	// A repository update does not write back an older mirror_updated.
	repo.Description = "edited"
	if err := db.Repos().Update(ctx, repo); err != nil {
		t.Fatal(err)
	}
	if r, _ := db.Repos().FindByID(ctx, repo.ID); r.MirrorUpdated == nil {
		t.Fatal("an edit cleared mirror_updated")
	}

	next, _ := secretbox.New("second")
	count, err := db.Reseal(ctx, next)
	if err != nil || count["repo_mirrors.auth_secret"] != 1 || count["push_mirrors.auth_secret"] != 1 {
		t.Fatalf("reseal: %v %v", count, err)
	}
	check(keyed("second"))
	if _, err := keyed("first").Mirrors().Find(ctx, repo.ID); err == nil {
		t.Fatal("the old key opens the resealed credentials")
	}
}

// keyedDB opens the database at dsn with the secret key it is given.
func keyedDB(t *testing.T, dsn string) func(key string) *sqlstore.DB {
	return func(key string) *sqlstore.DB {
		t.Helper()
		box, err := secretbox.New(key)
		if err != nil {
			t.Fatal(err)
		}
		db, err := sqlstore.Open(dsn, sqlstore.Options{Secrets: box})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		return db
	}
}

// ownedRepo creates the user acme and its repository svc.
func ownedRepo(t *testing.T, db *sqlstore.DB) (*store.User, *store.Repository) {
	t.Helper()
	ctx := context.Background()
	owner := &store.User{Name: "acme"}
	if err := db.Users().Create(ctx, owner); err != nil {
		t.Fatal(err)
	}
	repo := &store.Repository{OwnerID: owner.ID, Name: "svc", LowerName: "svc", DefaultBranch: "main"}
	if err := db.Repos().Create(ctx, repo); err != nil {
		t.Fatal(err)
	}
	return owner, repo
}
