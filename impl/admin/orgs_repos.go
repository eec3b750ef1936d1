package admin

import (
	"context"

	"github.com/go-openapi/runtime/middleware"

	"repohost/impl/app"
	"repohost/impl/auth"
	"repohost/impl/convert"
	"repohost/impl/org"
	"repohost/impl/paging"
	"repohost/impl/repo"
	"repohost/restapi/operations/admin"
)

func (h Handlers) AdminCreateOrg(ctx context.Context, params admin.AdminCreateOrgParams) middleware.Responder {
	p, owner, err := h.adminFor(ctx, params.Username)
	if err != nil {
		return h.Fail(err)
	}
	in, err := org.CreateInputFrom(params.Organization)
	if err != nil {
		return h.Fail(err)
	}
	o, err := h.Orgs.Create(ctx, p.User, owner, in)
	if err != nil {
		return h.Fail(err)
	}
	return admin.NewAdminCreateOrgCreated().WithPayload(convert.Org(app.BaseURL(params.HTTPRequest), o))
}

func (h Handlers) AdminCreateRepo(ctx context.Context, params admin.AdminCreateRepoParams) middleware.Responder {
	p, err := auth.RequireAdmin(ctx)
	if err != nil {
		return h.Fail(err)
	}
	owner, err := h.Store.Users().FindByName(ctx, params.Username)
	if err != nil {
		return h.Fail(err)
	}
	in, err := repo.CreateInputFrom(params.Repository, app.BaseURL(params.HTTPRequest))
	if err != nil {
		return h.Fail(err)
	}
	r, err := repo.Service{Deps: h.Deps}.Create(ctx, p.User, owner, in)
	if err != nil {
		return h.Fail(err)
	}
	perm, err := h.Access.Repo(ctx, p, r)
	if err != nil {
		return h.Fail(err)
	}
	return admin.NewAdminCreateRepoCreated().WithPayload(convert.Repo(h.Links(app.BaseURL(params.HTTPRequest)), r, perm, app.Viewer(p)))
}

func (h Handlers) AdminGetAllOrgs(ctx context.Context, params admin.AdminGetAllOrgsParams) middleware.Responder {
	if _, err := auth.RequireAdmin(ctx); err != nil {
		return h.Fail(err)
	}
	pg := h.Page(params.Page, params.Limit)
	// No member and no visibility filter: every organization.
	orgs, total, err := h.Store.Orgs().ListVisible(ctx, 0, nil, pg.Store())
	if err != nil {
		return h.Fail(err)
	}
	return admin.NewAdminGetAllOrgsOK().
		WithXTotalCount(total).
		WithLink(paging.Link(params.HTTPRequest, pg, total)).
		WithPayload(convert.Orgs(app.BaseURL(params.HTTPRequest), orgs))
}
