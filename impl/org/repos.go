package org

import (
	"context"
	"net/http"

	"github.com/go-openapi/runtime/middleware"

	"repohost/impl/access"
	"repohost/impl/apierr"
	"repohost/impl/app"
	"repohost/impl/auth"
	"repohost/impl/convert"
	"repohost/impl/repo"
	"repohost/models"
	"repohost/restapi/operations/organization"
	"repohost/store"
)

func (h Handlers) CreateOrgRepo(ctx context.Context, params organization.CreateOrgRepoParams) middleware.Responder {
	m, err := h.createOrgRepo(ctx, params.HTTPRequest, params.Org, params.Body)
	if err != nil {
		return h.Fail(err)
	}
	return organization.NewCreateOrgRepoCreated().WithPayload(m)
}

// CreateOrgRepoDeprecated is the older path of CreateOrgRepo, which the
// tea CLI still uses; it behaves the same.
func (h Handlers) CreateOrgRepoDeprecated(ctx context.Context, params organization.CreateOrgRepoDeprecatedParams) middleware.Responder {
	m, err := h.createOrgRepo(ctx, params.HTTPRequest, params.Org, params.Body)
	if err != nil {
		return h.Fail(err)
	}
	return organization.NewCreateOrgRepoDeprecatedCreated().WithPayload(m)
}

func (h Handlers) createOrgRepo(ctx context.Context, req *http.Request, org string, body *models.CreateRepoOption) (*models.Repository, error) {
	p, err := auth.RequireUser(ctx)
	if err != nil {
		return nil, err
	}
	o, err := h.VisibleOrg(ctx, p, org)
	if err != nil {
		return nil, err
	}
	ok, err := h.Access.CanCreateIn(ctx, p, o)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, apierr.Forbidden("Given user is not owner of organization.")
	}
	in, err := repo.CreateInputFrom(body, app.BaseURL(req))
	if err != nil {
		return nil, err
	}
	r, err := repo.Service{Deps: h.Deps}.Create(ctx, p.User, o, in)
	if err != nil {
		return nil, err
	}
	perm, err := h.Access.Repo(ctx, p, r)
	if err != nil {
		return nil, err
	}
	return convert.Repo(h.Links(app.BaseURL(req)), r, perm, app.Viewer(p)), nil
}

func (h Handlers) OrgListRepos(ctx context.Context, params organization.OrgListReposParams) middleware.Responder {
	p := auth.FromContext(ctx)
	// Before anything the answer is read from, the organization's
	// visibility included (checked on every request: the key holds only its
	// id).
	gen := h.RepoLists.Generation(ctx)
	o, err := h.VisibleOrg(ctx, p, params.Org)
	if err != nil {
		return h.Fail(err)
	}
	q := store.RepoSearch{Viewer: access.Viewer(p), OwnerID: o.ID}
	r, err := repo.List(ctx, h.Deps, gen, p, params.HTTPRequest, "org", q, h.Page(params.Page, params.Limit),
		func(out []*models.Repository, total int64, link string) middleware.Responder {
			return organization.NewOrgListReposOK().WithXTotalCount(total).WithLink(link).WithPayload(out)
		})
	if err != nil {
		return h.Fail(err)
	}
	return r
}
