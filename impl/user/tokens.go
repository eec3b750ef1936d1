package user

import (
	"context"
	"errors"
	"strconv"

	"github.com/go-openapi/runtime/middleware"

	"repohost/impl/apierr"
	"repohost/impl/auth"
	"repohost/impl/convert"
	"repohost/impl/paging"
	"repohost/models"
	"repohost/restapi/operations/user"
	"repohost/store"
)

// tokenOwner returns the account whose tokens the caller wants to manage.
// Only a password sign-in may manage tokens (a token must never mint
// tokens), and only for the caller's own account unless they are a site
// admin. An account the caller may not see answers 404 like a missing one.
func (h Handlers) tokenOwner(ctx context.Context, username string) (*store.User, error) {
	p, err := auth.RequirePassword(ctx)
	if err != nil {
		return nil, err
	}
	u, err := h.VisibleIndividual(ctx, p, username)
	if err != nil {
		return nil, err
	}
	if !p.IsAdmin() && p.UserID() != u.ID {
		return nil, apierr.Forbidden("doer should be the site admin or be same as the contextUser")
	}
	return u, nil
}

// storedScopes reads a token's stored scope list for display.
func storedScopes(t *store.AccessToken) []string {
	s, _, _ := auth.ParseScopes([]string{t.Scopes})
	return s.List()
}

// normalizeScopes drops what another scope in the set already grants:
// everything beside "all", and read:x beside write:x. A set that writes
// every category is "all".
func normalizeScopes(s auth.Scopes) auth.Scopes {
	out := auth.Scopes{}
	if s.PublicOnly() {
		out["public-only"] = true
	}
	writesAll := true
	for _, c := range auth.Categories {
		if !s["write:"+c] {
			writesAll = false
		}
	}
	if s["all"] || writesAll {
		out["all"] = true
		return out
	}
	for _, c := range auth.Categories {
		switch {
		case s["write:"+c]:
			out["write:"+c] = true
		case s["read:"+c]:
			out["read:"+c] = true
		}
	}
	return out
}

func (h Handlers) UserGetTokens(ctx context.Context, params user.UserGetTokensParams) middleware.Responder {
	u, err := h.tokenOwner(ctx, params.Username)
	if err != nil {
		return h.Fail(err)
	}
	pg := h.Page(params.Page, params.Limit)
	tokens, total, err := h.Store.Tokens().ListByUser(ctx, u.ID, pg.Store())
	if err != nil {
		return h.Fail(err)
	}
	out := make([]*models.AccessToken, 0, len(tokens))
	for _, t := range tokens {
		// The secret is only known at creation; lists never carry it.
		out = append(out, convert.Token(t, "", storedScopes(t)))
	}
	return user.NewUserGetTokensOK().
		WithXTotalCount(total).
		WithLink(paging.Link(params.HTTPRequest, pg, total)).
		WithPayload(out)
}

func (h Handlers) UserCreateToken(ctx context.Context, params user.UserCreateTokenParams) middleware.Responder {
	u, err := h.tokenOwner(ctx, params.Username)
	if err != nil {
		return h.Fail(err)
	}
	var in TokenInput
	if b := params.Body; b != nil {
		in.Scopes = b.Scopes
		if b.Name != nil {
			in.Name = *b.Name
		}
	}
	t, secret, err := h.Users.CreateToken(ctx, auth.FromContext(ctx).User, u, in)
	if err != nil {
		return h.Fail(err)
	}
	return user.NewUserCreateTokenCreated().WithPayload(convert.Token(t, secret, storedScopes(t)))
}

// UserDeleteAccessToken revokes a token named by its id or, failing that,
// by its name.
func (h Handlers) UserDeleteAccessToken(ctx context.Context, params user.UserDeleteAccessTokenParams) middleware.Responder {
	u, err := h.tokenOwner(ctx, params.Username)
	if err != nil {
		return h.Fail(err)
	}
	t, err := h.findToken(ctx, u.ID, params.Token)
	if err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return h.Fail(apierr.NotFound("access token does not exist"))
		}
		return h.Fail(err)
	}
	if err := h.Users.DeleteToken(ctx, auth.FromContext(ctx).User, u, t); err != nil {
		return h.Fail(err)
	}
	return user.NewUserDeleteAccessTokenNoContent()
}

// findToken looks ref up as an id first and then as a name, so a token
// whose name happens to be a number can still be revoked by name.
func (h Handlers) findToken(ctx context.Context, userID int64, ref string) (*store.AccessToken, error) {
	if id, err := strconv.ParseInt(ref, 10, 64); err == nil && id > 0 {
		t, err := h.Store.Tokens().FindByID(ctx, userID, id)
		if !errors.Is(err, store.ErrNotFound) {
			return t, err
		}
	}
	return h.Store.Tokens().FindByName(ctx, userID, ref)
}
