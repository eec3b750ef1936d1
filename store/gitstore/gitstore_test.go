package gitstore_test

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v6"
	"github.com/go-git/go-git/v6/plumbing"
	"github.com/go-git/go-git/v6/plumbing/object"

	"repohost/store"
	"repohost/store/gitstore"
)

func newStore(t *testing.T) *gitstore.Store {
	t.Helper()
	s, err := gitstore.New(filepath.Join(t.TempDir(), "repositories"))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestCreateWithFilesMakesAReadableCommit(t *testing.T) {
	s := newStore(t)
	when := time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)
	files := map[string]string{"README.md": "# Hello\n", "LICENSE": "MIT\n", ".gitignore": "*.o\n"}
	initial, err := s.Create("Alice", "Project", gitstore.InitOptions{
		DefaultBranch: "trunk",
		Files:         files,
		CommitMessage: "Initial commit",
		Author:        object.Signature{Name: "Alice", Email: "alice@example.com", When: when},
	})
	if err != nil {
		t.Fatal(err)
	}
	// Create writes the commit only; the branch is published as a ref
	// update.
	if ok, err := s.HasBranch("alice", "project", "trunk"); ok || err != nil {
		t.Fatalf("HasBranch(trunk) before the ref update = %v, %v", ok, err)
	}
	g, err := s.OpenGit("alice", "project")
	if err != nil {
		t.Fatal(err)
	}
	up := &gitstore.RefUpdate{Name: plumbing.NewBranchReferenceName("trunk"), New: initial}
	s.UpdateRefs(g, []*gitstore.RefUpdate{up}, nil)
	if up.Err != nil {
		t.Fatal(up.Err)
	}
	path, err := s.Path("alice", "project")
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(s.Root(), "alice", "project.git"); path != want {
		t.Fatalf("path %s, want %s (lower-cased, .git suffix)", path, want)
	}
	repo, err := git.PlainOpen(path)
	if err != nil {
		t.Fatalf("go-git cannot open the repository: %v", err)
	}
	cfg, err := repo.Config()
	if err != nil {
		t.Fatal(err)
	}
	if !cfg.Core.IsBare {
		t.Error("repository is not bare")
	}
	head, err := repo.Head()
	if err != nil {
		t.Fatalf("HEAD: %v", err)
	}
	if head.Name() != plumbing.NewBranchReferenceName("trunk") {
		t.Errorf("HEAD is %s, want refs/heads/trunk", head.Name())
	}
	commit, err := repo.CommitObject(head.Hash())
	if err != nil {
		t.Fatal(err)
	}
	if commit.Message != "Initial commit" || commit.Author.Email != "alice@example.com" || !commit.Author.When.Equal(when) {
		t.Errorf("commit %q by %s at %v", commit.Message, commit.Author.Email, commit.Author.When)
	}
	if commit.NumParents() != 0 {
		t.Errorf("first commit has %d parents", commit.NumParents())
	}
	tree, err := commit.Tree()
	if err != nil {
		t.Fatal(err)
	}
	if len(tree.Entries) != len(files) {
		t.Errorf("tree has %d entries, want %d", len(tree.Entries), len(files))
	}
	for name, want := range files {
		f, err := tree.File(name)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		r, err := f.Reader()
		if err != nil {
			t.Fatal(err)
		}
		got, _ := io.ReadAll(r)
		r.Close()
		if string(got) != want {
			t.Errorf("%s = %q, want %q", name, got, want)
		}
	}
	// The object store is consistent: walking the history finds the commit.
	iter, err := repo.Log(&git.LogOptions{From: head.Hash()})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	if err := iter.ForEach(func(*object.Commit) error { n++; return nil }); err != nil || n != 1 {
		t.Errorf("log: %d commits, err %v", n, err)
	}
	if ok, err := s.HasBranch("alice", "project", "trunk"); !ok || err != nil {
		t.Errorf("HasBranch(trunk) = %v, %v", ok, err)
	}
	if ok, err := s.HasBranch("alice", "project", "main"); ok || err != nil {
		t.Errorf("HasBranch(main) = %v, %v", ok, err)
	}
}

