package user

import (
	"context"
	"net/http"

	"github.com/go-openapi/runtime/middleware"

	"repohost/impl/access"
	"repohost/impl/apierr"
	"repohost/impl/app"
	"repohost/impl/auth"
	"repohost/impl/convert"
	"repohost/impl/paging"
	"repohost/impl/repo"
	"repohost/models"
	"repohost/restapi/operations/user"
	"repohost/store"
)

// starredList lists the repositories starredBy starred that p may see
// (the visibility rule's SQL filter), oldest first.
func (h Handlers) starredList(ctx context.Context, gen uint64, p *auth.Principal, req *http.Request, route string,
	starredBy int64, page, limit *int64, ok func([]*models.Repository, int64, string) middleware.Responder) middleware.Responder {
	q := store.RepoSearch{Viewer: access.Viewer(p), StarredBy: starredBy, OrderBy: "repositories.id ASC"}
	r, err := repo.List(ctx, h.Deps, gen, p, req, route, q, h.Page(page, limit), ok)
	if err != nil {
		return h.Fail(err)
	}
	return r
}

func (h Handlers) UserCurrentListStarred(ctx context.Context, params user.UserCurrentListStarredParams) middleware.Responder {
	gen := h.RepoLists.Generation(ctx)
	p, err := auth.RequireUser(ctx)
	if err != nil {
		return h.Fail(err)
	}
	return h.starredList(ctx, gen, p, params.HTTPRequest, "starred", p.UserID(), params.Page, params.Limit,
		func(out []*models.Repository, total int64, link string) middleware.Responder {
			return user.NewUserCurrentListStarredOK().WithXTotalCount(total).WithLink(link).WithPayload(out)
		})
}

func (h Handlers) UserListStarred(ctx context.Context, params user.UserListStarredParams) middleware.Responder {
	gen := h.RepoLists.Generation(ctx)
	p := auth.FromContext(ctx)
	u, err := h.VisibleUser(ctx, p, params.Username)
	if err != nil {
		return h.Fail(err)
	}
	return h.starredList(ctx, gen, p, params.HTTPRequest, "starred", u.ID, params.Page, params.Limit,
		func(out []*models.Repository, total int64, link string) middleware.Responder {
			return user.NewUserListStarredOK().WithXTotalCount(total).WithLink(link).WithPayload(out)
		})
}

// UserCurrentCheckStarring answers 204 when the caller starred the
// repository, 404 when not, and 404 for one the caller may not see.
func (h Handlers) UserCurrentCheckStarring(ctx context.Context, params user.UserCurrentCheckStarringParams) middleware.Responder {
	p, r, _, err := h.SignedInRepo(ctx, params.Owner, params.Repo)
	if err != nil {
		return h.Fail(err)
	}
	starred, err := h.Store.People().IsStarred(ctx, p.UserID(), r.ID)
	if err != nil {
		return h.Fail(err)
	}
	if !starred {
		return h.Fail(errNotFound())
	}
	return user.NewUserCurrentCheckStarringNoContent()
}

func (h Handlers) UserCurrentPutStar(ctx context.Context, params user.UserCurrentPutStarParams) middleware.Responder {
	p, r, _, err := h.SignedInRepo(ctx, params.Owner, params.Repo)
	if err != nil {
		return h.Fail(err)
	}
	if err := h.Users.Star(ctx, p.User, r); err != nil {
		return h.Fail(err)
	}
	return user.NewUserCurrentPutStarNoContent()
}

func (h Handlers) UserCurrentDeleteStar(ctx context.Context, params user.UserCurrentDeleteStarParams) middleware.Responder {
	p, r, _, err := h.SignedInRepo(ctx, params.Owner, params.Repo)
	if err != nil {
		return h.Fail(err)
	}
	if err := h.Users.Unstar(ctx, p.User, r); err != nil {
		return h.Fail(err)
	}
	return user.NewUserCurrentDeleteStarNoContent()
}

func (h Handlers) followList(ctx context.Context, p *auth.Principal, req *http.Request, q store.UserSearch, page, limit *int64,
	ok func([]*models.User, int64, string) middleware.Responder) middleware.Responder {
	pg := h.Page(page, limit)
	users, total, err := h.VisibleUsers(ctx, p, q, pg)
	if err != nil {
		return h.Fail(err)
	}
	return ok(convert.Users(app.BaseURL(req), users, app.Viewer(p)), total, paging.Link(req, pg, total))
}

