package gitstore

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/go-git/go-git/v6/plumbing"
	"github.com/go-git/go-git/v6/plumbing/object"
	"github.com/go-git/go-git/v6/utils/merkletrie"
)

// LogQuery selects the commits of a history the commits API lists,
// newest first, in git's own order (git rev-list).
type LogQuery struct {
	// From is the commit the history starts at.
	From plumbing.Hash
	// Not leaves out the commits reachable from these.
	Not []plumbing.Hash
	// Path, when not empty, keeps the commits that change it (a file or a
	// directory; cleaned with CleanTreePath).
	Path string
	// Since and Until keep commits committed in that range.
	Since, Until *time.Time
}

func (q LogQuery) args() []string {
	var args []string
	if q.Since != nil {
		args = append(args, "--since="+strconv.FormatInt(q.Since.Unix(), 10))
	}
	if q.Until != nil {
		args = append(args, "--until="+strconv.FormatInt(q.Until.Unix(), 10))
	}
	// Only object ids reach the command line, never a caller's text, so
	// nothing can be read as an option.
	args = append(args, q.From.String())
	if len(q.Not) > 0 {
		args = append(args, "--not")
		for _, h := range q.Not {
			args = append(args, h.String())
		}
	}
	args = append(args, "--")
	if q.Path != "" {
		args = append(args, q.Path)
	}
	return args
}

// revList runs git rev-list on the repository with args.
func (g *GitRepo) revList(ctx context.Context, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, "git", append([]string{"--git-dir=" + g.path, "rev-list"}, args...)...)
	cmd.Env = g.gitEnv("GIT_TERMINAL_PROMPT=0", "GIT_CONFIG_NOSYSTEM=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("git rev-list: %v: %s", err, strings.TrimSpace(stderr.String()))
	}
	return out, nil
}

// Log returns the commits q selects after the first skip, at most limit
// of them, and how many q selects in all. git stops reading history once
// the page is full; only the count walks all of it (as git does, from the
// commit graph when the repository has one).
func (g *GitRepo) Log(ctx context.Context, q LogQuery, skip, limit int) ([]*object.Commit, int64, error) {
	out, err := g.revList(ctx, append([]string{"--count"}, q.args()...)...)
	if err != nil {
		return nil, 0, err
	}
	total, err := strconv.ParseInt(strings.TrimSpace(string(out)), 10, 64)
	if err != nil {
		return nil, 0, fmt.Errorf("git rev-list --count: %q", out)
	}
	if int64(skip) >= total || limit <= 0 {
		return []*object.Commit{}, total, nil
	}
	out, err = g.revList(ctx, append([]string{"--skip=" + strconv.Itoa(skip), "--max-count=" + strconv.Itoa(limit)}, q.args()...)...)
	if err != nil {
		return nil, 0, err
	}
	commits := make([]*object.Commit, 0, limit)
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		c, err := g.r.CommitObject(plumbing.NewHash(strings.TrimSpace(sc.Text())))
		if err != nil {
			return nil, 0, notFound(err, "commit")
		}
		commits = append(commits, c)
	}
	return commits, total, sc.Err()
}

// Commit reads the commit with id h.
func (g *GitRepo) Commit(h plumbing.Hash) (*object.Commit, error) {
	c, err := g.r.CommitObject(h)
	if err != nil {
		return nil, notFound(err, "commit "+h.String())
	}
	return c, nil
}

// FileStatus is how a commit changes one file, in the reference's words.
type FileStatus struct {
	Path   string
	Status string // "added", "modified" or "removed"
}

// firstParentTree is the tree c is compared with: its first parent's, nil
// (the empty tree) for a root commit.
func firstParentTree(c *object.Commit) (*object.Tree, error) {
	if c.NumParents() == 0 {
		return nil, nil
	}
	p, err := c.Parent(0)
	if err != nil {
		return nil, notFound(err, "parent commit")
	}
	return p.Tree()
}

// CommitFiles lists the files c changes against its first parent (all of
// them for a root commit), by path. A rename is a removal and an addition,
// as git shows without rename detection.
func (g *GitRepo) CommitFiles(c *object.Commit) ([]FileStatus, error) {
	from, err := firstParentTree(c)
	if err != nil {
		return nil, err
	}
	to, err := c.Tree()
	if err != nil {
		return nil, err
	}
	changes, err := object.DiffTree(from, to)
	if err != nil {
		return nil, err
	}
	out := make([]FileStatus, 0, len(changes))
	for _, ch := range changes {
		action, err := ch.Action()
		if err != nil {
			return nil, err
		}
		switch action {
		case merkletrie.Insert:
			out = append(out, FileStatus{Path: ch.To.Name, Status: "added"})
		case merkletrie.Delete:
			out = append(out, FileStatus{Path: ch.From.Name, Status: "removed"})
		default:
			out = append(out, FileStatus{Path: ch.To.Name, Status: "modified"})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out, nil
}

// CommitStats counts the lines c adds and deletes against its first
// parent (binary files count none).
func (g *GitRepo) CommitStats(ctx context.Context, c *object.Commit) (additions, deletions int64, err error) {
	stats, err := c.StatsContext(ctx)
	if err != nil {
		return 0, 0, err
	}
	for _, s := range stats {
		additions += int64(s.Addition)
		deletions += int64(s.Deletion)
	}
	return additions, deletions, nil
}
