// TEMPORARY: operations not yet implemented. Each moves to a real file as it is built;
// this file must be gone before the area is done.
package repo

import (
	"context"

	"github.com/go-openapi/runtime/middleware"

	"repohost/impl/apierr"
	"repohost/restapi/operations/repository"
)

func (h Handlers) CreateCurrentUserRepo(ctx context.Context, params repository.CreateCurrentUserRepoParams) middleware.Responder {
	return h.Fail(apierr.NotImplemented())
}

func (h Handlers) RepoDelete(ctx context.Context, params repository.RepoDeleteParams) middleware.Responder {
	return h.Fail(apierr.NotImplemented())
}

func (h Handlers) RepoEdit(ctx context.Context, params repository.RepoEditParams) middleware.Responder {
	return h.Fail(apierr.NotImplemented())
}

func (h Handlers) RepoGet(ctx context.Context, params repository.RepoGetParams) middleware.Responder {
	return h.Fail(apierr.NotImplemented())
}

func (h Handlers) RepoSearch(ctx context.Context, params repository.RepoSearchParams) middleware.Responder {
	return h.Fail(apierr.NotImplemented())
}
