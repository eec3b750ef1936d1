package release

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"

	"github.com/go-git/go-git/v6/plumbing"

	"repohost/impl/apierr"
	"repohost/impl/app"
	"repohost/impl/auth"
	"repohost/impl/events"
	"repohost/impl/refs"
	"repohost/store"
	"repohost/store/gitstore"
	"repohost/store/objects"
)

// Service is the only place releases and their assets are created,
// changed and deleted. Handlers check access, turn their parameters into
// the inputs below and call it. A release's tag is git work done first,
// through impl/refs, and taken back when the database refuses the
// release; each change of a published release records its event
// (ReleasePublished, ReleaseEdited, ReleaseDeleted) in the transaction of
// the change, as the reference notifies them. Drafts are announced when
// they are published; assets are not announced, as in the reference.
type Service struct{ *app.Deps }

// NewRelease is a release as its author asked for it.
type NewRelease struct {
	TagName, Target, Title, Note string
	// TagMessage annotates the tag a published release creates.
	TagMessage            string
	IsDraft, IsPrerelease bool
}

// Create makes r's release on behalf of p. A published release gets its
// tag (created at Target, the default branch when empty, unless it
// exists) before its row; a draft gets one only when it is published.
func (s Service) Create(ctx context.Context, p *auth.Principal, r *store.Repository, in NewRelease) (*store.Release, error) {
	if err := checkTagName("TagName", in.TagName); err != nil {
		return nil, err
	}
	if err := s.tagFree(ctx, r, in.TagName); err != nil {
		return nil, err
	}
	rel := &store.Release{
		RepoID: r.ID, PublisherID: p.UserID(), TagName: in.TagName, Target: in.Target,
		Title: in.Title, Note: in.Note, IsDraft: in.IsDraft, IsPrerelease: in.IsPrerelease,
	}
	if rel.Target == "" {
		rel.Target = r.DefaultBranch
	}
	var g *gitstore.GitRepo
	made := plumbing.ZeroHash
	kind := events.Kind("")
	if !rel.IsDraft {
		var err error
		if g, made, err = s.tagRelease(ctx, r, rel, rel.Target, in.TagMessage, p); err != nil {
			return nil, err
		}
		now := s.Clock.Now()
		rel.PublishedAt = &now
		kind = events.ReleasePublished
	}
	if err := s.saveRelease(ctx, g, r, p, rel, made, kind, s.Store.Releases().Create); err != nil {
		return nil, err
	}
	rel.Publisher, rel.Attachments = p.User, []*store.ReleaseAttachment{}
	return rel, nil
}

// ReleaseEdit is a change to a release. Empty strings leave a field as it
// is, as in the reference; the flags apply when set.
type ReleaseEdit struct {
	TagName, Target, Title, Note string
	IsDraft, IsPrerelease        *bool
}

// Edit changes rel, a release of r, on behalf of p and returns it as
// stored. Publishing a draft, or renaming the tag of a published release,
// creates the tag when it is missing; going back to draft unpublishes it
// (the tag stays).
func (s Service) Edit(ctx context.Context, p *auth.Principal, r *store.Repository, rel *store.Release, in ReleaseEdit) (*store.Release, error) {
	wasDraft := rel.IsDraft
	if in.TagName != "" && in.TagName != rel.TagName {
		if err := checkTagName("TagName", in.TagName); err != nil {
			return nil, err
		}
		if err := s.tagFree(ctx, r, in.TagName); err != nil {
			return nil, err
		}
		rel.TagName = in.TagName
	}
	for _, f := range []struct{ dst, src *string }{{&rel.Target, &in.Target}, {&rel.Title, &in.Title}, {&rel.Note, &in.Note}} {
		if *f.src != "" {
			*f.dst = *f.src
		}
	}
	if in.IsDraft != nil {
		rel.IsDraft = *in.IsDraft
	}
	if in.IsPrerelease != nil {
		rel.IsPrerelease = *in.IsPrerelease
	}
	var g *gitstore.GitRepo
	made := plumbing.ZeroHash
	switch {
	case !rel.IsDraft:
		target := rel.Target
		if target == "" {
			target = r.DefaultBranch
		}
		var err error
		if g, made, err = s.tagRelease(ctx, r, rel, target, "", p); err != nil {
			return nil, err
		}
		if wasDraft || rel.PublishedAt == nil {
			now := s.Clock.Now()
			rel.PublishedAt = &now
		}
	case !wasDraft:
		rel.PublishedAt = nil
	}
	kind := events.Kind("")
	switch {
	case !rel.IsDraft && wasDraft:
		kind = events.ReleasePublished
	case !rel.IsDraft:
		kind = events.ReleaseEdited
	}
	if err := s.saveRelease(ctx, g, r, p, rel, made, kind, s.Store.Releases().Update); err != nil {
		return nil, err
	}
	return s.Store.Releases().FindByID(ctx, r.ID, rel.ID)
}

