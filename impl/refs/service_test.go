package refs_test

import (
	"context"
	"errors"
	"net/http"
	"testing"

	"github.com/go-git/go-git/v6/plumbing"

	"repohost/apitest"
	"repohost/impl/auth"
	"repohost/impl/events"
	"repohost/impl/refs"
	"repohost/store"
	"repohost/store/gitstore"
)

// TestApplyAllOrNothing: an atomic change, a failed Also and a refused
// rename leave every ref where it was and announce nothing.
func TestApplyAllOrNothing(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	alice := e.CreateUser("alice", false)
	e.Do("POST", "user/repos", map[string]any{"name": "r", "auto_init": true}, apitest.Basic(alice)).Expect(t, http.StatusCreated)
	ctx := context.Background()
	r, err := e.DB.Repos().FindByName(ctx, alice.User.ID, "r")
	if err != nil {
		t.Fatal(err)
	}
	r.Owner = alice.User
	g, err := e.Deps.Git.OpenGit("alice", "r")
	if err != nil {
		t.Fatal(err)
	}
	tip, err := g.BranchHash("main")
	if err != nil {
		t.Fatal(err)
	}
	log := e.RecordEvents()
	svc := refs.New(e.Deps)
	doer := &auth.Principal{User: alice.User, Signer: alice.User}
	branch := plumbing.NewBranchReferenceName
	exists := func(name string) bool {
		t.Helper()
		at, err := g.BranchHash(name)
		if err != nil {
			t.Fatal(err)
		}
		return !at.IsZero()
	}

	// One good update and one stale one: neither is made.
	good := &gitstore.RefUpdate{Name: branch("a"), New: tip}
	stale := &gitstore.RefUpdate{Name: branch("main"), Old: plumbing.NewHash("1111111111111111111111111111111111111111"), New: tip}
	_, err = svc.Apply(ctx, refs.Change{Repo: r, Doer: doer, Git: g, Atomic: true, Updates: []*gitstore.RefUpdate{good, stale}})
	if !errors.Is(err, store.ErrConflict) || good.Err == nil || exists("a") {
		t.Fatalf("atomic change with a stale update: err %v, good.Err %v, a exists %v", err, good.Err, exists("a"))
	}

	// The same without Atomic makes the good one.
	good, stale = &gitstore.RefUpdate{Name: branch("a"), New: tip}, &gitstore.RefUpdate{Name: branch("main"), Old: stale.Old, New: tip}
	applied, err := svc.Apply(ctx, refs.Change{Repo: r, Doer: doer, Git: g, Updates: []*gitstore.RefUpdate{good, stale}})
	if err != nil || len(applied) != 1 || applied[0] != good || stale.Err == nil || !exists("a") {
		t.Fatalf("non-atomic change: err %v, applied %v, stale.Err %v", err, applied, stale.Err)
	}
	if evs := log.Take(); len(evs) != 1 || evs[0].Kind != events.RefsChanged || len(evs[0].Payload.(events.Refs).Changes) != 1 {
		t.Fatalf("events %+v", evs)
	}

	// Also fails: the ref is taken back, no event.
	boom := errors.New("boom")
	up := &gitstore.RefUpdate{Name: branch("b"), New: tip}
	_, err = svc.Apply(ctx, refs.Change{Repo: r, Doer: doer, Git: g, Atomic: true, Updates: []*gitstore.RefUpdate{up},
		Also: func(context.Context) error { return boom }})
	if !errors.Is(err, boom) || up.Err == nil || exists("b") {
		t.Fatalf("failed Also: err %v, up.Err %v, b exists %v", err, up.Err, exists("b"))
	}

	// A rename the policy refuses (a glob rule protects the branch)
	// creates nothing and deletes nothing.
	e.Do("POST", "repos/alice/r/branch_protections", map[string]any{"rule_name": "a*", "enable_push": true}, apitest.Basic(alice)).
		Expect(t, http.StatusCreated)
	to, from := &gitstore.RefUpdate{Name: branch("c"), New: tip}, &gitstore.RefUpdate{Name: branch("a"), Old: tip}
	_, err = svc.Apply(ctx, refs.Change{Repo: r, Doer: doer, Git: g, Rename: true, Updates: []*gitstore.RefUpdate{to, from}})
	if !errors.Is(err, gitstore.ErrRefused) || exists("c") || !exists("a") {
		t.Fatalf("refused rename: err %v, c exists %v, a exists %v", err, exists("c"), exists("a"))
	}
	if evs := log.Take(); len(evs) != 0 {
		t.Fatalf("events after refused changes: %+v", evs)
	}
}
