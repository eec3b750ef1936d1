package apitest_test

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"repohost/apitest"
	"repohost/models"
)

var sha256ID = regexp.MustCompile(`^[0-9a-f]{64}$`)

// TestSHA256Repositories: SHA-256 repositories are created, stored and
// answered as such, adopted with their history, cloned, fetched and
// pushed to by the real git client over HTTP and SSH, and read through
// the API.
func TestSHA256Repositories(t *testing.T) {
	t.Parallel()
	requireTools(t, "git", "ssh")
	e := apitest.New(t)
	addr := startSSH(t, e)
	g := newGitCLI(t)
	alice := e.CreateUser("alice", false)
	cred := apitest.Basic(alice)
	key := newSSHClientKey(t)
	e.Do("POST", "user/keys", map[string]any{"title": "a", "key": key.line}, cred).Expect(t, http.StatusCreated)
	sshURL := func(repo string) string { return "ssh://git@" + addr + "/alice/" + repo + ".git" }

	// Creation: sha256 on request, sha1 explicitly or by default, anything
	// else refused; the format is stored and in every answer.
	if r := roCreateRepo(t, e, cred, map[string]any{"name": "h", "object_format_name": "sha256"}); r.ObjectFormatName != "sha256" || !r.Empty {
		t.Fatalf("created: format %q empty %v, want sha256 and empty", r.ObjectFormatName, r.Empty)
	}
	if r := roCreateRepo(t, e, cred, map[string]any{"name": "one", "object_format_name": "sha1", "auto_init": true}); r.ObjectFormatName != "sha1" {
		t.Fatalf("sha1 repository answers %q", r.ObjectFormatName)
	}
	if r := roCreateRepo(t, e, cred, map[string]any{"name": "dflt", "object_format_name": ""}); r.ObjectFormatName != "sha1" {
		t.Fatalf("default repository answers %q", r.ObjectFormatName)
	}
	for _, body := range []map[string]any{
		{"name": "bad", "object_format_name": "md5"},
		{"name": "bad", "object_format_name": "SHA256"},
	} {
		e.Do("POST", "user/repos", body, cred).Expect(t, http.StatusUnprocessableEntity)
	}
	if roGitExists(t, e, "alice", "bad") {
		t.Fatal("a refused create left a directory behind")
	}
	var got models.Repository
	e.Do("GET", "repos/alice/h", nil, cred).Expect(t, http.StatusOK).JSON(t, &got)
	if got.ObjectFormatName != "sha256" {
		t.Fatalf("GET answers object_format_name %q", got.ObjectFormatName)
	}
	var mine []*models.Repository
	e.Do("GET", "user/repos", nil, cred).Expect(t, http.StatusOK).JSON(t, &mine)
	formats := map[string]string{}
	for _, r := range mine {
		formats[r.Name] = r.ObjectFormatName
	}
	if formats["h"] != "sha256" || formats["one"] != "sha1" || formats["dflt"] != "sha1" {
		t.Fatalf("listed formats %v", formats)
	}
	dir, err := e.Deps.Git.Path("alice", "h")
	if err != nil {
		t.Fatal(err)
	}
	if f := strings.TrimSpace(g.must(dir, "rev-parse", "--show-object-format")); f != "sha256" {
		t.Fatalf("repository on disk has object format %q", f)
	}

	// The default branch of the empty repository moves.
	e.Do("PATCH", "repos/alice/h", map[string]any{"default_branch": "trunk"}, cred).Expect(t, http.StatusOK).JSON(t, &got)
	if head := strings.TrimSpace(g.must(dir, "symbolic-ref", "HEAD")); got.DefaultBranch != "trunk" || head != "refs/heads/trunk" {
		t.Fatalf("default branch %q, HEAD %q", got.DefaultBranch, head)
	}

	// The empty repository clones over HTTP and SSH and takes pushes over
	// both.
	work := t.TempDir()
	g.must(work, "clone", "-q", gitURL(e, "alice", alice.Password, "alice", "h"), "h")
	mustSSHGit(t, key, work, "clone", "-q", sshURL("h"), "h-ssh")
	local := filepath.Join(work, "local")
	g.must(work, "init", "-q", "--object-format=sha256", "-b", "trunk", "local")
	first := g.commitFile(local, "a.txt", "one\n", "one")
	if !sha256ID.MatchString(first) {
		t.Fatalf("local commit id %q", first)
	}
	g.must(local, "push", "-q", gitURL(e, "alice", alice.Password, "alice", "h"), "trunk")
	g.must(local, "checkout", "-q", "-b", "side")
	side := g.commitFile(local, "s.txt", "side\n", "side")
	mustSSHGit(t, key, local, "push", "-q", sshURL("h"), "side")
	g.must(local, "checkout", "-q", "trunk")
	if b := ghBranch(t, e, cred, "alice", "h", "trunk"); b.Commit.ID != first {
		t.Fatalf("pushed trunk is %s, want %s", b.Commit.ID, first)
	}
	if b := ghBranch(t, e, cred, "alice", "h", "side"); b.Commit.ID != side {
		t.Fatalf("pushed side is %s, want %s", b.Commit.ID, side)
	}
	e.Do("GET", "repos/alice/h", nil, cred).Expect(t, http.StatusOK).JSON(t, &got)
	if got.Empty || got.ObjectFormatName != "sha256" {
		t.Fatalf("after the push: empty %v format %q", got.Empty, got.ObjectFormatName)
	}
	mustSSHGit(t, key, local, "push", "-q", sshURL("h"), ":side")
	e.Do("GET", "repos/alice/h/branches/side", nil, cred).Expect(t, http.StatusNotFound)
	if out, err := g.run(dir, "fsck", "--strict"); err != nil {
		t.Fatalf("git fsck: %v\n%s", err, out)
	}

	// A SHA-256 directory with history is adopted with its format, branch
	// and emptiness, then cloned and fetched over HTTP and SSH.
	adopted, err := e.Deps.Git.Path("alice", "old")
	if err != nil {
		t.Fatal(err)
	}
	g.must(work, "clone", "-q", "--bare", local, adopted)
	e.Do("POST", "admin/unadopted/alice/old", nil, apitest.Basic(e.Admin)).Expect(t, http.StatusNoContent)
	e.Do("GET", "repos/alice/old", nil, cred).Expect(t, http.StatusOK).JSON(t, &got)
	if got.ObjectFormatName != "sha256" || got.DefaultBranch != "trunk" || got.Empty {
		t.Fatalf("adopted: format %q branch %q empty %v", got.ObjectFormatName, got.DefaultBranch, got.Empty)
	}
	g.must(work, "clone", "-q", gitURL(e, "alice", alice.Password, "alice", "old"), "old-http")
	mustSSHGit(t, key, work, "clone", "-q", sshURL("old"), "old-ssh")
	for _, c := range []string{"old-http", "old-ssh"} {
		clone := filepath.Join(work, c)
		if h := strings.TrimSpace(g.must(clone, "rev-parse", "HEAD")); h != first {
			t.Fatalf("%s: HEAD %s, want %s", c, h, first)
		}
		if b, err := os.ReadFile(filepath.Join(clone, "a.txt")); err != nil || string(b) != "one\n" {
			t.Fatalf("%s: a.txt %q %v", c, b, err)
		}
	}
	second := g.commitFile(local, "b.txt", "two\n", "two")
	g.must(local, "push", "-q", adopted, "trunk") // straight into the directory, as an upstream would
	g.must(filepath.Join(work, "old-http"), "fetch", "-q", "origin")
	mustSSHGit(t, key, filepath.Join(work, "old-ssh"), "fetch", "-q", "origin")
	for _, c := range []string{"old-http", "old-ssh"} {
		if h := strings.TrimSpace(g.must(filepath.Join(work, c), "rev-parse", "origin/trunk")); h != second {
			t.Fatalf("%s fetched %s, want %s", c, h, second)
		}
	}

	// The API reads the adopted repository's objects.
	for _, op := range []string{
		"repos/alice/old/branches", "repos/alice/old/branches/trunk", "repos/alice/old/contents/a.txt",
		"repos/alice/old/raw/a.txt", "repos/alice/old/commits", "repos/alice/old/compare/trunk...trunk",
		"repos/alice/old/archive/trunk.zip", "repos/alice/old/archive/trunk.tar.gz", "repos/alice/old/tags",
		"repos/alice/old/languages", "repos/alice/old/git/commits/" + second, "repos/alice/old/git/trees/trunk",
	} {
		e.Do("GET", op, nil, cred).Expect(t, http.StatusOK)
	}

	// Deleting removes the files.
	e.Do("DELETE", "repos/alice/old", nil, cred).Expect(t, http.StatusNoContent)
	e.Do("DELETE", "repos/alice/h", nil, cred).Expect(t, http.StatusNoContent)
	if roGitExists(t, e, "alice", "old") || roGitExists(t, e, "alice", "h") {
		t.Fatal("a deleted SHA-256 repository left its directory")
	}
}