// Delete removes rel, a release of r (see deleteRelease).
func (s Service) Delete(ctx context.Context, doer *store.User, r *store.Repository, rel *store.Release) error {
	return s.deleteRelease(ctx, doer, r, rel)
}

// ensureTag makes sure tag exists for a published release: an existing tag
// is kept wherever it points; otherwise it is created at target (a branch or
// commit) through impl/refs. It returns the tagged commit and, when it
// created the tag, the tag's id so a failed database write can take it back.
func (s Service) ensureTag(ctx context.Context, g *gitstore.GitRepo, r *store.Repository, p *auth.Principal, tag, target, message string) (sha string, made plumbing.Hash, err error) {
	if t, err := g.Tag(tag); err == nil {
		if t.Commit == nil {
			return "", plumbing.ZeroHash, apierr.Validation("tag %q does not name a commit", tag)
		}
		return t.Commit.Hash.String(), plumbing.ZeroHash, nil
	} else if !errors.Is(err, store.ErrNotFound) {
		return "", plumbing.ZeroHash, err
	}
	res, err := g.Resolve(target)
	if errors.Is(err, store.ErrNotFound) || errors.Is(err, gitstore.ErrNotACommit) {
		return "", plumbing.ZeroHash, apierr.NotFound("target %q not found", target)
	}
	if err != nil {
		return "", plumbing.ZeroHash, err
	}
	id, err := g.MakeTag(tag, res.Commit.Hash, message, app.Signature(p.User, s.Clock.Now()))
	if err != nil {
		return "", plumbing.ZeroHash, err
	}
	_, err = refs.New(s.Deps).Apply(ctx, refs.Change{Repo: r, Doer: p, Git: g, Atomic: true,
		Updates: []*gitstore.RefUpdate{{Name: gitstore.TagRefName(tag), New: id}}})
	if errors.Is(err, gitstore.ErrTagExists) {
		// Someone tagged it meanwhile; the release stands on their tag.
		return s.ensureTag(ctx, g, r, p, tag, target, message)
	}
	if err != nil {
		return "", plumbing.ZeroHash, protectedTag(err, fmt.Sprintf("Tag %s is protected", tag))
	}
	return res.Commit.Hash.String(), id, nil
}

// untag takes back a tag this request created, after the database refused
// the release; it is a ref change like any other (and announced as one).
func (s Service) untag(ctx context.Context, g *gitstore.GitRepo, r *store.Repository, p *auth.Principal, tag string, made plumbing.Hash) {
	if made.IsZero() {
		return
	}
	_, err := refs.New(s.Deps).Apply(ctx, refs.Change{Repo: r, Doer: p, Git: g, Atomic: true,
		Updates: []*gitstore.RefUpdate{{Name: gitstore.TagRefName(tag), Old: made}}})
	if err != nil {
		s.Log.Error("remove tag after failed release write", "repo", r.FullName(), "tag", tag, "err", err)
	}
}

// errReleaseExists is the reference's answer (and text, which clients match)
// when the tag already has a release.
func errReleaseExists() error { return apierr.Conflict("Release is has no Tag") }

