package user

import (
	"context"

	"github.com/go-openapi/runtime/middleware"

	"repohost/impl/access"
	"repohost/impl/app"
	"repohost/impl/auth"
	"repohost/impl/convert"
	"repohost/impl/listcache"
	"repohost/impl/paging"
	"repohost/models"
	"repohost/restapi/operations/user"
	"repohost/store"
)

func (h Handlers) UserGetCurrent(ctx context.Context, params user.UserGetCurrentParams) middleware.Responder {
	p, err := auth.RequireUser(ctx)
	if err != nil {
		return h.Fail(err)
	}
	return user.NewUserGetCurrentOK().WithPayload(convert.User(app.BaseURL(params.HTTPRequest), p.User, p.User))
}

// UserGet shows a user or an organization, as the reference does; one the
// caller may not see answers 404.
func (h Handlers) UserGet(ctx context.Context, params user.UserGetParams) middleware.Responder {
	p := auth.FromContext(ctx)
	u, err := h.VisibleUser(ctx, p, params.Username)
	if err != nil {
		return h.Fail(err)
	}
	return user.NewUserGetOK().WithPayload(convert.User(app.BaseURL(params.HTTPRequest), u, app.Viewer(p)))
}

// UserSearch finds individual accounts the caller may see. The keyword also
// matches email addresses, but only those the result would show the caller.
// Answers are kept for a moment in d.UserSearches (see impl/listcache):
// the key holds the store query (with the caller's visibilities and
// self), the page, the root URL and the facts convert.User renders by
// (signed in, user id, site admin).
func (h Handlers) UserSearch(ctx context.Context, params user.UserSearchParams) middleware.Responder {
	gen := h.UserSearches.Generation(ctx)
	p := auth.FromContext(ctx)
	pg := h.Page(params.Page, params.Limit)
	vis, self := access.UserVisibilities(p)
	q := store.UserSearch{
		Type:         store.UserTypeIndividual,
		Visibilities: vis,
		Self:         self,
		// Anonymous callers only ever see placeholder addresses, so an
		// address must not find anyone for them.
		KeywordEmail:   p != nil && !p.PublicOnly(),
		HideKeptEmails: !p.IsAdmin(),
	}
	if params.Q != nil {
		q.Keyword = *params.Q
	}
	if params.UID != nil {
		q.UID = *params.UID
	}
	base := app.BaseURL(params.HTTPRequest)
	viewer := app.Viewer(p)
	type caller struct {
		SignedIn bool
		ID       int64
		Admin    bool
	}
	c := caller{SignedIn: viewer != nil}
	if viewer != nil {
		c.ID, c.Admin = viewer.ID, viewer.IsAdmin
	}
	key := listcache.Key(struct {
		Base   string
		Query  store.UserSearch
		Page   paging.Params
		Caller caller
	}{base, q, pg, c})
	link := func(total int64) string { return paging.Link(params.HTTPRequest, pg, total) }
	r, err := h.UserSearches.Serve(key, gen, link, func() (middleware.Responder, int64, error) {
		users, total, err := h.Store.Users().Search(ctx, q, pg.Store())
		if err != nil {
			return nil, 0, err
		}
		return user.NewUserSearchOK().
			WithXTotalCount(total).
			WithLink(link(total)).
			WithPayload(&models.UserSearchResults{
				Ok:   true,
				Data: convert.Users(base, users, viewer),
			}), total, nil
	})
	if err != nil {
		return h.Fail(err)
	}
	return r
}
