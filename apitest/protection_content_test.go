package apitest_test

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"repohost/apitest"

	"github.com/ProtonMail/go-crypto/openpgp/packet"
)

// pcSetup is alice's repository proj (auto-initialised, main) with a
// clone, and her credentials.
func pcSetup(t *testing.T) (*apitest.Env, *gitCLI, apitest.Cred, string) {
	t.Helper()
	e := apitest.New(t)
	git := newGitCLI(t)
	alice := e.CreateUser("alice", false)
	token := e.Token(alice, "write:repository")
	cred := apitest.TokenCred(token)
	clone := brSeed(t, e, git, alice, token, "proj", false)
	return e, git, cred, clone
}

// mainAt is where main points on the server.
func mainAt(t *testing.T, e *apitest.Env, cred apitest.Cred) string {
	t.Helper()
	return ghBranch(t, e, cred, "alice", "proj", "main").Commit.ID
}

// TestProtectedFilePatterns: a change to a file the rule's
// protected_file_patterns match is refused on the branch, to a push and to
// the contents API alike, even for a user allowed to push; other files
// and other branches are not affected.
func TestProtectedFilePatterns(t *testing.T) {
	t.Parallel()
	e, git, cred, clone := pcSetup(t)
	git.commitFile(clone, "keep.lock", "v0\n", "a lock file before the rule")
	git.must(clone, "push", "-q", "origin", "main")
	e.Do("POST", "repos/alice/proj/branch_protections", map[string]any{
		"rule_name": "main", "enable_push": true, "protected_file_patterns": "*.lock; CI/**",
	}, cred).Expect(t, http.StatusCreated)

	// Ordinary files go through.
	git.commitFile(clone, "src/app.txt", "app\n", "app")
	git.must(clone, "push", "-q", "origin", "main")

	// A protected file (patterns match case-insensitively), alone or
	// among others, is refused and nothing moves.
	before := mainAt(t, e, cred)
	git.commitFile(clone, "notes.txt", "n\n", "notes")
	git.commitFile(clone, "deps.lock", "v1\n", "lock")
	out := git.refuse(clone, "push", "origin", "main")
	if !strings.Contains(out, "branch main is protected from changing file deps.lock") {
		t.Fatalf("push changing a protected file: %s", out)
	}
	git.must(clone, "reset", "-q", "--hard", "HEAD~1")
	git.must(clone, "rm", "-q", "keep.lock")
	git.must(clone, "commit", "-q", "-m", "drop the lock")
	if out := git.refuse(clone, "push", "origin", "main"); !strings.Contains(out, "protected from changing file keep.lock") {
		t.Fatalf("push deleting a protected file: %s", out)
	}
	git.must(clone, "reset", "-q", "--hard", "HEAD~1")
	git.commitFile(clone, "ci/deep/pipeline.yml", "x\n", "ci")
	if out := git.refuse(clone, "push", "origin", "main"); !strings.Contains(out, "protected from changing file ci/deep/pipeline.yml") {
		t.Fatalf("push changing a file under ci/: %s", out)
	}
	if got := mainAt(t, e, cred); got != before {
		t.Fatalf("main moved to %s", got)
	}
	// The same commits go to another branch.
	git.must(clone, "push", "-q", "origin", "HEAD:feature")

	// The contents API: the same rule, the same refusal (403).
	r := e.Do("POST", "repos/alice/proj/contents/yarn.lock", map[string]any{"content": b64("x")}, cred).
		Expect(t, http.StatusForbidden)
	if !strings.Contains(string(r.Body), "protected from changing file yarn.lock") {
		t.Fatalf("contents API refusal: %s", r.Body)
	}
	e.Do("POST", "repos/alice/proj/contents/ok.txt", map[string]any{"content": b64("x")}, cred).
		Expect(t, http.StatusCreated)
	// On another branch (a new one from main) it may be written.
	e.Do("POST", "repos/alice/proj/contents/other.lock", map[string]any{"content": b64("x"), "new_branch": "side"}, cred).
		Expect(t, http.StatusCreated)
	if got := mainAt(t, e, cred); got == before {
		t.Fatal("the allowed contents commit did not move main")
	}
}

