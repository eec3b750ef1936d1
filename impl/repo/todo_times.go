// TEMPORARY: tracked-time operations not yet implemented. Each stub moves to a real file as it is built;
// this file must be gone before the work is done.
package repo

import (
	"context"

	"github.com/go-openapi/runtime/middleware"

	"repohost/impl/apierr"
	"repohost/restapi/operations/repository"
)

func (h Handlers) RepoTrackedTimes(ctx context.Context, params repository.RepoTrackedTimesParams) middleware.Responder {
	return h.Fail(apierr.NotImplemented())
}

func (h Handlers) UserTrackedTimes(ctx context.Context, params repository.UserTrackedTimesParams) middleware.Responder {
	return h.Fail(apierr.NotImplemented())
}