// tagFree refuses a tag that already has a release of r.
func (s Service) tagFree(ctx context.Context, r *store.Repository, tag string) error {
	if _, err := s.Store.Releases().FindByTag(ctx, r.ID, tag); err == nil {
		return errReleaseExists()
	} else if !errors.Is(err, store.ErrNotFound) {
		return err
	}
	return nil
}

// tagRelease gives a release about to be published its tag (see ensureTag)
// and records the tagged commit. It returns the opened repository and the
// tag it made, for saveRelease to take back.
func (s Service) tagRelease(ctx context.Context, r *store.Repository, rel *store.Release, target, message string, p *auth.Principal) (*gitstore.GitRepo, plumbing.Hash, error) {
	g, err := s.OpenGit(r)
	if err != nil {
		return nil, plumbing.ZeroHash, err
	}
	sha, made, err := s.ensureTag(ctx, g, r, p, rel.TagName, target, message)
	if err != nil {
		return nil, plumbing.ZeroHash, err
	}
	rel.Sha1 = sha
	return g, made, nil
}

// saveRelease writes rel (create or update) in a transaction. When that
// fails it takes back the tag this request made, unless the failure is a
// duplicate: then another release of this tag won the race and may stand
// on that tag, so it stays.
func (s Service) saveRelease(ctx context.Context, g *gitstore.GitRepo, r *store.Repository, p *auth.Principal, rel *store.Release, made plumbing.Hash, kind events.Kind, write func(context.Context, *store.Release) error) error {
	err := s.Store.WithTx(ctx, func(ctx context.Context) error {
		if err := write(ctx, rel); err != nil {
			return err
		}
		return s.emitRelease(ctx, kind, p.User, r, rel)
	})
	switch {
	case err == nil:
		return nil
	case errors.Is(err, store.ErrDuplicate):
		return errReleaseExists()
	}
	s.untag(ctx, g, r, p, rel.TagName, made)
	return err
}

// deleteRelease removes the release row (its attachments follow by cascade)
// and then their files. The git tag stays, as in the reference.
func (s Service) deleteRelease(ctx context.Context, doer *store.User, r *store.Repository, rel *store.Release) error {
	var atts []*store.ReleaseAttachment
	err := s.Store.WithTx(ctx, func(ctx context.Context) error {
		var err error
		if atts, err = s.Store.Releases().Delete(ctx, r.ID, rel.ID); err != nil {
			return err
		}
		if rel.IsDraft {
			return nil // a draft was never announced
		}
		return s.emitRelease(ctx, events.ReleaseDeleted, doer, r, rel)
	})
	if err != nil {
		return err
	}
	for _, a := range atts {
		s.removeAttachmentFile(a)
	}
	return nil
}

// emitRelease records kind about rel in ctx's transaction ("" records
// nothing).
func (s Service) emitRelease(ctx context.Context, kind events.Kind, doer *store.User, r *store.Repository, rel *store.Release) error {
	if kind == "" {
		return nil
	}
	return s.Events.Emit(ctx, kind, r.ID, events.ActorID(doer), events.Named{ID: rel.ID, Name: rel.TagName})
}

// removeAttachmentFile deletes a file whose row is gone; a failure only
// leaves an unreachable file behind, so it is logged.
func (s Service) removeAttachmentFile(a *store.ReleaseAttachment) {
	// Not cancelled with a request: the row is gone already.
	if err := s.Objects.Attachments.Delete(context.Background(), app.AttachmentKey(a.RepoID, a.UUID)); err != nil {
		s.Log.Error("remove attachment file", "uuid", a.UUID, "err", err)
	}
}

// tooLarge is the 413 of an upload over Config.MaxAssetBytes.
func (s Service) tooLarge() error {
	return apierr.PayloadTooLarge("attachment is larger than the %d bytes allowed", s.Config.MaxAssetBytes)
}

// uploadError marks a failure to read the upload (as opposed to writing
// it): the client's body was cut off, malformed or too large.
type uploadError struct{ err error }

