package org

import (
	"context"
	"errors"

	"github.com/go-openapi/runtime/middleware"

	"repohost/impl/app"
	"repohost/impl/auth"
	"repohost/impl/convert"
	"repohost/impl/paging"
	"repohost/restapi/operations/organization"
	"repohost/store"
)

// seesAllMembers tells whether p may know private memberships of o:
// members and site admins may, everyone else sees public members only.
func (h Handlers) seesAllMembers(ctx context.Context, p *auth.Principal, o *store.User) (bool, error) {
	if p == nil {
		return false, nil
	}
	if p.IsAdmin() {
		return true, nil
	}
	if p.PublicOnly() {
		return false, nil
	}
	return h.Access.IsOrgMember(ctx, p, o)
}

func (h Handlers) OrgListMembers(ctx context.Context, params organization.OrgListMembersParams) middleware.Responder {
	p := auth.FromContext(ctx)
	o, err := h.VisibleOrg(ctx, p, params.Org)
	if err != nil {
		return h.Fail(err)
	}
	all, err := h.seesAllMembers(ctx, p, o)
	if err != nil {
		return h.Fail(err)
	}
	pg := h.Page(params.Page, params.Limit)
	users, total, err := h.Store.Orgs().ListMembers(ctx, o.ID, !all, pg.Store())
	if err != nil {
		return h.Fail(err)
	}
	return organization.NewOrgListMembersOK().
		WithXTotalCount(total).
		WithLink(paging.Link(params.HTTPRequest, pg, total)).
		WithPayload(convert.Users(app.BaseURL(params.HTTPRequest), users, app.Viewer(p)))
}

func (h Handlers) OrgIsMember(ctx context.Context, params organization.OrgIsMemberParams) middleware.Responder {
	p, err := auth.RequireUser(ctx)
	if err != nil {
		return h.Fail(err)
	}
	o, err := h.VisibleOrg(ctx, p, params.Org)
	if err != nil {
		return h.Fail(err)
	}
	u, err := h.VisibleIndividual(ctx, p, params.Username)
	if err != nil {
		return h.Fail(err)
	}
	all, err := h.seesAllMembers(ctx, p, o)
	if err != nil {
		return h.Fail(err)
	}
	m, err := h.Store.Orgs().FindMember(ctx, o.ID, u.ID)
	if errors.Is(err, store.ErrNotFound) || (err == nil && !all && !m.IsPublic) {
		// A hidden membership answers exactly like no membership.
		return h.Fail(errNotMember())
	}
	if err != nil {
		return h.Fail(err)
	}
	return organization.NewOrgIsMemberNoContent()
}

func (h Handlers) OrgDeleteMember(ctx context.Context, params organization.OrgDeleteMemberParams) middleware.Responder {
	p, o, err := h.ownedOrg(ctx, params.Org)
	if err != nil {
		return h.Fail(err)
	}
	u, err := h.Store.Users().FindByName(ctx, params.Username)
	if err != nil {
		return h.Fail(err)
	}
	if err := h.Orgs.RemoveMember(ctx, p.User, o, u); err != nil {
		return h.Fail(err)
	}
	return organization.NewOrgDeleteMemberNoContent()
}
