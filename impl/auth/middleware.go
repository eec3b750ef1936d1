package auth

import (
	"context"
	"encoding/base64"
	"errors"
	"net"
	"net/http"
	"slices"
	"strings"
	"time"

	"repohost/impl/apierr"
	"repohost/store"
)

// Authenticator resolves credentials into a Principal.
type Authenticator struct {
	Store  store.Store
	Hasher Hasher
	Errors apierr.Translator
	// Throttle limits failed password attempts; nil allows any number.
	Throttle *LoginThrottle
	// Verified remembers passwords bcrypt accepted; nil checks every
	// sign-in with bcrypt.
	Verified *CredentialCache
}

// badCredentials is the one answer to every failed authentication, so it
// tells nothing about which part was wrong. A fresh value each time: errors
// are values callers may wrap or annotate.
func badCredentials() error { return apierr.Unauthorized("invalid username, password or token") }

// Middleware authenticates every request once. Bad credentials answer 401 on
// every route; no credentials leave the caller anonymous and each handler
// decides whether that is enough. Token scopes are checked here too, since
// the category follows from the path.
func (a *Authenticator) Middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, err := a.Authenticate(r)
		if err == nil && p != nil && p.Token != nil {
			err = checkScope(p, r)
		}
		if err != nil {
			a.Errors.Write(w, err)
			return
		}
		next.ServeHTTP(w, r.WithContext(WithPrincipal(r.Context(), p)))
	})
}

// Authenticate returns the caller of r, nil when anonymous.
func (a *Authenticator) Authenticate(r *http.Request) (*Principal, error) {
	ctx := r.Context()
	p, err := a.credentials(ctx, r)
	if err != nil || p == nil {
		if err == nil && sudoTarget(r) != "" {
			return nil, &apierr.Error{Status: http.StatusForbidden, Message: "Only administrators allowed to sudo.", Bare: true}
		}
		return nil, err
	}
	if err := accountState(p.User); err != nil {
		return nil, err
	}
	// Recording the time of use costs a write; a token used within the last
	// minute is left alone, so that a busy client's reads stay reads.
	if t := p.Token; t != nil && (t.LastUsedAt == nil || time.Since(*t.LastUsedAt) > time.Minute) {
		if err := a.Store.Tokens().MarkUsed(ctx, t.ID); err != nil {
			return nil, err
		}
	}
	return a.sudo(ctx, r, p)
}

func (a *Authenticator) credentials(ctx context.Context, r *http.Request) (*Principal, error) {
	q := r.URL.Query()
	for _, name := range []string{"token", "access_token"} {
		if t := q.Get(name); t != "" {
			return a.byToken(ctx, t)
		}
	}
	h := r.Header.Get("Authorization")
	if h == "" {
		return nil, nil
	}
	scheme, value, ok := strings.Cut(strings.TrimSpace(h), " ")
	value = strings.TrimSpace(value)
	switch {
	case !ok || value == "":
		return nil, badCredentials()
	case scheme == "token" || strings.EqualFold(scheme, "bearer"):
		return a.byToken(ctx, value)
	case strings.EqualFold(scheme, "basic"):
		raw, err := base64.StdEncoding.DecodeString(value)
		if err != nil {
			return nil, badCredentials()
		}
		user, pass, _ := strings.Cut(string(raw), ":")
		return a.byBasic(ctx, clientAddress(r), user, pass)
	default:
		return nil, badCredentials()
	}
}

// byBasic accepts a token in either field, or else a login name (or email)
// with its password. Password attempts are throttled per account and per
// address before the (deliberately slow) hash is checked.
func (a *Authenticator) byBasic(ctx context.Context, addr, user, pass string) (*Principal, error) {
	for _, candidate := range []string{user, pass} {
		if looksLikeToken(candidate) {
			if p, err := a.byToken(ctx, candidate); err == nil {
				return p, nil
			}
		}
	}
	return a.byPasswordThrottled(ctx, addr, user, pass)
}

// SignIn checks a login name (or email) and password typed into the
// server's sign-in page, throttled like every password sign-in, and
// refuses an account that may not sign in.
func (a *Authenticator) SignIn(ctx context.Context, r *http.Request, user, pass string) (*store.User, error) {
	p, err := a.byPasswordThrottled(ctx, clientAddress(r), user, pass)
	if err != nil {
		return nil, err
	}
	if err := accountState(p.User); err != nil {
		return nil, err
	}
	return p.User, nil
}

