package gitstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"

	"github.com/go-git/go-git/v6/plumbing"
	"github.com/go-git/go-git/v6/plumbing/object"

	"repohost/store"
)

// The operations of pull requests and forks run the git binary (2.38 or
// newer: merge-tree --write-tree) on the bare repository itself: merges
// write only objects, never a working tree or an index, so concurrent
// requests share nothing mutable. Only object ids reach the command
// line, never a caller's text, so nothing can be read as an option.

// ErrMergeConflict is a merge whose result has conflicts.
var ErrMergeConflict = errors.New("merge conflict")

// run runs git with args on g, with stdin when not nil, and returns what it
// printed. exitOK lists exit codes that are answers, not failures.
func (g *GitRepo) run(ctx context.Context, stdin io.Reader, exitOK []int, args ...string) ([]byte, int, error) {
	cmd := exec.CommandContext(ctx, "git", append([]string{"--git-dir=" + g.path}, args...)...)
	cmd.Env = g.gitEnv("GIT_TERMINAL_PROMPT=0", "GIT_CONFIG_NOSYSTEM=1", "GIT_NO_REPLACE_OBJECTS=1")
	cmd.Stdin = stdin
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := start(ctx, cmd)
	if err == nil {
		err = cmd.Wait()
	}
	out := stdout.Bytes()
	if err != nil {
		if ctx.Err() != nil {
			return nil, 0, ctx.Err()
		}
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			for _, c := range exitOK {
				if exit.ExitCode() == c {
					return out, c, nil
				}
			}
		}
		return nil, 0, fmt.Errorf("git %s: %v: %s", args[0], err, strings.TrimSpace(stderr.String()))
	}
	return out, 0, nil
}

// backgroundNice is the scheduling priority of git processes run for
// work no request waits for (store.Background: the outbox's consumers,
// maintenance tasks): on a busy machine the requests' own work comes
// first, and a push is not slowed by the pull requests it refreshes.
const backgroundNice = 10

// start starts cmd, at a lower priority when ctx is background work.
func start(ctx context.Context, cmd *exec.Cmd) error {
	if err := cmd.Start(); err != nil {
		return err
	}
	if store.IsBackground(ctx) {
		// Best effort: a process that already ended cannot be reniced.
		_ = syscall.Setpriority(syscall.PRIO_PROCESS, cmd.Process.Pid, backgroundNice)
	}
	return nil
}

// CheckGit tells whether the git binary on the PATH can do what pull
// requests need (merge-tree --write-tree, git 2.38 or newer).
func CheckGit() error {
	out, err := exec.Command("git", "version").Output()
	if err != nil {
		return fmt.Errorf("the git binary (2.38 or newer) is needed for pull requests and forks: %v", err)
	}
	f := strings.Fields(string(out))
	if len(f) < 3 {
		return fmt.Errorf("unreadable git version %q", strings.TrimSpace(string(out)))
	}
	parts := strings.SplitN(f[2], ".", 3)
	major, _ := strconv.Atoi(parts[0])
	minor := 0
	if len(parts) > 1 {
		minor, _ = strconv.Atoi(parts[1])
	}
	if major < 2 || major == 2 && minor < 38 {
		return fmt.Errorf("git %s is too old: pull requests need git 2.38 or newer (merge-tree --write-tree)", f[2])
	}
	return nil
}

// FetchObjects copies into g the objects reachable from tips in src (a
// fork's commits into its parent, or the other way), writing no ref.
func (g *GitRepo) FetchObjects(ctx context.Context, src *GitRepo, tips []plumbing.Hash) error {
	var missing []string
	for _, h := range tips {
		if _, err := g.r.Storer.EncodedObject(plumbing.AnyObject, h); err != nil {
			missing = append(missing, h.String())
		}
	}
	if len(missing) == 0 {
		return nil
	}
	// Wanting a commit that is not a ref tip needs the source's consent;
	// both repositories are this server's own.
	args := append([]string{"fetch", "--quiet", "--no-tags",
		"--no-write-fetch-head", "--no-auto-gc", "--no-recurse-submodules", "file://" + src.path}, missing...)
	cmd := exec.CommandContext(ctx, "git", append([]string{"--git-dir=" + g.path}, args...)...)
	cmd.Env = append(os.Environ(), "GIT_TERMINAL_PROMPT=0", "GIT_CONFIG_NOSYSTEM=1",
		"GIT_CONFIG_COUNT=1", "GIT_CONFIG_KEY_0=uploadpack.allowAnySHA1InWant", "GIT_CONFIG_VALUE_0=true")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := start(ctx, cmd)
	if err == nil {
		err = cmd.Wait()
	}
	if err != nil {
		return fmt.Errorf("git fetch objects: %v: %s", err, strings.TrimSpace(stderr.String()))
	}
	return nil
}