func (e uploadError) Error() string { return "read the upload: " + e.err.Error() }
func (e uploadError) Unwrap() error { return e.err }

type uploadReader struct{ r io.Reader }

func (u uploadReader) Read(p []byte) (int, error) {
	n, err := u.r.Read(p)
	if err != nil && err != io.EOF {
		err = uploadError{err}
	}
	return n, err
}

// uploadStatus turns a failure to read an upload into the client's error:
// 413 past the body limit, 400 for a body that broke off.
func (s Service) uploadStatus(err error) error {
	var mbe *http.MaxBytesError
	var ue uploadError
	switch {
	case errors.As(err, &mbe):
		return s.tooLarge()
	case errors.As(err, &ue):
		return apierr.BadRequest("the upload could not be read: %v", ue.err)
	}
	return err
}

// storeAttachmentFile streams an upload into the attachments store under a
// new UUID, never holding it in memory, and returns the UUID and size. The
// bytes land in a temporary file first, removed unless the upload completes
// within Config.MaxAssetBytes, so a failed or oversized upload leaves
// nothing behind and a half-written one never carries a UUID.
func (s Service) storeAttachmentFile(ctx context.Context, repoID int64, src io.Reader) (string, int64, error) {
	id, err := newUUID()
	if err != nil {
		return "", 0, err
	}
	tmp, err := s.TempFile()
	if err != nil {
		return "", 0, err
	}
	defer os.Remove(tmp.Name()) // gone already when moved into place
	limit := s.Config.MaxAssetBytes
	n, err := io.Copy(tmp, uploadReader{io.LimitReader(src, limit+1)})
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "", 0, s.uploadStatus(err)
	}
	if n > limit {
		return "", 0, s.tooLarge()
	}
	if err := objects.PutFile(ctx, s.Objects.Attachments, app.AttachmentKey(repoID, id), tmp.Name()); err != nil {
		return "", 0, err
	}
	return id, n, nil
}

// AddAsset stores src as a new asset of rel named name (checked): the
// file first, then the row; if the row cannot be written the file goes
// again.
func (s Service) AddAsset(ctx context.Context, p *auth.Principal, r *store.Repository, rel *store.Release, name string, src io.Reader) (*store.ReleaseAttachment, error) {
	if err := checkAttachmentName(name); err != nil {
		return nil, err
	}
	uuid, size, err := s.storeAttachmentFile(ctx, r.ID, src)
	if err != nil {
		return nil, err
	}
	a := &store.ReleaseAttachment{UUID: uuid, RepoID: r.ID, ReleaseID: rel.ID, UploaderID: p.UserID(), Name: name, Size: size}
	if err := s.Store.WithTx(ctx, func(ctx context.Context) error {
		return s.Store.ReleaseAttachments().Create(ctx, a)
	}); err != nil {
		s.removeAttachmentFile(a)
		return nil, err
	}
	return a, nil
}

// StoreAssetFile stores the bytes of an asset brought from elsewhere (a
// migration's release assets) as an upload's are, within
// Config.MaxAssetBytes, and returns its UUID and size; the caller writes
// its row, and RemoveAssetFile takes the file back if that fails.
func (s Service) StoreAssetFile(ctx context.Context, repoID int64, src io.Reader) (string, int64, error) {
	return s.storeAttachmentFile(ctx, repoID, src)
}

// RemoveAssetFile removes the file of an asset whose row was not written.
func (s Service) RemoveAssetFile(a *store.ReleaseAttachment) { s.removeAttachmentFile(a) }

// DeleteAsset removes asset a: its row, then its file.
func (s Service) DeleteAsset(ctx context.Context, a *store.ReleaseAttachment) error {
	if err := s.Store.WithTx(ctx, func(ctx context.Context) error {
		return s.Store.ReleaseAttachments().Delete(ctx, a.ID)
	}); err != nil {
		return err
	}
	s.removeAttachmentFile(a)
	return nil
}
