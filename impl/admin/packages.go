package admin

import (
	"context"

	"github.com/go-openapi/runtime/middleware"
	"github.com/go-openapi/swag/conv"

	"repohost/impl/auth"
	"repohost/impl/packages"
	"repohost/impl/paging"
	"repohost/restapi/operations/admin"
	"repohost/store"
)

// AdminListPackages lists the package versions of every owner, newest
// first; the type's values are the spec's enum, checked by the binding.
func (h Handlers) AdminListPackages(ctx context.Context, params admin.AdminListPackagesParams) middleware.Responder {
	p, err := auth.RequireAdmin(ctx)
	if err != nil {
		return h.Fail(err)
	}
	pg := h.Page(params.Page, params.Limit)
	q := store.PackageSearch{Type: conv.Value(params.Type), Query: conv.Value(params.Q)}
	vs, total, err := h.Store.Packages().SearchVersions(ctx, q, pg.Store())
	if err != nil {
		return h.Fail(err)
	}
	out, err := packages.Render(ctx, h.Deps, params.HTTPRequest, p, vs)
	if err != nil {
		return h.Fail(err)
	}
	return admin.NewAdminListPackagesOK().WithPayload(out).
		WithXTotalCount(total).WithLink(paging.Link(params.HTTPRequest, pg, total))
}