// MergeBase is the best common ancestor of a and b, zero when they have
// none.
func (g *GitRepo) MergeBase(ctx context.Context, a, b plumbing.Hash) (plumbing.Hash, error) {
	out, code, err := g.run(ctx, nil, []int{1}, "merge-base", a.String(), b.String())
	if err != nil || code == 1 {
		return plumbing.ZeroHash, err
	}
	return plumbing.NewHash(strings.TrimSpace(string(out))), nil
}

// MergeResult is a three-way merge's tree, or its conflicting files.
type MergeResult struct {
	Tree      plumbing.Hash
	Conflicts []string
}

// MergeTree merges theirs into ours as git merge would (rename detection,
// git's conflict rules) and writes the resulting tree; with conflicts,
// Conflicts names the files.
func (g *GitRepo) MergeTree(ctx context.Context, ours, theirs plumbing.Hash) (MergeResult, error) {
	out, code, err := g.run(ctx, nil, []int{1}, "merge-tree", "--write-tree", "--name-only", "-z",
		"--allow-unrelated-histories", ours.String(), theirs.String())
	if err != nil {
		return MergeResult{}, err
	}
	// Output: the tree id, then (conflicts only) the conflicted file
	// names, each NUL-terminated, then an empty entry and messages.
	fields := strings.Split(string(out), "\x00")
	res := MergeResult{Tree: plumbing.NewHash(strings.TrimSpace(fields[0]))}
	if code == 1 {
		seen := map[string]bool{}
		for _, f := range fields[1:] {
			if f == "" {
				break
			}
			if !seen[f] {
				seen[f] = true
				res.Conflicts = append(res.Conflicts, f)
			}
		}
		if len(res.Conflicts) == 0 {
			res.Conflicts = []string{}
		}
	}
	return res, nil
}

// CommitSpec is a commit to write.
type CommitSpec struct {
	Tree              plumbing.Hash
	Parents           []plumbing.Hash
	Message           string
	Author, Committer object.Signature
	Signer            CommitSigner
}

// WriteCommit writes the commit c describes (the object git commit-tree
// writes, signed by c.Signer when there is one) and returns its id.
func (g *GitRepo) WriteCommit(c CommitSpec) (plumbing.Hash, error) {
	msg := c.Message
	if !strings.HasSuffix(msg, "\n") {
		msg += "\n"
	}
	return writeCommit(g.r.Storer, &object.Commit{Author: c.Author, Committer: c.Committer, Message: msg,
		TreeHash: c.Tree, ParentHashes: c.Parents}, c.Signer)
}

// Pick applies commit c onto onto as git cherry-pick would: a three-way
// merge with c's parent as the base. It returns the new commit (c's author
// and message kept, committer the given one), or ErrMergeConflict naming
// the files.
func (g *GitRepo) Pick(ctx context.Context, onto plumbing.Hash, c *object.Commit, committer object.Signature, signer CommitSigner) (plumbing.Hash, []string, error) {
	ontoCommit, err := g.Commit(onto)
	if err != nil {
		return plumbing.ZeroHash, nil, err
	}
	// merge-tree of git 2.39 takes the merge base from history: a
	// throwaway commit with onto's tree and c's parent as its only
	// parent makes that parent the base, which is what cherry-pick does.
	var parents []plumbing.Hash
	if len(c.ParentHashes) > 0 {
		parents = c.ParentHashes[:1]
	}
	stand, err := g.WriteCommit(CommitSpec{Tree: ontoCommit.TreeHash, Parents: parents, Message: "pick base",
		Author: committer, Committer: committer})
	if err != nil {
		return plumbing.ZeroHash, nil, err
	}
	res, err := g.MergeTree(ctx, stand, c.Hash)
	if err != nil {
		return plumbing.ZeroHash, nil, err
	}
	if res.Conflicts != nil {
		return plumbing.ZeroHash, res.Conflicts, ErrMergeConflict
	}
	h, err := g.WriteCommit(CommitSpec{Tree: res.Tree, Parents: []plumbing.Hash{onto}, Message: c.Message,
		Author: c.Author, Committer: committer, Signer: signer})
	return h, nil, err
}

// Between lists the commits reachable from head but not from base, oldest
// first (git rev-list --reverse base..head); withMerges keeps merge
// commits.
func (g *GitRepo) Between(ctx context.Context, base, head plumbing.Hash, withMerges bool) ([]*object.Commit, error) {
	args := []string{"--reverse", "--topo-order"}
	if !withMerges {
		args = append(args, "--no-merges")
	}
	args = append(args, head.String())
	if !base.IsZero() {
		args = append(args, "^"+base.String())
	}
	out, err := g.revList(ctx, append(args, "--")...)
	if err != nil {
		return nil, err
	}
	var list []*object.Commit
	for _, line := range strings.Fields(string(out)) {
		c, err := g.Commit(plumbing.NewHash(line))
		if err != nil {
			return nil, err
		}
		list = append(list, c)
	}
	return list, nil
}