func (h Handlers) UserCurrentListFollowers(ctx context.Context, params user.UserCurrentListFollowersParams) middleware.Responder {
	p, err := auth.RequireUser(ctx)
	if err != nil {
		return h.Fail(err)
	}
	return h.followList(ctx, p, params.HTTPRequest, store.UserSearch{FollowersOf: p.UserID()}, params.Page, params.Limit,
		func(out []*models.User, total int64, link string) middleware.Responder {
			return user.NewUserCurrentListFollowersOK().WithXTotalCount(total).WithLink(link).WithPayload(out)
		})
}

func (h Handlers) UserCurrentListFollowing(ctx context.Context, params user.UserCurrentListFollowingParams) middleware.Responder {
	p, err := auth.RequireUser(ctx)
	if err != nil {
		return h.Fail(err)
	}
	return h.followList(ctx, p, params.HTTPRequest, store.UserSearch{FollowedBy: p.UserID(), AnyType: true}, params.Page, params.Limit,
		func(out []*models.User, total int64, link string) middleware.Responder {
			return user.NewUserCurrentListFollowingOK().WithXTotalCount(total).WithLink(link).WithPayload(out)
		})
}

func (h Handlers) UserListFollowers(ctx context.Context, params user.UserListFollowersParams) middleware.Responder {
	p := auth.FromContext(ctx)
	u, err := h.VisibleUser(ctx, p, params.Username)
	if err != nil {
		return h.Fail(err)
	}
	return h.followList(ctx, p, params.HTTPRequest, store.UserSearch{FollowersOf: u.ID}, params.Page, params.Limit,
		func(out []*models.User, total int64, link string) middleware.Responder {
			return user.NewUserListFollowersOK().WithXTotalCount(total).WithLink(link).WithPayload(out)
		})
}

func (h Handlers) UserListFollowing(ctx context.Context, params user.UserListFollowingParams) middleware.Responder {
	p := auth.FromContext(ctx)
	u, err := h.VisibleUser(ctx, p, params.Username)
	if err != nil {
		return h.Fail(err)
	}
	return h.followList(ctx, p, params.HTTPRequest, store.UserSearch{FollowedBy: u.ID, AnyType: true}, params.Page, params.Limit,
		func(out []*models.User, total int64, link string) middleware.Responder {
			return user.NewUserListFollowingOK().WithXTotalCount(total).WithLink(link).WithPayload(out)
		})
}

func errNotFound() error { return apierr.NotFound("not found") }

// following answers 204 when follower follows target, else 404.
func (h Handlers) following(ctx context.Context, follower, target *store.User, yes middleware.Responder) middleware.Responder {
	ok, err := h.Store.People().IsFollowing(ctx, follower.ID, target.ID)
	if err != nil {
		return h.Fail(err)
	}
	if !ok {
		return h.Fail(errNotFound())
	}
	return yes
}

func (h Handlers) UserCurrentCheckFollowing(ctx context.Context, params user.UserCurrentCheckFollowingParams) middleware.Responder {
	p, err := auth.RequireUser(ctx)
	if err != nil {
		return h.Fail(err)
	}
	target, err := h.VisibleUser(ctx, p, params.Username)
	if err != nil {
		return h.Fail(err)
	}
	return h.following(ctx, p.User, target, user.NewUserCurrentCheckFollowingNoContent())
}

func (h Handlers) UserCheckFollowing(ctx context.Context, params user.UserCheckFollowingParams) middleware.Responder {
	p := auth.FromContext(ctx)
	u, err := h.VisibleUser(ctx, p, params.Username)
	if err != nil {
		return h.Fail(err)
	}
	target, err := h.VisibleUser(ctx, p, params.Target)
	if err != nil {
		return h.Fail(err)
	}
	return h.following(ctx, u, target, user.NewUserCheckFollowingNoContent())
}

func (h Handlers) UserCurrentPutFollow(ctx context.Context, params user.UserCurrentPutFollowParams) middleware.Responder {
	p, err := auth.RequireUser(ctx)
	if err != nil {
		return h.Fail(err)
	}
	// An organization may be followed too, as the reference allows.
	target, err := h.VisibleUser(ctx, p, params.Username)
	if err != nil {
		return h.Fail(err)
	}
	if err := h.Users.Follow(ctx, p.User, target); err != nil {
		return h.Fail(err)
	}
	return user.NewUserCurrentPutFollowNoContent()
}

