// TEMPORARY: operations not yet implemented. Each moves to a real file as it is built;
// this file must be gone before the area is done.
package org

import (
	"context"

	"github.com/go-openapi/runtime/middleware"

	"repohost/impl/apierr"
	"repohost/restapi/operations/organization"
)

func (h Handlers) CreateOrgRepo(ctx context.Context, params organization.CreateOrgRepoParams) middleware.Responder {
	return h.Fail(apierr.NotImplemented())
}

func (h Handlers) OrgCreate(ctx context.Context, params organization.OrgCreateParams) middleware.Responder {
	return h.Fail(apierr.NotImplemented())
}

func (h Handlers) OrgDelete(ctx context.Context, params organization.OrgDeleteParams) middleware.Responder {
	return h.Fail(apierr.NotImplemented())
}

func (h Handlers) OrgDeleteMember(ctx context.Context, params organization.OrgDeleteMemberParams) middleware.Responder {
	return h.Fail(apierr.NotImplemented())
}

func (h Handlers) OrgEdit(ctx context.Context, params organization.OrgEditParams) middleware.Responder {
	return h.Fail(apierr.NotImplemented())
}

func (h Handlers) OrgGet(ctx context.Context, params organization.OrgGetParams) middleware.Responder {
	return h.Fail(apierr.NotImplemented())
}

func (h Handlers) OrgGetAll(ctx context.Context, params organization.OrgGetAllParams) middleware.Responder {
	return h.Fail(apierr.NotImplemented())
}

func (h Handlers) OrgIsMember(ctx context.Context, params organization.OrgIsMemberParams) middleware.Responder {
	return h.Fail(apierr.NotImplemented())
}

func (h Handlers) OrgListCurrentUserOrgs(ctx context.Context, params organization.OrgListCurrentUserOrgsParams) middleware.Responder {
	return h.Fail(apierr.NotImplemented())
}

func (h Handlers) OrgListMembers(ctx context.Context, params organization.OrgListMembersParams) middleware.Responder {
	return h.Fail(apierr.NotImplemented())
}

func (h Handlers) OrgListRepos(ctx context.Context, params organization.OrgListReposParams) middleware.Responder {
	return h.Fail(apierr.NotImplemented())
}
