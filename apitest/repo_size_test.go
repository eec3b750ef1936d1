package apitest_test

import (
	"net/http"
	"path/filepath"
	"testing"

	"repohost/apitest"
	"repohost/models"
)

// repoSize is the size the API reports for owner/name, in KiB.
func repoSize(t *testing.T, e *apitest.Env, cred apitest.Cred, owner, name string) int64 {
	t.Helper()
	var r models.Repository
	e.Do("GET", "repos/"+owner+"/"+name, nil, cred).Expect(t, http.StatusOK).JSON(t, &r)
	return r.Size
}

// TestRepoSize: a repository's size is its git size on disk in KiB, as the
// reference reports it, kept current by pushes and carried by forks and
// generated repositories, in single answers and lists alike.
func TestRepoSize(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	r := newClonedRepo(t, e, "big", map[string]any{"template": true})
	before := repoSize(t, e, r.cred, "alice", "big")
	if before > 64 {
		t.Fatalf("a fresh auto-initialised repository reports %d KiB", before)
	}

	// About 1 MiB of incompressible content arrives by push.
	const mib = 1 << 20
	writeRandomFile(t, filepath.Join(r.clone, "blob.bin"), mib, 7)
	r.git.must(r.clone, "add", "blob.bin")
	r.git.must(r.clone, "commit", "-q", "-m", "add a blob")
	r.git.must(r.clone, "push", "-q", "origin", "main")
	after := repoSize(t, e, r.cred, "alice", "big")
	if after < before+1000 || after > before+1200 {
		t.Fatalf("size after pushing 1 MiB: %d KiB (before %d)", after, before)
	}

	// Lists show the stored size as well.
	var mine []*models.Repository
	e.Do("GET", "user/repos", nil, r.cred).Expect(t, http.StatusOK).JSON(t, &mine)
	if len(mine) != 1 || mine[0].Size != after {
		t.Fatalf("listed size %+v, want %d", mine, after)
	}

	// A branch deleted keeps the objects (nothing is collected), and the
	// size is recounted without failing.
	r.git.must(r.clone, "push", "-q", "origin", "main:side")
	r.git.must(r.clone, "push", "-q", "origin", "--delete", "side")
	if got := repoSize(t, e, r.cred, "alice", "big"); got < after {
		t.Fatalf("size after a branch came and went: %d KiB, want at least %d", got, after)
	}

	// A fork holds the parent's objects, and so does a repository
	// generated from it with its git content; an empty one holds little.
	bob := e.CreateUser("bob", false)
	bobCred := apitest.TokenCred(e.Token(bob, "write:repository"))
	var fork models.Repository
	e.Do("POST", "repos/alice/big/forks", map[string]any{}, bobCred).Expect(t, http.StatusAccepted).JSON(t, &fork)
	if got := repoSize(t, e, bobCred, "bob", "big"); got < 1000 {
		t.Fatalf("fork size %d KiB (answered at creation %d)", got, fork.Size)
	}
	var gen models.Repository
	e.Do("POST", "repos/alice/big/generate", map[string]any{"owner": "alice", "name": "gen", "git_content": true}, r.cred).
		Expect(t, http.StatusCreated).JSON(t, &gen)
	if got := repoSize(t, e, r.cred, "alice", "gen"); got < 1000 {
		t.Fatalf("generated repository size %d KiB (answered at creation %d)", got, gen.Size)
	}
	empty := roCreateRepo(t, e, r.cred, map[string]any{"name": "empty"})
	if empty.Size > 64 {
		t.Fatalf("an empty repository reports %d KiB", empty.Size)
	}

	// The first push to an empty repository counts too.
	r.git.must(r.clone, "push", "-q", gitURL(e, "alice", r.token, "alice", "empty"), "main")
	if got := repoSize(t, e, r.cred, "alice", "empty"); got < 1000 {
		t.Fatalf("size after the first push: %d KiB", got)
	}
}