// TestUnprotectedFilePatterns: on a branch nobody may push to, a writer
// may still push (and commit through the contents API) changes that touch
// only files matching unprotected_file_patterns.
func TestUnprotectedFilePatterns(t *testing.T) {
	t.Parallel()
	e, git, cred, clone := pcSetup(t)
	e.Do("POST", "repos/alice/proj/branch_protections", map[string]any{
		"rule_name": "main", "unprotected_file_patterns": "docs/**;*.md",
	}, cred).Expect(t, http.StatusCreated)

	git.commitFile(clone, "docs/guide/a.txt", "a\n", "docs")
	git.commitFile(clone, "CHANGES.md", "c\n", "changes")
	git.must(clone, "push", "-q", "origin", "main")

	before := mainAt(t, e, cred)
	git.commitFile(clone, "docs/b.txt", "b\n", "docs b")
	git.commitFile(clone, "main.go", "package main\n", "code")
	if out := git.refuse(clone, "push", "origin", "main"); !strings.Contains(out, "not allowed to push to protected branch main") {
		t.Fatalf("push touching a file outside the unprotected patterns: %s", out)
	}
	if got := mainAt(t, e, cred); got != before {
		t.Fatalf("main moved to %s", got)
	}

	e.Do("POST", "repos/alice/proj/contents/docs/c.txt", map[string]any{"content": b64("c")}, cred).
		Expect(t, http.StatusCreated)
	e.Do("POST", "repos/alice/proj/contents/src/x.go", map[string]any{"content": b64("x")}, cred).
		Expect(t, http.StatusForbidden)
}

// TestRequireSignedCommits: with require_signed_commits every commit a push
// brings must carry a signature a registered key verifies; the contents
// API, whose commits a server without a signing key cannot sign, is
// refused; branches made at existing commits bring none.
func TestRequireSignedCommits(t *testing.T) {
	t.Parallel()
	e, git, cred, clone := pcSetup(t)
	key := gpgKey(t, "Alice", "alice@example.com", packet.PubKeyAlgoEdDSA, false, time.Now().Add(-time.Hour), 0)
	e.Do("POST", "user/gpg_keys?sudo=alice", map[string]any{"armored_public_key": armoredPublic(t, key)}, apitest.Basic(e.Admin)).
		Expect(t, http.StatusCreated)
	signedCommit := func(msg string) string {
		return gpgCommit(t, git, clone, key, "Alice", "alice@example.com", msg)
	}
	e.Do("POST", "repos/alice/proj/branch_protections", map[string]any{
		"rule_name": "main", "enable_push": true, "require_signed_commits": true,
	}, cred).Expect(t, http.StatusCreated)
	e.Do("POST", "repos/alice/proj/branch_protections", map[string]any{
		"rule_name": "rel/*", "enable_push": true, "require_signed_commits": true,
	}, cred).Expect(t, http.StatusCreated)

	// An unsigned commit under a signed one is found and named.
	before := mainAt(t, e, cred)
	unsigned := git.commitFile(clone, "a.txt", "a\n", "unsigned")
	if err := os.WriteFile(filepath.Join(clone, "b.txt"), []byte("b\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	git.must(clone, "add", "b.txt")
	signedCommit("signed on top")
	out := git.refuse(clone, "push", "origin", "main")
	if !strings.Contains(out, "branch main is protected from unverified commit "+unsigned) {
		t.Fatalf("push with an unsigned commit: %s", out)
	}
	if got := mainAt(t, e, cred); got != before {
		t.Fatalf("main moved to %s", got)
	}

	// Only signed commits: accepted.
	git.must(clone, "reset", "-q", "--hard", "origin/main")
	if err := os.WriteFile(filepath.Join(clone, "c.txt"), []byte("c\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	git.must(clone, "add", "c.txt")
	sha := signedCommit("signed")
	git.must(clone, "push", "-q", "origin", "main")
	if got := mainAt(t, e, cred); got != sha {
		t.Fatalf("main at %s after a signed push, want %s", got, sha)
	}

	// A new protected branch at an existing commit brings no commit; with
	// an unsigned commit of its own it is refused.
	e.Do("POST", "repos/alice/proj/branches", map[string]any{"new_branch_name": "rel/1"}, cred).Expect(t, http.StatusCreated)
	git.must(clone, "push", "-q", "origin", "HEAD:rel/2")
	git.commitFile(clone, "d.txt", "d\n", "unsigned again")
	if out := git.refuse(clone, "push", "origin", "HEAD:rel/3"); !strings.Contains(out, "protected from unverified commit") {
		t.Fatalf("new branch with an unsigned commit: %s", out)
	}

	// This server has no signing key: its contents API commits are unsigned.
	r := e.Do("POST", "repos/alice/proj/contents/e.txt", map[string]any{"content": b64("e")}, cred).
		Expect(t, http.StatusForbidden)
	if !strings.Contains(string(r.Body), "protected from unverified commit") {
		t.Fatalf("contents API on a signed-commits branch: %s", r.Body)
	}
	// Elsewhere it can commit.
	e.Do("POST", "repos/alice/proj/contents/e.txt", map[string]any{"content": b64("e"), "new_branch": "free"}, cred).
		Expect(t, http.StatusCreated)
}