// DiffFile is one file of a diff between two commits.
type DiffFile struct {
	Status             string // added, deleted, modified, renamed, copied, changed
	Name, PreviousName string
	Additions          int64
	Deletions          int64
}

var diffStatus = map[byte]string{'A': "added", 'D': "deleted", 'M': "modified", 'R': "renamed", 'C': "copied", 'T': "changed"}

// DiffFiles lists the files that differ between from and to, with their
// line counts, renames detected as git does.
func (g *GitRepo) DiffFiles(ctx context.Context, from, to plumbing.Hash) ([]DiffFile, error) {
	out, _, err := g.run(ctx, nil, nil, "diff", "--raw", "--numstat", "-M", "-z", "--no-color", "--no-ext-diff", from.String(), to.String(), "--")
	if err != nil {
		return nil, err
	}
	f := strings.Split(string(out), "\x00")
	var files []DiffFile
	i := 0
	// --raw entries come first: ":modes ids status\0path\0[path2\0]".
	for i < len(f) && strings.HasPrefix(f[i], ":") {
		meta := strings.Fields(f[i])
		st := meta[len(meta)-1]
		d := DiffFile{Status: diffStatus[st[0]]}
		if d.Status == "" {
			d.Status = "changed"
		}
		if st[0] == 'R' || st[0] == 'C' {
			d.PreviousName, d.Name = f[i+1], f[i+2]
			i += 3
		} else {
			d.Name = f[i+1]
			i += 2
		}
		files = append(files, d)
	}
	// Then --numstat: "add\tdel\tpath\0", or "add\tdel\t\0old\0new\0".
	for n := 0; n < len(files) && i < len(f); n++ {
		parts := strings.SplitN(f[i], "\t", 3)
		if len(parts) < 3 {
			break
		}
		files[n].Additions, _ = strconv.ParseInt(parts[0], 10, 64)
		files[n].Deletions, _ = strconv.ParseInt(parts[1], 10, 64)
		if parts[2] == "" {
			i += 3
		} else {
			i++
		}
	}
	return files, nil
}

// WriteDiff writes the unified diff from from to to with the options the
// reference uses for a pull request's .diff: `git diff -p`, and with
// binary `--binary --histogram` (binary changes as git's binary patches).
func (g *GitRepo) WriteDiff(ctx context.Context, w io.Writer, from, to plumbing.Hash, binary bool) error {
	args := []string{"diff", "-p", "--no-color", "--no-ext-diff"}
	if binary {
		args = append(args, "--binary", "--histogram")
	}
	out, _, err := g.run(ctx, nil, nil, append(args, from.String(), to.String(), "--")...)
	if err != nil {
		return err
	}
	_, err = w.Write(out)
	return err
}

// FileDiff is `git diff -M from to -- path`: one file's unified diff, which
// a review comment cuts its diff hunk from.
func (g *GitRepo) FileDiff(ctx context.Context, from, to plumbing.Hash, path string) ([]byte, error) {
	out, _, err := g.run(ctx, nil, nil, "diff", "-M", "--no-color", "--no-ext-diff", from.String(), to.String(), "--", path)
	return out, err
}

// WritePatch writes the commits from base to head as git format-patch's
// mailbox series, binary changes included (the reference always asks for
// them in a .patch, whatever the binary parameter).
func (g *GitRepo) WritePatch(ctx context.Context, w io.Writer, base, head plumbing.Hash) error {
	args := []string{"format-patch", "--binary", "--stdout", "--no-color"}
	rng := head.String()
	if !base.IsZero() {
		rng = base.String() + ".." + head.String()
	}
	out, _, err := g.run(ctx, nil, nil, append(args, rng, "--")...)
	if err != nil {
		return err
	}
	_, err = w.Write(out)
	return err
}

// CreateFork makes owner/name a new bare repository holding the objects
// of src reachable from tips (its branches and tags), and no ref: the
// caller creates the fork's refs through impl/refs. Nothing is shared
// with src on disk.
func (s *Store) CreateFork(ctx context.Context, src *GitRepo, owner, name string, opts InitOptions, tips []plumbing.Hash) (err error) {
	if err := s.create(owner, name, opts); err != nil {
		return err
	}
	defer func() {
		if err != nil {
			_ = s.Delete(owner, name)
		}
	}()
	dst, err := s.OpenGit(owner, name)
	if err != nil {
		return err
	}
	return dst.FetchObjects(ctx, src, tips)
}
