package apitest_test

import (
	"encoding/base64"
	"fmt"
	"net/http"
	"os/exec"
	"strings"
	"testing"

	"repohost/apitest"
	"repohost/models"
)

// gdSeed is alice's repository proj (auto-initialised), cloned, with two
// more commits pushed: one adding dir/sub/b.txt and one changing a.txt;
// and a second private repository.
type gdWorld struct {
	e           *apitest.Env
	git         *gitCLI
	clone       string
	owner, bob  apitest.Cred
	first, last string
}

func gdSeed(t *testing.T) *gdWorld {
	t.Helper()
	e := apitest.New(t)
	alice, bob := e.CreateUser("alice", false), e.CreateUser("bob", false)
	tok := e.Token(alice, "write:repository")
	w := &gdWorld{e: e, git: newGitCLI(t), owner: apitest.TokenCred(tok), bob: apitest.Basic(bob)}
	w.clone = brSeed(t, e, w.git, alice, tok, "proj", false)
	w.first = strings.TrimSpace(w.git.must(w.clone, "rev-parse", "HEAD"))
	w.git.commitFile(w.clone, "dir/sub/b.txt", "bee\n", "add b")
	w.last = w.git.commitFile(w.clone, "a.txt", "one\ntwo\n", "add a")
	w.git.must(w.clone, "push", "-q", "origin", "main")
	roCreateRepo(t, e, w.owner, map[string]any{"name": "secret", "auto_init": true, "private": true})
	return w
}

func TestGitRefs(t *testing.T) {
	t.Parallel()
	w := gdSeed(t)
	e := w.e
	e.Do("POST", "repos/alice/proj/branches", map[string]any{"new_branch_name": "feature/x"}, w.owner).Expect(t, http.StatusCreated)
	var tag models.Tag
	e.Do("POST", "repos/alice/proj/tags", map[string]any{"tag_name": "v1", "message": "first release"}, w.owner).
		Expect(t, http.StatusCreated).JSON(t, &tag)

	names := func(refs []*models.Reference) string {
		var out []string
		for _, r := range refs {
			out = append(out, r.Ref)
		}
		return strings.Join(out, ",")
	}
	var refs []*models.Reference
	e.Do("GET", "repos/alice/proj/git/refs", nil, nil).Expect(t, http.StatusOK).JSON(t, &refs)
	if names(refs) != "refs/heads/feature/x,refs/heads/main,refs/tags/v1" {
		t.Fatalf("all refs: %s", names(refs))
	}
	for _, r := range refs {
		switch r.Ref {
		case "refs/heads/main":
			if r.Object.SHA != w.last || r.Object.Type != "commit" || !strings.HasSuffix(r.Object.URL, "/repos/alice/proj/git/commits/"+w.last) ||
				!strings.HasSuffix(r.URL, "/repos/alice/proj/git/refs/heads/main") {
				t.Fatalf("main: %+v %+v", r, r.Object)
			}
		case "refs/tags/v1":
			// An annotated tag points at its tag object.
			if r.Object.SHA != tag.ID || r.Object.Type != "tag" || !strings.HasSuffix(r.Object.URL, "/git/tags/"+tag.ID) {
				t.Fatalf("v1: %+v", r.Object)
			}
		}
	}
	// A prefix, by string as the reference matches it; slashes unescaped.
	for path, want := range map[string]string{
		"heads":               "refs/heads/feature/x,refs/heads/main",
		"heads/fea":           "refs/heads/feature/x",
		"heads/feature/x":     "refs/heads/feature/x",
		"refs/tags/v1":        "refs/tags/v1",
		"tags":                "refs/tags/v1",
		"heads/main/":         "refs/heads/main",
		"heads%2Ffeature%2Fx": "refs/heads/feature/x",
	} {
		e.Do("GET", "repos/alice/proj/git/refs/"+path, nil, nil).Expect(t, http.StatusOK).JSON(t, &refs)
		if names(refs) != want {
			t.Errorf("refs/%s: %s, want %s", path, names(refs), want)
		}
	}
	e.Do("GET", "repos/alice/proj/git/refs/heads/nope", nil, nil).Expect(t, http.StatusNotFound)
	// A private repository is missing to an outsider.
	e.Do("GET", "repos/alice/secret/git/refs", nil, w.bob).Expect(t, http.StatusNotFound)
	e.Do("GET", "repos/alice/secret/git/refs/heads", nil, nil).Expect(t, http.StatusNotFound)
	e.Do("GET", "repos/alice/secret/git/refs/heads", nil, w.owner).Expect(t, http.StatusOK)
}

