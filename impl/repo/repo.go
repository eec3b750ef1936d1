package repo

import (
	"context"

	"github.com/go-openapi/runtime/middleware"
	"github.com/go-openapi/swag/conv"

	"repohost/impl/apierr"
	"repohost/impl/app"
	"repohost/impl/auth"
	"repohost/impl/convert"
	"repohost/models"
	"repohost/restapi/operations/repository"
	"repohost/store"
)

// CreateInputFrom is the service's input for a repository created through the
// API (for the caller, an organization, or a user by a site admin); base is
// the server's address the request came to.
func CreateInputFrom(o *models.CreateRepoOption, base string) (CreateInput, error) {
	if o == nil || o.Name == nil {
		return CreateInput{}, apierr.Validation("[Name]: Required")
	}
	return CreateInput{
		Origin: OriginNew, Name: *o.Name, Description: conv.Value(o.Description),
		Private: conv.Value(o.Private), IsTemplate: conv.Value(o.Template),
		DefaultBranch: conv.Value(o.DefaultBranch), ObjectFormat: conv.Value(o.ObjectFormatName),
		AutoInit: conv.Value(o.AutoInit), Readme: conv.Value(o.Readme),
		Gitignores: conv.Value(o.Gitignores), License: conv.Value(o.License),
		IssueLabels: conv.Value(o.IssueLabels), LinkBase: base,
	}, nil
}

// created renders a repository just made, with p's permission on it.
func (h Handlers) created(ctx context.Context, p *auth.Principal, base string, r *store.Repository) (*repository.CreateCurrentUserRepoCreated, error) {
	perm, err := h.Access.Repo(ctx, p, r)
	if err != nil {
		return nil, err
	}
	return repository.NewCreateCurrentUserRepoCreated().WithPayload(convert.Repo(h.Links(base), r, perm, app.Viewer(p))), nil
}

func (h Handlers) CreateCurrentUserRepo(ctx context.Context, params repository.CreateCurrentUserRepoParams) middleware.Responder {
	p, err := auth.RequireUser(ctx)
	if err != nil {
		return h.Fail(err)
	}
	in, err := CreateInputFrom(params.Body, app.BaseURL(params.HTTPRequest))
	if err != nil {
		return h.Fail(err)
	}
	r, err := h.svc().Create(ctx, p.User, p.User, in)
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
	base := app.BaseURL(params.HTTPRequest)
	out := convert.Repo(h.Links(base), r, perm, app.Viewer(p))
	if err := h.addParent(ctx, p, base, r, out); err != nil {
		return h.Fail(err)
	}
	return repository.NewRepoGetOK().WithPayload(out)
}

func (h Handlers) RepoDelete(ctx context.Context, params repository.RepoDeleteParams) middleware.Responder {
	p, r, perm, err := h.SignedInRepo(ctx, params.Owner, params.Repo)
	if err != nil {
		return h.Fail(err)
	}
	if !perm.IsOwner() {
		return h.Fail(apierr.Forbidden("user should be the owner of the repo"))
	}
	if err := h.svc().Delete(ctx, p.User, r); err != nil {
		return h.Fail(err)
	}
	return repository.NewRepoDeleteNoContent()
}
