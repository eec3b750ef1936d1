// TEMPORARY: operations not yet implemented. Each moves to a real file as it is built;
// this file must be gone before the area is done.
package user

import (
	"context"

	"github.com/go-openapi/runtime/middleware"

	"repohost/impl/apierr"
	"repohost/restapi/operations/user"
)

func (h Handlers) UserAddEmail(ctx context.Context, params user.UserAddEmailParams) middleware.Responder {
	return h.Fail(apierr.NotImplemented())
}

func (h Handlers) UserCreateToken(ctx context.Context, params user.UserCreateTokenParams) middleware.Responder {
	return h.Fail(apierr.NotImplemented())
}

func (h Handlers) UserCurrentListRepos(ctx context.Context, params user.UserCurrentListReposParams) middleware.Responder {
	return h.Fail(apierr.NotImplemented())
}

func (h Handlers) UserDeleteAccessToken(ctx context.Context, params user.UserDeleteAccessTokenParams) middleware.Responder {
	return h.Fail(apierr.NotImplemented())
}

func (h Handlers) UserDeleteEmail(ctx context.Context, params user.UserDeleteEmailParams) middleware.Responder {
	return h.Fail(apierr.NotImplemented())
}

func (h Handlers) UserGet(ctx context.Context, params user.UserGetParams) middleware.Responder {
	return h.Fail(apierr.NotImplemented())
}

func (h Handlers) UserGetCurrent(ctx context.Context, params user.UserGetCurrentParams) middleware.Responder {
	return h.Fail(apierr.NotImplemented())
}

func (h Handlers) UserGetTokens(ctx context.Context, params user.UserGetTokensParams) middleware.Responder {
	return h.Fail(apierr.NotImplemented())
}

func (h Handlers) UserListEmails(ctx context.Context, params user.UserListEmailsParams) middleware.Responder {
	return h.Fail(apierr.NotImplemented())
}

func (h Handlers) UserListRepos(ctx context.Context, params user.UserListReposParams) middleware.Responder {
	return h.Fail(apierr.NotImplemented())
}

func (h Handlers) UserSearch(ctx context.Context, params user.UserSearchParams) middleware.Responder {
	return h.Fail(apierr.NotImplemented())
}
