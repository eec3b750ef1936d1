package user

import (
	"context"
	"net/http"

	"github.com/go-openapi/runtime/middleware"

	"repohost/impl/access"
	"repohost/impl/app"
	"repohost/impl/auth"
	"repohost/impl/paging"
	"repohost/impl/repo"
	"repohost/models"
	"repohost/restapi/operations/user"
	"repohost/store"
)

// UserCurrentListSubscriptions lists the repositories the caller watches
// (those a public-only token may see, when it is one).
func (h Handlers) UserCurrentListSubscriptions(ctx context.Context, params user.UserCurrentListSubscriptionsParams) middleware.Responder {
	p, err := auth.RequireUser(ctx)
	if err != nil {
		return h.Fail(err)
	}
	out, total, pg, err := h.watched(ctx, p, p.User, params.HTTPRequest, params.Page, params.Limit)
	if err != nil {
		return h.Fail(err)
	}
	return user.NewUserCurrentListSubscriptionsOK().WithPayload(out).WithXTotalCount(total).
		WithLink(paging.Link(params.HTTPRequest, pg, total))
}

// UserListSubscriptions lists the repositories a user watches that the
// caller may see.
func (h Handlers) UserListSubscriptions(ctx context.Context, params user.UserListSubscriptionsParams) middleware.Responder {
	p := auth.FromContext(ctx)
	u, err := h.VisibleUser(ctx, p, params.Username)
	if err != nil {
		return h.Fail(err)
	}
	out, total, pg, err := h.watched(ctx, p, u, params.HTTPRequest, params.Page, params.Limit)
	if err != nil {
		return h.Fail(err)
	}
	return user.NewUserListSubscriptionsOK().WithPayload(out).WithXTotalCount(total).
		WithLink(paging.Link(params.HTTPRequest, pg, total))
}

// watched is a page of the repositories u watches that p may see (the
// access rule's SQL filter), by id.
func (h Handlers) watched(ctx context.Context, p *auth.Principal, u *store.User, req *http.Request, page, limit *int64) ([]*models.Repository, int64, paging.Params, error) {
	pg := h.Page(page, limit)
	repos, total, err := h.Store.Repos().Search(ctx, store.RepoSearch{Viewer: access.Viewer(p), WatchedBy: u.ID,
		OrderBy: "repositories.id ASC"}, pg.Store())
	if err != nil {
		return nil, 0, pg, err
	}
	out, err := repo.Models(ctx, h.Deps, p, app.BaseURL(req), repos)
	return out, total, pg, err
}
