// TEMPORARY: operations not yet implemented. Each moves to a real file as it is built;
// this file must be gone before the area is done.
package admin

import (
	"context"

	"github.com/go-openapi/runtime/middleware"

	"repohost/impl/apierr"
	"repohost/restapi/operations/admin"
)

func (h Handlers) AdminCreateUser(ctx context.Context, params admin.AdminCreateUserParams) middleware.Responder {
	return h.Fail(apierr.NotImplemented())
}

func (h Handlers) AdminDeleteUser(ctx context.Context, params admin.AdminDeleteUserParams) middleware.Responder {
	return h.Fail(apierr.NotImplemented())
}

func (h Handlers) AdminEditUser(ctx context.Context, params admin.AdminEditUserParams) middleware.Responder {
	return h.Fail(apierr.NotImplemented())
}

func (h Handlers) AdminGetAllEmails(ctx context.Context, params admin.AdminGetAllEmailsParams) middleware.Responder {
	return h.Fail(apierr.NotImplemented())
}

func (h Handlers) AdminRenameUser(ctx context.Context, params admin.AdminRenameUserParams) middleware.Responder {
	return h.Fail(apierr.NotImplemented())
}

func (h Handlers) AdminSearchEmails(ctx context.Context, params admin.AdminSearchEmailsParams) middleware.Responder {
	return h.Fail(apierr.NotImplemented())
}

func (h Handlers) AdminSearchUsers(ctx context.Context, params admin.AdminSearchUsersParams) middleware.Responder {
	return h.Fail(apierr.NotImplemented())
}
