package gitstore

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/go-git/go-git/v6"
)

// Remote is how git reaches another server: Config are git -c settings
// (the connect guard's: the host pinned to a checked address, no
// redirects, http(s) only) and Env adds to git's environment (the
// credentials, which never reach the command line).
type Remote struct {
	URL    string
	Config []string
	Env    []string
}

// CloneRemote copies every ref and object of rem into a new bare
// repository in a quarantine directory outside the store (git clone
// --mirror), opened for reading; done removes it. Nothing of it reaches
// a repository of the store until the caller copies objects
// (FetchObjects) and moves refs itself.
func CloneRemote(ctx context.Context, rem Remote) (g *GitRepo, done func(), err error) {
	dir, err := os.MkdirTemp("", "repohost-quarantine-")
	if err != nil {
		return nil, nil, err
	}
	done = func() { os.RemoveAll(dir) }
	path := filepath.Join(dir, "mirror.git")
	args := append(append([]string{}, rem.Config...), "clone", "--mirror", "--quiet", "--", rem.URL, path)
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Env = remoteEnv(rem)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err = start(ctx, cmd); err == nil {
		err = cmd.Wait()
	}
	if err != nil {
		done()
		if ctx.Err() != nil {
			return nil, nil, ctx.Err()
		}
		return nil, nil, fmt.Errorf("git clone: %v: %s", err, strings.TrimSpace(stderr.String()))
	}
	r, err := git.PlainOpen(path)
	if err != nil {
		done()
		return nil, nil, fmt.Errorf("open the clone: %w", err)
	}
	cfg, err := r.Config()
	if err != nil {
		done()
		return nil, nil, fmt.Errorf("open the clone: %w", err)
	}
	return &GitRepo{r: r, path: path, format: formatName(cfg.Extensions.ObjectFormat)}, done, nil
}

// remoteEnv is git's environment for talking to another server: no
// prompts, no system configuration, no proxies, and rem's additions.
func remoteEnv(rem Remote) []string {
	return append(append(os.Environ(), "GIT_TERMINAL_PROMPT=0", "GIT_CONFIG_NOSYSTEM=1", "GIT_ASKPASS=",
		"http_proxy=", "https_proxy=", "HTTP_PROXY=", "HTTPS_PROXY=", "ALL_PROXY=", "all_proxy="), rem.Env...)
}

// PushMirror makes rem's branches and tags those of g, as git push
// --mirror does for them: every branch and tag is pushed (forced) and
// those rem has and g has not are deleted. Refs outside branches and tags
// (pull request heads) stay here.
func (g *GitRepo) PushMirror(ctx context.Context, rem Remote) error {
	args := append(append([]string{"--git-dir=" + g.path}, rem.Config...), "push", "--quiet", "--prune", "--",
		rem.URL, "+refs/heads/*:refs/heads/*", "+refs/tags/*:refs/tags/*")
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Env = remoteEnv(rem)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := start(ctx, cmd)
	if err == nil {
		err = cmd.Wait()
	}
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("git push: %v: %s", err, strings.TrimSpace(stderr.String()))
	}
	return nil
}
