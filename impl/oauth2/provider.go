package oauth2

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/go-jose/go-jose/v4/jwt"

	"repohost/impl/apierr"
	"repohost/impl/auth"
	"repohost/impl/convert"
	"repohost/impl/rooturl"
	"repohost/store"
)

// Lifetimes, as the reference's defaults.
const (
	codeLifetime    = 10 * time.Minute
	accessLifetime  = time.Hour
	refreshLifetime = 730 * time.Hour
	sessionLifetime = 7 * 24 * time.Hour
)

// Handlers serves the provider's pages and protocol endpoints.
type Handlers struct {
	Service
	// Authn checks the sign-in page's passwords, throttled as every
	// password sign-in is.
	Authn *auth.Authenticator
}

// Mount routes the provider on mux, outside /api/v1.
func (h Handlers) Mount(mux *http.ServeMux) {
	mux.HandleFunc("GET /login/oauth/authorize", h.authorizePage)
	mux.Handle("POST /login/oauth/authorize", http.NewCrossOriginProtection().Handler(http.HandlerFunc(h.authorizeForm)))
	mux.HandleFunc("POST /login/oauth/access_token", h.token)
	mux.HandleFunc("POST /login/oauth/revoke", h.revoke)
	mux.HandleFunc("GET /login/oauth/userinfo", h.userinfo)
	mux.HandleFunc("POST /login/oauth/userinfo", h.userinfo)
	mux.HandleFunc("GET /login/oauth/keys", h.keys)
	mux.HandleFunc("GET /.well-known/openid-configuration", h.discovery)
}

// parseScope checks a requested scope and returns it normalised (each
// scope once, space-separated). Beside the OpenID Connect scopes it may
// name access-token scopes (read:repository, …); see auth.OAuth2Scopes.
func parseScope(raw string) (string, bool) {
	var kept, api []string
	for _, f := range strings.FieldsFunc(raw, func(r rune) bool { return r == ' ' || r == ',' }) {
		if slices.Contains(kept, f) {
			continue
		}
		kept = append(kept, f)
		if !slices.Contains(auth.OIDCScopes, f) {
			api = append(api, f)
		}
	}
	if _, _, ok := auth.ParseScopes(api); !ok {
		return "", false
	}
	return strings.Join(kept, " "), true
}

func hasScope(scope, want string) bool { return slices.Contains(strings.Fields(scope), want) }

// authRequest is an authorization request as the client sent it.
type authRequest struct {
	app                     *store.OAuth2Application
	redirectURI, state      string
	scope, nonce            string
	challenge, method       string
	responseType            string
	rawQuery                string
	clientError, clientDesc string
}

// readAuthRequest checks the client and its redirect URI (errors about
// them go to the person, never to an unchecked URI), then the rest (those
// go back to the client, in clientError).
func (h Handlers) readAuthRequest(r *http.Request) (*authRequest, string) {
	q := r.URL.Query()
	app, err := h.Store.OAuth2().FindAppByClientID(r.Context(), q.Get("client_id"))
	if err != nil {
		return nil, "The application asking for access is not registered here."
	}
	uris := RedirectURIs(app)
	ar := &authRequest{app: app, redirectURI: q.Get("redirect_uri"), state: q.Get("state"), nonce: q.Get("nonce"),
		challenge: q.Get("code_challenge"), method: q.Get("code_challenge_method"), responseType: q.Get("response_type"),
		rawQuery: r.URL.RawQuery}
	if ar.redirectURI == "" && len(uris) == 1 {
		ar.redirectURI = uris[0]
	}
	if !slices.Contains(uris, ar.redirectURI) {
		return nil, "The address the application wants the answer sent to is not one it registered."
	}
	scope, ok := parseScope(q.Get("scope"))
	ar.scope = scope
	switch {
	case ar.responseType != "code":
		ar.clientError, ar.clientDesc = "unsupported_response_type", "only the code response type is supported"
	case !ok:
		ar.clientError, ar.clientDesc = "invalid_scope", "the scope names an unknown scope"
	case ar.challenge == "" && !app.ConfidentialClient:
		ar.clientError, ar.clientDesc = "invalid_request", "PKCE is required for public clients"
	case ar.challenge != "" && ar.method == "":
		ar.method = "plain"
	}
	if ar.clientError == "" && ar.challenge != "" && ar.method != "S256" && ar.method != "plain" {
		ar.clientError, ar.clientDesc = "invalid_request", "unsupported code_challenge_method"
	}
	return ar, ""
}