func TestGitTreesAndBlobs(t *testing.T) {
	t.Parallel()
	w := gdSeed(t)
	e := w.e
	ls := strings.Fields(w.git.must(w.clone, "ls-tree", "-r", "-t", "-l", "HEAD"))
	// ls-tree -r -t -l: mode type sha size path, per entry.
	type entry struct{ mode, typ, sha, size, path string }
	var want []entry
	for i := 0; i+5 <= len(ls); i += 5 {
		want = append(want, entry{ls[i], ls[i+1], ls[i+2], ls[i+3], ls[i+4]})
	}
	treeID := strings.TrimSpace(w.git.must(w.clone, "rev-parse", "HEAD^{tree}"))

	var tr models.GitTreeResponse
	e.Do("GET", "repos/alice/proj/git/trees/main?recursive=true", nil, nil).Expect(t, http.StatusOK).JSON(t, &tr)
	if tr.SHA != treeID || tr.TotalCount != int64(len(want)) || tr.Truncated || tr.Page != 1 || len(tr.Entries) != len(want) {
		t.Fatalf("recursive tree %+v, want %d entries of %s", tr, len(want), treeID)
	}
	for i, g := range tr.Entries {
		size := fmt.Sprint(g.Size)
		if g.Type != "blob" {
			size = "-"
		}
		got := entry{g.Mode, g.Type, g.SHA, size, g.Path}
		if got != want[i] {
			t.Errorf("entry %d: %+v, want %+v", i, got, want[i])
		}
		if wantURL := "/git/" + g.Type + "s/" + g.SHA; !strings.HasSuffix(g.URL, wantURL) {
			t.Errorf("entry %s url %s", g.Path, g.URL)
		}
	}
	// Not recursive: the top level only; by the tree's own id and by a commit id.
	for _, rev := range []string{treeID, w.last} {
		e.Do("GET", "repos/alice/proj/git/trees/"+rev, nil, nil).Expect(t, http.StatusOK).JSON(t, &tr)
		var paths []string
		for _, g := range tr.Entries {
			paths = append(paths, g.Path)
		}
		if strings.Join(paths, ",") != "README.md,a.txt,dir" || tr.TotalCount != 3 {
			t.Fatalf("top level by %s: %v", rev, paths)
		}
	}
	// Pages: truncated whenever the tree does not fit on one page.
	e.Do("GET", "repos/alice/proj/git/trees/main?recursive=1&per_page=2&page=2", nil, nil).Expect(t, http.StatusOK).JSON(t, &tr)
	if !tr.Truncated || tr.Page != 2 || len(tr.Entries) != 2 || tr.Entries[0].Path != want[2].path || tr.TotalCount != int64(len(want)) {
		t.Fatalf("page 2: %+v", tr)
	}
	e.Do("GET", "repos/alice/proj/git/trees/main?recursive=1&per_page=2&page=9", nil, nil).Expect(t, http.StatusOK).JSON(t, &tr)
	if len(tr.Entries) != 0 || !tr.Truncated {
		t.Fatalf("past the end: %+v", tr)
	}
	e.Do("GET", "repos/alice/proj/git/trees/nope", nil, nil).Expect(t, http.StatusNotFound)
	e.Do("GET", "repos/alice/secret/git/trees/main", nil, w.bob).Expect(t, http.StatusNotFound)

	// Blobs: base64 of the content.
	var blobSHA string
	for _, x := range want {
		if x.path == "a.txt" {
			blobSHA = x.sha
		}
	}
	var b models.GitBlobResponse
	e.Do("GET", "repos/alice/proj/git/blobs/"+blobSHA, nil, nil).Expect(t, http.StatusOK).JSON(t, &b)
	content, _ := base64.StdEncoding.DecodeString(b.Content)
	if string(content) != "one\ntwo\n" || b.Encoding != "base64" || b.Size != 8 || b.SHA != blobSHA || !strings.HasSuffix(b.URL, "/git/blobs/"+blobSHA) {
		t.Fatalf("blob %+v", b)
	}
	e.Do("GET", "repos/alice/proj/git/blobs/not-a-sha", nil, nil).Expect(t, http.StatusBadRequest)
	e.Do("GET", "repos/alice/proj/git/blobs/"+strings.Repeat("0", 40), nil, nil).Expect(t, http.StatusNotFound)
	// A tree is not a blob.
	e.Do("GET", "repos/alice/proj/git/blobs/"+treeID, nil, nil).Expect(t, http.StatusNotFound)
}

