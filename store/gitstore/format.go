package gitstore

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"repohost/store"
)

// Object formats of a repository: the hash that names its objects.
const (
	FormatSHA1   = "sha1"
	FormatSHA256 = "sha256"
)

// SupportsObjectFormat tells whether repositories with the object format
// can be created: go-git reads and writes both.
func (s *Store) SupportsObjectFormat(format string) bool {
	return format == FormatSHA1 || format == FormatSHA256
}

// configObjectFormat reads extensions.objectFormat from the repository at
// path with git's binary ("sha1" when unset).
func configObjectFormat(path string) (string, error) {
	out, code, err := onDir(path).run(context.Background(), nil, []int{1}, "config", "--file", filepath.Join(path, "config"), "--get", "extensions.objectformat")
	if err != nil {
		return "", err
	}
	if f := strings.ToLower(strings.TrimSpace(string(out))); code == 0 && f != "" {
		return f, nil
	}
	return FormatSHA1, nil // not set
}

// onDir is the repository at path for running git's binary on, without
// go-git (GitRepo.run needs nothing else).
func onDir(path string) *GitRepo { return &GitRepo{path: path} }

// initSHA256 makes the empty bare SHA-256 repository at path (which exists
// and is empty), HEAD on branch, pushes over HTTP allowed, and, as go-git's
// init, no hooks or other template files.
func initSHA256(path, branch string) error {
	ctx := context.Background()
	if _, _, err := onDir(path).run(ctx, nil, nil, "init", "--bare", "--quiet", "--template=", "--object-format="+FormatSHA256, "--initial-branch="+branch, path); err != nil {
		return fmt.Errorf("init repository: %w", err)
	}
	if _, _, err := onDir(path).run(ctx, nil, nil, "config", "http.receivepack", "true"); err != nil {
		return fmt.Errorf("init repository: %w", err)
	}
	return nil
}

// Heads is what a repository directory says of itself, whatever its
// object format: read through git's binary, so it serves the adoption of
// SHA-256 directories too.
type Heads struct {
	ObjectFormat string
	// DefaultBranch is the branch HEAD names, "" when HEAD names none.
	DefaultBranch string
	// Branches are the branch names, sorted.
	Branches []string
}

// ReadHeads reads the object format, HEAD's branch and the branches of
// owner/name; a missing directory is store.ErrNotFound.
func (s *Store) ReadHeads(owner, name string) (Heads, error) {
	p, err := s.Path(owner, name)
	if err != nil {
		return Heads{}, err
	}
	if _, err := os.Stat(filepath.Join(p, "HEAD")); errors.Is(err, fs.ErrNotExist) {
		return Heads{}, fmt.Errorf("repository %s/%s: %w", owner, name, store.ErrNotFound)
	}
	f, err := configObjectFormat(p)
	if err != nil {
		return Heads{}, err
	}
	h := Heads{ObjectFormat: f}
	ctx, g := context.Background(), onDir(p)
	// Exit code 1: HEAD is not a symbolic ref.
	if out, code, err := g.run(ctx, nil, []int{1}, "symbolic-ref", "--quiet", "HEAD"); err != nil {
		// git does not take the directory for a repository.
		return Heads{}, fmt.Errorf("repository %s/%s: %v: %w", owner, name, err, store.ErrNotFound)
	} else if b, ok := strings.CutPrefix(strings.TrimSpace(string(out)), "refs/heads/"); code == 0 && ok {
		h.DefaultBranch = b
	}
	out, _, err := g.run(ctx, nil, nil, "for-each-ref", "--format=%(refname)", "refs/heads/")
	if err != nil {
		return Heads{}, err
	}
	for _, line := range strings.Split(string(out), "\n") {
		if b, ok := strings.CutPrefix(line, "refs/heads/"); ok && b != "" {
			h.Branches = append(h.Branches, b)
		}
	}
	sort.Strings(h.Branches)
	return h, nil
}

// ZeroID is the all-zero object id of the format ("no object" in git's
// ref updates and the payloads that follow them): 40 digits for sha1, 64
// for sha256.
func ZeroID(format string) string {
	if format == FormatSHA256 {
		return strings.Repeat("0", 64)
	}
	return strings.Repeat("0", 40)
}