// redirect sends the person back to the client with params.
func (ar *authRequest) redirect(w http.ResponseWriter, r *http.Request, params url.Values) {
	u, _ := url.Parse(ar.redirectURI)
	q := u.Query()
	for k, v := range params {
		q[k] = v
	}
	if ar.state != "" {
		q.Set("state", ar.state)
	}
	u.RawQuery = q.Encode()
	http.Redirect(w, r, u.String(), http.StatusFound)
}

func (ar *authRequest) fail(w http.ResponseWriter, r *http.Request, code, desc string) {
	ar.redirect(w, r, url.Values{"error": {code}, "error_description": {desc}})
}

func (h Handlers) authorizePage(w http.ResponseWriter, r *http.Request) {
	ar, problem := h.readAuthRequest(r)
	if ar == nil {
		h.renderError(w, r, problem)
		return
	}
	if ar.clientError != "" {
		ar.fail(w, r, ar.clientError, ar.clientDesc)
		return
	}
	user := h.sessionUser(r)
	if user == nil {
		h.renderSignIn(w, r, ar, "", http.StatusOK)
		return
	}
	h.consentOrCode(w, r, ar, user)
}

// consentOrCode asks user for consent unless the application skips it or
// the user already granted this scope.
func (h Handlers) consentOrCode(w http.ResponseWriter, r *http.Request, ar *authRequest, user *store.User) {
	if !ar.app.SkipSecondaryAuthorization {
		g, err := h.Store.OAuth2().FindGrant(r.Context(), user.ID, ar.app.ID)
		if err != nil || g.Scope != ar.scope {
			h.renderConsent(w, r, ar, user)
			return
		}
	}
	h.issueCode(w, r, ar, user)
}

func (h Handlers) issueCode(w http.ResponseWriter, r *http.Request, ar *authRequest, user *store.User) {
	ctx := r.Context()
	g, err := h.grant(ctx, user, ar.app, ar.scope)
	if err != nil {
		h.serverError(w, r, err)
		return
	}
	code, hash, err := auth.NewToken()
	if err != nil {
		h.serverError(w, r, err)
		return
	}
	c := &store.OAuth2Code{GrantID: g.ID, CodeHash: hash, RedirectURI: ar.redirectURI, CodeChallenge: ar.challenge,
		CodeChallengeMethod: ar.method, Nonce: ar.nonce, ExpiresAt: h.Clock.Now().Add(codeLifetime)}
	if err := h.Store.OAuth2().CreateCode(ctx, c); err != nil {
		h.serverError(w, r, err)
		return
	}
	ar.redirect(w, r, url.Values{"code": {code}})
}

// authorizeForm takes the sign-in and the consent forms.
func (h Handlers) authorizeForm(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
	if err := r.ParseForm(); err != nil {
		h.renderError(w, r, "The form could not be read.")
		return
	}
	if !checkCSRF(r) {
		h.renderErrorStatus(w, r, "The form expired or did not come from this site; go back and try again.", http.StatusForbidden)
		return
	}
	ar, problem := h.readAuthRequest(r)
	if ar == nil {
		h.renderError(w, r, problem)
		return
	}
	if ar.clientError != "" {
		ar.fail(w, r, ar.clientError, ar.clientDesc)
		return
	}
	switch r.PostForm.Get("action") {
	case "signin":
		h.signIn(w, r, ar)
	case "grant", "deny":
		user := h.sessionUser(r)
		if user == nil {
			h.renderSignIn(w, r, ar, "Your session ended; sign in again.", http.StatusUnauthorized)
			return
		}
		if r.PostForm.Get("action") == "deny" {
			ar.fail(w, r, "access_denied", "the user denied the request")
			return
		}
		h.issueCode(w, r, ar, user)
	default:
		h.renderError(w, r, "The form could not be read.")
	}
}

