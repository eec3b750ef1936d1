package apitest_test

import (
	"encoding/base64"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-git/go-git/v6"
	"github.com/go-git/go-git/v6/plumbing"
	"github.com/go-git/go-git/v6/plumbing/object"

	"repohost/apitest"
	"repohost/models"
)

func b64(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }

// ctWorld is alice's public repository "pub" (auto-initialised with a
// README on main) and her private one "priv", plus the callers the tests
// are driven over.
type ctWorld struct {
	e                *apitest.Env
	alice, bob, carl *apitest.Account
	owner, outsider  apitest.Cred
}

func ctSetup(t *testing.T) *ctWorld {
	t.Helper()
	e := apitest.New(t)
	w := &ctWorld{e: e, alice: e.CreateUser("alice", false), bob: e.CreateUser("bob", false)}
	w.owner, w.outsider = apitest.Basic(w.alice), apitest.Basic(w.bob)
	roCreateRepo(t, e, w.owner, map[string]any{"name": "pub", "auto_init": true})
	roCreateRepo(t, e, w.owner, map[string]any{"name": "priv", "auto_init": true, "private": true})
	return w
}

// ctBranchCommit is the commit a branch of a bare repository points at.
func ctBranchCommit(t *testing.T, r *git.Repository, branch string) *object.Commit {
	t.Helper()
	ref, err := r.Reference(plumbing.NewBranchReferenceName(branch), true)
	if err != nil {
		t.Fatalf("branch %s: %v", branch, err)
	}
	c, err := r.CommitObject(ref.Hash())
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func ctHasFile(t *testing.T, r *git.Repository, branch, file string) bool {
	t.Helper()
	_, err := ctBranchCommit(t, r, branch).File(file)
	return err == nil
}

func ctGetFile(t *testing.T, e *apitest.Env, cred apitest.Cred, path string) *models.ContentsResponse {
	t.Helper()
	var c models.ContentsResponse
	e.Do("GET", path, nil, cred).Expect(t, http.StatusOK).JSON(t, &c)
	return &c
}

func ctGetDir(t *testing.T, e *apitest.Env, cred apitest.Cred, path string) []*models.ContentsResponse {
	t.Helper()
	var c []*models.ContentsResponse
	e.Do("GET", path, nil, cred).Expect(t, http.StatusOK).JSON(t, &c)
	return c
}

func ctNames(cs []*models.ContentsResponse) string {
	var n []string
	for _, c := range cs {
		n = append(n, c.Name+":"+c.Type)
	}
	return strings.Join(n, ",")
}

func TestContentsRoundTrip(t *testing.T) {
	t.Parallel()
	w := ctSetup(t)
	e := w.e
	repo := roGit(t, e, "alice", "pub")

	// Create a file three directories deep, with an explicit author and
	// committer; the commit lands on main in git.
	var created models.FileResponse
	e.Do("POST", "repos/alice/pub/contents/docs/guide/intro.md", map[string]any{
		"content": b64("# Intro\n"), "message": "Write the intro",
		"author":    map[string]any{"name": "Ann Author", "email": "ann@example.com"},
		"committer": map[string]any{"name": "Cid Committer", "email": "cid@example.com"},
		"dates":     map[string]any{"author": "2024-05-01T10:00:00Z"},
	}, w.owner).Expect(t, http.StatusCreated).JSON(t, &created)
	if created.Content == nil || created.Commit == nil || created.Verification == nil {
		t.Fatalf("incomplete FileResponse: %+v", created)
	}
	if created.Content.Path != "docs/guide/intro.md" || created.Content.Name != "intro.md" || created.Content.Type != "file" ||
		created.Content.Encoding != "base64" || created.Content.Content != b64("# Intro\n") || created.Content.Size != 8 {
		t.Fatalf("content %+v", created.Content)
	}
	head := ctBranchCommit(t, repo, "main")
	if created.Commit.SHA != head.Hash.String() || created.Content.LastCommitSHA != head.Hash.String() {
		t.Fatalf("commit %s, branch at %s", created.Commit.SHA, head.Hash)
	}
	if head.Author.Name != "Ann Author" || head.Author.Email != "ann@example.com" || head.Committer.Email != "cid@example.com" ||
		!head.Author.When.Equal(ctTime(t, "2024-05-01T10:00:00Z")) || head.Message != "Write the intro\n" || head.NumParents() != 1 {
		t.Fatalf("git commit %+v", head)
	}
	if got := roFile(t, repo, "main", "docs/guide/intro.md"); got != "# Intro\n" {
		t.Fatalf("file in git: %q", got)
	}
	if got := roFile(t, repo, "main", "README.md"); !strings.HasPrefix(got, "# pub") {
		t.Fatalf("README lost: %q", got)
	}
	if len(created.Commit.Parents) != 1 || created.Commit.Author.Email != "ann@example.com" {
		t.Fatalf("commit response %+v", created.Commit)
	}

	// Read it back as a file and as directories.
	f := ctGetFile(t, e, nil, "repos/alice/pub/contents/docs/guide/intro.md")
	if f.SHA != created.Content.SHA || f.Content != b64("# Intro\n") || f.LastCommitSHA != head.Hash.String() ||
		!strings.HasSuffix(f.DownloadURL, "/alice/pub/raw/branch/main/docs/guide/intro.md") || f.Links == nil {
		t.Fatalf("GET file %+v", f)
	}
	if got := ctNames(ctGetDir(t, e, nil, "repos/alice/pub/contents")); got != "README.md:file,docs:dir" {
		t.Fatalf("top directory %s", got)
	}
	docs := ctGetDir(t, e, nil, "repos/alice/pub/contents/docs")
	if ctNames(docs) != "guide:dir" || docs[0].LastCommitSHA != head.Hash.String() || docs[0].Content != "" {
		t.Fatalf("docs %+v", docs[0])
	}
	// The README's last commit is still the initial one.
	top := ctGetDir(t, e, nil, "repos/alice/pub/contents?ref=main")
	if top[0].LastCommitSHA != head.ParentHashes[0].String() {
		t.Fatalf("README last commit %s, want %s", top[0].LastCommitSHA, head.ParentHashes[0])
	}

	// Update needs the current sha; a stale one changes nothing.
	var updated models.FileResponse
	e.Do("PUT", "repos/alice/pub/contents/docs/guide/intro.md", map[string]any{
		"content": b64("# Intro v2\n"), "sha": f.SHA,
	}, w.owner).Expect(t, http.StatusOK).JSON(t, &updated)
	if updated.Content.Content != b64("# Intro v2\n") || updated.Commit.Message != "Update docs/guide/intro.md\n" {
		t.Fatalf("update %+v %+v", updated.Content, updated.Commit)
	}
	if c := ctBranchCommit(t, repo, "main"); c.Author.Email != "alice@example.com" || c.Author.Name != "alice" {
		t.Fatalf("default author %+v", c.Author)
	}
	e.Do("PUT", "repos/alice/pub/contents/docs/guide/intro.md", map[string]any{
		"content": b64("lost"), "sha": f.SHA,
	}, w.owner).Expect(t, http.StatusUnprocessableEntity)
	e.Do("DELETE", "repos/alice/pub/contents/docs/guide/intro.md", map[string]any{"sha": f.SHA}, w.owner).
		Expect(t, http.StatusUnprocessableEntity)
	if got := roFile(t, repo, "main", "docs/guide/intro.md"); got != "# Intro v2\n" {
		t.Fatalf("stale writes changed the file: %q", got)
	}
	// PUT without a sha creates (201), and refuses an existing file.
	e.Do("PUT", "repos/alice/pub/contents/docs/guide/intro.md", map[string]any{"content": b64("x")}, w.owner).
		Expect(t, http.StatusUnprocessableEntity)
	e.Do("PUT", "repos/alice/pub/contents/notes.txt", map[string]any{"content": b64("n")}, w.owner).
		Expect(t, http.StatusCreated)
	// POST onto an existing file, or through a file as if it were a
	// directory, is refused.
	e.Do("POST", "repos/alice/pub/contents/notes.txt", map[string]any{"content": b64("x")}, w.owner).
		Expect(t, http.StatusUnprocessableEntity)
	e.Do("POST", "repos/alice/pub/contents/notes.txt/inner", map[string]any{"content": b64("x")}, w.owner).
		Expect(t, http.StatusUnprocessableEntity)
	// from_path moves a file.
	e.Do("PUT", "repos/alice/pub/contents/docs/moved.md", map[string]any{
		"content": b64("moved\n"), "sha": updated.Content.SHA, "from_path": "docs/guide/intro.md",
	}, w.owner).Expect(t, http.StatusOK)
	if ctHasFile(t, repo, "main", "docs/guide/intro.md") || roFile(t, repo, "main", "docs/moved.md") != "moved\n" {
		t.Fatal("from_path did not move the file")
	}
	if got := ctNames(ctGetDir(t, e, nil, "repos/alice/pub/contents/docs")); got != "moved.md:file" {
		t.Fatalf("emptied directory kept: %s", got)
	}

	// Delete with the right sha; the file is gone from git and from GET.
	moved := ctGetFile(t, e, nil, "repos/alice/pub/contents/docs/moved.md")
	var deleted models.FileDeleteResponse
	e.Do("DELETE", "repos/alice/pub/contents/docs/moved.md", map[string]any{"sha": moved.SHA, "message": "bye"}, w.owner).
		Expect(t, http.StatusOK).JSON(t, &deleted)
	if deleted.Commit == nil || deleted.Content != nil || deleted.Commit.Message != "bye\n" {
		t.Fatalf("delete response %+v", deleted)
	}
	if ctHasFile(t, repo, "main", "docs/moved.md") {
		t.Fatal("file still in git")
	}
	e.Do("GET", "repos/alice/pub/contents/docs/moved.md", nil, nil).Expect(t, http.StatusNotFound)
	e.Do("GET", "repos/alice/pub/contents/docs", nil, nil).Expect(t, http.StatusNotFound)
	e.Do("DELETE", "repos/alice/pub/contents/docs/moved.md", map[string]any{"sha": moved.SHA}, w.owner).
		Expect(t, http.StatusNotFound)
}

func ctTime(t *testing.T, s string) time.Time {
	t.Helper()
	tm, err := time.Parse(time.RFC3339, s)
	if err != nil {
		t.Fatal(err)
	}
	return tm
}

func TestContentsRefsAndBranches(t *testing.T) {
	t.Parallel()
	w := ctSetup(t)
	e := w.e
	repo := roGit(t, e, "alice", "pub")
	initial := ctBranchCommit(t, repo, "main").Hash.String()

	// new_branch takes the commit; the base branch stays where it was.
	var fr models.FileResponse
	e.Do("POST", "repos/alice/pub/contents/feature.txt", map[string]any{
		"content": b64("feature\n"), "branch": "main", "new_branch": "feature/one",
	}, w.owner).Expect(t, http.StatusCreated).JSON(t, &fr)
	if ctHasFile(t, repo, "main", "feature.txt") || !ctHasFile(t, repo, "feature/one", "feature.txt") {
		t.Fatal("new_branch did not isolate the commit")
	}
	if !strings.Contains(fr.Content.URL, "ref=feature%2Fone") {
		t.Fatalf("content url %s", fr.Content.URL)
	}
	// An existing new_branch is refused, a missing base branch is 404.
	e.Do("POST", "repos/alice/pub/contents/again.txt", map[string]any{
		"content": b64("x"), "new_branch": "feature/one",
	}, w.owner).Expect(t, http.StatusUnprocessableEntity)
	e.Do("POST", "repos/alice/pub/contents/again.txt", map[string]any{
		"content": b64("x"), "branch": "nope",
	}, w.owner).Expect(t, http.StatusNotFound)
	e.Do("POST", "repos/alice/pub/contents/again.txt", map[string]any{
		"content": b64("x"), "branch": "bad..name",
	}, w.owner).Expect(t, http.StatusUnprocessableEntity)
	e.Do("POST", "repos/alice/pub/contents/again.txt", map[string]any{"content": "%%% not base64"}, w.owner).
		Expect(t, http.StatusUnprocessableEntity)

	// Reads at a branch with a slash, at a commit id (full and short), at
	// a missing ref, at a missing path.
	ctGetFile(t, e, nil, "repos/alice/pub/contents/feature.txt?ref=feature/one")
	e.Do("GET", "repos/alice/pub/contents/feature.txt?ref=main", nil, nil).Expect(t, http.StatusNotFound)
	e.Do("GET", "repos/alice/pub/contents/feature.txt?ref="+fr.Commit.SHA[:10], nil, nil).Expect(t, http.StatusOK)
	readme := ctGetFile(t, e, nil, "repos/alice/pub/contents/README.md?ref="+initial)
	if readme.LastCommitSHA != initial {
		t.Fatalf("README at %s: %+v", initial, readme)
	}
	for _, path := range []string{
		"repos/alice/pub/contents/README.md?ref=nope",
		"repos/alice/pub/contents/README.md?ref=0000000000000000000000000000000000000000",
		"repos/alice/pub/contents/missing.md",
		"repos/alice/pub/contents/README.md/deeper",
		"repos/alice/pub/raw/missing.md",
		"repos/alice/pub/raw/README.md?ref=nope",
		"repos/nobody/pub/contents/README.md",
	} {
		e.Do("GET", path, nil, w.owner).Expect(t, http.StatusNotFound)
	}
	// Paths that try to leave the tree or reach .git are refused.
	for _, path := range []string{
		"repos/alice/pub/contents/.git/config",
		"repos/alice/pub/contents/a%5Cb",
		"repos/alice/pub/contents/docs/.GIT",
	} {
		r := e.Do("GET", path, nil, w.owner)
		if r.Status != http.StatusUnprocessableEntity && r.Status != http.StatusNotFound {
			t.Errorf("GET %s: %d %s", path, r.Status, r.Body)
		}
	}
	e.Do("POST", "repos/alice/pub/contents/.git/hooks/pre-receive", map[string]any{"content": b64("x")}, w.owner).
		Expect(t, http.StatusUnprocessableEntity)

	// Raw: by ?ref, and with the ref leading the path as the reference's
	// clients send it.
	for path, want := range map[string]string{
		"repos/alice/pub/raw/feature.txt?ref=feature/one": "feature\n",
		"repos/alice/pub/raw/feature/one/feature.txt":     "feature\n",
		"repos/alice/pub/raw/main/README.md":              roFile(t, repo, "main", "README.md"),
		"repos/alice/pub/raw/README.md":                   roFile(t, repo, "main", "README.md"),
		"repos/alice/pub/raw/" + initial + "/README.md":   roFile(t, repo, "main", "README.md"),
	} {
		r := e.Do("GET", path, nil, nil).Expect(t, http.StatusOK)
		if string(r.Body) != want || r.Header.Get("Content-Type") != "application/octet-stream" {
			t.Errorf("GET %s: %q (%s)", path, r.Body, r.Header.Get("Content-Type"))
		}
	}
}

// TestContentsPermissions drives reads and writes over the callers on a
// public and a private repository, and an archived one.
func TestContentsPermissions(t *testing.T) {
	t.Parallel()
	w := ctSetup(t)
	e := w.e
	org := roCreateOrg(t, e, w.owner, map[string]any{"username": "acme"})
	carl := e.CreateUser("carl", false)
	roAddMember(t, e, org.ID, carl, false, false)
	e.Do("POST", "orgs/acme/repos", map[string]any{"name": "tool", "auto_init": true, "private": true}, w.owner).
		Expect(t, http.StatusCreated)
	admin := apitest.Basic(e.Admin)
	member := apitest.Basic(carl)

	cases := []struct {
		name       string
		cred       apitest.Cred
		repo       string
		read, post int
	}{
		{"anonymous public", nil, "alice/pub", 200, 401},
		{"anonymous private", nil, "alice/priv", 404, 404},
		{"outsider public", w.outsider, "alice/pub", 200, 403},
		{"outsider private", w.outsider, "alice/priv", 404, 404},
		{"owner private", w.owner, "alice/priv", 200, 201},
		{"site admin private", admin, "alice/priv", 200, 201},
		{"org member", member, "acme/tool", 200, 403},
		{"org owner", w.owner, "acme/tool", 200, 201},
		{"read-only token", apitest.TokenCred(e.Token(w.alice, "read:repository")), "alice/priv", 200, 403},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e.Do("GET", "repos/"+c.repo+"/contents/README.md", nil, c.cred).Expect(t, c.read)
			e.Do("GET", "repos/"+c.repo+"/raw/README.md", nil, c.cred).Expect(t, c.read)
			e.Do("GET", "repos/"+c.repo+"/contents", nil, c.cred).Expect(t, c.read)
			e.Do("POST", fmt.Sprintf("repos/%s/contents/f%d.txt", c.repo, i), map[string]any{"content": b64("x")}, c.cred).
				Expect(t, c.post)
		})
	}

	// An archived repository refuses every write with 423 and keeps its
	// tree; reads go on.
	f := ctGetFile(t, e, w.owner, "repos/alice/pub/contents/README.md")
	e.Do("PATCH", "repos/alice/pub", map[string]any{"archived": true}, w.owner).Expect(t, http.StatusOK)
	before := ctBranchCommit(t, roGit(t, e, "alice", "pub"), "main").Hash
	e.Do("POST", "repos/alice/pub/contents/new.txt", map[string]any{"content": b64("x")}, w.owner).Expect(t, http.StatusLocked)
	e.Do("PUT", "repos/alice/pub/contents/README.md", map[string]any{"content": b64("x"), "sha": f.SHA}, w.owner).Expect(t, http.StatusLocked)
	e.Do("DELETE", "repos/alice/pub/contents/README.md", map[string]any{"sha": f.SHA}, w.owner).Expect(t, http.StatusLocked)
	if after := ctBranchCommit(t, roGit(t, e, "alice", "pub"), "main").Hash; after != before {
		t.Fatal("archived repository changed")
	}
	ctGetFile(t, e, nil, "repos/alice/pub/contents/README.md")
}

