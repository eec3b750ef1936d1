// TEMPORARY: unadopted-repository operations not yet implemented. Each stub moves to a real file as it is built;
// this file must be gone before the work is done.
package admin

import (
	"context"

	"github.com/go-openapi/runtime/middleware"

	"repohost/impl/apierr"
	"repohost/restapi/operations/admin"
)

func (h Handlers) AdminAdoptRepository(ctx context.Context, params admin.AdminAdoptRepositoryParams) middleware.Responder {
	return h.Fail(apierr.NotImplemented())
}

func (h Handlers) AdminDeleteUnadoptedRepository(ctx context.Context, params admin.AdminDeleteUnadoptedRepositoryParams) middleware.Responder {
	return h.Fail(apierr.NotImplemented())
}

func (h Handlers) AdminUnadoptedList(ctx context.Context, params admin.AdminUnadoptedListParams) middleware.Responder {
	return h.Fail(apierr.NotImplemented())
}