func (h Handlers) UserCurrentDeleteFollow(ctx context.Context, params user.UserCurrentDeleteFollowParams) middleware.Responder {
	p, err := auth.RequireUser(ctx)
	if err != nil {
		return h.Fail(err)
	}
	target, err := h.VisibleUser(ctx, p, params.Username)
	if err != nil {
		return h.Fail(err)
	}
	if err := h.Users.Unfollow(ctx, p.User, target); err != nil {
		return h.Fail(err)
	}
	return user.NewUserCurrentDeleteFollowNoContent()
}

// UserListBlocks lists the users the caller blocks, by name.
func (h Handlers) UserListBlocks(ctx context.Context, params user.UserListBlocksParams) middleware.Responder {
	p, err := auth.RequireUser(ctx)
	if err != nil {
		return h.Fail(err)
	}
	pg := h.Page(params.Page, params.Limit)
	// The caller blocked each of them, so each is listed whatever its
	// visibility now.
	users, total, err := h.Store.Users().Search(ctx, store.UserSearch{Type: store.UserTypeIndividual, BlockedBy: p.UserID(), OrderBy: "id ASC"}, pg.Store())
	if err != nil {
		return h.Fail(err)
	}
	return user.NewUserListBlocksOK().WithXTotalCount(total).WithLink(paging.Link(params.HTTPRequest, pg, total)).
		WithPayload(convert.Users(app.BaseURL(params.HTTPRequest), users, p.User))
}

// blockee finds the user named in a block route; blocking someone needs
// seeing them, while a block already made is found by name alone.
func (h Handlers) blockee(ctx context.Context, p *auth.Principal, name string, mustSee bool) (*store.User, error) {
	if mustSee {
		return h.VisibleUser(ctx, p, name)
	}
	return h.Store.Users().FindByName(ctx, name)
}

func (h Handlers) UserCheckUserBlock(ctx context.Context, params user.UserCheckUserBlockParams) middleware.Responder {
	p, err := auth.RequireUser(ctx)
	if err != nil {
		return h.Fail(err)
	}
	u, err := h.blockee(ctx, p, params.Username, false)
	if err != nil {
		return h.Fail(err)
	}
	if _, err := h.Store.People().FindBlock(ctx, p.UserID(), u.ID); err != nil {
		return h.Fail(err)
	}
	return user.NewUserCheckUserBlockNoContent()
}

func (h Handlers) UserBlockUser(ctx context.Context, params user.UserBlockUserParams) middleware.Responder {
	p, err := auth.RequireUser(ctx)
	if err != nil {
		return h.Fail(err)
	}
	u, err := h.blockee(ctx, p, params.Username, true)
	if err != nil {
		return h.Fail(err)
	}
	var note string
	if params.Note != nil {
		note = *params.Note
	}
	if err := h.Users.Block(ctx, p.User, p.User, u, note); err != nil {
		return h.Fail(err)
	}
	return user.NewUserBlockUserNoContent()
}

func (h Handlers) UserUnblockUser(ctx context.Context, params user.UserUnblockUserParams) middleware.Responder {
	p, err := auth.RequireUser(ctx)
	if err != nil {
		return h.Fail(err)
	}
	u, err := h.blockee(ctx, p, params.Username, false)
	if err != nil {
		return h.Fail(err)
	}
	if err := h.Users.Unblock(ctx, p.User, p.User, u); err != nil {
		return h.Fail(err)
	}
	return user.NewUserUnblockUserNoContent()
}

func (h Handlers) GetUserSettings(ctx context.Context, params user.GetUserSettingsParams) middleware.Responder {
	p, err := auth.RequireUser(ctx)
	if err != nil {
		return h.Fail(err)
	}
	return user.NewGetUserSettingsOK().WithPayload(convert.UserSettings(p.User))
}

func (h Handlers) UpdateUserSettings(ctx context.Context, params user.UpdateUserSettingsParams) middleware.Responder {
	p, err := auth.RequireUser(ctx)
	if err != nil {
		return h.Fail(err)
	}
	var in EditInput
	if b := params.Body; b != nil {
		in = EditInput{FullName: b.FullName, Website: b.Website, Description: b.Description, Location: b.Location,
			Language: b.Language, Theme: b.Theme, DiffViewStyle: b.DiffViewStyle, HideEmail: b.HideEmail,
			HideActivity: b.HideActivity}
	}
	u, err := h.Users.Edit(ctx, p.User, p.User, in)
	if err != nil {
		return h.Fail(err)
	}
	return user.NewUpdateUserSettingsOK().WithPayload(convert.UserSettings(u))
}