func TestContentsEmptyRepository(t *testing.T) {
	t.Parallel()
	w := ctSetup(t)
	e := w.e
	roCreateRepo(t, e, w.owner, map[string]any{"name": "empty", "default_branch": "trunk"})
	if got := ctGetDir(t, e, nil, "repos/alice/empty/contents"); len(got) != 0 {
		t.Fatalf("empty repository lists %v", got)
	}
	e.Do("GET", "repos/alice/empty/contents/README.md", nil, nil).Expect(t, http.StatusNotFound)
	e.Do("GET", "repos/alice/empty/raw/README.md", nil, nil).Expect(t, http.StatusNotFound)
	e.Do("PUT", "repos/alice/empty/contents/README.md", map[string]any{"content": b64("x"), "sha": "abc"}, w.owner).
		Expect(t, http.StatusNotFound)
	e.Do("POST", "repos/alice/empty/contents/src/main.go", map[string]any{"content": b64("package main\n")}, w.owner).
		Expect(t, http.StatusCreated)
	var r models.Repository
	e.Do("GET", "repos/alice/empty", nil, nil).Expect(t, http.StatusOK).JSON(t, &r)
	if r.Empty || r.DefaultBranch != "trunk" {
		t.Fatalf("after the first commit: empty=%v default=%q", r.Empty, r.DefaultBranch)
	}
	c := ctBranchCommit(t, roGit(t, e, "alice", "empty"), "trunk")
	if c.NumParents() != 0 || c.Message != "Add src/main.go\n" {
		t.Fatalf("first commit %+v", c)
	}
	if got := ctNames(ctGetDir(t, e, nil, "repos/alice/empty/contents")); got != "src:dir" {
		t.Fatalf("listing %s", got)
	}
}

