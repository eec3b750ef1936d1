package user

import (
	"context"

	"github.com/go-openapi/runtime/middleware"

	"repohost/impl/app"
	"repohost/impl/convert"
	"repohost/impl/paging"
	"repohost/restapi/operations/organization"
	"repohost/store"
)

// OrgBlockHandlers are the organization's blocks (the "organization" tag's
// /orgs/{org}/blocks routes): the same blocks as a user's, made by an
// owner of the organization on its behalf.
type OrgBlockHandlers struct{ Handlers }

// OrganizationListBlocks lists the users the organization blocks, by id.
func (h OrgBlockHandlers) OrganizationListBlocks(ctx context.Context, params organization.OrganizationListBlocksParams) middleware.Responder {
	p, o, err := h.OwnedOrg(ctx, params.Org)
	if err != nil {
		return h.Fail(err)
	}
	pg := h.Page(params.Page, params.Limit)
	users, total, err := h.Store.Users().Search(ctx, store.UserSearch{Type: store.UserTypeIndividual, BlockedBy: o.ID, OrderBy: "id ASC"}, pg.Store())
	if err != nil {
		return h.Fail(err)
	}
	return organization.NewOrganizationListBlocksOK().WithXTotalCount(total).WithLink(paging.Link(params.HTTPRequest, pg, total)).
		WithPayload(convert.Users(app.BaseURL(params.HTTPRequest), users, p.User))
}

func (h OrgBlockHandlers) OrganizationCheckUserBlock(ctx context.Context, params organization.OrganizationCheckUserBlockParams) middleware.Responder {
	p, o, err := h.OwnedOrg(ctx, params.Org)
	if err != nil {
		return h.Fail(err)
	}
	u, err := h.blockee(ctx, p, params.Username, false)
	if err != nil {
		return h.Fail(err)
	}
	if _, err := h.Store.People().FindBlock(ctx, o.ID, u.ID); err != nil {
		return h.Fail(err)
	}
	return organization.NewOrganizationCheckUserBlockNoContent()
}

func (h OrgBlockHandlers) OrganizationBlockUser(ctx context.Context, params organization.OrganizationBlockUserParams) middleware.Responder {
	p, o, err := h.OwnedOrg(ctx, params.Org)
	if err != nil {
		return h.Fail(err)
	}
	u, err := h.blockee(ctx, p, params.Username, true)
	if err != nil {
		return h.Fail(err)
	}
	var note string
	if params.Note != nil {
		note = *params.Note
	}
	if err := h.Users.Block(ctx, p.User, o, u, note); err != nil {
		return h.Fail(err)
	}
	return organization.NewOrganizationBlockUserNoContent()
}

func (h OrgBlockHandlers) OrganizationUnblockUser(ctx context.Context, params organization.OrganizationUnblockUserParams) middleware.Responder {
	p, o, err := h.OwnedOrg(ctx, params.Org)
	if err != nil {
		return h.Fail(err)
	}
	u, err := h.blockee(ctx, p, params.Username, false)
	if err != nil {
		return h.Fail(err)
	}
	if err := h.Users.Unblock(ctx, p.User, o, u); err != nil {
		return h.Fail(err)
	}
	return organization.NewOrganizationUnblockUserNoContent()
}
