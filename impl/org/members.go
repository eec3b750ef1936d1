package org

import (
	"context"
	"errors"
	"net/url"

	"github.com/go-openapi/runtime/middleware"

	"repohost/impl/app"
	"repohost/impl/auth"
	"repohost/impl/convert"
	"repohost/impl/paging"
	"repohost/models"
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

// OrgIsMember answers 204 or 404 to the organization's members and site
// admins. Anyone else may learn public memberships only, so, as the
// reference does, they are sent (303) to the public membership check of
// the same user; a caller asking about themselves is told 404 at once.
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
	if !all {
		if u.ID == p.UserID() {
			return h.Fail(errNotMember())
		}
		return organization.NewOrgIsMemberSeeOther().WithLocation(app.BaseURL(params.HTTPRequest) +
			"api/v1/orgs/" + url.PathEscape(o.Name) + "/public_members/" + url.PathEscape(u.Name))
	}
	_, err = h.Store.Orgs().FindMember(ctx, o.ID, u.ID)
	if errors.Is(err, store.ErrNotFound) {
		return h.Fail(errNotMember())
	}
	if err != nil {
		return h.Fail(err)
	}
	return organization.NewOrgIsMemberNoContent()
}

// OrgGetUserPermissions reports what username's teams give them in org.
// A membership the caller may not know of (a hidden one, seen by someone
// outside the organization) reports nothing, exactly like no membership.
func (h Handlers) OrgGetUserPermissions(ctx context.Context, params organization.OrgGetUserPermissionsParams) middleware.Responder {
	p := auth.FromContext(ctx)
	u, err := h.VisibleUser(ctx, p, params.Username)
	if err != nil {
		return h.Fail(err)
	}
	if p, err = auth.RequireUser(ctx); err != nil {
		return h.Fail(err)
	}
	o, err := h.VisibleOrg(ctx, p, params.Org)
	if err != nil {
		return h.Fail(err)
	}
	out := &models.OrganizationPermissions{}
	if u.ID != p.UserID() {
		all, err := h.seesAllMembers(ctx, p, o)
		if err != nil {
			return h.Fail(err)
		}
		if !all {
			m, err := h.Store.Orgs().FindMember(ctx, o.ID, u.ID)
			if errors.Is(err, store.ErrNotFound) || (err == nil && !m.IsPublic) {
				return organization.NewOrgGetUserPermissionsOK().WithPayload(out)
			}
			if err != nil {
				return h.Fail(err)
			}
		}
	}
	role, err := h.Access.OrgRoleOf(ctx, o.ID, u.ID)
	if err != nil {
		return h.Fail(err)
	}
	out.CanRead = role.Mode >= store.AccessRead
	out.CanWrite = role.Mode >= store.AccessWrite
	out.IsAdmin = role.Mode >= store.AccessAdmin
	out.IsOwner = role.Mode >= store.AccessOwner
	out.CanCreateRepository = role.CanCreateRepo
	return organization.NewOrgGetUserPermissionsOK().WithPayload(out)
}

func (h Handlers) OrgDeleteMember(ctx context.Context, params organization.OrgDeleteMemberParams) middleware.Responder {
	p, o, err := h.OwnedOrg(ctx, params.Org)
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
