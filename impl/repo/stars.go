package repo

import (
	"context"

	"github.com/go-openapi/runtime/middleware"

	"repohost/impl/app"
	"repohost/impl/auth"
	"repohost/impl/convert"
	"repohost/impl/paging"
	"repohost/restapi/operations/repository"
	"repohost/store"
)

// RepoListStargazers lists the users who starred a repository the caller
// may see, those the caller may see among them, in id order.
func (h Handlers) RepoListStargazers(ctx context.Context, params repository.RepoListStargazersParams) middleware.Responder {
	p := auth.FromContext(ctx)
	r, _, err := h.Repo(ctx, p, params.Owner, params.Repo)
	if err != nil {
		return h.Fail(err)
	}
	pg := h.Page(params.Page, params.Limit)
	users, total, err := h.VisibleUsers(ctx, p, store.UserSearch{StargazersOf: r.ID}, pg)
	if err != nil {
		return h.Fail(err)
	}
	return repository.NewRepoListStargazersOK().WithXTotalCount(total).
		WithLink(paging.Link(params.HTTPRequest, pg, total)).
		WithPayload(convert.Users(app.BaseURL(params.HTTPRequest), users, app.Viewer(p)))
}
