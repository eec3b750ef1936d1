package gitstore_test

import (
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/go-git/go-git/v6"
	"github.com/go-git/go-git/v6/plumbing"
	"github.com/go-git/go-git/v6/plumbing/filemode"
	"github.com/go-git/go-git/v6/plumbing/object"

	"repohost/store/gitstore"
)

// commitWriter writes commits straight into a repository's object store
// (no ref moves), with or without a signature header.
type commitWriter struct {
	t    *testing.T
	r    *git.Repository
	when time.Time
}

func (w *commitWriter) blob(content string) plumbing.Hash {
	obj := w.r.Storer.NewEncodedObject()
	obj.SetType(plumbing.BlobObject)
	wr, _ := obj.Writer()
	_, _ = wr.Write([]byte(content))
	_ = wr.Close()
	h, err := w.r.Storer.SetEncodedObject(obj)
	if err != nil {
		w.t.Fatal(err)
	}
	return h
}

// tree writes a tree of files (flat names or one directory level "d/f").
func (w *commitWriter) tree(files map[string]string) plumbing.Hash {
	dirs := map[string]map[string]string{}
	var entries []object.TreeEntry
	for name, content := range files {
		if d, f, ok := cut(name); ok {
			if dirs[d] == nil {
				dirs[d] = map[string]string{}
			}
			dirs[d][f] = content
			continue
		}
		entries = append(entries, object.TreeEntry{Name: name, Mode: filemode.Regular, Hash: w.blob(content)})
	}
	for d, fs := range dirs {
		entries = append(entries, object.TreeEntry{Name: d, Mode: filemode.Dir, Hash: w.tree(fs)})
	}
	sortEntries(entries)
	obj := w.r.Storer.NewEncodedObject()
	if err := (&object.Tree{Entries: entries}).Encode(obj); err != nil {
		w.t.Fatal(err)
	}
	h, err := w.r.Storer.SetEncodedObject(obj)
	if err != nil {
		w.t.Fatal(err)
	}
	return h
}

func cut(name string) (string, string, bool) {
	for i := range name {
		if name[i] == '/' {
			return name[:i], name[i+1:], true
		}
	}
	return "", "", false
}

func sortEntries(e []object.TreeEntry) {
	key := func(x object.TreeEntry) string {
		if x.Mode == filemode.Dir {
			return x.Name + "/"
		}
		return x.Name
	}
	for i := 1; i < len(e); i++ {
		for j := i; j > 0 && key(e[j-1]) > key(e[j]); j-- {
			e[j-1], e[j] = e[j], e[j-1]
		}
	}
}

func (w *commitWriter) commit(files map[string]string, signed bool, parents ...plumbing.Hash) plumbing.Hash {
	w.when = w.when.Add(time.Minute)
	sig := object.Signature{Name: "a", Email: "a@example.com", When: w.when}
	c := &object.Commit{Author: sig, Committer: sig, Message: "m\n", TreeHash: w.tree(files), ParentHashes: parents}
	if signed {
		c.Signature = "-----BEGIN PGP SIGNATURE-----\n\nnot checked\n-----END PGP SIGNATURE-----\n"
	}
	obj := w.r.Storer.NewEncodedObject()
	if err := c.Encode(obj); err != nil {
		w.t.Fatal(err)
	}
	h, err := w.r.Storer.SetEncodedObject(obj)
	if err != nil {
		w.t.Fatal(err)
	}
	return h
}

// brought lists the ids of the commits u brings, newest first.
func brought(g *gitstore.GitRepo, u *gitstore.RefUpdate) ([]plumbing.Hash, error) {
	cs, err := g.BroughtCommits(u)
	out := []plumbing.Hash{}
	for _, c := range cs {
		out = append(out, c.Hash)
	}
	return out, err
}

