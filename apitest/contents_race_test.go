package apitest_test

import (
	"fmt"
	"net/http"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/go-git/go-git/v6"
	"github.com/go-git/go-git/v6/plumbing"
	"github.com/go-git/go-git/v6/plumbing/filemode"
	"github.com/go-git/go-git/v6/plumbing/object"

	"repohost/apitest"
	"repohost/impl/app"
	"repohost/models"
	"repohost/store/gitstore"
)

// TestContentsParallelCreatesOfDifferentFilesAllLand (regression): commits
// of different files to one branch used to answer 409 whenever another
// writer moved the branch between reading its tip and the compare-and-swap.
// A write that still applies on the new tip is rebuilt there, so all twenty
// land, one commit each, in a linear history.
func TestContentsParallelCreatesOfDifferentFilesAllLand(t *testing.T) {
	t.Parallel()
	w := ctSetup(t)
	e := w.e
	before := ctBranchCommit(t, roGit(t, e, "alice", "pub"), "main").Hash
	const n = 20
	statuses := make([]int, n)
	bodies := make([]string, n)
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			r := e.DoFor(t, "POST", fmt.Sprintf("repos/alice/pub/contents/par/%02d.txt", i),
				map[string]any{"content": b64(fmt.Sprintf("file %d\n", i))}, w.owner)
			statuses[i], bodies[i] = r.Status, string(r.Body)
		}(i)
	}
	wg.Wait()
	for i, s := range statuses {
		if s != http.StatusCreated {
			t.Errorf("writer %d: %d %s", i, s, bodies[i])
		}
	}
	repo := roGit(t, e, "alice", "pub")
	for i := 0; i < n; i++ {
		if got := roFile(t, repo, "main", fmt.Sprintf("par/%02d.txt", i)); got != fmt.Sprintf("file %d\n", i) {
			t.Errorf("par/%02d.txt on main: %q", i, got)
		}
	}
	c := ctBranchCommit(t, repo, "main")
	for k := 0; k < n; k++ {
		if c.NumParents() != 1 {
			t.Fatalf("commit %s (%d from the tip) has %d parents", c.Hash, k, c.NumParents())
		}
		p, err := c.Parent(0)
		if err != nil {
			t.Fatal(err)
		}
		c = p
	}
	if c.Hash != before {
		t.Fatalf("%d commits back from main is %s, want the initial commit %s", n, c.Hash, before)
	}
	if got := ctNames(ctGetDir(t, e, nil, "repos/alice/pub/contents/par")); len(got) == 0 {
		t.Fatal("par/ not listed")
	}
}

// TestContentsParallelUpdatesOfOneFileOneWins: updates of the same file
// from the same sha are a real conflict: exactly one lands; a loser that
// built on the old tip and lost the compare-and-swap finds the sha no
// longer matching on the new tip and answers 409; one that read the tip
// after the winner moved it is told its sha is stale (422, as when the
// writes come one after another). Nothing a loser wrote reaches the branch.
func TestContentsParallelUpdatesOfOneFileOneWins(t *testing.T) {
	t.Parallel()
	w := ctSetup(t)
	e := w.e
	f := ctGetFile(t, e, nil, "repos/alice/pub/contents/README.md")
	before := ctBranchCommit(t, roGit(t, e, "alice", "pub"), "main").Hash
	const n = 12
	statuses := make([]int, n)
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			r := e.DoFor(t, "PUT", "repos/alice/pub/contents/README.md",
				map[string]any{"content": b64(fmt.Sprintf("version %d\n", i)), "sha": f.SHA}, w.owner)
			statuses[i] = r.Status
		}(i)
	}
	wg.Wait()
	winner, conflicts := -1, 0
	for i, s := range statuses {
		switch s {
		case http.StatusOK:
			if winner >= 0 {
				t.Errorf("writers %d and %d both won", winner, i)
			}
			winner = i
		case http.StatusConflict:
			conflicts++
		case http.StatusUnprocessableEntity:
		default:
			t.Errorf("writer %d: status %d", i, s)
		}
	}
	t.Logf("%d of %d losers answered 409, the rest 422", conflicts, n-1)
	if winner < 0 {
		t.Fatal("no writer won")
	}
	repo := roGit(t, e, "alice", "pub")
	if got := roFile(t, repo, "main", "README.md"); got != fmt.Sprintf("version %d\n", winner) {
		t.Fatalf("README.md is %q, the winner wrote version %d", got, winner)
	}
	head := ctBranchCommit(t, repo, "main")
	if head.NumParents() != 1 || head.ParentHashes[0] != before {
		t.Fatalf("main is %s with parents %v; want one commit on %s", head.Hash, head.ParentHashes, before)
	}
	var after models.ContentsResponse
	e.Do("GET", "repos/alice/pub/contents/README.md", nil, nil).Expect(t, http.StatusOK).JSON(t, &after)
	if after.SHA == f.SHA {
		t.Fatal("the file kept its old sha")
	}
}