func (h Handlers) signIn(w http.ResponseWriter, r *http.Request, ar *authRequest) {
	ctx := r.Context()
	user, err := h.Authn.SignIn(ctx, r, r.PostForm.Get("user_name"), r.PostForm.Get("password"))
	if err != nil {
		status, msg := http.StatusUnauthorized, "Wrong user name or password."
		var e *apierr.Error
		if !errors.As(err, &e) {
			h.serverError(w, r, err)
			return
		}
		switch e.Status {
		case http.StatusTooManyRequests:
			status, msg = http.StatusTooManyRequests, "Too many failed sign-in attempts; try again later."
		case http.StatusForbidden:
			status, msg = http.StatusForbidden, "This account may not sign in."
		case http.StatusUnauthorized:
		default:
			h.serverError(w, r, err)
			return
		}
		h.renderSignIn(w, r, ar, msg, status)
		return
	}
	secret, hash, err := auth.NewToken()
	if err != nil {
		h.serverError(w, r, err)
		return
	}
	expires := h.Clock.Now().Add(sessionLifetime)
	if err := h.Store.OAuth2().CreateSession(ctx, &store.WebSession{UserID: user.ID, TokenHash: hash, ExpiresAt: expires}); err != nil {
		h.serverError(w, r, err)
		return
	}
	http.SetCookie(w, &http.Cookie{Name: sessionCookie, Value: secret, Path: cookiePath(r, ""), Expires: expires,
		HttpOnly: true, Secure: r.TLS != nil, SameSite: http.SameSiteLaxMode})
	http.Redirect(w, r, ar.action(r), http.StatusSeeOther)
}

const sessionCookie = "repohost_session"

// sessionUser is the person signed in on this browser, nil if none.
func (h Handlers) sessionUser(r *http.Request) *store.User {
	c, err := r.Cookie(sessionCookie)
	if err != nil || c.Value == "" {
		return nil
	}
	_, u, err := h.Store.OAuth2().FindSession(r.Context(), auth.HashToken(c.Value), h.Clock.Now())
	if err != nil || auth.AccountState(u) != nil {
		return nil
	}
	return u
}