func TestGitAnnotatedTagAndCommitDiff(t *testing.T) {
	t.Parallel()
	w := gdSeed(t)
	e := w.e
	var tag models.Tag
	e.Do("POST", "repos/alice/proj/tags", map[string]any{"tag_name": "v1", "target": w.first, "message": "first release"}, w.owner).
		Expect(t, http.StatusCreated).JSON(t, &tag)
	var at models.AnnotatedTag
	e.Do("GET", "repos/alice/proj/git/tags/"+tag.ID, nil, nil).Expect(t, http.StatusOK).JSON(t, &at)
	if at.Tag != "v1" || at.SHA != tag.ID || at.Message != "first release\n" || at.Object.SHA != w.first || at.Object.Type != "commit" ||
		at.Tagger.Email != "alice@example.com" || at.Verification == nil || at.Verification.Verified ||
		!strings.HasSuffix(at.URL, "/git/tags/"+tag.ID) {
		t.Fatalf("annotated tag %+v %+v", at, at.Object)
	}
	// A commit is no tag object.
	e.Do("GET", "repos/alice/proj/git/tags/"+w.first, nil, nil).Expect(t, http.StatusNotFound)
	e.Do("GET", "repos/alice/proj/git/tags/v1", nil, nil).Expect(t, http.StatusBadRequest)

	// A commit's diff and patch are git's own.
	gitOut := func(args ...string) string {
		cmd := exec.Command("git", args...)
		cmd.Dir = w.clone
		out, err := cmd.Output()
		if err != nil {
			t.Fatal(err)
		}
		return string(out)
	}
	diff := e.Do("GET", "repos/alice/proj/git/commits/"+w.last+".diff", nil, nil).Expect(t, http.StatusOK)
	if got, want := string(diff.Body), gitOut("diff", "-M", w.last+"~1", w.last); got != want || !strings.Contains(got, "+two") {
		t.Fatalf("diff:\n%s\nwant:\n%s", got, want)
	}
	patch := e.Do("GET", "repos/alice/proj/git/commits/"+w.last+".patch", nil, nil).Expect(t, http.StatusOK)
	if !strings.Contains(string(patch.Body), "Subject: [PATCH] add a\n") || !strings.Contains(string(patch.Body), gitOut("diff", w.last+"~1", w.last)) {
		t.Fatalf("patch:\n%s", patch.Body)
	}
	// The root commit: everything it adds; a ref names the commit too.
	root := e.Do("GET", "repos/alice/proj/git/commits/"+w.first+".diff", nil, nil).Expect(t, http.StatusOK)
	if !strings.HasPrefix(string(root.Body), "diff --git a/README.md b/README.md\nnew file mode 100644\n") {
		t.Fatalf("root diff:\n%s", root.Body)
	}
	e.Do("GET", "repos/alice/proj/git/commits/v1.patch", nil, nil).Expect(t, http.StatusOK)
	e.Do("GET", "repos/alice/proj/git/commits/"+strings.Repeat("1", 40)+".diff", nil, nil).Expect(t, http.StatusNotFound)
	e.Do("GET", "repos/alice/secret/git/commits/main.diff", nil, w.bob).Expect(t, http.StatusNotFound)
	// The plain commit route still answers beside them.
	var c models.Commit
	e.Do("GET", "repos/alice/proj/git/commits/"+w.last, nil, nil).Expect(t, http.StatusOK).JSON(t, &c)
	if c.SHA != w.last {
		t.Fatalf("commit %s", c.SHA)
	}
}