// byPasswordThrottled is byPassword behind the login throttle.
func (a *Authenticator) byPasswordThrottled(ctx context.Context, addr, user, pass string) (*Principal, error) {
	keys := KeysFor(user, addr)
	if wait := a.Throttle.RetryAfter(keys); wait > 0 {
		return nil, apierr.TooManyRequests(wait, "too many failed sign-in attempts; retry later")
	}
	if wait := a.Throttle.SlowDown(keys); wait > 0 {
		select {
		case <-time.After(wait):
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	p, err := a.byPassword(ctx, user, pass)
	var e *apierr.Error
	switch {
	case err == nil:
		// Only this address's count: the account-wide one is many
		// addresses' doing, which the owner's success does not undo.
		a.Throttle.Succeed(keys.Account)
	case errors.As(err, &e) && e.Status == http.StatusUnauthorized:
		a.Throttle.Fail(keys.Account, keys.Address, keys.AnyAddress)
	}
	return p, err
}

// clientAddress is the host part of the peer's address: the key failed
// sign-ins are counted under. Forwarded-for headers are not trusted, since
// any client can send them.
func clientAddress(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

// byPassword checks a login name (or email) and its password.
func (a *Authenticator) byPassword(ctx context.Context, user, pass string) (*Principal, error) {
	u, err := a.Store.Users().FindByName(ctx, user)
	if errors.Is(err, store.ErrNotFound) && strings.Contains(user, "@") {
		var e *store.Email
		if e, err = a.Store.Emails().FindByEmail(ctx, user); err == nil {
			u, err = a.Store.Users().FindByID(ctx, e.UserID)
		}
	}
	if errors.Is(err, store.ErrNotFound) {
		return nil, badCredentials()
	}
	if err != nil {
		return nil, err
	}
	if u.IsOrganization() {
		return nil, badCredentials()
	}
	// u was just read: a cached verification counts only against the hash
	// the row holds now, and the account state is checked on this row by
	// the caller either way.
	if !a.Verified.Verified(u.ID, u.PasswordHash, pass) {
		if !a.Hasher.CheckPassword(u.PasswordHash, pass) {
			return nil, badCredentials()
		}
		a.Verified.Remember(u.ID, u.PasswordHash, pass)
	}
	return &Principal{User: u, Signer: u}, nil
}

func looksLikeToken(s string) bool {
	if len(s) != 40 {
		return false
	}
	for _, c := range s {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

func (a *Authenticator) byToken(ctx context.Context, secret string) (*Principal, error) {
	t, u, err := a.Store.Tokens().FindByHashWithUser(ctx, HashToken(secret))
	if errors.Is(err, store.ErrNotFound) {
		return a.byOAuth2Token(ctx, HashToken(secret))
	}
	if err != nil {
		return nil, err
	}
	scopes, _, _ := ParseScopes([]string{t.Scopes})
	return &Principal{User: u, Signer: u, Token: t, Scopes: scopes}, nil
}

// byOAuth2Token accepts an access token the OAuth2 provider issued: it
// acts as the user who granted it, with the scopes of the grant (every
// scope when the grant named none), in every form a token is accepted, so
// the scope checks apply to it as to any token.
func (a *Authenticator) byOAuth2Token(ctx context.Context, hash string) (*Principal, error) {
	_, g, u, err := a.Store.OAuth2().FindTokenWithUser(ctx, hash, time.Now())
	if errors.Is(err, store.ErrNotFound) {
		return a.byTaskToken(ctx, hash)
	}
	if err != nil {
		return nil, err
	}
	scopes := OAuth2Scopes(g.Scope)
	// Not a stored personal token: nothing to mark as used, and it may
	// never manage tokens (RequirePassword refuses any Token).
	now := time.Now()
	t := &store.AccessToken{Name: "oauth2", Scopes: scopes.String(), LastUsedAt: &now}
	return &Principal{User: u, Signer: u, Token: t, Scopes: scopes}, nil
}

// OIDCScopes are the OpenID Connect scopes an OAuth2 client may request
// beside token scopes; they ask for claims, not for access. "groups" is
// accepted, as the reference's clients send it, but no groups claim is
// issued yet.
var OIDCScopes = []string{"openid", "profile", "email", "groups"}

// OAuth2Scopes are the token scopes an OAuth2 grant's scope gives: the
// access-token scopes it names beside the OpenID Connect ones (openid,
// profile, email, groups), or every scope when it names none.
func OAuth2Scopes(grantScope string) Scopes {
	var api []string
	for _, f := range strings.FieldsFunc(grantScope, func(r rune) bool { return r == ' ' || r == ',' }) {
		if !slices.Contains(OIDCScopes, f) {
			api = append(api, f)
		}
	}
	s, _, ok := ParseScopes(api)
	if !ok {
		return Scopes{}
	}
	if len(s) == 0 || (len(s) == 1 && s.PublicOnly()) {
		s["all"] = true
	}
	return s
}

// byTaskToken accepts the token of a workflow task while the task runs:
// it reads the task's repository (code, API) and nothing else.
func (a *Authenticator) byTaskToken(ctx context.Context, hash string) (*Principal, error) {
	task, err := a.Store.Actions().FindTaskByTokenHash(ctx, hash)
	if errors.Is(err, store.ErrNotFound) || (err == nil && task.Status != store.ActionRunning) {
		return nil, badCredentials()
	}
	if err != nil {
		return nil, err
	}
	u := ActionsUser
	// Not a stored token: nothing to mark as used.
	now := time.Now()
	t := &store.AccessToken{Name: "actions-task", Scopes: "read:repository", LastUsedAt: &now}
	return &Principal{User: &u, Signer: &u, Token: t, Scopes: Scopes{"read:repository": true}, TaskRepoID: task.RepoID}, nil
}

// AccountState refuses an account that may not sign in (inactive,
// prohibited, or bound to change its password first), for every way of
// signing in (the API, git over HTTP and SSH).
func AccountState(u *store.User) error { return accountState(u) }

func accountState(u *store.User) error {
	bare := func(msg string) error {
		return &apierr.Error{Status: http.StatusForbidden, Message: msg, Bare: true}
	}
	switch {
	case !u.IsActive || u.ProhibitLogin:
		return bare("This account is prohibited from signing in, please contact your site administrator.")
	case u.MustChangePassword:
		return bare("You must change your password. Change it at: /user/settings/account")
	}
	return nil
}

func sudoTarget(r *http.Request) string {
	if s := r.URL.Query().Get("sudo"); s != "" {
		return s
	}
	return r.Header.Get("Sudo")
}

// sudo lets a site admin act as another user. A token narrowed to public
// resources or without admin scope cannot sudo, so narrowing a token really
// narrows it.
func (a *Authenticator) sudo(ctx context.Context, r *http.Request, p *Principal) (*Principal, error) {
	target := sudoTarget(r)
	if target == "" {
		return p, nil
	}
	if !p.User.IsAdmin || (p.Token != nil && (p.Scopes.PublicOnly() || !p.Scopes.Allows("admin", "read"))) {
		return nil, &apierr.Error{Status: http.StatusForbidden, Message: "Only administrators allowed to sudo.", Bare: true}
	}
	u, err := a.Store.Users().FindByName(ctx, target)
	if errors.Is(err, store.ErrNotFound) || (err == nil && u.IsOrganization()) {
		return nil, apierr.NotFound("sudo target %q does not exist", target)
	}
	if err != nil {
		return nil, err
	}
	return &Principal{User: u, Signer: p.Signer, Token: p.Token, Scopes: p.Scopes}, nil
}

// checkScope enforces a token's scopes: reads need read, everything else
// write, in the category the path belongs to.
func checkScope(p *Principal, r *http.Request) error {
	category := ScopeCategory(r.URL.Path)
	if category == "" {
		return nil
	}
	level := "write"
	if r.Method == http.MethodGet || r.Method == http.MethodHead {
		level = "read"
	}
	if p.Scopes.Allows(category, level) {
		return nil
	}
	return apierr.Forbidden("token does not have at least one of required scope(s), required=[%s:%s], token scope=%s",
		level, category, p.Scopes.String())
}

// ScopeCategory names the token-scope category of an API path, or "" for
// routes any valid token may call (version, settings, the token itself).
func ScopeCategory(path string) string {
	rest := strings.TrimPrefix(path, "/api/v1")
	seg := strings.Split(strings.Trim(rest, "/"), "/")
	switch seg[0] {
	case "admin":
		return "admin"
	case "orgs", "org", "teams":
		return "organization"
	case "repos":
		if len(seg) >= 2 && seg[1] == "issues" { // /repos/issues/search
			return "issue"
		}
		if len(seg) >= 4 && seg[3] == "notifications" {
			return "notification"
		}
		if len(seg) >= 4 && (seg[3] == "issues" || seg[3] == "labels" || seg[3] == "milestones" || seg[3] == "projects") {
			return "issue"
		}
		return "repository"
	case "user":
		if len(seg) >= 2 {
			switch seg[1] {
			case "repos":
				return "repository"
			case "orgs":
				return "organization"
			}
		}
		return "user"
	case "users":
		if len(seg) >= 3 && seg[2] == "repos" {
			return "repository"
		}
		if len(seg) >= 3 && seg[2] == "orgs" {
			return "organization"
		}
		return "user"
	case "notifications":
		return "notification"
	case "packages":
		return "package"
	}
	return ""
}

// RequireUser returns the caller or the 401 the reference answers when a
// route needs a signed-in user.
func RequireUser(ctx context.Context) (*Principal, error) {
	p := FromContext(ctx)
	if p == nil {
		return nil, apierr.Unauthorized("token is required")
	}
	return p, nil
}

// RequireAdmin returns the caller if they are a site admin.
func RequireAdmin(ctx context.Context) (*Principal, error) {
	p, err := RequireUser(ctx)
	if err != nil {
		return nil, err
	}
	if !p.User.IsAdmin {
		return nil, apierr.Forbidden("user should be the site admin")
	}
	return p, nil
}

// RequirePassword refuses token-authenticated calls, for routes that manage
// tokens: a token must never be able to mint or list tokens.
func RequirePassword(ctx context.Context) (*Principal, error) {
	p, err := RequireUser(ctx)
	if err != nil {
		return nil, err
	}
	if p.Token != nil {
		return nil, apierr.Unauthorized("auth method not allowed: use basic authentication with a password")
	}
	return p, nil
}