// tokenError is RFC 6749's error answer.
func tokenError(w http.ResponseWriter, status int, code, desc string) {
	w.Header().Set("Cache-Control", "no-store")
	if status == http.StatusUnauthorized {
		w.Header().Set("WWW-Authenticate", `Basic realm="oauth2"`)
	}
	writeJSON(w, status, map[string]string{"error": code, "error_description": desc})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json;charset=utf-8")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// client authenticates the calling client by client_secret_basic or
// client_secret_post. A public client sends only its id.
func (h Handlers) client(r *http.Request) (*store.OAuth2Application, bool) {
	id, secret, basic := r.BasicAuth()
	if basic {
		// RFC 6749 §2.3.1: both parts are form-encoded before Basic.
		id, _ = url.QueryUnescape(id)
		secret, _ = url.QueryUnescape(secret)
	} else {
		id, secret = r.PostForm.Get("client_id"), r.PostForm.Get("client_secret")
	}
	app, err := h.Store.OAuth2().FindAppByClientID(r.Context(), id)
	if err != nil {
		return nil, false
	}
	if !app.ConfidentialClient && secret == "" {
		return app, true
	}
	if subtle.ConstantTimeCompare([]byte(auth.HashToken(secret)), []byte(app.ClientSecretHash)) != 1 {
		return nil, false
	}
	return app, true
}

func (h Handlers) token(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
	if err := r.ParseForm(); err != nil {
		tokenError(w, http.StatusBadRequest, "invalid_request", "the request body could not be read")
		return
	}
	app, ok := h.client(r)
	if !ok {
		tokenError(w, http.StatusUnauthorized, "invalid_client", "client authentication failed")
		return
	}
	switch r.PostForm.Get("grant_type") {
	case "authorization_code":
		h.exchangeCode(w, r, app)
	case "refresh_token":
		h.refresh(w, r, app)
	default:
		tokenError(w, http.StatusBadRequest, "unsupported_grant_type", "only authorization_code and refresh_token are supported")
	}
}

func (h Handlers) exchangeCode(w http.ResponseWriter, r *http.Request, app *store.OAuth2Application) {
	ctx := r.Context()
	invalid := func(desc string) { tokenError(w, http.StatusBadRequest, "invalid_grant", desc) }
	c, err := h.Store.OAuth2().TakeCode(ctx, auth.HashToken(r.PostForm.Get("code")))
	if errors.Is(err, store.ErrNotFound) {
		invalid("the code is unknown or was used already")
		return
	}
	if err != nil {
		h.serverError(w, r, err)
		return
	}
	g, err := h.Store.OAuth2().FindGrantByID(ctx, c.GrantID)
	switch {
	case errors.Is(err, store.ErrNotFound):
		invalid("the grant was revoked")
		return
	case err != nil:
		h.serverError(w, r, err)
		return
	case g.ApplicationID != app.ID:
		invalid("the code was issued to another client")
		return
	case !c.ExpiresAt.After(h.Clock.Now()):
		invalid("the code has expired")
		return
	case r.PostForm.Get("redirect_uri") != c.RedirectURI:
		invalid("redirect_uri does not match the authorization request")
		return
	case !verifyPKCE(c, r.PostForm.Get("code_verifier")):
		invalid("the code verifier does not match the challenge")
		return
	}
	h.issueTokens(w, r, app, g, g.Counter, c.Nonce)
}

// verifyPKCE checks the code verifier against the code's challenge
// (RFC 7636); a code without a challenge needs no verifier.
func verifyPKCE(c *store.OAuth2Code, verifier string) bool {
	if c.CodeChallenge == "" {
		return true
	}
	if len(verifier) < 43 || len(verifier) > 128 {
		return false
	}
	want := verifier
	if c.CodeChallengeMethod == "S256" {
		sum := sha256.Sum256([]byte(verifier))
		want = base64.RawURLEncoding.EncodeToString(sum[:])
	}
	return subtle.ConstantTimeCompare([]byte(want), []byte(c.CodeChallenge)) == 1
}

// refreshClaims are a refresh token's own claims beside the registered
// ones: the grant it belongs to and its place in the grant's sequence.
type refreshClaims struct {
	Type    string `json:"typ"`
	GrantID int64  `json:"gnt"`
	Counter int64  `json:"cnt"`
}

func (h Handlers) refresh(w http.ResponseWriter, r *http.Request, app *store.OAuth2Application) {
	ctx := r.Context()
	invalid := func(desc string) { tokenError(w, http.StatusBadRequest, "invalid_grant", desc) }
	g, rc, err := h.readRefresh(ctx, r.PostForm.Get("refresh_token"))
	if err != nil {
		invalid("the refresh token is invalid")
		return
	}
	if g.ApplicationID != app.ID {
		invalid("the refresh token was issued to another client")
		return
	}
	err = h.Store.OAuth2().AdvanceGrant(ctx, g.ID, rc.Counter)
	if errors.Is(err, store.ErrConflict) {
		// An old refresh token: whoever holds the newest one is not
		// the only holder. Everything issued under the grant goes.
		if err := h.revokeGrant(ctx, g); err != nil {
			h.serverError(w, r, err)
			return
		}
		invalid("the refresh token was used already; the grant is revoked")
		return
	}
	if err != nil {
		h.serverError(w, r, err)
		return
	}
	h.issueTokens(w, r, app, g, rc.Counter+1, "")
}

// readRefresh verifies a refresh token and finds its grant.
func (h Handlers) readRefresh(ctx context.Context, token string) (*store.OAuth2Grant, *refreshClaims, error) {
	var std jwt.Claims
	var rc refreshClaims
	if err := h.Keys.Verify(token, &std, &rc); err != nil {
		return nil, nil, err
	}
	if rc.Type != "refresh" {
		return nil, nil, errors.New("not a refresh token")
	}
	if err := std.ValidateWithLeeway(jwt.Expected{Time: h.Clock.Now()}, 0); err != nil {
		return nil, nil, err
	}
	g, err := h.Store.OAuth2().FindGrantByID(ctx, rc.GrantID)
	if err != nil {
		return nil, nil, err
	}
	return g, &rc, nil
}

// idClaims are an ID token's claims beside the registered ones.
type idClaims struct {
	Nonce             string `json:"nonce,omitempty"`
	Name              string `json:"name,omitempty"`
	PreferredUsername string `json:"preferred_username,omitempty"`
	Profile           string `json:"profile,omitempty"`
	Picture           string `json:"picture,omitempty"`
	Website           string `json:"website,omitempty"`
	UpdatedAt         int64  `json:"updated_at,omitempty"`
	Email             string `json:"email,omitempty"`
	EmailVerified     *bool  `json:"email_verified,omitempty"`
}

func (h Handlers) issueTokens(w http.ResponseWriter, r *http.Request, app *store.OAuth2Application, g *store.OAuth2Grant, counter int64, nonce string) {
	ctx := r.Context()
	now := h.Clock.Now()
	access, hash, err := auth.NewToken()
	if err != nil {
		h.serverError(w, r, err)
		return
	}
	if err := h.Store.OAuth2().CreateToken(ctx, &store.OAuth2Token{GrantID: g.ID, TokenHash: hash, ExpiresAt: now.Add(accessLifetime)}); err != nil {
		h.serverError(w, r, err)
		return
	}
	issuer := rooturl.From(r)
	refresh, err := h.Keys.Sign(jwt.Claims{Issuer: issuer, Subject: strconv.FormatInt(g.UserID, 10),
		Expiry: jwt.NewNumericDate(now.Add(refreshLifetime)), IssuedAt: jwt.NewNumericDate(now)},
		refreshClaims{Type: "refresh", GrantID: g.ID, Counter: counter})
	if err != nil {
		h.serverError(w, r, err)
		return
	}
	out := map[string]any{"access_token": access, "token_type": "Bearer", "expires_in": int(accessLifetime.Seconds()),
		"refresh_token": refresh, "scope": g.Scope}
	if hasScope(g.Scope, "openid") {
		u, err := h.Store.Users().FindByID(ctx, g.UserID)
		if err != nil {
			h.serverError(w, r, err)
			return
		}
		id, err := h.Keys.Sign(jwt.Claims{Issuer: issuer, Subject: strconv.FormatInt(u.ID, 10), Audience: jwt.Audience{app.ClientID},
			Expiry: jwt.NewNumericDate(now.Add(accessLifetime)), IssuedAt: jwt.NewNumericDate(now)},
			userClaims(issuer, u, g.Scope, nonce))
		if err != nil {
			h.serverError(w, r, err)
			return
		}
		out["id_token"] = id
	}
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, http.StatusOK, out)
}

