package gitstore

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/go-git/go-git/v6/plumbing"
	"github.com/go-git/go-git/v6/plumbing/object"

	"repohost/store"
)

// BranchInfo is a branch and the commit it points at.
type BranchInfo struct {
	Name   string
	Commit *object.Commit
}

// BranchNames lists every branch name, sorted; it reads refs only, so a
// list can pick its page before loading any commit.
func (g *GitRepo) BranchNames() ([]string, error) {
	it, err := g.r.Storer.IterReferences()
	if err != nil {
		return nil, err
	}
	var names []string
	err = it.ForEach(func(ref *plumbing.Reference) error {
		if ref.Name().IsBranch() {
			names = append(names, ref.Name().Short())
		}
		return nil
	})
	sort.Strings(names)
	return names, err
}

// GetBranch loads one branch; a missing one is store.ErrNotFound.
func (g *GitRepo) GetBranch(name string) (*BranchInfo, error) {
	refName := plumbing.NewBranchReferenceName(name)
	if ValidRefName(refName) != nil {
		return nil, fmt.Errorf("branch %q: %w", name, store.ErrNotFound)
	}
	ref, err := g.r.Storer.Reference(refName)
	if err != nil {
		return nil, notFound(err, "branch "+name)
	}
	c, err := g.peel(ref.Hash())
	if err != nil {
		return nil, notFound(err, "branch "+name)
	}
	return &BranchInfo{Name: name, Commit: c}, nil
}

// BranchesNewestFirst loads the branches named (BranchNames, perhaps
// filtered) in the reference's list order: by their commit's committer
// time, newest first, equal times (to the second, as the reference stores
// them) by name. A branch deleted since its name was read is left out.
// Every tip commit is read to order them, as Tags does for tags.
func (g *GitRepo) BranchesNewestFirst(names []string) ([]*BranchInfo, error) {
	out := make([]*BranchInfo, 0, len(names))
	for _, n := range names {
		b, err := g.GetBranch(n)
		if errors.Is(err, store.ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, err
		}
		out = append(out, b)
	}
	sort.SliceStable(out, func(i, j int) bool {
		ti, tj := out[i].Commit.Committer.When.Unix(), out[j].Commit.Committer.When.Unix()
		if ti != tj {
			return ti > tj
		}
		return out[i].Name < out[j].Name
	})
	return out, nil
}

// BranchHash is where a branch points, the zero hash if it does not exist
// (or cannot: an invalid name).
func (g *GitRepo) BranchHash(name string) (plumbing.Hash, error) {
	refName := plumbing.NewBranchReferenceName(name)
	if ValidRefName(refName) != nil {
		return plumbing.ZeroHash, nil
	}
	ref, err := g.r.Storer.Reference(refName)
	if errors.Is(err, plumbing.ErrReferenceNotFound) {
		return plumbing.ZeroHash, nil
	}
	if err != nil {
		return plumbing.ZeroHash, err
	}
	return ref.Hash(), nil
}

// IsAncestor tells whether ancestor is reachable from descendant, that is
// whether moving a ref from ancestor to descendant is a fast-forward.
func (g *GitRepo) IsAncestor(ancestor, descendant plumbing.Hash) (bool, error) {
	if ancestor == descendant {
		return true, nil
	}
	a, err := g.r.CommitObject(ancestor)
	if err != nil {
		// The old tip is not a commit we have: nothing can descend from it.
		if errors.Is(err, plumbing.ErrObjectNotFound) {
			return false, nil
		}
		return false, err
	}
	d, err := g.r.CommitObject(descendant)
	if err != nil {
		return false, notFound(err, "commit "+descendant.String())
	}
	return a.IsAncestor(d)
}

// RefHash is where a ref points, the zero hash if it does not exist.
func (g *GitRepo) RefHash(name plumbing.ReferenceName) (plumbing.Hash, error) {
	ref, err := g.r.Storer.Reference(name)
	if errors.Is(err, plumbing.ErrReferenceNotFound) {
		return plumbing.ZeroHash, nil
	}
	if err != nil {
		return plumbing.ZeroHash, err
	}
	return ref.Hash(), nil
}

// BranchAndTagRefs lists every branch and tag with what it points at (a
// tag's own object for an annotated tag), sorted by name.
func (g *GitRepo) BranchAndTagRefs() ([]*plumbing.Reference, error) {
	it, err := g.r.Storer.IterReferences()
	if err != nil {
		return nil, err
	}
	var out []*plumbing.Reference
	err = it.ForEach(func(ref *plumbing.Reference) error {
		if ref.Type() == plumbing.HashReference && (ref.Name().IsBranch() || ref.Name().IsTag()) {
			out = append(out, ref)
		}
		return nil
	})
	sort.Slice(out, func(i, j int) bool { return out[i].Name() < out[j].Name() })
	return out, err
}

// ValidRefName checks a full reference name by git's check-ref-format
// rules (go-git's ReferenceName.Validate), and, as this server always
// has, refuses more: a component that is just "@", and a branch or tag
// whose name starts with "-" (which git's branch and tag commands refuse
// to create, since it reads as an option).
func ValidRefName(n plumbing.ReferenceName) error {
	if err := n.Validate(); err != nil {
		return err
	}
	if n == plumbing.HEAD {
		return nil
	}
	parts := strings.Split(string(n), "/")
	for i, part := range parts {
		if part == "@" || (n.IsBranch() || n.IsTag()) && i == 2 && strings.HasPrefix(part, "-") {
			return fmt.Errorf("%w: %q", plumbing.ErrInvalidReferenceName, string(n))
		}
	}
	return nil
}
