package gitstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"repohost/store"
)

// Object formats of a repository: the hash that names its objects.
const (
	FormatSHA1   = "sha1"
	FormatSHA256 = "sha256"
)

// ErrSHA256 is the refusal of an operation the server cannot do on a
// SHA-256 repository. go-git, which reads and writes the server's
// repositories, names objects with one hash chosen when it is compiled
// (SHA-1 here), so a SHA-256 repository is never opened through it:
// OpenGit refuses with this error, and what works on such a repository
// (creating, deleting, renaming, fetching and cloning, which git's own
// upload-pack serves) goes through git's binary instead.
var ErrSHA256 = fmt.Errorf("is a SHA-256 repository, which this server serves for clone and fetch only: this operation is %w", ErrUnsupported)

// SupportsObjectFormat tells whether repositories with the object format
// can be created: "sha1" through go-git, "sha256" through git's binary.
func (s *Store) SupportsObjectFormat(format string) bool {
	return format == FormatSHA1 || format == FormatSHA256
}

// configObjectFormat reads extensions.objectFormat from the repository at
// path with git's binary ("sha1" when unset).
func configObjectFormat(path string) (string, error) {
	out, err := plainGit(context.Background(), path, "config", "--file", filepath.Join(path, "config"), "--get", "extensions.objectformat")
	var exit *exec.ExitError
	if errors.As(err, &exit) && exit.ExitCode() == 1 {
		return FormatSHA1, nil // not set
	}
	if err != nil {
		return "", err
	}
	if f := strings.ToLower(strings.TrimSpace(out)); f != "" {
		return f, nil
	}
	return FormatSHA1, nil
}

// plainGit runs git with no system or user configuration on the bare
// repository at dir and returns its standard output.
func plainGit(ctx context.Context, dir string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "git", append([]string{"--git-dir=" + dir}, args...)...)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "GIT_CONFIG_NOSYSTEM=1", "HOME=" + dir}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stdout.String(), fmt.Errorf("git %s: %w: %s", args[0], err, strings.TrimSpace(stderr.String()))
	}
	return stdout.String(), nil
}

// initSHA256 makes the empty bare SHA-256 repository at path (which exists
// and is empty), HEAD on branch, pushes over HTTP allowed.
func initSHA256(path, branch string) error {
	ctx := context.Background()
	if _, err := plainGit(ctx, path, "init", "--bare", "--quiet", "--object-format="+FormatSHA256, "--initial-branch="+branch, path); err != nil {
		return fmt.Errorf("init repository: %w", err)
	}
	if _, err := plainGit(ctx, path, "config", "http.receivepack", "true"); err != nil {
		return fmt.Errorf("init repository: %w", err)
	}
	return nil
}

// ObjectFormat is the object format of owner/name as its configuration
// says: "sha1" or "sha256".
func (s *Store) ObjectFormat(owner, name string) (string, error) {
	p, err := s.Path(owner, name)
	if err != nil {
		return "", err
	}
	return configObjectFormat(p)
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
	ctx := context.Background()
	if out, err := plainGit(ctx, p, "symbolic-ref", "--quiet", "HEAD"); err == nil {
		h.DefaultBranch, _ = strings.CutPrefix(strings.TrimSpace(out), "refs/heads/")
		if h.DefaultBranch == strings.TrimSpace(out) {
			h.DefaultBranch = "" // HEAD names something else than a branch
		}
	}
	out, err := plainGit(ctx, p, "for-each-ref", "--format=%(refname)", "refs/heads/")
	if err != nil {
		return Heads{}, err
	}
	for _, line := range strings.Split(out, "\n") {
		if b, ok := strings.CutPrefix(line, "refs/heads/"); ok && b != "" {
			h.Branches = append(h.Branches, b)
		}
	}
	sort.Strings(h.Branches)
	return h, nil
}