// userClaims are the claims about u that scope asks for.
func userClaims(base string, u *store.User, scope, nonce string) idClaims {
	c := idClaims{Nonce: nonce}
	if hasScope(scope, "profile") {
		c.Name, c.PreferredUsername = u.FullName, u.Name
		c.Profile, c.Picture, c.Website = base+u.Name, convert.AvatarURL(base, u), u.Website
		c.UpdatedAt = u.UpdatedAt.Unix()
	}
	if hasScope(scope, "email") {
		verified := u.IsActive
		c.Email, c.EmailVerified = u.Email, &verified
	}
	return c
}

// revoke is RFC 7009 token revocation: an access token goes alone, a
// refresh token takes its whole grant. Unknown tokens answer 200 too.
func (h Handlers) revoke(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
	if err := r.ParseForm(); err != nil {
		tokenError(w, http.StatusBadRequest, "invalid_request", "the request body could not be read")
		return
	}
	app, ok := h.client(r)
	if !ok {
		tokenError(w, http.StatusUnauthorized, "invalid_client", "client authentication failed")
		return
	}
	ctx := r.Context()
	token := r.PostForm.Get("token")
	if g, _, err := h.readRefresh(ctx, token); err == nil {
		if g.ApplicationID == app.ID {
			if err := h.revokeGrant(ctx, g); err != nil {
				h.serverError(w, r, err)
				return
			}
		}
		w.WriteHeader(http.StatusOK)
		return
	}
	t, g, _, err := h.Store.OAuth2().FindTokenWithUser(ctx, auth.HashToken(token), h.Clock.Now())
	if err == nil && g.ApplicationID == app.ID {
		if _, err := h.Store.OAuth2().DeleteToken(ctx, t.TokenHash); err != nil && !errors.Is(err, store.ErrNotFound) {
			h.serverError(w, r, err)
			return
		}
	} else if err != nil && !errors.Is(err, store.ErrNotFound) {
		h.serverError(w, r, err)
		return
	}
	w.WriteHeader(http.StatusOK)
}

