package release

import (
	"context"
	"errors"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-openapi/runtime/middleware"
	"github.com/go-openapi/swag/conv"

	"repohost/impl/access"
	"repohost/impl/apierr"
	"repohost/impl/app"
	"repohost/impl/auth"
	"repohost/impl/convert"
	"repohost/impl/events"
	"repohost/impl/paging"
	"repohost/impl/refs"
	"repohost/restapi/operations/repository"
	"repohost/store"
	"repohost/store/gitstore"
)

// visibleRelease hides drafts from callers who cannot write: to them a draft
// does not exist.
func visibleRelease(rel *store.Release, err error, perm access.Permission) (*store.Release, error) {
	if err != nil {
		return nil, err
	}
	if rel.IsDraft && !perm.CanWrite(access.UnitReleases) {
		return nil, apierr.NotFound("not found")
	}
	return rel, nil
}

// releaseLookup finds the one release of a repository a route names: byID
// or byTag.
type releaseLookup func(ctx context.Context, rs store.ReleaseStore, repoID int64) (*store.Release, error)

func byID(id int64) releaseLookup {
	return func(ctx context.Context, rs store.ReleaseStore, repoID int64) (*store.Release, error) {
		return rs.FindByID(ctx, repoID, id)
	}
}

func byTag(tag string) releaseLookup {
	return func(ctx context.Context, rs store.ReleaseStore, repoID int64) (*store.Release, error) {
		return rs.FindByTag(ctx, repoID, tag)
	}
}

// readRelease loads the repository of a release route and the release as p
// may see it (drafts only for writers).
func (h Handlers) readRelease(ctx context.Context, p *auth.Principal, owner, name string, find releaseLookup) (*store.Repository, *store.Release, error) {
	r, perm, err := h.UnitRepo(ctx, p, owner, name, app.ReleasesUnit)
	if err != nil {
		return nil, nil, err
	}
	rel, err := find(ctx, h.Store.Releases(), r.ID)
	if rel, err = visibleRelease(rel, err, perm); err != nil {
		return nil, nil, err
	}
	return r, rel, nil
}

// writeRelease loads the repository and the release of a route that changes
// it, after UnitWriteRepo's refusals.
func (h Handlers) writeRelease(ctx context.Context, owner, name string, find releaseLookup) (*auth.Principal, *store.Repository, *store.Release, error) {
	p, r, err := h.UnitWriteRepo(ctx, owner, name, app.ReleasesUnit)
	if err != nil {
		return nil, nil, nil, err
	}
	rel, err := find(ctx, h.Store.Releases(), r.ID)
	if err != nil {
		return nil, nil, nil, err
	}
	return p, r, rel, nil
}

// ensureTag makes sure tag exists for a published release: an existing tag
// is kept wherever it points; otherwise it is created at target (a branch or
// commit) through impl/refs. It returns the tagged commit and, when it
// created the tag, the tag's id so a failed database write can take it back.
func (h Handlers) ensureTag(ctx context.Context, g *gitstore.GitRepo, r *store.Repository, p *auth.Principal, tag, target, message string) (sha string, made plumbing.Hash, err error) {
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
	id, err := g.MakeTag(tag, res.Commit.Hash, message, app.Signature(p.User, h.Clock.Now()))
	if err != nil {
		return "", plumbing.ZeroHash, err
	}
	_, err = refs.New(h.Deps).Apply(ctx, refs.Change{Repo: r, Doer: p, Git: g, Atomic: true,
		Updates: []*gitstore.RefUpdate{{Name: gitstore.TagRefName(tag), New: id}}})
	if errors.Is(err, gitstore.ErrTagExists) {
		// Someone tagged it meanwhile; the release stands on their tag.
		return h.ensureTag(ctx, g, r, p, tag, target, message)
	}
	if err != nil {
		return "", plumbing.ZeroHash, err
	}
	return res.Commit.Hash.String(), id, nil
}