// TestContentsConcurrentWriters: parallel commits to one branch either land
// (201) or lose the race cleanly (409); no landed commit is ever lost.
func TestContentsConcurrentWriters(t *testing.T) {
	t.Parallel()
	w := ctSetup(t)
	e := w.e
	const n = 12
	statuses := make([]int, n)
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			r := e.DoFor(t, "POST", fmt.Sprintf("repos/alice/pub/contents/c/%02d.txt", i), map[string]any{"content": b64("x")}, w.owner)
			statuses[i] = r.Status
		}(i)
	}
	wg.Wait()
	repo := roGit(t, e, "alice", "pub")
	landed := 0
	for i, s := range statuses {
		has := ctHasFile(t, repo, "main", fmt.Sprintf("c/%02d.txt", i))
		switch s {
		case http.StatusCreated:
			landed++
			if !has {
				t.Errorf("writer %d got 201 but its file is not on main", i)
			}
		case http.StatusConflict:
			if has {
				t.Errorf("writer %d got 409 but its file is on main", i)
			}
		default:
			t.Errorf("writer %d: status %d", i, s)
		}
	}
	if landed == 0 {
		t.Fatal("no writer succeeded")
	}
	// The history is linear: one commit per landed writer on top of the
	// initial commit.
	count := 0
	for c := ctBranchCommit(t, repo, "main"); ; count++ {
		if c.NumParents() == 0 {
			break
		}
		p, err := c.Parent(0)
		if err != nil {
			t.Fatal(err)
		}
		c = p
	}
	if count != landed {
		t.Fatalf("%d commits on main for %d successful writers", count, landed)
	}
}