func TestCreateEmptyAndDuplicate(t *testing.T) {
	s := newStore(t)
	if initial, err := s.Create("bob", "empty", gitstore.InitOptions{DefaultBranch: "main"}); err != nil || !initial.IsZero() {
		t.Fatal(err)
	}
	path, _ := s.Path("bob", "empty")
	repo, err := git.PlainOpen(path)
	if err != nil {
		t.Fatal(err)
	}
	// An empty repository has an unborn HEAD pointing at the default branch.
	ref, err := repo.Reference(plumbing.HEAD, false)
	if err != nil {
		t.Fatal(err)
	}
	if ref.Target() != plumbing.NewBranchReferenceName("main") {
		t.Errorf("HEAD -> %s", ref.Target())
	}
	_, err = s.Create("BOB", "Empty", gitstore.InitOptions{DefaultBranch: "main"})
	if !errors.Is(err, store.ErrDuplicate) {
		t.Fatalf("second create: err %v, want ErrDuplicate", err)
	}
	// The failed create did not remove the existing repository.
	if _, err := git.PlainOpen(path); err != nil {
		t.Fatalf("existing repository damaged: %v", err)
	}
	if err := s.Delete("bob", "empty"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("after Delete: stat err %v", err)
	}
}

func TestPathRefusesUnsafeNames(t *testing.T) {
	s := newStore(t)
	bad := []string{"", ".", "..", "a/b", "../x", `a\b`, "a\x00b", "\x00", ".git", ".hidden"}
	for _, name := range bad {
		if p, err := s.Path("owner", name); !errors.Is(err, gitstore.ErrBadName) {
			t.Errorf("Path(owner, %q) = %q, %v; want ErrBadName", name, p, err)
		}
		if p, err := s.Path(name, "repo"); !errors.Is(err, gitstore.ErrBadName) {
			t.Errorf("Path(%q, repo) = %q, %v; want ErrBadName", name, p, err)
		}
		if _, err := s.Create("owner", name, gitstore.InitOptions{DefaultBranch: "main"}); !errors.Is(err, gitstore.ErrBadName) {
			t.Errorf("Create(owner, %q): %v; want ErrBadName", name, err)
		}
	}
	// Nothing was written outside (or inside) the root by the refused calls.
	entries, err := os.ReadDir(s.Root())
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 0 {
		t.Errorf("root holds %d entries after refused creates", len(entries))
	}
	for _, name := range []string{"a", "a.b", "a-b_c", "a..", strings.Repeat("x", 100)} {
		p, err := s.Path("owner", name)
		if err != nil {
			t.Errorf("Path(owner, %q): %v", name, err)
			continue
		}
		if !strings.HasPrefix(p, s.Root()+string(filepath.Separator)) {
			t.Errorf("Path(owner, %q) = %s escapes %s", name, p, s.Root())
		}
	}
}

// A name no ref can have ("..", NUL, doubled or stray slashes, a
// backslash) reads as missing, never as an error.
func TestRefNamesThatCannotExistAreMissing(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	initial, err := s.Create("alice", "proj", gitstore.InitOptions{DefaultBranch: "main", Files: map[string]string{"a": "a"},
		Author: object.Signature{Name: "a", Email: "a@example.com", When: time.Unix(0, 0)}})
	if err != nil {
		t.Fatal(err)
	}
	g, err := s.OpenGit("alice", "proj")
	if err != nil {
		t.Fatal(err)
	}
	s.UpdateRefs(g, []*gitstore.RefUpdate{{Name: plumbing.NewBranchReferenceName("main"), New: initial}}, nil)
	for _, name := range []string{"..", ".", "\x00", "a\x00b", "/", "a//b", "/a", "a/", "../main", "a/../b", `\`, `a\b`, "a\nb"} {
		if h, err := g.BranchHash(name); err != nil || !h.IsZero() {
			t.Errorf("BranchHash(%q) = %v, %v; want zero, nil", name, h, err)
		}
		if _, err := g.GetBranch(name); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("GetBranch(%q) = %v; want ErrNotFound", name, err)
		}
		if ok, err := s.HasBranch("alice", "proj", name); ok || err != nil {
			t.Errorf("HasBranch(%q) = %v, %v", name, ok, err)
		}
		if _, err := g.Resolve(name); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("Resolve(%q) = %v; want ErrNotFound", name, err)
		}
	}
}