// untag takes back a tag this request created, after the database refused
// the release; it is a ref change like any other (and announced as one).
func (h Handlers) untag(ctx context.Context, g *gitstore.GitRepo, r *store.Repository, p *auth.Principal, tag string, made plumbing.Hash) {
	if made.IsZero() {
		return
	}
	_, err := refs.New(h.Deps).Apply(ctx, refs.Change{Repo: r, Doer: p, Git: g, Atomic: true,
		Updates: []*gitstore.RefUpdate{{Name: gitstore.TagRefName(tag), Old: made}}})
	if err != nil {
		h.Log.Error("remove tag after failed release write", "repo", r.FullName(), "tag", tag, "err", err)
	}
}

// errReleaseExists is the reference's answer (and text, which clients match)
// when the tag already has a release.
func errReleaseExists() error { return apierr.Conflict("Release is has no Tag") }

// tagFree refuses a tag that already has a release of r.
func (h Handlers) tagFree(ctx context.Context, r *store.Repository, tag string) error {
	if _, err := h.Store.Releases().FindByTag(ctx, r.ID, tag); err == nil {
		return errReleaseExists()
	} else if !errors.Is(err, store.ErrNotFound) {
		return err
	}
	return nil
}

// tagRelease gives a release about to be published its tag (see ensureTag)
// and records the tagged commit. It returns the opened repository and the
// tag it made, for saveRelease to take back.
func (h Handlers) tagRelease(ctx context.Context, r *store.Repository, rel *store.Release, target, message string, p *auth.Principal) (*gitstore.GitRepo, plumbing.Hash, error) {
	g, err := h.OpenGit(r)
	if err != nil {
		return nil, plumbing.ZeroHash, err
	}
	sha, made, err := h.ensureTag(ctx, g, r, p, rel.TagName, target, message)
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
func (h Handlers) saveRelease(ctx context.Context, g *gitstore.GitRepo, r *store.Repository, p *auth.Principal, rel *store.Release, made plumbing.Hash, kind events.Kind, write func(context.Context, *store.Release) error) error {
	err := h.Store.WithTx(ctx, func(ctx context.Context) error {
		if err := write(ctx, rel); err != nil {
			return err
		}
		return h.emitRelease(ctx, kind, p.User, r, rel)
	})
	switch {
	case err == nil:
		return nil
	case errors.Is(err, store.ErrDuplicate):
		return errReleaseExists()
	}
	h.untag(ctx, g, r, p, rel.TagName, made)
	return err
}

func (h Handlers) RepoCreateRelease(ctx context.Context, params repository.RepoCreateReleaseParams) middleware.Responder {
	p, r, err := h.UnitWriteRepo(ctx, params.Owner, params.Repo, app.ReleasesUnit)
	if err != nil {
		return h.Fail(err)
	}
	o := params.Body
	if o == nil || o.TagName == nil {
		return h.Fail(apierr.Validation("[TagName]: Required"))
	}
	if err := checkTagName("TagName", *o.TagName); err != nil {
		return h.Fail(err)
	}
	if err := h.tagFree(ctx, r, *o.TagName); err != nil {
		return h.Fail(err)
	}
	rel := &store.Release{
		RepoID: r.ID, PublisherID: p.UserID(), TagName: *o.TagName, Target: conv.Value(o.Target),
		Title: conv.Value(o.Title), Note: conv.Value(o.Note), IsDraft: conv.Value(o.IsDraft), IsPrerelease: conv.Value(o.IsPrerelease),
	}
	if rel.Target == "" {
		rel.Target = r.DefaultBranch
	}
	var g *gitstore.GitRepo
	made := plumbing.ZeroHash
	// Git first: a published release needs its tag before the row exists.
	// A draft gets its tag only when it is published.
	if !rel.IsDraft {
		if g, made, err = h.tagRelease(ctx, r, rel, rel.Target, conv.Value(o.TagMessage), p); err != nil {
			return h.Fail(err)
		}
		now := h.Clock.Now()
		rel.PublishedAt = &now
	}
	kind := events.Kind("")
	if !rel.IsDraft {
		kind = events.ReleasePublished
	}
	if err := h.saveRelease(ctx, g, r, p, rel, made, kind, h.Store.Releases().Create); err != nil {
		return h.Fail(err)
	}
	rel.Publisher, rel.Attachments = p.User, []*store.ReleaseAttachment{}
	return repository.NewRepoCreateReleaseCreated().WithPayload(convert.Release(app.BaseURL(params.HTTPRequest), r, rel))
}

func (h Handlers) RepoListReleases(ctx context.Context, params repository.RepoListReleasesParams) middleware.Responder {
	p := auth.FromContext(ctx)
	r, perm, err := h.UnitRepo(ctx, p, params.Owner, params.Repo, app.ReleasesUnit)
	if err != nil {
		return h.Fail(err)
	}
	pg := h.Page(params.Page, params.Limit)
	q := store.ReleaseSearch{RepoID: r.ID, IncludeDrafts: perm.CanWrite(access.UnitReleases), IsDraft: params.Draft, IsPrerelease: params.PreRelease}
	rels, total, err := h.Store.Releases().List(ctx, q, pg.Store())
	if err != nil {
		return h.Fail(err)
	}
	return repository.NewRepoListReleasesOK().
		WithPayload(convert.Releases(app.BaseURL(params.HTTPRequest), r, rels)).
		WithXTotalCount(total).WithLink(paging.Link(params.HTTPRequest, pg, total))
}

func (h Handlers) RepoGetRelease(ctx context.Context, params repository.RepoGetReleaseParams) middleware.Responder {
	r, rel, err := h.readRelease(ctx, auth.FromContext(ctx), params.Owner, params.Repo, byID(params.ID))
	if err != nil {
		return h.Fail(err)
	}
	return repository.NewRepoGetReleaseOK().WithPayload(convert.Release(app.BaseURL(params.HTTPRequest), r, rel))
}

func (h Handlers) RepoGetReleaseByTag(ctx context.Context, params repository.RepoGetReleaseByTagParams) middleware.Responder {
	r, rel, err := h.readRelease(ctx, auth.FromContext(ctx), params.Owner, params.Repo, byTag(params.Tag))
	if err != nil {
		return h.Fail(err)
	}
	return repository.NewRepoGetReleaseByTagOK().WithPayload(convert.Release(app.BaseURL(params.HTTPRequest), r, rel))
}

func (h Handlers) RepoGetLatestRelease(ctx context.Context, params repository.RepoGetLatestReleaseParams) middleware.Responder {
	p := auth.FromContext(ctx)
	r, _, err := h.UnitRepo(ctx, p, params.Owner, params.Repo, app.ReleasesUnit)
	if err != nil {
		return h.Fail(err)
	}
	rel, err := h.Store.Releases().FindLatest(ctx, r.ID)
	if err != nil {
		return h.Fail(err)
	}
	return repository.NewRepoGetLatestReleaseOK().WithPayload(convert.Release(app.BaseURL(params.HTTPRequest), r, rel))
}

func (h Handlers) RepoEditRelease(ctx context.Context, params repository.RepoEditReleaseParams) middleware.Responder {
	p, r, rel, err := h.writeRelease(ctx, params.Owner, params.Repo, byID(params.ID))
	if err != nil {
		return h.Fail(err)
	}
	o := params.Body
	if o == nil {
		return repository.NewRepoEditReleaseOK().WithPayload(convert.Release(app.BaseURL(params.HTTPRequest), r, rel))
	}
	wasDraft := rel.IsDraft
	// Empty strings leave a field as it is, as in the reference; the
	// flags apply whenever they are sent.
	if s := conv.Value(o.TagName); s != "" && s != rel.TagName {
		if err := checkTagName("TagName", s); err != nil {
			return h.Fail(err)
		}
		if err := h.tagFree(ctx, r, s); err != nil {
			return h.Fail(err)
		}
		rel.TagName = s
	}
	for _, f := range []struct{ dst, src *string }{{&rel.Target, o.Target}, {&rel.Title, o.Title}, {&rel.Note, o.Note}} {
		if s := conv.Value(f.src); s != "" {
			*f.dst = s
		}
	}
	if o.IsDraft != nil {
		rel.IsDraft = *o.IsDraft
	}
	if o.IsPrerelease != nil {
		rel.IsPrerelease = *o.IsPrerelease
	}
	var g *gitstore.GitRepo
	made := plumbing.ZeroHash
	switch {
	case !rel.IsDraft:
		// A published release stands on its tag: publishing a draft (or
		// renaming the tag of a published release) creates it if missing.
		target := rel.Target
		if target == "" {
			target = r.DefaultBranch
		}
		if g, made, err = h.tagRelease(ctx, r, rel, target, "", p); err != nil {
			return h.Fail(err)
		}
		if wasDraft || rel.PublishedAt == nil {
			now := h.Clock.Now()
			rel.PublishedAt = &now
		}
	case !wasDraft:
		// Back to draft: no longer published (the tag stays).
		rel.PublishedAt = nil
	}
	kind := events.Kind("")
	switch {
	case !rel.IsDraft && wasDraft:
		kind = events.ReleasePublished
	case !rel.IsDraft:
		kind = events.ReleaseEdited
	}
	if err := h.saveRelease(ctx, g, r, p, rel, made, kind, h.Store.Releases().Update); err != nil {
		return h.Fail(err)
	}
	if rel, err = h.Store.Releases().FindByID(ctx, r.ID, rel.ID); err != nil {
		return h.Fail(err)
	}
	return repository.NewRepoEditReleaseOK().WithPayload(convert.Release(app.BaseURL(params.HTTPRequest), r, rel))
}

// deleteRelease removes the release row (its attachments follow by cascade)
// and then their files. The git tag stays, as in the reference.
func (h Handlers) deleteRelease(ctx context.Context, doer *store.User, r *store.Repository, rel *store.Release) error {
	var atts []*store.ReleaseAttachment
	err := h.Store.WithTx(ctx, func(ctx context.Context) error {
		var err error
		if atts, err = h.Store.Releases().Delete(ctx, r.ID, rel.ID); err != nil {
			return err
		}
		if rel.IsDraft {
			return nil // a draft was never announced
		}
		return h.emitRelease(ctx, events.ReleaseDeleted, doer, r, rel)
	})
	if err != nil {
		return err
	}
	for _, a := range atts {
		h.removeAttachmentFile(a)
	}
	return nil
}

func (h Handlers) RepoDeleteRelease(ctx context.Context, params repository.RepoDeleteReleaseParams) middleware.Responder {
	p, r, rel, err := h.writeRelease(ctx, params.Owner, params.Repo, byID(params.ID))
	if err != nil {
		return h.Fail(err)
	}
	if err := h.deleteRelease(ctx, p.User, r, rel); err != nil {
		return h.Fail(err)
	}
	return repository.NewRepoDeleteReleaseNoContent()
}

func (h Handlers) RepoDeleteReleaseByTag(ctx context.Context, params repository.RepoDeleteReleaseByTagParams) middleware.Responder {
	p, r, rel, err := h.writeRelease(ctx, params.Owner, params.Repo, byTag(params.Tag))
	if err != nil {
		return h.Fail(err)
	}
	if err := h.deleteRelease(ctx, p.User, r, rel); err != nil {
		return h.Fail(err)
	}
	return repository.NewRepoDeleteReleaseByTagNoContent()
}

// emitRelease records kind about rel in ctx's transaction ("" records
// nothing).
func (h Handlers) emitRelease(ctx context.Context, kind events.Kind, doer *store.User, r *store.Repository, rel *store.Release) error {
	if kind == "" {
		return nil
	}
	return h.Events.Emit(ctx, kind, r.ID, events.ActorID(doer), events.Named{ID: rel.ID, Name: rel.TagName})
}