// TestContentsRespectBranchProtection: a commit through the contents API is
// a push to its branch, so a protection rule that forbids pushing refuses it.
func TestContentsRespectBranchProtection(t *testing.T) {
	t.Parallel()
	w := ctSetup(t)
	e := w.e
	e.Do("POST", "repos/alice/pub/branch_protections", map[string]any{"rule_name": "main"}, w.owner).Expect(t, http.StatusCreated)
	before := ctBranchCommit(t, roGit(t, e, "alice", "pub"), "main").Hash
	e.Do("POST", "repos/alice/pub/contents/blocked.txt", map[string]any{"content": b64("x")}, w.owner).
		Expect(t, http.StatusForbidden)
	if ctBranchCommit(t, roGit(t, e, "alice", "pub"), "main").Hash != before {
		t.Fatal("a refused commit moved the protected branch")
	}
	// Into a new branch the commit is fine; pushing is allowed again once
	// the rule lets the owner push.
	e.Do("POST", "repos/alice/pub/contents/ok.txt", map[string]any{"content": b64("x"), "new_branch": "side"}, w.owner).
		Expect(t, http.StatusCreated)
	e.Do("PATCH", "repos/alice/pub/branch_protections/main", map[string]any{"enable_push": true}, w.owner).Expect(t, http.StatusOK)
	e.Do("POST", "repos/alice/pub/contents/blocked.txt", map[string]any{"content": b64("x")}, w.owner).
		Expect(t, http.StatusCreated)
}

