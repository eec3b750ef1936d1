package release

import (
	"context"

	"github.com/go-openapi/runtime/middleware"
	"github.com/go-openapi/swag/conv"

	"repohost/impl/access"
	"repohost/impl/apierr"
	"repohost/impl/app"
	"repohost/impl/auth"
	"repohost/impl/convert"
	"repohost/impl/paging"
	"repohost/restapi/operations/repository"
	"repohost/store"
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

func (h Handlers) svc() Service { return Service{Deps: h.Deps} }

func (h Handlers) RepoCreateRelease(ctx context.Context, params repository.RepoCreateReleaseParams) middleware.Responder {
	p, r, err := h.UnitWriteRepo(ctx, params.Owner, params.Repo, app.ReleasesUnit)
	if err != nil {
		return h.Fail(err)
	}
	o := params.Body
	if o == nil || o.TagName == nil {
		return h.Fail(apierr.Validation("[TagName]: Required"))
	}
	rel, err := h.svc().Create(ctx, p, r, NewRelease{TagName: *o.TagName, Target: conv.Value(o.Target), Title: conv.Value(o.Title),
		Note: conv.Value(o.Note), TagMessage: conv.Value(o.TagMessage), IsDraft: conv.Value(o.IsDraft), IsPrerelease: conv.Value(o.IsPrerelease)})
	if err != nil {
		return h.Fail(err)
	}
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
	if o := params.Body; o != nil {
		rel, err = h.svc().Edit(ctx, p, r, rel, ReleaseEdit{TagName: conv.Value(o.TagName), Target: conv.Value(o.Target),
			Title: conv.Value(o.Title), Note: conv.Value(o.Note), IsDraft: o.IsDraft, IsPrerelease: o.IsPrerelease})
		if err != nil {
			return h.Fail(err)
		}
	}
	return repository.NewRepoEditReleaseOK().WithPayload(convert.Release(app.BaseURL(params.HTTPRequest), r, rel))
}

func (h Handlers) RepoDeleteRelease(ctx context.Context, params repository.RepoDeleteReleaseParams) middleware.Responder {
	p, r, rel, err := h.writeRelease(ctx, params.Owner, params.Repo, byID(params.ID))
	if err != nil {
		return h.Fail(err)
	}
	if err := h.svc().Delete(ctx, p.User, r, rel); err != nil {
		return h.Fail(err)
	}
	return repository.NewRepoDeleteReleaseNoContent()
}

func (h Handlers) RepoDeleteReleaseByTag(ctx context.Context, params repository.RepoDeleteReleaseByTagParams) middleware.Responder {
	p, r, rel, err := h.writeRelease(ctx, params.Owner, params.Repo, byTag(params.Tag))
	if err != nil {
		return h.Fail(err)
	}
	if err := h.svc().Delete(ctx, p.User, r, rel); err != nil {
		return h.Fail(err)
	}
	return repository.NewRepoDeleteReleaseByTagNoContent()
}
