package repo

import (
	"context"
	"errors"

	"github.com/go-openapi/runtime/middleware"

	"repohost/impl/apierr"
	"repohost/impl/convert"
	"repohost/impl/paging"
	"repohost/models"
	"repohost/restapi/operations/repository"
	"repohost/store"
)

func (h Handlers) RepoMirrorSync(ctx context.Context, params repository.RepoMirrorSyncParams) middleware.Responder {
	p, r, _, err := h.WriterRepo(ctx, params.Owner, params.Repo)
	if err != nil {
		return h.Fail(err)
	}
	if err := h.svc().RequestMirrorSync(ctx, p.User, r); err != nil {
		return h.Fail(err)
	}
	return repository.NewRepoMirrorSyncOK()
}

// pushMirrorRepo loads the repository for its admin, as the reference's
// push mirror routes; with mirrors off they answer its 400.
func (h Handlers) pushMirrorRepo(ctx context.Context, owner, name string) (*store.User, *store.Repository, error) {
	p, r, err := h.RepoAdmin(ctx, owner, name)
	if err != nil {
		return nil, nil, err
	}
	if h.Config.Mirrors.Disabled {
		return nil, nil, errMirrorFeatureOff
	}
	return p.User, r, nil
}

func (h Handlers) RepoListPushMirrors(ctx context.Context, params repository.RepoListPushMirrorsParams) middleware.Responder {
	_, r, err := h.pushMirrorRepo(ctx, params.Owner, params.Repo)
	if err != nil {
		return h.Fail(err)
	}
	pg := h.Page(params.Page, params.Limit)
	list, total, err := h.Store.Mirrors().ListPush(ctx, r.ID, pg.Store())
	if err != nil {
		return h.Fail(err)
	}
	out := make([]*models.PushMirror, 0, len(list))
	for _, pm := range list {
		out = append(out, convert.PushMirror(r, pm))
	}
	return repository.NewRepoListPushMirrorsOK().WithPayload(out).WithXTotalCount(total).
		WithLink(paging.Link(params.HTTPRequest, pg, total))
}

func (h Handlers) RepoAddPushMirror(ctx context.Context, params repository.RepoAddPushMirrorParams) middleware.Responder {
	doer, r, err := h.pushMirrorRepo(ctx, params.Owner, params.Repo)
	if err != nil {
		return h.Fail(err)
	}
	if r.IsArchived {
		return h.Fail(apierr.RepoArchived())
	}
	var o models.CreatePushMirrorOption
	if params.Body != nil {
		o = *params.Body
	}
	pm, err := h.svc().AddPushMirror(ctx, doer, r, PushMirrorInput{Address: o.RemoteAddress, Username: o.RemoteUsername,
		Password: o.RemotePassword, Interval: o.Interval, SyncOnCommit: o.SyncOnCommit})
	if err != nil {
		return h.Fail(err)
	}
	return repository.NewRepoAddPushMirrorOK().WithPayload(convert.PushMirror(r, pm))
}

func (h Handlers) RepoGetPushMirrorByRemoteName(ctx context.Context, params repository.RepoGetPushMirrorByRemoteNameParams) middleware.Responder {
	_, r, err := h.pushMirrorRepo(ctx, params.Owner, params.Repo)
	if err != nil {
		return h.Fail(err)
	}
	pm, err := h.Store.Mirrors().FindPush(ctx, r.ID, params.Name)
	if errors.Is(err, store.ErrNotFound) {
		return h.Fail(apierr.NotFound("push mirror not found"))
	}
	if err != nil {
		return h.Fail(err)
	}
	return repository.NewRepoGetPushMirrorByRemoteNameOK().WithPayload(convert.PushMirror(r, pm))
}

func (h Handlers) RepoDeletePushMirror(ctx context.Context, params repository.RepoDeletePushMirrorParams) middleware.Responder {
	p, r, err := h.pushMirrorRepo(ctx, params.Owner, params.Repo)
	if err != nil {
		return h.Fail(err)
	}
	if err := h.svc().DeletePushMirror(ctx, p, r, params.Name); err != nil {
		return h.Fail(err)
	}
	return repository.NewRepoDeletePushMirrorNoContent()
}

func (h Handlers) RepoPushMirrorSync(ctx context.Context, params repository.RepoPushMirrorSyncParams) middleware.Responder {
	doer, r, err := h.pushMirrorRepo(ctx, params.Owner, params.Repo)
	if err != nil {
		return h.Fail(err)
	}
	if r.IsArchived {
		return h.Fail(apierr.RepoArchived())
	}
	if err := h.svc().RequestPushMirrorSync(ctx, doer, r); err != nil {
		return h.Fail(err)
	}
	return repository.NewRepoPushMirrorSyncOK()
}
