package user

import (
	"context"

	"github.com/go-openapi/runtime/middleware"

	"repohost/impl/access"
	"repohost/impl/app"
	"repohost/impl/auth"
	"repohost/impl/convert"
	"repohost/impl/paging"
	"repohost/impl/repo"
	"repohost/models"
	"repohost/restapi/operations/user"
	"repohost/store"
)

// UserListRepos lists the repositories a user or organization owns that
// the caller may see, oldest first.
func (h Handlers) UserListRepos(ctx context.Context, params user.UserListReposParams) middleware.Responder {
	p := auth.FromContext(ctx)
	// Before anything the answer is read from, the owner's visibility
	// included (checked on every request: the key holds only its id).
	gen := h.RepoLists.Generation(ctx)
	owner, err := h.VisibleUser(ctx, p, params.Username)
	if err != nil {
		return h.Fail(err)
	}
	q := store.RepoSearch{
		Viewer:  access.Viewer(p),
		OwnerID: owner.ID,
		OrderBy: "repositories.id ASC",
	}
	r, err := repo.List(ctx, h.Deps, gen, p, params.HTTPRequest, "user", q, h.Page(params.Page, params.Limit),
		func(out []*models.Repository, total int64, link string) middleware.Responder {
			return user.NewUserListReposOK().WithXTotalCount(total).WithLink(link).WithPayload(out)
		})
	if err != nil {
		return h.Fail(err)
	}
	return r
}

// UserCurrentListRepos lists the repositories the caller owns or reaches
// through an organization membership, by name as the reference does.
func (h Handlers) UserCurrentListRepos(ctx context.Context, params user.UserCurrentListReposParams) middleware.Responder {
	gen := h.RepoLists.Generation(ctx)
	p, err := auth.RequireUser(ctx)
	if err != nil {
		return h.Fail(err)
	}
	// Relating the repositories to the caller apart from the viewer keeps
	// a public-only token to the public ones among them.
	q := store.RepoSearch{
		Viewer:        access.Viewer(p),
		RelatedUserID: p.UserID(),
		RelatedOwned:  true,
		RelatedMember: true,
		// The reference searches these with its default order, by
		// name (ties, across owners, by id).
		OrderBy: "repositories.lower_name ASC",
	}
	r, err := repo.List(ctx, h.Deps, gen, p, params.HTTPRequest, "current user", q, h.Page(params.Page, params.Limit),
		func(out []*models.Repository, total int64, link string) middleware.Responder {
			return user.NewUserCurrentListReposOK().WithXTotalCount(total).WithLink(link).WithPayload(out)
		})
	if err != nil {
		return h.Fail(err)
	}
	return r
}

// UserListTeams lists the caller's teams with their organizations.
func (h Handlers) UserListTeams(ctx context.Context, params user.UserListTeamsParams) middleware.Responder {
	p, err := auth.RequireUser(ctx)
	if err != nil {
		return h.Fail(err)
	}
	// A public-only token sees the teams of public organizations only,
	// as its /user/orgs lists only those.
	var vis []store.Visibility
	if p.PublicOnly() {
		vis = []store.Visibility{store.VisibilityPublic}
	}
	pg := h.Page(params.Page, params.Limit)
	teams, total, err := h.Store.Teams().ListForUser(ctx, p.UserID(), vis, pg.Store())
	if err != nil {
		return h.Fail(err)
	}
	return user.NewUserListTeamsOK().WithXTotalCount(total).
		WithLink(paging.Link(params.HTTPRequest, pg, total)).
		WithPayload(convert.Teams(app.BaseURL(params.HTTPRequest), teams))
}
