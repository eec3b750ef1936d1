package org

import (
	"context"

	"github.com/go-openapi/runtime/middleware"

	"repohost/impl/access"
	"repohost/impl/apierr"
	"repohost/impl/app"
	"repohost/impl/auth"
	"repohost/impl/convert"
	"repohost/impl/paging"
	"repohost/restapi/operations/organization"
	"repohost/store"
)

func (h Handlers) OrgCreate(ctx context.Context, params organization.OrgCreateParams) middleware.Responder {
	p, err := auth.RequireUser(ctx)
	if err != nil {
		return h.Fail(err)
	}
	if !p.User.IsAdmin && (!p.User.AllowCreateOrg || p.User.Restricted) {
		return h.Fail(apierr.Forbidden("Create organization not allowed"))
	}
	in, err := CreateInputFrom(params.Organization)
	if err != nil {
		return h.Fail(err)
	}
	o, err := h.Orgs.Create(ctx, p.User, p.User, in)
	if err != nil {
		return h.Fail(err)
	}
	return organization.NewOrgCreateCreated().WithPayload(convert.Org(app.BaseURL(params.HTTPRequest), o))
}

func (h Handlers) OrgGet(ctx context.Context, params organization.OrgGetParams) middleware.Responder {
	o, err := h.VisibleOrg(ctx, auth.FromContext(ctx), params.Org)
	if err != nil {
		return h.Fail(err)
	}
	return organization.NewOrgGetOK().WithPayload(convert.Org(app.BaseURL(params.HTTPRequest), o))
}

func (h Handlers) OrgGetAll(ctx context.Context, params organization.OrgGetAllParams) middleware.Responder {
	// An organization is listed to whoever could open it: the visibilities
	// the caller sees, plus the ones it belongs to.
	vis, memberID := access.UserVisibilities(auth.FromContext(ctx))
	pg := h.Page(params.Page, params.Limit)
	orgs, total, err := h.Store.Orgs().ListVisible(ctx, memberID, vis, pg.Store())
	if err != nil {
		return h.Fail(err)
	}
	return organization.NewOrgGetAllOK().
		WithXTotalCount(total).
		WithLink(paging.Link(params.HTTPRequest, pg, total)).
		WithPayload(convert.Orgs(app.BaseURL(params.HTTPRequest), orgs))
}

func (h Handlers) OrgListCurrentUserOrgs(ctx context.Context, params organization.OrgListCurrentUserOrgsParams) middleware.Responder {
	p, err := auth.RequireUser(ctx)
	if err != nil {
		return h.Fail(err)
	}
	var vis []store.Visibility
	if p.PublicOnly() {
		vis = []store.Visibility{store.VisibilityPublic}
	}
	pg := h.Page(params.Page, params.Limit)
	orgs, total, err := h.Store.Orgs().ListUserOrgs(ctx, p.UserID(), vis, false, pg.Store())
	if err != nil {
		return h.Fail(err)
	}
	return organization.NewOrgListCurrentUserOrgsOK().
		WithXTotalCount(total).
		WithLink(paging.Link(params.HTTPRequest, pg, total)).
		WithPayload(convert.Orgs(app.BaseURL(params.HTTPRequest), orgs))
}

// OrgListUserOrgs lists another user's organizations as the reference
// does: the user and site admins see all of them; anyone else sees only
// public memberships, in organizations whose visibility they may see.
func (h Handlers) OrgListUserOrgs(ctx context.Context, params organization.OrgListUserOrgsParams) middleware.Responder {
	p := auth.FromContext(ctx)
	u, err := h.VisibleIndividual(ctx, p, params.Username)
	if err != nil {
		return h.Fail(err)
	}
	vis, _ := access.UserVisibilities(p)
	publicOnly := true
	if p != nil && !p.PublicOnly() && (p.IsAdmin() || p.UserID() == u.ID) {
		vis, publicOnly = nil, false
	}
	pg := h.Page(params.Page, params.Limit)
	orgs, total, err := h.Store.Orgs().ListUserOrgs(ctx, u.ID, vis, publicOnly, pg.Store())
	if err != nil {
		return h.Fail(err)
	}
	return organization.NewOrgListUserOrgsOK().
		WithXTotalCount(total).
		WithLink(paging.Link(params.HTTPRequest, pg, total)).
		WithPayload(convert.Orgs(app.BaseURL(params.HTTPRequest), orgs))
}

func (h Handlers) OrgEdit(ctx context.Context, params organization.OrgEditParams) middleware.Responder {
	p, o, err := h.OwnedOrg(ctx, params.Org)
	if err != nil {
		return h.Fail(err)
	}
	// No body changes nothing.
	if params.Body != nil {
		if o, err = h.Orgs.Edit(ctx, p.User, o, editInput(params.Body)); err != nil {
			return h.Fail(err)
		}
	}
	return organization.NewOrgEditOK().WithPayload(convert.Org(app.BaseURL(params.HTTPRequest), o))
}

func (h Handlers) OrgDelete(ctx context.Context, params organization.OrgDeleteParams) middleware.Responder {
	p, o, err := h.OwnedOrg(ctx, params.Org)
	if err != nil {
		return h.Fail(err)
	}
	if err := h.Orgs.Delete(ctx, p.User, o, false); err != nil {
		return h.Fail(err)
	}
	return organization.NewOrgDeleteNoContent()
}