func TestRepoLanguages(t *testing.T) {
	t.Parallel()
	w := gdSeed(t)
	e := w.e
	goSrc := "package main\n\nfunc main() {}\n"
	pySrc := "print('hi')\n"
	w.git.commitFile(w.clone, "cmd/main.go", goSrc, "go")
	w.git.commitFile(w.clone, "tools/run.py", pySrc, "py")
	w.git.commitFile(w.clone, "vendor/lib/x.go", goSrc+goSrc, "vendored")
	w.git.commitFile(w.clone, "docs/guide.py", pySrc+pySrc, "docs")
	w.git.must(w.clone, "push", "-q", "origin", "main")

	get := func() (map[string]int64, int64) {
		before := e.Statements()
		var out map[string]int64
		e.Do("GET", "repos/alice/proj/languages", nil, nil).Expect(t, http.StatusOK).JSON(t, &out)
		return out, e.Statements() - before
	}
	first, n1 := get()
	if len(first) != 2 || first["Go"] != int64(len(goSrc)) || first["Python"] != int64(len(pySrc)) {
		t.Fatalf("languages %v", first)
	}
	// The same tree again is read from the cache: no write.
	again, n2 := get()
	if len(again) != 2 || again["Go"] != first["Go"] || n2 >= n1 {
		t.Fatalf("again %v: %d statements after %d", again, n2, n1)
	}
	// A new tree is counted afresh.
	w.git.commitFile(w.clone, "cmd/more.go", goSrc, "more go")
	w.git.must(w.clone, "push", "-q", "origin", "main")
	if next, _ := get(); next["Go"] != 2*int64(len(goSrc)) {
		t.Fatalf("after a push %v", next)
	}
	e.Do("GET", "repos/alice/secret/languages", nil, w.bob).Expect(t, http.StatusNotFound)
	var empty map[string]int64
	roCreateRepo(t, e, w.owner, map[string]any{"name": "bare"})
	e.Do("GET", "repos/alice/bare/languages", nil, nil).Expect(t, http.StatusOK).JSON(t, &empty)
	if len(empty) != 0 {
		t.Fatalf("empty repository %v", empty)
	}
}

func TestRepoCompare(t *testing.T) {
	t.Parallel()
	w := gdSeed(t)
	e := w.e
	// feature/x forks at first and gains one commit; main has two more.
	w.git.must(w.clone, "checkout", "-q", "-b", "feature/x", w.first)
	side := w.git.commitFile(w.clone, "side.txt", "s\n", "side")
	w.git.must(w.clone, "push", "-q", "origin", "feature/x")

	var cmp models.Compare
	e.Do("GET", "repos/alice/proj/compare/main...feature/x", nil, nil).Expect(t, http.StatusOK).JSON(t, &cmp)
	if cmp.TotalCommits != 1 || len(cmp.Commits) != 1 || cmp.Commits[0].SHA != side || len(cmp.Commits[0].Files) != 1 {
		t.Fatalf("main...feature/x: %+v", cmp)
	}
	e.Do("GET", "repos/alice/proj/compare/feature/x..."+w.last, nil, nil).Expect(t, http.StatusOK).JSON(t, &cmp)
	if cmp.TotalCommits != 2 || cmp.Commits[1].SHA != w.last {
		t.Fatalf("feature/x...main: %d", cmp.TotalCommits)
	}
	// Two dots: what head has and base lacks, here the same.
	e.Do("GET", "repos/alice/proj/compare/feature/x..main", nil, nil).Expect(t, http.StatusOK).JSON(t, &cmp)
	if cmp.TotalCommits != 2 {
		t.Fatalf("feature/x..main: %d", cmp.TotalCommits)
	}
	// The same comparison as a raw diff and as patches (output).
	diff := e.Do("GET", "repos/alice/proj/compare/main...feature/x?output=diff", nil, nil).Expect(t, http.StatusOK)
	if ct := diff.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain") ||
		!strings.HasPrefix(string(diff.Body), "diff --git a/side.txt b/side.txt") || strings.Contains(string(diff.Body), "From "+side) {
		t.Fatalf("output=diff: %s\n%s", ct, diff.Body)
	}
	patch := e.Do("GET", "repos/alice/proj/compare/feature/x..main?output=patch", nil, nil).Expect(t, http.StatusOK)
	if n := strings.Count(string(patch.Body), "\nSubject: [PATCH "); !strings.HasPrefix(string(patch.Body), "From ") || n != 2 ||
		!strings.Contains(string(patch.Body), "From "+w.last) {
		t.Fatalf("output=patch (%d patches):\n%s", n, patch.Body)
	}
	e.Do("GET", "repos/alice/proj/compare/main...feature/x?output=json", nil, nil).Expect(t, http.StatusUnprocessableEntity)
	e.Do("GET", "repos/alice/proj/compare/main...nope?output=diff", nil, nil).Expect(t, http.StatusNotFound)
	e.Do("GET", "repos/alice/secret/compare/main...main?output=patch", nil, w.bob).Expect(t, http.StatusNotFound)
	e.Do("GET", "repos/alice/proj/compare/main", nil, nil).Expect(t, http.StatusUnprocessableEntity)
	e.Do("GET", "repos/alice/proj/compare/main...nope", nil, nil).Expect(t, http.StatusNotFound)
	e.Do("GET", "repos/alice/secret/compare/main...main", nil, w.bob).Expect(t, http.StatusNotFound)
}
