// Package oauth2 is the server's OAuth2 provider and OpenID Connect
// issuer: the applications users register (the only place that writes
// them), the sign-in and consent pages a person passes through, and the
// protocol endpoints clients call (authorize, token, revoke, userinfo,
// discovery, keys).
//
// Access tokens are random secrets kept by hash, like personal access
// tokens, and are resolved by impl/auth with the scope their grant holds.
// Refresh tokens are JWTs signed with the provider's key that name their
// grant and its counter: each refresh moves the counter on, and an old
// refresh token presented again revokes the grant (it was stolen, or
// copied), as the reference does. ID tokens are signed with the same key.
package oauth2

import (
	"context"
	"encoding/json"
	"errors"
	"net/url"
	"strings"

	"github.com/google/uuid"

	"repohost/impl/apierr"
	"repohost/impl/app"
	"repohost/impl/auth"
	"repohost/impl/events"
	"repohost/store"
)

// Service owns the provider's state.
type Service struct {
	*app.Deps
	Keys *Keys
}

// AppInput describes an application to register or change.
type AppInput struct {
	Name                       string
	RedirectURIs               []string
	ConfidentialClient         bool
	SkipSecondaryAuthorization bool
}

func (in AppInput) check() error {
	if strings.TrimSpace(in.Name) == "" {
		return apierr.Validation("[Name]: Required")
	}
	if len(in.RedirectURIs) == 0 {
		return apierr.Validation("[RedirectURIs]: Required")
	}
	for _, raw := range in.RedirectURIs {
		u, err := url.Parse(raw)
		if err != nil || !u.IsAbs() || u.Host == "" && u.Opaque == "" || u.Fragment != "" {
			return apierr.BadRequest("invalid redirect URI %q: it must be absolute and carry no fragment", raw)
		}
	}
	return nil
}

// RedirectURIs reads an application's stored list.
func RedirectURIs(a *store.OAuth2Application) []string {
	var out []string
	_ = json.Unmarshal([]byte(a.RedirectURIs), &out)
	if out == nil {
		out = []string{}
	}
	return out
}

func newSecret() (secret, hash string, err error) {
	s, _, err := auth.NewToken()
	if err != nil {
		return "", "", err
	}
	// The prefix tells a leaked secret for what it is (secret scanners
	// know the reference's).
	return "gto_" + s, auth.HashToken("gto_" + s), nil
}

// CreateApp registers an application for owner; its secret is returned
// here once.
func (s Service) CreateApp(ctx context.Context, doer, owner *store.User, in AppInput) (*store.OAuth2Application, string, error) {
	if err := in.check(); err != nil {
		return nil, "", err
	}
	secret, hash, err := newSecret()
	if err != nil {
		return nil, "", err
	}
	uris, _ := json.Marshal(in.RedirectURIs)
	a := &store.OAuth2Application{
		UserID: owner.ID, Name: in.Name, ClientID: uuid.NewString(), ClientSecretHash: hash,
		RedirectURIs: string(uris), ConfidentialClient: in.ConfidentialClient,
		SkipSecondaryAuthorization: in.SkipSecondaryAuthorization,
	}
	err = s.Store.WithTx(ctx, func(ctx context.Context) error {
		if err := s.Store.OAuth2().CreateApp(ctx, a); err != nil {
			return err
		}
		return s.emitApp(ctx, events.OAuth2AppCreated, doer, owner, a)
	})
	if err != nil {
		return nil, "", err
	}
	return a, secret, nil
}