// TestSHA256WebhookTest: the test delivery of a SHA-256 repository's hook
// names the format's zero id, 64 digits.
func TestSHA256WebhookTest(t *testing.T) {
	t.Parallel()
	e := hookEnv(t)
	alice := e.CreateUser("alice", false)
	a := apitest.Basic(alice)
	roCreateRepo(t, e, a, map[string]any{"name": "h", "object_format_name": "sha256"})
	rc := newReceiver(t)
	h := mkHook(t, e, a, "repos/alice/h/hooks", giteaHook(rc.URL, "push"))
	e.Do("POST", fmt.Sprintf("repos/alice/h/hooks/%d/tests", h.ID), nil, a).Expect(t, http.StatusNoContent)
	test := rc.waitFor(t, 1, 10*time.Second)[0]
	p := checkShape(t, test)
	zero := strings.Repeat("0", 64)
	if test.typ() != "push" || p["before"] != zero || p["after"] != zero || p["ref"] != "refs/heads/main" {
		t.Errorf("test delivery %s", test.Body)
	}
}

// TestSHA256Workflow: every git operation of the server on a SHA-256
// repository made with auto_init: the git client clones, pushes a branch
// and fetches; the API reads contents, branches, commits, diffs, trees
// and archives, writes files, tags and releases, and merges pull requests
// (merge and squash), every id 64 digits, the history sound (git fsck).
func TestSHA256Workflow(t *testing.T) {
	t.Parallel()
	requireTools(t, "git")
	e := apitest.New(t)
	g := newGitCLI(t)
	alice := e.CreateUser("alice", false)
	cred := apitest.Basic(alice)
	repo := roCreateRepo(t, e, cred, map[string]any{"name": "w", "object_format_name": "sha256", "auto_init": true, "readme": "Default"})
	if repo.ObjectFormatName != "sha256" || repo.Empty || repo.DefaultBranch != "main" {
		t.Fatalf("created: format %q empty %v branch %q", repo.ObjectFormatName, repo.Empty, repo.DefaultBranch)
	}
	main := ghBranch(t, e, cred, "alice", "w", "main")
	if !sha256ID.MatchString(main.Commit.ID) {
		t.Fatalf("first commit id %q", main.Commit.ID)
	}

	// The git client clones it and pushes two branches.
	work := t.TempDir()
	clone := filepath.Join(work, "w")
	g.must(work, "clone", "-q", gitURL(e, "alice", alice.Password, "alice", "w"), "w")
	if f := strings.TrimSpace(g.must(clone, "rev-parse", "--show-object-format")); f != "sha256" {
		t.Fatalf("clone has object format %q", f)
	}
	if h := strings.TrimSpace(g.must(clone, "rev-parse", "HEAD")); h != main.Commit.ID {
		t.Fatalf("cloned HEAD %s, want %s", h, main.Commit.ID)
	}
	g.must(clone, "checkout", "-q", "-b", "feature")
	g.commitFile(clone, "src/f.txt", "feature\n", "Add f")
	feature := g.commitFile(clone, "src/g.txt", "gee\n", "Add g")
	g.must(clone, "push", "-q", "origin", "feature")
	g.must(clone, "checkout", "-q", "-b", "other", "main")
	other := g.commitFile(clone, "o.txt", "other\n", "Add o")
	g.must(clone, "push", "-q", "origin", "other")
	if b := ghBranch(t, e, cred, "alice", "w", "feature"); b.Commit.ID != feature {
		t.Fatalf("feature at %s, want %s", b.Commit.ID, feature)
	}

	// Reads: contents, commits, a diff and a patch, trees, blobs, refs,
	// archives.
	var file models.ContentsResponse
	e.Do("GET", "repos/alice/w/contents/src/f.txt?ref=feature", nil, cred).Expect(t, http.StatusOK).JSON(t, &file)
	if file.Content != b64("feature\n") || !sha256ID.MatchString(file.SHA) || file.LastCommitSHA == "" {
		t.Fatalf("contents %+v", file)
	}
	var blob models.GitBlobResponse
	e.Do("GET", "repos/alice/w/git/blobs/"+file.SHA, nil, cred).Expect(t, http.StatusOK).JSON(t, &blob)
	if blob.Content != b64("feature\n") {
		t.Fatalf("blob %+v", blob)
	}
	var commits []*models.Commit
	e.Do("GET", "repos/alice/w/commits?sha=feature", nil, cred).Expect(t, http.StatusOK).JSON(t, &commits)
	if len(commits) != 3 || commits[0].SHA != feature || !sha256ID.MatchString(commits[2].SHA) {
		t.Fatalf("commits %d, first %+v", len(commits), commits[0])
	}
	var one models.Commit
	e.Do("GET", "repos/alice/w/git/commits/"+feature, nil, cred).Expect(t, http.StatusOK).JSON(t, &one)
	if one.SHA != feature || len(one.Parents) != 1 || !sha256ID.MatchString(one.Parents[0].SHA) {
		t.Fatalf("commit %+v", one)
	}
	e.Do("GET", "repos/alice/w/git/commits/"+feature[:10], nil, cred).Expect(t, http.StatusOK).JSON(t, &one)
	if one.SHA != feature {
		t.Fatalf("abbreviated id resolved to %s", one.SHA)
	}
	if d := string(e.Do("GET", "repos/alice/w/git/commits/"+feature+".diff", nil, cred).Expect(t, http.StatusOK).Body); !strings.Contains(d, "+gee") {
		t.Fatalf("diff %s", d)
	}
	if p := string(e.Do("GET", "repos/alice/w/git/commits/"+feature+".patch", nil, cred).Expect(t, http.StatusOK).Body); !strings.Contains(p, "From "+feature) {
		t.Fatalf("patch %s", p)
	}
	var tree models.GitTreeResponse
	e.Do("GET", "repos/alice/w/git/trees/"+feature+"?recursive=true", nil, cred).Expect(t, http.StatusOK).JSON(t, &tree)
	if !sha256ID.MatchString(tree.SHA) || len(tree.Entries) < 3 {
		t.Fatalf("tree %+v", tree)
	}
	var refs []*models.Reference
	e.Do("GET", "repos/alice/w/git/refs/heads", nil, cred).Expect(t, http.StatusOK).JSON(t, &refs)
	if len(refs) != 3 || !sha256ID.MatchString(refs[0].Object.SHA) {
		t.Fatalf("refs %+v", refs)
	}
	if z := e.Do("GET", "repos/alice/w/archive/feature.zip", nil, cred).Expect(t, http.StatusOK).Body; len(z) < 22 || string(z[:2]) != "PK" {
		t.Fatalf("zip archive of %d bytes", len(z))
	}
	if tgz := e.Do("GET", "repos/alice/w/archive/feature.tar.gz", nil, cred).Expect(t, http.StatusOK).Body; len(tgz) < 2 || tgz[0] != 0x1f || tgz[1] != 0x8b {
		t.Fatalf("tar.gz archive of %d bytes", len(tgz))
	}

	// Writes: a file created, updated and deleted through the contents
	// API, a branch made and removed, a tag and a release.
	var created models.FileResponse
	e.Do("POST", "repos/alice/w/contents/docs/n.md", map[string]any{"content": b64("note\n"), "message": "Add note"}, cred).
		Expect(t, http.StatusCreated).JSON(t, &created)
	if !sha256ID.MatchString(created.Commit.SHA) || !sha256ID.MatchString(created.Content.SHA) {
		t.Fatalf("created %+v / %+v", created.Commit, created.Content)
	}
	var updated models.FileResponse
	e.Do("PUT", "repos/alice/w/contents/docs/n.md", map[string]any{"content": b64("note 2\n"), "message": "Edit note", "sha": created.Content.SHA}, cred).
		Expect(t, http.StatusOK).JSON(t, &updated)
	e.Do("DELETE", "repos/alice/w/contents/docs/n.md", map[string]any{"message": "Drop note", "sha": updated.Content.SHA}, cred).Expect(t, http.StatusOK)
	e.Do("POST", "repos/alice/w/branches", map[string]any{"new_branch_name": "copy", "old_ref_name": feature}, cred).Expect(t, http.StatusCreated)
	if b := ghBranch(t, e, cred, "alice", "w", "copy"); b.Commit.ID != feature {
		t.Fatalf("copy at %s", b.Commit.ID)
	}
	e.Do("DELETE", "repos/alice/w/branches/copy", nil, cred).Expect(t, http.StatusNoContent)
	var tag models.Tag
	e.Do("POST", "repos/alice/w/tags", map[string]any{"tag_name": "v1", "target": "feature", "message": "annotated"}, cred).
		Expect(t, http.StatusCreated).JSON(t, &tag)
	if tag.Commit == nil || tag.Commit.SHA != feature || !sha256ID.MatchString(tag.ID) {
		t.Fatalf("tag %+v", tag)
	}
	var rel models.Release
	e.Do("POST", "repos/alice/w/releases", map[string]any{"tag_name": "v2", "target_commitish": "other", "name": "Two"}, cred).
		Expect(t, http.StatusCreated).JSON(t, &rel)
	var tags []*models.Tag
	e.Do("GET", "repos/alice/w/tags", nil, cred).Expect(t, http.StatusOK).JSON(t, &tags)
	if len(tags) != 2 {
		t.Fatalf("tags %+v", tags)
	}

	// Pull requests: files and diff, then a merge commit and a squash.
	var pr models.PullRequest
	e.Do("POST", "repos/alice/w/pulls", map[string]any{"head": "feature", "base": "main", "title": "Feature"}, cred).
		Expect(t, http.StatusCreated).JSON(t, &pr)
	if pr.Head == nil || pr.Head.Sha != feature || !sha256ID.MatchString(pr.MergeBase) {
		t.Fatalf("pull %+v", pr)
	}
	var files []*models.ChangedFile
	e.Do("GET", fmt.Sprintf("repos/alice/w/pulls/%d/files", pr.Index), nil, cred).Expect(t, http.StatusOK).JSON(t, &files)
	if len(files) != 2 {
		t.Fatalf("pull files %+v", files)
	}
	if d := string(e.Do("GET", fmt.Sprintf("repos/alice/w/pulls/%d.diff", pr.Index), nil, cred).Expect(t, http.StatusOK).Body); !strings.Contains(d, "+gee") {
		t.Fatalf("pull diff %s", d)
	}
	e.Do("POST", fmt.Sprintf("repos/alice/w/pulls/%d/merge", pr.Index), map[string]any{"Do": "merge"}, cred).Expect(t, http.StatusOK)
	e.Do("GET", fmt.Sprintf("repos/alice/w/pulls/%d", pr.Index), nil, cred).Expect(t, http.StatusOK).JSON(t, &pr)
	if !pr.HasMerged || pr.MergedCommitID == nil || !sha256ID.MatchString(*pr.MergedCommitID) {
		t.Fatalf("merged %v, merge commit %v", pr.HasMerged, pr.MergedCommitID)
	}
	mergeCommit := *pr.MergedCommitID
	var squashed models.PullRequest
	e.Do("POST", "repos/alice/w/pulls", map[string]any{"head": "other", "base": "main", "title": "Other"}, cred).
		Expect(t, http.StatusCreated).JSON(t, &squashed)
	e.Do("POST", fmt.Sprintf("repos/alice/w/pulls/%d/merge", squashed.Index), map[string]any{"Do": "squash"}, cred).Expect(t, http.StatusOK)
	squash := ghBranch(t, e, cred, "alice", "w", "main").Commit.ID
	e.Do("POST", "repos/alice/w/contents/r.txt", map[string]any{"content": b64("r\n"), "message": "Add r", "branch": "feature", "new_branch": "third"}, cred).
		Expect(t, http.StatusCreated)
	var rebased models.PullRequest
	e.Do("POST", "repos/alice/w/pulls", map[string]any{"head": "third", "base": "main", "title": "Third"}, cred).
		Expect(t, http.StatusCreated).JSON(t, &rebased)
	e.Do("POST", fmt.Sprintf("repos/alice/w/pulls/%d/merge", rebased.Index), map[string]any{"Do": "rebase"}, cred).Expect(t, http.StatusOK)
	head := ghBranch(t, e, cred, "alice", "w", "main")

	// The git client fetches the result: the merge commit has both
	// parents, the squash one, and the whole history is sound.
	g.must(clone, "fetch", "-q", "origin")
	if h := strings.TrimSpace(g.must(clone, "rev-parse", "origin/main")); h != head.Commit.ID {
		t.Fatalf("fetched main %s, API says %s", h, head.Commit.ID)
	}
	if parents := strings.Fields(g.must(clone, "log", "-1", "--format=%P", mergeCommit)); len(parents) != 2 || parents[1] != feature {
		t.Fatalf("merge commit parents %v", parents)
	}
	if parents := strings.Fields(g.must(clone, "log", "-1", "--format=%P", squash)); len(parents) != 1 || parents[0] != mergeCommit {
		t.Fatalf("squash commit parents %v", parents)
	}
	if parents := strings.Fields(g.must(clone, "log", "-1", "--format=%P", "origin/main")); len(parents) != 1 || parents[0] != squash {
		t.Fatalf("rebased commit parents %v, want %s", parents, squash)
	}
	if b, err := os.ReadFile(filepath.Join(clone, "o.txt")); err != nil || string(b) != "other\n" {
		t.Fatalf("o.txt on other: %q %v", b, err)
	}
	g.must(clone, "checkout", "-q", "-B", "main", "origin/main")
	for _, f := range []string{"src/f.txt", "src/g.txt", "o.txt", "r.txt", "README.md"} {
		if _, err := os.Stat(filepath.Join(clone, f)); err != nil {
			t.Fatalf("%s after the merges: %v", f, err)
		}
	}
	if _, err := os.Stat(filepath.Join(clone, "docs/n.md")); err == nil {
		t.Fatal("the deleted note is back")
	}
	g.must(clone, "fsck", "--strict")

	// The git client merges too: a branch of its own merged into main
	// with a merge commit, pushed, is main on the server.
	g.must(clone, "checkout", "-q", "-b", "local", "origin/main")
	local := g.commitFile(clone, "l.txt", "local\n", "Add l")
	g.must(clone, "checkout", "-q", "main")
	g.commitFile(clone, "m.txt", "main\n", "Add m")
	g.must(clone, "merge", "-q", "--no-ff", "-m", "Merge local", "local")
	merged := strings.TrimSpace(g.must(clone, "rev-parse", "HEAD"))
	g.must(clone, "push", "-q", "origin", "main")
	var mergedCommit models.Commit
	e.Do("GET", "repos/alice/w/git/commits/"+merged, nil, cred).Expect(t, http.StatusOK).JSON(t, &mergedCommit)
	if len(mergedCommit.Parents) != 2 || mergedCommit.Parents[1].SHA != local || ghBranch(t, e, cred, "alice", "w", "main").Commit.ID != merged {
		t.Fatalf("the client's merge %s on the server: %+v", merged, mergedCommit.Parents)
	}
	dir, err := e.Deps.Git.Path("alice", "w")
	if err != nil {
		t.Fatal(err)
	}
	g.must(dir, "fsck", "--strict")
	_ = other

	// A fork is a SHA-256 repository too, with the same history.
	var fork models.Repository
	e.Do("POST", "repos/alice/w/forks", map[string]any{"name": "w-fork"}, cred).Expect(t, http.StatusAccepted).JSON(t, &fork)
	if fork.ObjectFormatName != "sha256" {
		t.Fatalf("fork format %q", fork.ObjectFormatName)
	}
	if b := ghBranch(t, e, cred, "alice", "w-fork", "main"); b.Commit.ID != merged {
		t.Fatalf("fork main at %s, want %s", b.Commit.ID, merged)
	}

	// So is a repository generated from it as a template.
	e.Do("PATCH", "repos/alice/w", map[string]any{"template": true}, cred).Expect(t, http.StatusOK)
	gen := genPost(t, e, cred, "alice/w", map[string]any{"owner": "alice", "name": "w-gen", "git_content": true}, http.StatusCreated)
	if gen.ObjectFormatName != "sha256" {
		t.Fatalf("generated format %q", gen.ObjectFormatName)
	}
	var readme models.ContentsResponse
	e.Do("GET", "repos/alice/w-gen/contents/o.txt", nil, cred).Expect(t, http.StatusOK).JSON(t, &readme)
	if readme.Content != b64("other\n") || !sha256ID.MatchString(readme.LastCommitSHA) {
		t.Fatalf("generated o.txt %+v", readme)
	}
	gdir, err := e.Deps.Git.Path("alice", "w-gen")
	if err != nil {
		t.Fatal(err)
	}
	g.must(gdir, "fsck", "--strict")
}

