package apitest

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/go-git/go-git/v6"
	"github.com/go-git/go-git/v6/plumbing"
	"github.com/go-git/go-git/v6/plumbing/object"

	"repohost/impl/refs"
	"repohost/store"
	"repohost/store/gitstore"
)

// recordingTB keeps the errors reported to it instead of failing.
type recordingTB struct {
	testing.TB
	mu   sync.Mutex
	errs []string
}

func (r *recordingTB) Errorf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}

func (r *recordingTB) take() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.errs
	r.errs = nil
	return out
}

// TestRefGuard: the guard every test server runs with reports a ref moved
// by code outside impl/refs, and a repository created with a branch, and
// stays quiet about the same work done through impl/refs.
func TestRefGuard(t *testing.T) {
	t.Parallel()
	e := New(t)
	rec := &recordingTB{TB: t}
	// A guard reporting to rec instead of the env's own.
	guard := &refGuard{Repos: e.guard.Repos, t: rec}
	e.Deps.Git = guard

	owner := e.CreateUser("alice", false)
	sig := object.Signature{Name: "a", Email: "a@example.com"}
	initial, err := guard.Create("alice", "r", gitstore.InitOptions{DefaultBranch: "main",
		Files: map[string]string{"a": "a"}, CommitMessage: "first\n", Author: sig})
	if err != nil {
		t.Fatal(err)
	}
	if errs := rec.take(); len(errs) != 0 {
		t.Fatalf("Create without a branch reported: %v", errs)
	}
	g, err := guard.OpenGit("alice", "r")
	if err != nil {
		t.Fatal(err)
	}

	// A write from here, outside impl/refs, is reported (and still made:
	// the guard reports, it does not hide what happened).
	side := &gitstore.RefUpdate{Name: plumbing.NewBranchReferenceName("side"), New: initial}
	guard.UpdateRefs(g, []*gitstore.RefUpdate{side}, nil)
	if errs := rec.take(); len(errs) != 1 || !strings.Contains(errs[0], "refs/heads/side") || !strings.Contains(errs[0], "TestRefGuard") {
		t.Fatalf("write outside impl/refs: reports %v", errs)
	}

	// The same kind of write through impl/refs is not: a new
	// repository's first branch, seeded before its row exists.
	row := &store.Repository{OwnerID: owner.User.ID, Owner: owner.User, Name: "r", DefaultBranch: "main", ObjectFormat: "sha1"}
	seeded, err := refs.New(e.Deps).InitialBranch(row, owner.User, initial)
	if err != nil {
		t.Fatal(err)
	}
	err = e.DB.WithTx(context.Background(), func(ctx context.Context) error {
		if err := e.DB.Repos().Create(ctx, row); err != nil {
			return err
		}
		return seeded.Record(ctx)
	})
	if err != nil {
		t.Fatal(err)
	}
	if errs := rec.take(); len(errs) != 0 {
		t.Fatalf("write through impl/refs reported: %v", errs)
	}
	if n := guard.updates.Load(); n != 2 {
		t.Fatalf("guard saw %d UpdateRefs calls, want 2", n)
	}

	// A store whose Create leaves a branch behind is reported.
	leaky := &refGuard{Repos: branchingCreate{guard.Repos}, t: rec}
	if _, err := leaky.Create("alice", "leaky", gitstore.InitOptions{DefaultBranch: "main",
		Files: map[string]string{"a": "a"}, CommitMessage: "first\n", Author: sig}); err != nil {
		t.Fatal(err)
	}
	if errs := rec.take(); len(errs) != 1 || !strings.Contains(errs[0], "leaky") {
		t.Fatalf("Create that wrote a branch: reports %v", errs)
	}
}

// branchingCreate is a git store whose Create also creates the default
// branch, behind impl/refs' back, as the store once did.
type branchingCreate struct{ gitstore.Repos }

func (b branchingCreate) Create(owner, name string, opts gitstore.InitOptions) (plumbing.Hash, error) {
	initial, err := b.Repos.Create(owner, name, opts)
	if err != nil || initial.IsZero() {
		return initial, err
	}
	p, _ := b.Path(owner, name)
	repo, err := git.PlainOpen(p)
	if err != nil {
		return initial, err
	}
	return initial, repo.Storer.SetReference(plumbing.NewHashReference(plumbing.NewBranchReferenceName(opts.DefaultBranch), initial))
}