// TestContentsWriteValidGitObjects: trees written through the contents API
// keep git's entry order (a directory sorts as if its name ended in "/"),
// so git itself accepts them, and a clone sees the files and tags.
func TestContentsWriteValidGitObjects(t *testing.T) {
	t.Parallel()
	w := ctSetup(t)
	e := w.e
	g := newGitCLI(t)
	for _, f := range []string{"a/x.txt", "a.txt", "a0.txt", "a-b.txt", "a/b/c.txt", "b.txt"} {
		e.Do("POST", "repos/alice/pub/contents/"+f, map[string]any{"content": b64(f)}, w.owner).Expect(t, http.StatusCreated)
	}
	f := ctGetFile(t, e, nil, "repos/alice/pub/contents/a/x.txt")
	e.Do("DELETE", "repos/alice/pub/contents/a/x.txt", map[string]any{"sha": f.SHA}, w.owner).Expect(t, http.StatusOK)
	e.Do("POST", "repos/alice/pub/tags", map[string]any{"tag_name": "v1", "message": "annotated"}, w.owner).Expect(t, http.StatusCreated)
	path, err := e.Deps.Git.Path("alice", "pub")
	if err != nil {
		t.Fatal(err)
	}
	g.must(path, "fsck", "--strict", "--no-dangling")
	clone := t.TempDir()
	g.must(clone, "clone", "-q", path, "work")
	out := g.must(filepath.Join(clone, "work"), "ls-files")
	if want := "README.md\na-b.txt\na.txt\na/b/c.txt\na0.txt\nb.txt\n"; out != want {
		t.Fatalf("ls-files:\n%s\nwant:\n%s", out, want)
	}
	if out := g.must(filepath.Join(clone, "work"), "tag", "-n1"); !strings.Contains(out, "v1") || !strings.Contains(out, "annotated") {
		t.Fatalf("tags: %s", out)
	}
}