// TestSHA256MigrateAndMirror: a migration and a pull mirror of a SHA-256
// repository on another server are SHA-256 repositories, with the
// source's commits under the same ids.
func TestSHA256MigrateAndMirror(t *testing.T) {
	t.Parallel()
	requireTools(t, "git")
	src := apitest.New(t)
	alice := src.CreateUser("alice", false)
	acred := apitest.Basic(alice)
	roCreateRepo(t, src, acred, map[string]any{"name": "up", "object_format_name": "sha256", "auto_init": true})
	want := branchTips(t, src, acred, "alice", "up")
	if !sha256ID.MatchString(want["main"]) {
		t.Fatalf("source branches %v", want)
	}

	dst := mirrorEnv(t)
	bob := dst.CreateUser("bob", false)
	cred := apitest.Basic(bob)
	for _, c := range []struct {
		name   string
		mirror bool
	}{{"copy", false}, {"mirror", true}} {
		var r models.Repository
		dst.Do("POST", "repos/migrate", map[string]any{"clone_addr": gitURL(src, "", "", "alice", "up"), "repo_name": c.name, "mirror": c.mirror},
			cred).Expect(t, http.StatusCreated).JSON(t, &r)
		waitFor(t, func() bool { return len(branchTips(t, dst, cred, "bob", c.name)) == len(want) })
		if got := branchTips(t, dst, cred, "bob", c.name); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("%s: branches %v, want %v", c.name, got, want)
		}
		dst.Do("GET", "repos/bob/"+c.name, nil, cred).Expect(t, http.StatusOK).JSON(t, &r)
		if r.ObjectFormatName != "sha256" || r.Empty {
			t.Fatalf("%s: format %q empty %v", c.name, r.ObjectFormatName, r.Empty)
		}
		var f models.ContentsResponse
		dst.Do("GET", "repos/bob/"+c.name+"/contents/README.md", nil, cred).Expect(t, http.StatusOK).JSON(t, &f)
		if !sha256ID.MatchString(f.SHA) {
			t.Fatalf("%s: README blob %q", c.name, f.SHA)
		}
	}
	var list []*models.Repository
	dst.Do("GET", "user/repos", nil, cred).Expect(t, http.StatusOK).JSON(t, &list)
	for _, r := range list {
		if r.ObjectFormatName != "sha256" {
			t.Fatalf("listed %s as %q", r.Name, r.ObjectFormatName)
		}
	}
}
