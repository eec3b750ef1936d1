package gitstore

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"

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
	if rn.Validate() != nil {
		return nil, fmt.Errorf("tag %q: %w", name, store.ErrNotFound)
	}
	ref, err := g.r.Storer.Reference(rn)
	if err != nil {
		return nil, notFound(err, "tag "+name)
	}
	return g.tagInfo(ref)
}

// CreateTag tags target: lightweight when message is empty, else annotated
// with tagger. It fails with ErrTagExists if the name is taken.
func (g *GitRepo) CreateTag(name string, target plumbing.Hash, message string, tagger object.Signature) (*TagInfo, error) {
	rn := plumbing.NewTagReferenceName(name)
	if err := rn.Validate(); err != nil {
		return nil, fmt.Errorf("tag %q: %w", name, ErrBadPath)
	}
	h := target
	if message != "" {
		if !strings.HasSuffix(message, "\n") {
			message += "\n"
		}
		t := &object.Tag{Name: name, Tagger: tagger, Message: message, TargetType: plumbing.CommitObject, Target: target}
		obj := g.r.Storer.NewEncodedObject()
		if err := t.Encode(obj); err != nil {
			return nil, err
		}
		var err error
		if h, err = g.r.Storer.SetEncodedObject(obj); err != nil {
			return nil, err
		}
	}
	if err := g.createRef(plumbing.NewHashReference(rn, h)); err != nil {
		if errors.Is(err, errRefExists) {
			return nil, fmt.Errorf("tag %s: %w", name, ErrTagExists)
		}
		return nil, err
	}
	return g.Tag(name)
}

// DeleteTag removes a tag; a missing one is store.ErrNotFound.
func (g *GitRepo) DeleteTag(name string) error {
	rn := plumbing.NewTagReferenceName(name)
	if _, err := g.r.Storer.Reference(rn); err != nil {
		return notFound(err, "tag "+name)
	}
	return g.r.Storer.RemoveReference(rn)
}

// TagRefName is the full reference name of a tag.
func TagRefName(name string) plumbing.ReferenceName { return plumbing.NewTagReferenceName(name) }
