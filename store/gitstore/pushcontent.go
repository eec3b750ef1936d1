package gitstore

import (
	"container/heap"
	"errors"
	"fmt"
	"sort"

	"github.com/go-git/go-git/v6/plumbing"
	"github.com/go-git/go-git/v6/plumbing/object"
)

// What an update brings to its branch, for the push policy's rules on
// files and signatures (impl/access). Both answers walk history, so both
// are bounded: past maxInspectCommits commits (the repository's
// inspectLimit) the answer is ErrTooMuchHistory, which the policy takes as
// a refusal.

// ErrTooMuchHistory means an update could not be checked within the
// bound on the history walked.
var ErrTooMuchHistory = errors.New("too much history to check")

// maxInspectCommits bounds the commits one check loads.
const maxInspectCommits = 20000

// limit is the bound on the commits one check loads.
func (g *GitRepo) limit() int {
	if g.inspectLimit > 0 {
		return g.inspectLimit
	}
	return maxInspectCommits
}

// ChangedFiles lists the paths whose entry (content, mode or presence)
// differs in the branch's tree once u is made. For an update that is old's
// tree against new's, whatever the history in between; for a creation,
// new's tree against the nearest commit on new's first-parent line that
// the repository already had on a branch or tag (so a branch started at
// an existing commit changes nothing), or against the empty tree when
// there is none. A deletion changes nothing.
func (g *GitRepo) ChangedFiles(u *RefUpdate) ([]string, error) {
	if u.IsDelete() {
		return nil, nil
	}
	to, err := g.r.CommitObject(u.New)
	if err != nil {
		return nil, notFound(err, "commit "+u.New.String())
	}
	var from *object.Commit
	if !u.IsCreate() {
		if from, err = g.r.CommitObject(u.Old); err != nil {
			return nil, notFound(err, "commit "+u.Old.String())
		}
	} else {
		known, err := g.knownTips(u.Name)
		if err != nil {
			return nil, err
		}
		if len(known) > 0 {
			p, err := g.paint(u.New, known)
			if err != nil {
				return nil, err
			}
			for c := to; c != nil; {
				if p.state[c.Hash]&paintOld != 0 {
					from = c
					break
				}
				if c.NumParents() == 0 {
					break
				}
				if c = p.commits[c.ParentHashes[0]]; c == nil {
					return nil, ErrTooMuchHistory
				}
			}
		}
	}
	return changedPaths(from, to)
}

// changedPaths diffs two commits' trees; a nil from is the empty tree.
func changedPaths(from, to *object.Commit) ([]string, error) {
	var a *object.Tree
	if from != nil {
		if from.TreeHash == to.TreeHash {
			return nil, nil
		}
		t, err := from.Tree()
		if err != nil {
			return nil, err
		}
		a = t
	}
	b, err := to.Tree()
	if err != nil {
		return nil, err
	}
	changes, err := object.DiffTree(a, b)
	if err != nil {
		return nil, err
	}
	seen := make(map[string]bool, len(changes))
	paths := make([]string, 0, len(changes))
	for _, ch := range changes {
		for _, p := range []string{ch.From.Name, ch.To.Name} {
			if p != "" && !seen[p] {
				seen[p] = true
				paths = append(paths, p)
			}
		}
	}
	sort.Strings(paths)
	return paths, nil
}

// BroughtCommits are the commits u brings, newest first: those reachable
// from new but not from old; for a creation, those reachable from no
// existing branch or tag. A deletion brings none. Whether their
// signatures are good is for the caller to judge (impl/signing).
func (g *GitRepo) BroughtCommits(u *RefUpdate) ([]*object.Commit, error) {
	if u.IsDelete() {
		return nil, nil
	}
	known := []plumbing.Hash{u.Old}
	if u.IsCreate() {
		var err error
		if known, err = g.knownTips(u.Name); err != nil {
			return nil, err
		}
	}
	p, err := g.paint(u.New, known)
	if err != nil {
		return nil, err
	}
	var brought []*object.Commit
	for h, s := range p.state {
		if s == paintNew {
			brought = append(brought, p.commits[h])
		}
	}
	sort.Slice(brought, func(i, j int) bool { return newer(brought[i], brought[j]) })
	return brought, nil
}

