// TEMPORARY: tracked-time operations not yet implemented. Each stub moves to a real file as it is built;
// this file must be gone before the work is done.
package user

import (
	"context"

	"github.com/go-openapi/runtime/middleware"

	"repohost/impl/apierr"
	"repohost/restapi/operations/user"
)

func (h Handlers) UserCurrentTrackedTimes(ctx context.Context, params user.UserCurrentTrackedTimesParams) middleware.Responder {
	return h.Fail(apierr.NotImplemented())
}