// TestContentsNewBranchForcePush (regression): new_branch naming an
// existing branch with force_push rewrites that branch, which is a force
// push. It used to bypass branch protection (201 on a branch whose rule
// forbids force pushes); the one push policy now refuses it with 403, as a
// git push --force is refused, and lets it through where the rule allows.
func TestContentsNewBranchForcePush(t *testing.T) {
	t.Parallel()
	w := ctSetup(t)
	e := w.e
	// "guarded" has a commit main lacks, so a commit built on main is not
	// a fast-forward of it.
	e.Do("POST", "repos/alice/pub/branches", map[string]any{"new_branch_name": "guarded"}, w.owner).Expect(t, http.StatusCreated)
	e.Do("POST", "repos/alice/pub/contents/only-here.txt", map[string]any{"content": b64("g"), "branch": "guarded"}, w.owner).
		Expect(t, http.StatusCreated)
	e.Do("POST", "repos/alice/pub/branch_protections", map[string]any{"rule_name": "guarded", "enable_push": true}, w.owner).
		Expect(t, http.StatusCreated)
	before := ctBranchCommit(t, roGit(t, e, "alice", "pub"), "guarded").Hash
	rewrite := map[string]any{"content": b64("x"), "branch": "main", "new_branch": "guarded", "force_push": true}

	r := e.Do("POST", "repos/alice/pub/contents/rewrite.txt", rewrite, w.owner).Expect(t, http.StatusForbidden)
	var body models.APIError
	r.JSON(t, &body)
	if body.Message != "branch guarded is protected from force push" {
		t.Errorf("refusal message %q", body.Message)
	}
	if ctBranchCommit(t, roGit(t, e, "alice", "pub"), "guarded").Hash != before {
		t.Fatal("a refused force push through the contents API rewrote the protected branch")
	}
	// The same through update and delete.
	f := ctGetFile(t, e, nil, "repos/alice/pub/contents/README.md")
	e.Do("PUT", "repos/alice/pub/contents/README.md", map[string]any{"content": b64("y"), "sha": f.SHA,
		"branch": "main", "new_branch": "guarded", "force_push": true}, w.owner).Expect(t, http.StatusForbidden)
	e.Do("DELETE", "repos/alice/pub/contents/README.md", map[string]any{"sha": f.SHA,
		"branch": "main", "new_branch": "guarded", "force_push": true}, w.owner).Expect(t, http.StatusForbidden)
	if ctBranchCommit(t, roGit(t, e, "alice", "pub"), "guarded").Hash != before {
		t.Fatal("the protected branch moved")
	}
	// Without force_push an existing new_branch is refused as before.
	delete(rewrite, "force_push")
	e.Do("POST", "repos/alice/pub/contents/rewrite.txt", rewrite, w.owner).Expect(t, http.StatusUnprocessableEntity)

	// Where the rule allows force pushes, the rewrite goes through; an
	// unprotected branch always took it.
	e.Do("PATCH", "repos/alice/pub/branch_protections/guarded", map[string]any{"enable_force_push": true}, w.owner).
		Expect(t, http.StatusOK)
	rewrite["force_push"] = true
	var fr models.FileResponse
	e.Do("POST", "repos/alice/pub/contents/rewrite.txt", rewrite, w.owner).Expect(t, http.StatusCreated).JSON(t, &fr)
	got := ctBranchCommit(t, roGit(t, e, "alice", "pub"), "guarded")
	if got.Hash.String() != fr.Commit.SHA || got.NumParents() != 1 || got.ParentHashes[0] == before {
		t.Fatalf("guarded after an allowed force push: %s (parents %v)", got.Hash, got.ParentHashes)
	}
}
