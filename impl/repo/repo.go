package repo

import (
	"context"
	"os"

	"github.com/go-openapi/runtime/middleware"

	"repohost/impl/apierr"
	"repohost/impl/app"
	"repohost/impl/auth"
	"repohost/impl/convert"
	"repohost/restapi/operations/repository"
	"repohost/store"
)

// created renders a repository just made, with p's permission on it.
func (h Handlers) created(ctx context.Context, p *auth.Principal, base string, r *store.Repository) (*repository.CreateCurrentUserRepoCreated, error) {
	perm, err := h.Access.Repo(ctx, p, r)
	if err != nil {
		return nil, err
	}
	return repository.NewCreateCurrentUserRepoCreated().WithPayload(convert.Repo(base, r, perm, app.Viewer(p))), nil
}

func (h Handlers) CreateCurrentUserRepo(ctx context.Context, params repository.CreateCurrentUserRepoParams) middleware.Responder {
	p, err := auth.RequireUser(ctx)
	if err != nil {
		return h.Fail(err)
	}
	r, err := Create(ctx, h.Deps, p.User, p.User, params.Body)
	if err != nil {
		return h.Fail(err)
	}
	resp, err := h.created(ctx, p, app.BaseURL(params.HTTPRequest), r)
	if err != nil {
		return h.Fail(err)
	}
	return resp
}

func (h Handlers) RepoGet(ctx context.Context, params repository.RepoGetParams) middleware.Responder {
	p := auth.FromContext(ctx)
	r, perm, err := h.Repo(ctx, p, params.Owner, params.Repo)
	if err != nil {
		return h.Fail(err)
	}
	return repository.NewRepoGetOK().WithPayload(convert.Repo(app.BaseURL(params.HTTPRequest), r, perm, app.Viewer(p)))
}

func (h Handlers) RepoDelete(ctx context.Context, params repository.RepoDeleteParams) middleware.Responder {
	p, err := auth.RequireUser(ctx)
	if err != nil {
		return h.Fail(err)
	}
	r, perm, err := h.Repo(ctx, p, params.Owner, params.Repo)
	if err != nil {
		return h.Fail(err)
	}
	if !perm.Owner {
		return h.Fail(apierr.Forbidden("user should be the owner of the repo"))
	}
	if err := h.Store.WithTx(ctx, func(ctx context.Context) error {
		return h.Store.Repos().Delete(ctx, r.ID)
	}); err != nil {
		return h.Fail(err)
	}
	RemoveFiles(h.Deps, r.Owner.Name, r.Name, r.ID)
	return repository.NewRepoDeleteNoContent()
}

// RemoveFiles deletes what a repository keeps on disk, its git directory and
// its release files, once its row is gone. The repository no longer exists
// for anyone then, so a failure is only logged: what is left is stray data,
// which a later create refuses to overwrite.
func RemoveFiles(d *app.Deps, owner, name string, id int64) {
	if err := d.Git.Delete(owner, name); err != nil {
		d.Log.Error("remove repository directory", "repo", owner+"/"+name, "err", err)
	}
	if err := os.RemoveAll(d.RepoAttachmentsDir(id)); err != nil {
		d.Log.Error("remove release files", "repo", owner+"/"+name, "err", err)
	}
}