// racingGit stages a race: before the next ref update it moves a branch
// itself, as a push landing between a contents write's build and its
// compare-and-swap would.
type racingGit struct {
	gitstore.Repos
	mu     sync.Mutex
	before func(g *gitstore.GitRepo)
}

func (r *racingGit) arm(f func(g *gitstore.GitRepo)) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.before = f
}

func (r *racingGit) UpdateRefs(g *gitstore.GitRepo, updates []*gitstore.RefUpdate, decide func([]*gitstore.RefUpdate)) {
	r.mu.Lock()
	f := r.before
	r.before = nil
	r.mu.Unlock()
	if f != nil {
		f(g)
	}
	r.Repos.UpdateRefs(g, updates, decide)
}

// commitOnMain writes a commit on top of alice/pub's main that sets (or,
// with a nil content, removes) top-level files, and moves main to it by
// compare-and-swap. It runs inside a ref update of impl/refs, so the
// harness's guard lets it through.
func (r *racingGit) commitOnMain(t *testing.T, e *apitest.Env, g *gitstore.GitRepo, files map[string][]byte) plumbing.Hash {
	t.Helper()
	path, err := e.Deps.Git.Path("alice", "pub")
	if err != nil {
		t.Fatal(err)
	}
	repo, err := git.PlainOpen(path)
	if err != nil {
		t.Fatal(err)
	}
	head := ctBranchCommit(t, repo, "main")
	tree, err := head.Tree()
	if err != nil {
		t.Fatal(err)
	}
	var entries []object.TreeEntry
	for _, te := range tree.Entries {
		if _, changed := files[te.Name]; !changed {
			entries = append(entries, te)
		}
	}
	for name, content := range files {
		if content == nil {
			continue
		}
		obj := repo.Storer.NewEncodedObject()
		obj.SetType(plumbing.BlobObject)
		w, _ := obj.Writer()
		_, _ = w.Write(content)
		_ = w.Close()
		h, err := repo.Storer.SetEncodedObject(obj)
		if err != nil {
			t.Fatal(err)
		}
		entries = append(entries, object.TreeEntry{Name: name, Mode: filemode.Regular, Hash: h})
	}
	key := func(e object.TreeEntry) string {
		if e.Mode == filemode.Dir {
			return e.Name + "/"
		}
		return e.Name
	}
	sort.Slice(entries, func(i, j int) bool { return key(entries[i]) < key(entries[j]) })
	store := func(o interface {
		Encode(plumbing.EncodedObject) error
	}) plumbing.Hash {
		obj := repo.Storer.NewEncodedObject()
		if err := o.Encode(obj); err != nil {
			t.Fatal(err)
		}
		h, err := repo.Storer.SetEncodedObject(obj)
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	sig := object.Signature{Name: "pusher", Email: "pusher@example.com", When: time.Now()}
	commit := store(&object.Commit{Author: sig, Committer: sig, Message: "concurrent push\n",
		TreeHash: store(&object.Tree{Entries: entries}), ParentHashes: []plumbing.Hash{head.Hash}})
	u := &gitstore.RefUpdate{Name: plumbing.NewBranchReferenceName("main"), Old: head.Hash, New: commit}
	r.Repos.UpdateRefs(g, []*gitstore.RefUpdate{u}, nil)
	if u.Err != nil {
		t.Fatalf("the staged concurrent push failed: %v", u.Err)
	}
	return commit
}

// TestContentsCommitRebuiltWhenTheBranchMoves stages the race the retry
// exists for, deterministically: main moves between building a contents
// commit and its compare-and-swap. A change that still applies is rebuilt
// on the new tip (the concurrent commit is kept, and is the new commit's
// parent); one that no longer applies answers 409 and moves nothing.
func TestContentsCommitRebuiltWhenTheBranchMoves(t *testing.T) {
	t.Parallel()
	racer := &racingGit{}
	e := apitest.NewWithDeps(t, func(d *app.Deps) {
		racer.Repos = d.Git
		d.Git = racer
	})
	alice := e.CreateUser("alice", false)
	owner := apitest.Basic(alice)
	roCreateRepo(t, e, owner, map[string]any{"name": "pub", "auto_init": true})
	readme := ctGetFile(t, e, nil, "repos/alice/pub/contents/README.md")
	repo := roGit(t, e, "alice", "pub")

	// Different files: both land, ours on top of the concurrent one.
	var concurrent plumbing.Hash
	racer.arm(func(g *gitstore.GitRepo) {
		concurrent = racer.commitOnMain(t, e, g, map[string][]byte{"pushed.txt": []byte("pushed\n")})
	})
	var created models.FileResponse
	e.Do("POST", "repos/alice/pub/contents/mine.txt", map[string]any{"content": b64("mine\n")}, owner).
		Expect(t, http.StatusCreated).JSON(t, &created)
	head := ctBranchCommit(t, repo, "main")
	if created.Commit.SHA != head.Hash.String() || head.NumParents() != 1 || head.ParentHashes[0] != concurrent {
		t.Fatalf("main at %s (parents %v), answered %s; want a commit on the concurrent %s", head.Hash, head.ParentHashes, created.Commit.SHA, concurrent)
	}
	if roFile(t, repo, "main", "pushed.txt") != "pushed\n" || roFile(t, repo, "main", "mine.txt") != "mine\n" {
		t.Fatal("a file is missing on main")
	}

	// An update whose file the concurrent commit did not touch still
	// applies; so does a delete.
	racer.arm(func(g *gitstore.GitRepo) {
		concurrent = racer.commitOnMain(t, e, g, map[string][]byte{"pushed.txt": []byte("pushed again\n")})
	})
	e.Do("PUT", "repos/alice/pub/contents/README.md", map[string]any{"content": b64("readme v2\n"), "sha": readme.SHA}, owner).
		Expect(t, http.StatusOK)
	if head := ctBranchCommit(t, repo, "main"); head.ParentHashes[0] != concurrent ||
		roFile(t, repo, "main", "README.md") != "readme v2\n" || roFile(t, repo, "main", "pushed.txt") != "pushed again\n" {
		t.Fatal("the update was not rebuilt on the concurrent commit")
	}
	mine := ctGetFile(t, e, nil, "repos/alice/pub/contents/mine.txt")
	racer.arm(func(g *gitstore.GitRepo) {
		concurrent = racer.commitOnMain(t, e, g, map[string][]byte{"other.txt": []byte("other\n")})
	})
	e.Do("DELETE", "repos/alice/pub/contents/mine.txt", map[string]any{"sha": mine.SHA}, owner).Expect(t, http.StatusOK)
	if head := ctBranchCommit(t, repo, "main"); head.ParentHashes[0] != concurrent || ctHasFile(t, repo, "main", "mine.txt") ||
		roFile(t, repo, "main", "other.txt") != "other\n" {
		t.Fatal("the delete was not rebuilt on the concurrent commit")
	}

	// Real conflicts: the concurrent commit changed the same file, removed
	// it, or created the path first.
	readme = ctGetFile(t, e, nil, "repos/alice/pub/contents/README.md")
	other := ctGetFile(t, e, nil, "repos/alice/pub/contents/other.txt")
	for _, c := range []struct {
		name      string
		push      map[string][]byte
		method    string
		path      string
		body      map[string]any
		wantFile  string
		wantValue string
	}{
		{"same file", map[string][]byte{"README.md": []byte("theirs\n")}, "PUT", "README.md",
			map[string]any{"content": b64("ours\n"), "sha": readme.SHA}, "README.md", "theirs\n"},
		{"deleted meanwhile", map[string][]byte{"other.txt": nil}, "DELETE", "other.txt",
			map[string]any{"sha": other.SHA}, "", ""},
		{"created meanwhile", map[string][]byte{"new.txt": []byte("theirs\n")}, "POST", "new.txt",
			map[string]any{"content": b64("ours\n")}, "new.txt", "theirs\n"},
	} {
		racer.arm(func(g *gitstore.GitRepo) { concurrent = racer.commitOnMain(t, e, g, c.push) })
		e.Do(c.method, "repos/alice/pub/contents/"+c.path, c.body, owner).Expect(t, http.StatusConflict)
		if head := ctBranchCommit(t, repo, "main"); head.Hash != concurrent {
			t.Fatalf("%s: main moved past the concurrent commit to %s", c.name, head.Hash)
		}
		if c.wantFile != "" && roFile(t, repo, "main", c.wantFile) != c.wantValue {
			t.Fatalf("%s: %s is %q", c.name, c.wantFile, roFile(t, repo, "main", c.wantFile))
		}
	}
}