// userinfo answers an OAuth2 access token with the claims its grant's
// scope allows.
func (h Handlers) userinfo(w http.ResponseWriter, r *http.Request) {
	scheme, token, _ := strings.Cut(r.Header.Get("Authorization"), " ")
	if !strings.EqualFold(scheme, "bearer") || token == "" {
		w.Header().Set("WWW-Authenticate", `Bearer realm="oauth2"`)
		writeJSON(w, http.StatusUnauthorized, map[string]string{"error": "invalid_request", "error_description": "a bearer token is required"})
		return
	}
	_, g, u, err := h.Store.OAuth2().FindTokenWithUser(r.Context(), auth.HashToken(strings.TrimSpace(token)), h.Clock.Now())
	if err != nil || auth.AccountState(u) != nil {
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			h.serverError(w, r, err)
			return
		}
		w.Header().Set("WWW-Authenticate", `Bearer realm="oauth2", error="invalid_token"`)
		writeJSON(w, http.StatusUnauthorized, map[string]string{"error": "invalid_token", "error_description": "the access token is invalid or expired"})
		return
	}
	base := rooturl.From(r)
	c := userClaims(base, u, g.Scope, "")
	out := map[string]any{"sub": strconv.FormatInt(u.ID, 10)}
	raw, _ := json.Marshal(c)
	_ = json.Unmarshal(raw, &out)
	writeJSON(w, http.StatusOK, out)
}

func (h Handlers) keys(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "public, max-age=3600")
	writeJSON(w, http.StatusOK, h.Keys.JWKS())
}

func (h Handlers) discovery(w http.ResponseWriter, r *http.Request) {
	base := rooturl.From(r)
	writeJSON(w, http.StatusOK, map[string]any{
		"issuer":                                base,
		"authorization_endpoint":                base + "login/oauth/authorize",
		"token_endpoint":                        base + "login/oauth/access_token",
		"revocation_endpoint":                   base + "login/oauth/revoke",
		"userinfo_endpoint":                     base + "login/oauth/userinfo",
		"jwks_uri":                              base + "login/oauth/keys",
		"response_types_supported":              []string{"code"},
		"grant_types_supported":                 []string{"authorization_code", "refresh_token"},
		"subject_types_supported":               []string{"public"},
		"id_token_signing_alg_values_supported": []string{"RS256"},
		"scopes_supported":                      []string{"openid", "profile", "email"},
		"claims_supported": []string{"aud", "exp", "iat", "iss", "sub", "name", "preferred_username",
			"profile", "picture", "website", "updated_at", "email", "email_verified", "nonce"},
		"token_endpoint_auth_methods_supported": []string{"client_secret_basic", "client_secret_post", "none"},
		"code_challenge_methods_supported":      []string{"S256", "plain"},
	})
}

func (h Handlers) serverError(w http.ResponseWriter, r *http.Request, err error) {
	h.Log.ErrorContext(r.Context(), "oauth2", "err", err)
	writeJSON(w, http.StatusInternalServerError, map[string]string{"error": "server_error"})
}