// knownTips are the commits the branches and tags other than except point
// at (annotated tags peeled); what is not a commit is left out.
func (g *GitRepo) knownTips(except plumbing.ReferenceName) ([]plumbing.Hash, error) {
	it, err := g.r.Storer.IterReferences()
	if err != nil {
		return nil, err
	}
	var tips []plumbing.Hash
	seen := map[plumbing.Hash]bool{}
	err = it.ForEach(func(ref *plumbing.Reference) error {
		if ref.Type() != plumbing.HashReference || ref.Name() == except || !(ref.Name().IsBranch() || ref.Name().IsTag()) {
			return nil
		}
		h := ref.Hash()
		if ref.Name().IsTag() {
			c, err := g.peel(h)
			if err != nil {
				return nil // a tag of a tree or blob, or dangling
			}
			h = c.Hash
		}
		if !seen[h] {
			seen[h] = true
			tips = append(tips, h)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(tips) > g.limit() {
		return nil, ErrTooMuchHistory
	}
	return tips, nil
}

const (
	paintNew uint8 = 1 << iota // reachable from the new tip
	paintOld                   // reachable from a known tip
)

// painted is the outcome of paint: each commit visited with its paint, a
// commit painted paintNew alone being one the update brings.
type painted struct {
	state   map[plumbing.Hash]uint8
	commits map[plumbing.Hash]*object.Commit
}

// paint finds the commits reachable from tip but from none of known, as
// git's rev-list does: both sides are walked together, newest commit
// first, until nothing reachable only from tip is left to walk (plus a few
// steps of slack for skewed clocks). It loads at most g.limit() commits.
func (g *GitRepo) paint(tip plumbing.Hash, known []plumbing.Hash) (*painted, error) {
	p := &painted{state: map[plumbing.Hash]uint8{}, commits: map[plumbing.Hash]*object.Commit{}}
	queued := map[plumbing.Hash]bool{}
	q := &commitQueue{}
	pendingNew := 0 // queued commits painted paintNew alone
	add := func(h plumbing.Hash, paint uint8) error {
		before := p.state[h]
		after := before | paint
		if after == before {
			return nil
		}
		c := p.commits[h]
		if c == nil {
			var err error
			if c, err = g.r.CommitObject(h); err != nil {
				if paint == paintOld && errors.Is(err, plumbing.ErrObjectNotFound) {
					return nil // a known tip we cannot read limits nothing
				}
				return notFound(err, "commit "+h.String())
			}
			if len(p.commits) >= g.limit() {
				return ErrTooMuchHistory
			}
			p.commits[h] = c
		}
		p.state[h] = after
		switch {
		case queued[h] && before == paintNew:
			pendingNew-- // now reachable from a known tip too
		case !queued[h]:
			heap.Push(q, c)
			queued[h] = true
			if after == paintNew {
				pendingNew++
			}
		}
		return nil
	}
	if err := add(tip, paintNew); err != nil {
		return nil, err
	}
	for _, h := range known {
		if err := add(h, paintOld); err != nil {
			return nil, err
		}
	}
	const slack = 5
	for extra := slack; q.Len() > 0 && (pendingNew > 0 || extra > 0); {
		if pendingNew == 0 {
			extra--
		}
		c := heap.Pop(q).(*object.Commit)
		queued[c.Hash] = false
		s := p.state[c.Hash]
		if s == paintNew {
			pendingNew--
		}
		for _, parent := range c.ParentHashes {
			if err := add(parent, s); err != nil {
				return nil, fmt.Errorf("walk from %s: %w", tip, err)
			}
		}
	}
	return p, nil
}

// newer orders commits newest first (by committer time, then hash).
func newer(a, b *object.Commit) bool {
	if !a.Committer.When.Equal(b.Committer.When) {
		return a.Committer.When.After(b.Committer.When)
	}
	return a.Hash.String() < b.Hash.String()
}

// commitQueue is a max-heap of commits by committer time.
type commitQueue []*object.Commit

func (q commitQueue) Len() int           { return len(q) }
func (q commitQueue) Less(i, j int) bool { return newer(q[i], q[j]) }
func (q commitQueue) Swap(i, j int)      { q[i], q[j] = q[j], q[i] }
func (q *commitQueue) Push(x any)        { *q = append(*q, x.(*object.Commit)) }
func (q *commitQueue) Pop() any {
	old := *q
	c := old[len(old)-1]
	*q = old[:len(old)-1]
	return c
}
