package gitstore

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/go-git/go-git/v6/plumbing"
	"github.com/go-git/go-git/v6/storage"

	"repohost/store"
)

// Sentinels of refused ref updates; impl/apierr translates them.
var (
	// ErrRefused marks an update the push policy (impl/refs) refused; the
	// error's text says why, in the words git shows.
	ErrRefused = errors.New("refused by the push policy")
	// ErrBadRefName is a reference name git would not accept.
	ErrBadRefName = errors.New("invalid reference name")
)

// RefUpdate is one reference change: Old zero creates the reference, New
// zero deletes it. The only code that applies one is impl/refs, through
// Repos.UpdateRefs.
type RefUpdate struct {
	Name     plumbing.ReferenceName
	Old, New plumbing.Hash
	// FastForward is set by the inspection for an update of an existing
	// branch whose new commit descends from the old one.
	FastForward bool
	// Err is why the update was not made (a *RefError, or the push
	// policy's refusal wrapping ErrRefused); nil for an applied update.
	Err error
}

// IsCreate tells whether the update creates the reference.
func (u *RefUpdate) IsCreate() bool { return u.Old.IsZero() }

// IsDelete tells whether the update deletes the reference.
func (u *RefUpdate) IsDelete() bool { return u.New.IsZero() }

// Branch is the branch name the update touches, "" for other references.
func (u *RefUpdate) Branch() string {
	if u.Name.IsBranch() {
		return u.Name.Short()
	}
	return ""
}

// RefError is why the repository refused one update: Reason is what git
// shows after "ng <ref>", Kind the sentinel (or the underlying failure)
// the API answers with.
type RefError struct {
	Reason string
	Kind   error
}

func (e *RefError) Error() string { return e.Reason }
func (e *RefError) Unwrap() error { return e.Kind }

func refErr(reason string, kind error) *RefError { return &RefError{Reason: reason, Kind: kind} }

// existsErr is the refusal of a create whose reference is already there.
func existsErr(name plumbing.ReferenceName) *RefError {
	switch {
	case name.IsBranch():
		return refErr(fmt.Sprintf("branch %s: %s", name.Short(), ErrBranchExists), ErrBranchExists)
	case name.IsTag():
		return refErr(fmt.Sprintf("tag %s: %s", name.Short(), ErrTagExists), ErrTagExists)
	}
	return refErr("the reference already exists", store.ErrConflict)
}

// staleErr is the refusal of an update whose old value is no longer true.
func staleErr() *RefError { return refErr("stale info: fetch first", store.ErrConflict) }

// UpdateRefs inspects every update not yet refused (a sane name, the
// objects present, the old value still true; FastForward is filled in),
// lets decide refuse some of the rest by setting Err, and applies the
// others, each as a compare-and-swap on its old value, so a concurrent
// writer is never undone. Refusals are left in Err.
func (s *Store) UpdateRefs(g *GitRepo, updates []*RefUpdate, decide func(open []*RefUpdate)) {
	open := make([]*RefUpdate, 0, len(updates))
	for _, u := range updates {
		if u.Err == nil {
			if re := g.inspect(u); re != nil {
				u.Err = re
			} else {
				open = append(open, u)
			}
		}
	}
	if len(open) > 0 && decide != nil {
		decide(open)
	}
	if g.q != nil {
		// A push's objects enter the repository only when one of its
		// updates is to be made.
		accepted := false
		for _, u := range open {
			accepted = accepted || u.Err == nil
		}
		if accepted {
			if err := g.admit(); err != nil {
				for _, u := range open {
					if u.Err == nil {
						u.Err = refErr("failed to store the pushed objects", err)
					}
				}
			}
		}
	}
	for _, u := range open {
		if u.Err == nil {
			if re := g.apply(u); re != nil {
				u.Err = re
			}
		}
	}
}

// inspect checks an update against the repository before any policy.
func (g *GitRepo) inspect(u *RefUpdate) *RefError {
	if !strings.HasPrefix(u.Name.String(), "refs/") || ValidRefName(u.Name) != nil {
		return refErr("refusing to update an invalid reference name", ErrBadRefName)
	}
	if u.IsCreate() && u.IsDelete() {
		return refErr("nothing to do", ErrProtocol)
	}
	if !u.IsDelete() && g.r.Storer.HasEncodedObject(u.New) != nil {
		return refErr("missing necessary objects", store.ErrNotFound)
	}
	cur, err := g.r.Storer.Reference(u.Name)
	switch {
	case errors.Is(err, plumbing.ErrReferenceNotFound):
		if !u.IsCreate() {
			return refErr("stale info: the reference does not exist", store.ErrConflict)
		}
	case err != nil:
		return refErr("failed to read the reference", err)
	case u.IsCreate():
		return existsErr(u.Name)
	case cur.Hash() != u.Old:
		return staleErr()
	}
	if u.Name.IsBranch() && !u.IsCreate() && !u.IsDelete() {
		if _, err := g.r.CommitObject(u.New); err != nil {
			return refErr("a branch must point at a commit", ErrNotACommit)
		}
		ff, err := g.IsAncestor(u.Old, u.New)
		if err != nil {
			return refErr("failed to compare the old and new commits", err)
		}
		u.FastForward = ff
	}
	return nil
}

// apply makes one update, as a compare-and-swap on the old value.
func (g *GitRepo) apply(u *RefUpdate) *RefError {
	err := g.casRef(u.Name, u.Old, u.New)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, errRefExists):
		return existsErr(u.Name)
	case errors.Is(err, storage.ErrReferenceHasChanged), errors.Is(err, plumbing.ErrReferenceNotFound),
		errors.Is(err, store.ErrConflict):
		return staleErr()
	}
	return refErr("failed to update the reference", err)
}

var errRefExists = errors.New("reference already exists")

// casRef moves name from old to new (a zero old: the ref must not exist; a
// zero new: delete it) the way git itself does, so this server, git and
// concurrent requests exclude one another: it creates "<ref>.lock"
// exclusively (a held lock is a conflict), checks the ref's current value,
// then writes the new value into the lock file and renames it over the
// ref, or deletes the ref (its loose file and any packed-refs line). A
// reader therefore sees the old value or the new one, never a ref file
// half written; and the lock is not a ref to anyone listing refs (repoFS
// hides it).
func (g *GitRepo) casRef(name plumbing.ReferenceName, old, new plumbing.Hash) (err error) {
	path := filepath.Join(g.path, filepath.FromSlash(name.String()))
	lock := path + ".lock"
	if err := os.MkdirAll(filepath.Dir(lock), 0o755); err != nil {
		return err
	}
	f, err := os.OpenFile(lock, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
	if errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("%s is locked: %w", name, store.ErrConflict)
	}
	if err != nil {
		return err
	}
	renamed := false
	defer func() {
		if f != nil {
			_ = f.Close()
		}
		if !renamed {
			_ = os.Remove(lock)
		}
	}()
	cur, err := g.r.Storer.Reference(name)
	switch {
	case errors.Is(err, plumbing.ErrReferenceNotFound):
		if !old.IsZero() {
			return err
		}
	case err != nil:
		return err
	case old.IsZero():
		return errRefExists
	case cur.Type() != plumbing.HashReference || cur.Hash() != old:
		return storage.ErrReferenceHasChanged
	}
	if new.IsZero() {
		return g.r.Storer.RemoveReference(name)
	}
	if _, err := f.WriteString(new.String() + "\n"); err != nil {
		return err
	}
	err, f = f.Close(), nil
	if err != nil {
		return err
	}
	if err := os.Rename(lock, path); err != nil {
		return err
	}
	renamed = true
	return nil
}