// UpdateApp changes owner's application id and issues it a new secret,
// returned here once (the old one stops working).
func (s Service) UpdateApp(ctx context.Context, doer, owner *store.User, id int64, in AppInput) (*store.OAuth2Application, string, error) {
	if err := in.check(); err != nil {
		return nil, "", err
	}
	secret, hash, err := newSecret()
	if err != nil {
		return nil, "", err
	}
	var a *store.OAuth2Application
	err = s.Store.WithTx(ctx, func(ctx context.Context) error {
		var err error
		if a, err = s.FindApp(ctx, owner, id); err != nil {
			return err
		}
		uris, _ := json.Marshal(in.RedirectURIs)
		a.Name, a.RedirectURIs, a.ClientSecretHash = in.Name, string(uris), hash
		a.ConfidentialClient, a.SkipSecondaryAuthorization = in.ConfidentialClient, in.SkipSecondaryAuthorization
		if err := s.Store.OAuth2().UpdateApp(ctx, a); err != nil {
			return err
		}
		return s.emitApp(ctx, events.OAuth2AppEdited, doer, owner, a)
	})
	if err != nil {
		return nil, "", err
	}
	return a, secret, nil
}

// DeleteApp removes owner's application id with its grants and tokens.
func (s Service) DeleteApp(ctx context.Context, doer, owner *store.User, id int64) error {
	return s.Store.WithTx(ctx, func(ctx context.Context) error {
		a, err := s.FindApp(ctx, owner, id)
		if err != nil {
			return err
		}
		if err := s.Store.OAuth2().DeleteApp(ctx, owner.ID, id); err != nil {
			return err
		}
		return s.emitApp(ctx, events.OAuth2AppDeleted, doer, owner, a)
	})
}

// FindApp returns owner's application id, 404 when owner has none by
// that id (another user's answers the same).
func (s Service) FindApp(ctx context.Context, owner *store.User, id int64) (*store.OAuth2Application, error) {
	a, err := s.Store.OAuth2().FindApp(ctx, owner.ID, id)
	if errors.Is(err, store.ErrNotFound) {
		return nil, apierr.NotFound("OAuth2 application does not exist")
	}
	return a, err
}

func (s Service) emitApp(ctx context.Context, kind events.Kind, doer, owner *store.User, a *store.OAuth2Application) error {
	return s.Events.Emit(ctx, kind, 0, events.ActorID(doer), events.OAuth2App{
		ID: a.ID, Name: a.Name, ClientID: a.ClientID, Owner: events.Named{ID: owner.ID, Name: owner.Name}})
}

// grant records user's consent to a with scope, creating or widening the
// grant.
func (s Service) grant(ctx context.Context, user *store.User, a *store.OAuth2Application, scope string) (*store.OAuth2Grant, error) {
	var g *store.OAuth2Grant
	err := s.Store.WithTx(ctx, func(ctx context.Context) error {
		var err error
		g, err = s.Store.OAuth2().FindGrant(ctx, user.ID, a.ID)
		switch {
		case errors.Is(err, store.ErrNotFound):
			g = &store.OAuth2Grant{UserID: user.ID, ApplicationID: a.ID, Scope: scope, Counter: 1}
		case err != nil:
			return err
		case g.Scope == scope:
			return nil
		default:
			g.Scope = scope
		}
		if err := s.Store.OAuth2().SaveGrant(ctx, g); err != nil {
			return err
		}
		return s.emitGrant(ctx, events.OAuth2GrantCreated, user, a, g)
	})
	return g, err
}

// revokeGrant removes g with its codes and tokens.
func (s Service) revokeGrant(ctx context.Context, g *store.OAuth2Grant) error {
	return s.Store.WithTx(ctx, func(ctx context.Context) error {
		if err := s.Store.OAuth2().DeleteGrant(ctx, g.ID); err != nil {
			return err
		}
		return s.Events.Emit(ctx, events.OAuth2GrantRevoked, 0, g.UserID, events.OAuth2Grant{
			ID: g.ID, Scope: g.Scope, App: events.Named{ID: g.ApplicationID}, User: events.Named{ID: g.UserID}})
	})
}

func (s Service) emitGrant(ctx context.Context, kind events.Kind, user *store.User, a *store.OAuth2Application, g *store.OAuth2Grant) error {
	return s.Events.Emit(ctx, kind, 0, user.ID, events.OAuth2Grant{
		ID: g.ID, Scope: g.Scope, App: events.Named{ID: a.ID, Name: a.Name}, User: events.Named{ID: user.ID, Name: user.Name}})
}