func TestChangedFilesAndBroughtCommits(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	if _, err := s.Create("o", "r", gitstore.InitOptions{DefaultBranch: "main"}); err != nil {
		t.Fatal(err)
	}
	path, _ := s.Path("o", "r")
	raw, err := git.PlainOpen(path)
	if err != nil {
		t.Fatal(err)
	}
	w := &commitWriter{t: t, r: raw, when: time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)}
	g, err := s.OpenGit("o", "r")
	if err != nil {
		t.Fatal(err)
	}
	main := plumbing.NewBranchReferenceName("main")
	branch := func(n string) plumbing.ReferenceName { return plumbing.NewBranchReferenceName(n) }

	base := w.commit(map[string]string{"a.txt": "a", "docs/x.md": "x"}, false)
	// A push to the empty repository: every file is new, every commit too.
	first := &gitstore.RefUpdate{Name: main, New: base}
	if got, err := g.ChangedFiles(first); err != nil || !reflect.DeepEqual(got, []string{"a.txt", "docs/x.md"}) {
		t.Fatalf("first push changes %v, %v", got, err)
	}
	if got, err := brought(g, first); err != nil || !reflect.DeepEqual(got, []plumbing.Hash{base}) {
		t.Fatalf("first push brings %v, %v", got, err)
	}
	mustApply(t, s, g, first)

	// Two signed commits on main: one edits docs/x.md, the next adds and
	// removes a file.
	c1 := w.commit(map[string]string{"a.txt": "a", "docs/x.md": "x2"}, true, base)
	c2 := w.commit(map[string]string{"docs/x.md": "x2", "b.txt": "b"}, true, c1)
	ff := &gitstore.RefUpdate{Name: main, Old: base, New: c2, FastForward: true}
	if got, err := g.ChangedFiles(ff); err != nil || !reflect.DeepEqual(got, []string{"a.txt", "b.txt", "docs/x.md"}) {
		t.Fatalf("fast-forward changes %v, %v", got, err)
	}
	if got, err := brought(g, ff); err != nil || !reflect.DeepEqual(got, []plumbing.Hash{c2, c1}) {
		t.Fatalf("fast-forward brings %v, %v", got, err)
	}
	u1 := w.commit(map[string]string{"a.txt": "changed", "docs/x.md": "x"}, false, base)
	u2 := w.commit(map[string]string{"a.txt": "changed", "docs/x.md": "x"}, true, u1)
	if got, err := brought(g, &gitstore.RefUpdate{Name: main, Old: base, New: u2, FastForward: true}); err != nil || !reflect.DeepEqual(got, []plumbing.Hash{u2, u1}) {
		t.Fatalf("brings %v, %v; want %v", got, err, []plumbing.Hash{u2, u1})
	}
	mustApply(t, s, g, ff)

	// A rewrite: old's tree against new's, whatever the history.
	rw := &gitstore.RefUpdate{Name: main, Old: c2, New: u2}
	if got, err := g.ChangedFiles(rw); err != nil || !reflect.DeepEqual(got, []string{"a.txt", "b.txt", "docs/x.md"}) {
		t.Fatalf("rewrite changes %v, %v", got, err)
	}

	// A branch created at a commit the repository has: nothing changes,
	// nothing new to sign.
	at := &gitstore.RefUpdate{Name: branch("copy"), New: c1}
	if got, err := g.ChangedFiles(at); err != nil || len(got) != 0 {
		t.Fatalf("branch at an existing commit changes %v, %v", got, err)
	}
	if got, err := brought(g, at); err != nil || len(got) != 0 {
		t.Fatalf("branch at an existing commit brings %v, %v", got, err)
	}
	// A branch with a new commit on top of c1: only that commit's change,
	// against the commit it started from.
	top := w.commit(map[string]string{"a.txt": "a", "docs/x.md": "x2", "docs/new.md": "n"}, false, c1)
	nb := &gitstore.RefUpdate{Name: branch("feature"), New: top}
	if got, err := g.ChangedFiles(nb); err != nil || !reflect.DeepEqual(got, []string{"docs/new.md"}) {
		t.Fatalf("new branch changes %v, %v", got, err)
	}
	if got, err := brought(g, nb); err != nil || !reflect.DeepEqual(got, []plumbing.Hash{top}) {
		t.Fatalf("new branch brings %v, %v", got, err)
	}
	// A deletion changes nothing.
	if got, err := g.ChangedFiles(&gitstore.RefUpdate{Name: main, Old: c2}); err != nil || len(got) != 0 {
		t.Fatalf("deletion changes %v, %v", got, err)
	}
}

// A check that would walk more history than its bound says so instead of
// walking on.
func TestBroughtCommitsBoundedWalk(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	if _, err := s.Create("o", "r", gitstore.InitOptions{DefaultBranch: "main"}); err != nil {
		t.Fatal(err)
	}
	path, _ := s.Path("o", "r")
	raw, err := git.PlainOpen(path)
	if err != nil {
		t.Fatal(err)
	}
	w := &commitWriter{t: t, r: raw, when: time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)}
	g, err := s.OpenGit("o", "r")
	if err != nil {
		t.Fatal(err)
	}
	gitstore.SetInspectLimit(g, 50)
	var tip plumbing.Hash
	for i := 0; i < 51; i++ {
		if tip.IsZero() {
			tip = w.commit(map[string]string{"a": "a"}, true)
		} else {
			tip = w.commit(map[string]string{"a": "a"}, true, tip)
		}
	}
	_, err = g.BroughtCommits(&gitstore.RefUpdate{Name: plumbing.NewBranchReferenceName("main"), New: tip})
	if !errors.Is(err, gitstore.ErrTooMuchHistory) {
		t.Fatalf("a history one commit past the bound: %v, want ErrTooMuchHistory", err)
	}
}
