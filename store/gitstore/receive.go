package gitstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/format/packfile"
	"github.com/go-git/go-git/v5/plumbing/protocol/packp"
	"github.com/go-git/go-git/v5/plumbing/protocol/packp/capability"
	"github.com/go-git/go-git/v5/storage"
)

// RefUpdate is one reference a push asks to change.
type RefUpdate struct {
	Name     plumbing.ReferenceName
	Old, New plumbing.Hash
	// FastForward is set for an update of an existing branch whose new
	// commit descends from the old one.
	FastForward bool
	// Refused is the reason the update was not made, as the git client
	// shows it; "" for an applied update.
	Refused string
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

// ReceivePack runs one push (a receive-pack request): it stores the objects
// sent, computes what each reference update is, lets check refuse some of
// them (by setting Refused), applies the others and writes the report-status
// the client asked for, where refused updates appear as "ng" with their
// reason.
//
// The ref updates are applied here rather than by go-git's receive-pack
// session because that one applies every command it gets, without a hook
// in between and without comparing a ref's old value before moving it; each
// update here is a compare-and-set, so a concurrent push is never undone.
func (g *GitRepo) ReceivePack(ctx context.Context, body io.Reader, w io.Writer, check func([]*RefUpdate)) ([]*RefUpdate, error) {
	req := packp.NewReferenceUpdateRequest()
	if err := req.Decode(body); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrProtocol, err)
	}
	updates := make([]*RefUpdate, 0, len(req.Commands))
	needPack := false
	for _, cmd := range req.Commands {
		updates = append(updates, &RefUpdate{Name: cmd.Name, Old: cmd.Old, New: cmd.New})
		needPack = needPack || !cmd.New.IsZero()
	}
	unpack := "ok"
	if needPack && req.Packfile != nil {
		if err := packfile.UpdateObjectStorage(g.r.Storer, req.Packfile); err != nil && !errors.Is(err, packfile.ErrEmptyPackfile) {
			unpack = "unpack failed: " + err.Error()
		}
	}
	if req.Packfile != nil {
		_, _ = io.Copy(io.Discard, req.Packfile)
	}
	if unpack != "ok" {
		for _, u := range updates {
			u.Refused = "unpacker error"
		}
	} else {
		for _, u := range updates {
			u.Refused = g.inspect(u)
		}
		open := make([]*RefUpdate, 0, len(updates))
		for _, u := range updates {
			if u.Refused == "" {
				open = append(open, u)
			}
		}
		if len(open) > 0 {
			check(open)
		}
		for _, u := range updates {
			if u.Refused == "" {
				u.Refused = g.apply(u)
			}
		}
	}
	if req.Capabilities.Supports(capability.ReportStatus) {
		rs := packp.NewReportStatus()
		rs.UnpackStatus = unpack
		for _, u := range updates {
			status := "ok"
			if u.Refused != "" {
				status = u.Refused
			}
			rs.CommandStatuses = append(rs.CommandStatuses, &packp.CommandStatus{ReferenceName: u.Name, Status: status})
		}
		if err := rs.Encode(w); err != nil {
			return updates, err
		}
	}
	return updates, nil
}

// inspect checks an update against the repository before any policy: a
// sane name, the objects present, the client's idea of the old value still
// true. It fills FastForward and returns a refusal reason or "".
func (g *GitRepo) inspect(u *RefUpdate) string {
	if !strings.HasPrefix(u.Name.String(), "refs/") || u.Name.Validate() != nil {
		return "refusing to update an invalid reference name"
	}
	if u.IsCreate() && u.IsDelete() {
		return "nothing to do"
	}
	if !u.IsDelete() && g.r.Storer.HasEncodedObject(u.New) != nil {
		return "missing necessary objects"
	}
	cur, err := g.r.Storer.Reference(u.Name)
	switch {
	case errors.Is(err, plumbing.ErrReferenceNotFound):
		if !u.IsCreate() {
			return "stale info: the reference does not exist"
		}
	case err != nil:
		return "failed to read the reference"
	case u.IsCreate():
		return "the reference already exists"
	case cur.Hash() != u.Old:
		return "stale info: fetch first"
	}
	if u.Name.IsBranch() && !u.IsCreate() && !u.IsDelete() {
		if _, err := g.r.CommitObject(u.New); err != nil {
			return "a branch must point at a commit"
		}
		ff, err := g.IsAncestor(u.Old, u.New)
		if err != nil {
			return "failed to compare the old and new commits"
		}
		u.FastForward = ff
	}
	return ""
}

// apply makes one update, as a compare-and-set on the old value.
func (g *GitRepo) apply(u *RefUpdate) string {
	var err error
	switch {
	case u.IsCreate():
		err = g.createRef(plumbing.NewHashReference(u.Name, u.New))
	case u.IsDelete():
		var cur *plumbing.Reference
		if cur, err = g.r.Storer.Reference(u.Name); err == nil {
			if cur.Hash() != u.Old {
				return "stale info: fetch first"
			}
			err = g.r.Storer.RemoveReference(u.Name)
		}
	default:
		err = g.r.Storer.CheckAndSetReference(plumbing.NewHashReference(u.Name, u.New), plumbing.NewHashReference(u.Name, u.Old))
	}
	switch {
	case err == nil:
		return ""
	case errors.Is(err, errRefExists), errors.Is(err, storage.ErrReferenceHasChanged),
		errors.Is(err, plumbing.ErrReferenceNotFound):
		return "stale info: fetch first"
	}
	return "failed to update the reference"
}
