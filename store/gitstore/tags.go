package gitstore

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/go-git/go-git/v6/plumbing"
	"github.com/go-git/go-git/v6/plumbing/object"

	"repohost/store"
)

// TagInfo is one tag as the API shows it.
type TagInfo struct {
	Name string
	// ID is the tag object for an annotated tag, else the commit.
	ID        plumbing.Hash
	Annotated bool
	// Message is the annotation, or the commit message of a lightweight tag.
	Message string
	// Commit is what the tag finally points at (nil if not a commit).
	Commit *object.Commit
	// Date is the tagger's date, or the commit's for a lightweight tag: the
	// order tags are listed in, newest first.
	Date time.Time
}

func (g *GitRepo) tagInfo(ref *plumbing.Reference) (*TagInfo, error) {
	ti := &TagInfo{Name: ref.Name().Short(), ID: ref.Hash()}
	if t, err := g.r.TagObject(ref.Hash()); err == nil {
		ti.Annotated = true
		ti.Message = t.Message
		ti.Date = t.Tagger.When
		if c, err := g.peel(t.Target); err == nil {
			ti.Commit = c
		}
		return ti, nil
	} else if !errors.Is(err, plumbing.ErrObjectNotFound) && !errors.Is(err, plumbing.ErrInvalidType) {
		return nil, err
	}
	c, err := g.peel(ref.Hash())
	if err != nil {
		if errors.Is(err, ErrNotACommit) || errors.Is(err, plumbing.ErrObjectNotFound) {
			return ti, nil
		}
		return nil, err
	}
	ti.Commit, ti.Message, ti.Date = c, c.Message, c.Committer.When
	return ti, nil
}

// Tags lists every tag, newest first (ties by name).
func (g *GitRepo) Tags() ([]*TagInfo, error) {
	it, err := g.r.Tags()
	if err != nil {
		return nil, err
	}
	var out []*TagInfo
	err = it.ForEach(func(ref *plumbing.Reference) error {
		ti, err := g.tagInfo(ref)
		if err != nil {
			return err
		}
		out = append(out, ti)
		return nil
	})
	if err != nil {
		return nil, err
	}
	sort.SliceStable(out, func(i, j int) bool {
		if !out[i].Date.Equal(out[j].Date) {
			return out[i].Date.After(out[j].Date)
		}
		return out[i].Name < out[j].Name
	})
	return out, nil
}

// Tag reads one tag; a missing one is store.ErrNotFound.
func (g *GitRepo) Tag(name string) (*TagInfo, error) {
	rn := plumbing.NewTagReferenceName(name)
	if ValidRefName(rn) != nil {
		return nil, fmt.Errorf("tag %q: %w", name, store.ErrNotFound)
	}
	ref, err := g.r.Storer.Reference(rn)
	if err != nil {
		return nil, notFound(err, "tag "+name)
	}
	return g.tagInfo(ref)
}

// MakeTag prepares tag name on target: for an annotated tag (message not
// empty) it writes the tag object by tagger. It returns what
// refs/tags/<name> must point at (the tag object, or target itself for a
// lightweight tag); the ref is created by impl/refs.
func (g *GitRepo) MakeTag(name string, target plumbing.Hash, message string, tagger object.Signature) (plumbing.Hash, error) {
	rn := plumbing.NewTagReferenceName(name)
	if err := ValidRefName(rn); err != nil {
		return plumbing.ZeroHash, fmt.Errorf("tag %q: %w", name, ErrBadRefName)
	}
	if message == "" {
		return target, nil
	}
	if !strings.HasSuffix(message, "\n") {
		message += "\n"
	}
	t := &object.Tag{Name: name, Tagger: tagger, Message: message, TargetType: plumbing.CommitObject, Target: target}
	obj := g.r.Storer.NewEncodedObject()
	if err := t.Encode(obj); err != nil {
		return plumbing.ZeroHash, err
	}
	return g.r.Storer.SetEncodedObject(obj)
}

// TagRefName is the full reference name of a tag.
func TagRefName(name string) plumbing.ReferenceName { return plumbing.NewTagReferenceName(name) }
