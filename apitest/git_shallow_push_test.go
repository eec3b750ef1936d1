package apitest_test

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"repohost/apitest"
)

// Pushes from --depth 1 clones, as every CI job that pushes after a
// shallow checkout does: git sends "shallow <oid>\n" before its commands.
// They work over HTTP and SSH when the server has the history the clone
// lacks; a push that would leave history with holes (a shallow clone
// pushed into a repository without its cut-off commit) is refused, as
// git's receive-pack refuses it.
func TestGitShallowPush(t *testing.T) {
	t.Parallel()
	requireTools(t, "git", "ssh")
	e := apitest.New(t)
	r := newClonedRepo(t, e, "deep", nil)
	git := r.git
	git.commitFile(r.clone, "a.txt", "a\n", "a")
	git.commitFile(r.clone, "b.txt", "b\n", "b")
	git.must(r.clone, "push", "-q", "origin", "main")

	// Over HTTP.
	shallow := filepath.Join(r.work, "shallow")
	git.must(r.work, "clone", "-q", "--depth", "1", gitURL(e, "alice", r.token, "alice", "deep"), shallow)
	tip := git.commitFile(shallow, "c.txt", "c\n", "from a shallow clone")
	git.must(shallow, "push", "-q", "origin", "main")
	if got := ghBranch(t, e, r.cred, "alice", "deep", "main"); got.Commit == nil || got.Commit.ID != tip {
		t.Fatalf("main after a shallow HTTP push: %+v, want %s", got.Commit, tip)
	}
	git.must(shallow, "push", "-q", "origin", "main:refs/heads/copy")
	ghBranch(t, e, r.cred, "alice", "deep", "copy")

	// Into a repository without the history: refused, nothing moves.
	roCreateRepo(t, e, r.cred, map[string]any{"name": "empty"})
	out := git.refuse(shallow, "push", gitURL(e, "alice", r.token, "alice", "empty"), "main")
	if !strings.Contains(out, "shallow update not allowed") {
		t.Fatalf("shallow push into an empty repository: %s", out)
	}
	e.Do("GET", "repos/alice/empty/branches/main", nil, r.cred).Expect(t, http.StatusNotFound)

	// Over SSH.
	addr := startSSH(t, e)
	key := newSSHClientKey(t)
	e.Do("POST", "user/keys", map[string]any{"title": "k", "key": key.line}, apitest.Basic(r.alice)).Expect(t, http.StatusCreated)
	work := t.TempDir()
	sshURL := "ssh://git@" + addr + "/alice/deep.git"
	mustSSHGit(t, key, work, "clone", "-q", "--depth", "1", sshURL, "s")
	sclone := filepath.Join(work, "s")
	if n := strings.TrimSpace(mustSSHGit(t, key, sclone, "rev-list", "--count", "HEAD")); n != "1" {
		t.Fatalf("--depth 1 clone over SSH has %s commits", n)
	}
	mustSSHGit(t, key, sclone, "commit", "-q", "--allow-empty", "-m", "over ssh")
	stip := strings.TrimSpace(mustSSHGit(t, key, sclone, "rev-parse", "HEAD"))
	mustSSHGit(t, key, sclone, "push", "-q", "origin", "main")
	if got := ghBranch(t, e, r.cred, "alice", "deep", "main"); got.Commit == nil || got.Commit.ID != stip {
		t.Fatalf("main after a shallow SSH push: %+v, want %s", got.Commit, stip)
	}
}

// TestGitPushPacks: a pack of many objects is indexed by git as it
// arrives (index-pack), a thin one completed from the repository's own
// objects (--fix-thin), a small one exploded (unpack-objects); the
// repository stays whole (git fsck) and a fresh clone has every commit.
func TestGitPushPacks(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	r := newClonedRepo(t, e, "many", nil)
	git := r.git
	write := func(round int) {
		for i := 0; i < 150; i++ {
			body := strings.Repeat(fmt.Sprintf("file %d line\n", i), 200) + fmt.Sprintf("round %d\n", round)
			if err := os.WriteFile(filepath.Join(r.clone, fmt.Sprintf("f%03d.txt", i)), []byte(body), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		git.must(r.clone, "add", "-A")
		git.must(r.clone, "commit", "-q", "-m", fmt.Sprintf("round %d", round))
	}
	write(1)
	git.must(r.clone, "push", "-q", "origin", "main") // > 100 objects: index-pack
	write(2)
	git.must(r.clone, "push", "-q", "origin", "main") // deltas against round 1: thin
	git.commitFile(r.clone, "small.txt", "s\n", "small")
	git.must(r.clone, "push", "-q", "origin", "main") // a few objects: unpack-objects
	tip := strings.TrimSpace(git.must(r.clone, "rev-parse", "HEAD"))
	if got := ghBranch(t, e, r.cred, "alice", "many", "main"); got.Commit == nil || got.Commit.ID != tip {
		t.Fatalf("main after the pushes: %+v, want %s", got.Commit, tip)
	}
	p, err := e.Deps.Git.Path("alice", "many")
	if err != nil {
		t.Fatal(err)
	}
	git.must(p, "--git-dir="+p, "fsck", "--strict")
	fresh := filepath.Join(r.work, "fresh")
	git.must(r.work, "clone", "-q", gitURL(e, "alice", r.token, "alice", "many"), fresh)
	if n := strings.TrimSpace(git.must(fresh, "rev-list", "--count", "HEAD")); n != "4" {
		t.Fatalf("fresh clone has %s commits, want 4", n)
	}
}
