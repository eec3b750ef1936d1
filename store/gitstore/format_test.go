package gitstore_test

import (
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"

	"repohost/store"
	"repohost/store/gitstore"
)

func TestSHA256RepositoryThroughGitsBinary(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	s := newStore(t)
	if !s.SupportsObjectFormat("sha1") || !s.SupportsObjectFormat("sha256") || s.SupportsObjectFormat("md5") {
		t.Fatal("SupportsObjectFormat: want sha1 and sha256 only")
	}
	// A first commit is written through go-git, named by a SHA-256 id.
	first, err := s.Create("alice", "init", gitstore.InitOptions{DefaultBranch: "main", ObjectFormat: "sha256", Files: map[string]string{"a": "b"}})
	if err != nil || len(first.String()) != 64 {
		t.Fatalf("create with files: %v, %v", first, err)
	}
	p0, _ := s.Path("alice", "init")
	if out, err := exec.Command("git", "--git-dir="+p0, "cat-file", "-t", first.String()).Output(); err != nil || strings.TrimSpace(string(out)) != "commit" {
		t.Fatalf("git cat-file: %q %v", out, err)
	}
	if out, err := exec.Command("git", "--git-dir="+p0, "fsck", "--strict").CombinedOutput(); err != nil {
		t.Fatalf("git fsck: %s %v", out, err)
	}

	if _, err := s.Create("alice", "h", gitstore.InitOptions{DefaultBranch: "trunk", ObjectFormat: "sha256"}); err != nil {
		t.Fatal(err)
	}
	h, err := s.ReadHeads("alice", "h")
	if err != nil || h.ObjectFormat != "sha256" || h.DefaultBranch != "trunk" || len(h.Branches) != 0 {
		t.Fatalf("heads %+v, %v", h, err)
	}
	p, _ := s.Path("alice", "h")
	if out, err := exec.Command("git", "--git-dir="+p, "config", "http.receivepack").Output(); err != nil || strings.TrimSpace(string(out)) != "true" {
		t.Fatalf("http.receivepack %q %v", out, err)
	}
	if _, err := os.Stat(p + "/hooks"); err == nil {
		t.Fatal("init copied template hooks")
	}
	// go-git opens it, and knows its format.
	g, err := s.OpenGit("alice", "h")
	if err != nil || g.ObjectFormat() != "sha256" {
		t.Fatalf("OpenGit: %v", err)
	}
	if ok, err := s.HasBranch("alice", "h", "trunk"); err != nil || ok {
		t.Fatalf("HasBranch: %v %v", ok, err)
	}
	if err := s.SetDefaultBranch("alice", "h", "dev"); err != nil {
		t.Fatal(err)
	}
	if h, _ := s.ReadHeads("alice", "h"); h.DefaultBranch != "dev" {
		t.Fatalf("default branch %q after SetDefaultBranch", h.DefaultBranch)
	}
	if err := s.Rename("alice", "h", "alice", "h2"); err != nil {
		t.Fatal(err)
	}
	if err := s.Delete("alice", "h2"); err != nil {
		t.Fatal(err)
	}

	// ReadHeads reads SHA-1 repositories the same way.
	if _, err := s.Create("alice", "one", gitstore.InitOptions{DefaultBranch: "main"}); err != nil {
		t.Fatal(err)
	}
	if h, err := s.ReadHeads("alice", "one"); err != nil || h.ObjectFormat != "sha1" || h.DefaultBranch != "main" {
		t.Fatalf("sha1 heads %+v, %v", h, err)
	}
	if _, err := s.ReadHeads("alice", "missing"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("missing: %v", err)
	}
	// A directory git does not take for a repository is none.
	junk, _ := s.Path("alice", "junk")
	if err := os.MkdirAll(junk, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(junk+"/HEAD", []byte("ref: refs/heads/main\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := s.ReadHeads("alice", "junk"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("junk directory: %v", err)
	}
	if len(gitstore.ZeroID("sha1")) != 40 || len(gitstore.ZeroID("sha256")) != 64 {
		t.Fatal("ZeroID lengths")
	}
}
