package gitstore_test

import (
	"errors"
	"testing"

	"github.com/go-git/go-git/v6/plumbing"
	"github.com/go-git/go-git/v6/plumbing/object"

	"repohost/store"
	"repohost/store/gitstore"
)

// refRepo is a repository with two commits, the second a child of the
// first, and branch main at the second.
func refRepo(t *testing.T) (*gitstore.Store, *gitstore.GitRepo, plumbing.Hash, plumbing.Hash) {
	t.Helper()
	s := newStore(t)
	sig := object.Signature{Name: "a", Email: "a@example.com"}
	first, err := s.Create("o", "r", gitstore.InitOptions{DefaultBranch: "main", Files: map[string]string{"a": "a"},
		CommitMessage: "first\n", Author: sig})
	if err != nil {
		t.Fatal(err)
	}
	g, err := s.OpenGit("o", "r")
	if err != nil {
		t.Fatal(err)
	}
	main := plumbing.NewBranchReferenceName("main")
	mustApply(t, s, g, &gitstore.RefUpdate{Name: main, New: first})
	res, err := g.ChangeFile(gitstore.FileChange{Op: gitstore.OpCreate, Branch: "main", Path: "b", Content: []byte("b"),
		Author: sig, Committer: sig, Message: "second"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Old != first || res.Branch != "main" {
		t.Fatalf("ChangeFile result: old %s branch %s", res.Old, res.Branch)
	}
	if at, _ := g.BranchHash("main"); at != first {
		t.Fatal("ChangeFile moved the branch")
	}
	mustApply(t, s, g, res.Update())
	return s, g, first, res.Commit.Hash
}

func mustApply(t *testing.T, s *gitstore.Store, g *gitstore.GitRepo, ups ...*gitstore.RefUpdate) {
	t.Helper()
	s.UpdateRefs(g, ups, nil)
	for _, u := range ups {
		if u.Err != nil {
			t.Fatalf("%s: %v", u.Name, u.Err)
		}
	}
}

func TestUpdateRefsCompareAndSwap(t *testing.T) {
	s, g, first, second := refRepo(t)
	main := plumbing.NewBranchReferenceName("main")
	side := plumbing.NewBranchReferenceName("side")
	tag := plumbing.NewTagReferenceName("v1")

	cases := []struct {
		name string
		u    *gitstore.RefUpdate
		want error
	}{
		{"create an existing branch", &gitstore.RefUpdate{Name: main, New: first}, gitstore.ErrBranchExists},
		{"update from a stale value", &gitstore.RefUpdate{Name: main, Old: first, New: first}, store.ErrConflict},
		{"delete from a stale value", &gitstore.RefUpdate{Name: main, Old: first}, store.ErrConflict},
		{"update a missing branch", &gitstore.RefUpdate{Name: side, Old: first, New: second}, store.ErrConflict},
		{"invalid name", &gitstore.RefUpdate{Name: "refs/heads/a..b", New: first}, gitstore.ErrBadRefName},
		{"outside refs/", &gitstore.RefUpdate{Name: "HEAD", New: first}, gitstore.ErrBadRefName},
		{"missing object", &gitstore.RefUpdate{Name: side, New: plumbing.NewHash("0123456789012345678901234567890123456789")}, store.ErrNotFound},
	}
	for _, c := range cases {
		s.UpdateRefs(g, []*gitstore.RefUpdate{c.u}, func([]*gitstore.RefUpdate) { t.Errorf("%s: decided on a refused update", c.name) })
		if !errors.Is(c.u.Err, c.want) {
			t.Errorf("%s: err %v, want %v", c.name, c.u.Err, c.want)
		}
	}
	if at, _ := g.BranchHash("main"); at != second {
		t.Fatalf("main moved by refused updates: %s", at)
	}

	// The policy sees inspected updates: a rewind is not a fast-forward;
	// what it refuses is not applied, the rest is.
	back := &gitstore.RefUpdate{Name: main, Old: second, New: first}
	mk := &gitstore.RefUpdate{Name: tag, New: first}
	s.UpdateRefs(g, []*gitstore.RefUpdate{back, mk}, func(open []*gitstore.RefUpdate) {
		if len(open) != 2 || back.FastForward {
			t.Errorf("decide saw %d updates, rewind fast-forward %v", len(open), back.FastForward)
		}
		back.Err = errors.New("no")
	})
	if at, _ := g.BranchHash("main"); at != second {
		t.Fatal("a refused update was applied")
	}
	if mk.Err != nil {
		t.Fatal(mk.Err)
	}
	if _, err := g.Tag("v1"); err != nil {
		t.Fatal(err)
	}
	dup := &gitstore.RefUpdate{Name: tag, New: second}
	s.UpdateRefs(g, []*gitstore.RefUpdate{dup}, nil)
	if !errors.Is(dup.Err, gitstore.ErrTagExists) {
		t.Fatalf("tag twice: %v", dup.Err)
	}

	// Fast-forward, then delete, both from the right old value.
	fwd := &gitstore.RefUpdate{Name: side, New: first}
	mustApply(t, s, g, fwd)
	ff := &gitstore.RefUpdate{Name: side, Old: first, New: second}
	mustApply(t, s, g, ff)
	if !ff.FastForward {
		t.Error("first -> second not seen as a fast-forward")
	}
	mustApply(t, s, g, &gitstore.RefUpdate{Name: side, Old: second}, &gitstore.RefUpdate{Name: tag, Old: first})
	if at, _ := g.BranchHash("side"); !at.IsZero() {
		t.Fatal("side not deleted")
	}
	if _, err := g.Tag("v1"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("tag after delete: %v", err)
	}
}
