package oauth2

import (
	"context"

	"github.com/go-openapi/runtime/middleware"

	"repohost/impl/apierr"
	"repohost/impl/auth"
	"repohost/impl/convert"
	"repohost/impl/paging"
	"repohost/models"
	"repohost/restapi/operations/user"
)

// AppHandlers serve the signed-in user's OAuth2 applications
// (/user/applications/oauth2), part of the generated "user" tag.
type AppHandlers struct{ Service }

// appOwner is the caller, whose applications these are. A token limited
// to public resources manages none: an application's secret is no public
// resource.
func appOwner(ctx context.Context) (*auth.Principal, error) {
	p, err := auth.RequireUser(ctx)
	if err != nil {
		return nil, err
	}
	if p.PublicOnly() {
		return nil, apierr.Forbidden("token with public-only scope cannot manage OAuth2 applications")
	}
	return p, nil
}

func appInput(b *models.CreateOAuth2ApplicationOptions) AppInput {
	if b == nil {
		return AppInput{}
	}
	in := AppInput{RedirectURIs: b.RedirectURIs, ConfidentialClient: b.ConfidentialClient,
		SkipSecondaryAuthorization: b.SkipSecondaryAuthorization}
	if b.Name != nil {
		in.Name = *b.Name
	}
	return in
}

func (h AppHandlers) UserGetOauth2Application(ctx context.Context, params user.UserGetOauth2ApplicationParams) middleware.Responder {
	p, err := appOwner(ctx)
	if err != nil {
		return h.Fail(err)
	}
	pg := h.Page(params.Page, params.Limit)
	apps, total, err := h.Store.OAuth2().ListApps(ctx, p.User.ID, pg.Store())
	if err != nil {
		return h.Fail(err)
	}
	out := make([]*models.OAuth2Application, 0, len(apps))
	for _, a := range apps {
		out = append(out, convert.OAuth2Application(a, RedirectURIs(a), ""))
	}
	return user.NewUserGetOauth2ApplicationOK().
		WithXTotalCount(total).
		WithLink(paging.Link(params.HTTPRequest, pg, total)).
		WithPayload(out)
}

func (h AppHandlers) UserCreateOAuth2Application(ctx context.Context, params user.UserCreateOAuth2ApplicationParams) middleware.Responder {
	p, err := appOwner(ctx)
	if err != nil {
		return h.Fail(err)
	}
	a, secret, err := h.CreateApp(ctx, p.Signer, p.User, appInput(params.Body))
	if err != nil {
		return h.Fail(err)
	}
	return user.NewUserCreateOAuth2ApplicationCreated().WithPayload(convert.OAuth2Application(a, RedirectURIs(a), secret))
}

func (h AppHandlers) UserGetOAuth2Application(ctx context.Context, params user.UserGetOAuth2ApplicationParams) middleware.Responder {
	p, err := appOwner(ctx)
	if err != nil {
		return h.Fail(err)
	}
	a, err := h.FindApp(ctx, p.User, params.ID)
	if err != nil {
		return h.Fail(err)
	}
	return user.NewUserGetOAuth2ApplicationOK().WithPayload(convert.OAuth2Application(a, RedirectURIs(a), ""))
}

func (h AppHandlers) UserUpdateOAuth2Application(ctx context.Context, params user.UserUpdateOAuth2ApplicationParams) middleware.Responder {
	p, err := appOwner(ctx)
	if err != nil {
		return h.Fail(err)
	}
	a, secret, err := h.UpdateApp(ctx, p.Signer, p.User, params.ID, appInput(params.Body))
	if err != nil {
		return h.Fail(err)
	}
	return user.NewUserUpdateOAuth2ApplicationOK().WithPayload(convert.OAuth2Application(a, RedirectURIs(a), secret))
}

func (h AppHandlers) UserDeleteOAuth2Application(ctx context.Context, params user.UserDeleteOAuth2ApplicationParams) middleware.Responder {
	p, err := appOwner(ctx)
	if err != nil {
		return h.Fail(err)
	}
	if err := h.DeleteApp(ctx, p.Signer, p.User, params.ID); err != nil {
		return h.Fail(err)
	}
	return user.NewUserDeleteOAuth2ApplicationNoContent()
}
