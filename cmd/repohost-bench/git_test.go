package main

import (
	"bytes"
	"os/exec"
	"strings"
	"testing"
)

// The history stream, imported by git, is the number of commits and files
// asked for, and the same on every run.
func TestWriteHistory(t *testing.T) {
	var a, b bytes.Buffer
	if err := writeHistory(&a, 12, 300); err != nil {
		t.Fatal(err)
	}
	if err := writeHistory(&b, 12, 300); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a.Bytes(), b.Bytes()) {
		t.Fatal("two streams differ")
	}
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	dir := t.TempDir()
	g := gitRunner{home: dir, token: "unused"}
	if out, err := g.run(dir, nil, "init", "-q", "--bare", "r.git"); err != nil {
		t.Fatal(err, out)
	}
	repo := dir + "/r.git"
	if out, err := g.run(repo, &a, "fast-import", "--quiet"); err != nil {
		t.Fatal(err, out)
	}
	if out, _ := g.run(repo, nil, "rev-list", "--count", "main"); strings.TrimSpace(out) != "12" {
		t.Errorf("commits: %q", out)
	}
	out, _ := g.run(repo, nil, "ls-tree", "-r", "--name-only", "main")
	if files := strings.Fields(out); len(files) != 12 || files[0] != "files/00001.txt" {
		t.Errorf("files: %q", files)
	}
	out, _ = g.run(repo, nil, "count-objects", "-v")
	// 12 commits, 12 + 11 blobs, 12 root trees and 12 of files/ (few
	// enough to stay loose).
	if objects, _ := countObjects(out); objects != 12+23+24 {
		t.Errorf("objects %d in %q", objects, out)
	}
}

func TestCountObjects(t *testing.T) {
	out := "count: 2\nsize: 8\nin-pack: 1232\npacks: 1\nsize-pack: 2048\nprune-packable: 0\ngarbage: 0\nsize-garbage: 0\n"
	if objects, kib := countObjects(out); objects != 1234 || kib != 2056 {
		t.Errorf("objects %d, size %d KiB", objects, kib)
	}
}
