// TEMPORARY: operations not yet implemented. Each moves to a real file as it is built;
// this file must be gone before the area is done.
package admin

import (
	"context"

	"github.com/go-openapi/runtime/middleware"

	"repohost/impl/apierr"
	"repohost/restapi/operations/admin"
)

func (h Handlers) AdminCreateOrg(ctx context.Context, params admin.AdminCreateOrgParams) middleware.Responder {
	return h.Fail(apierr.NotImplemented())
}

func (h Handlers) AdminCreateRepo(ctx context.Context, params admin.AdminCreateRepoParams) middleware.Responder {
	return h.Fail(apierr.NotImplemented())
}

func (h Handlers) AdminGetAllOrgs(ctx context.Context, params admin.AdminGetAllOrgsParams) middleware.Responder {
	return h.Fail(apierr.NotImplemented())
}
