package apitest_test

import (
	"context"
	"encoding/json"
	"errors"
	"html"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"testing"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
	"golang.org/x/oauth2"

	"repohost/apitest"
	"repohost/impl/app"
	"repohost/impl/events"
)

type oauthApp struct {
	ID                         int64    `json:"id"`
	Name                       string   `json:"name"`
	ClientID                   string   `json:"client_id"`
	ClientSecret               string   `json:"client_secret"`
	RedirectURIs               []string `json:"redirect_uris"`
	ConfidentialClient         bool     `json:"confidential_client"`
	SkipSecondaryAuthorization bool     `json:"skip_secondary_authorization"`
	Created                    string   `json:"created"`
}

func oaCreate(t *testing.T, e *apitest.Env, cred apitest.Cred, body map[string]any) oauthApp {
	t.Helper()
	var a oauthApp
	e.Do("POST", "user/applications/oauth2", body, cred).Expect(t, http.StatusCreated).JSON(t, &a)
	return a
}

// TestOAuth2Applications checks the CRUD of a user's OAuth2 applications:
// the secret is shown when made (and when remade by an edit), never again,
// and nobody else sees the application.
func TestOAuth2Applications(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	alice, bob := e.CreateUser("alice", false), e.CreateUser("bob", false)
	log := e.RecordEvents()
	a := oaCreate(t, e, apitest.Basic(alice), map[string]any{"name": "ci", "redirect_uris": []string{"https://ci.example/cb"}, "confidential_client": true})
	ev := log.ExpectKinds(t, "create application", events.OAuth2AppCreated)[0]
	if want := (events.OAuth2App{ID: a.ID, Name: "ci", ClientID: a.ClientID, Owner: events.Named{ID: alice.User.ID, Name: "alice"}}); ev.Payload != want || ev.ActorID != alice.User.ID {
		t.Errorf("event %+v by %d, want %+v", ev.Payload, ev.ActorID, want)
	}
	if a.ID == 0 || a.ClientID == "" || !strings.HasPrefix(a.ClientSecret, "gto_") || !a.ConfidentialClient || a.Created == "" {
		t.Fatalf("created %+v", a)
	}
	var got oauthApp
	e.Do("GET", "user/applications/oauth2/"+itoa(a.ID), nil, apitest.Basic(alice)).Expect(t, 200).JSON(t, &got)
	if got.ClientSecret != "" || got.ClientID != a.ClientID || got.RedirectURIs[0] != "https://ci.example/cb" {
		t.Fatalf("get %+v", got)
	}
	var list []oauthApp
	r := e.Do("GET", "user/applications/oauth2", nil, apitest.TokenCred(e.Token(alice, "read:user"))).Expect(t, 200)
	r.JSON(t, &list)
	if len(list) != 1 || list[0].ClientSecret != "" || r.Header.Get("X-Total-Count") != "1" {
		t.Fatalf("list %+v %v", list, r.Header)
	}
	// Nobody else sees it or changes it.
	e.Do("GET", "user/applications/oauth2/"+itoa(a.ID), nil, apitest.Basic(bob)).Expect(t, 404)
	e.Do("PATCH", "user/applications/oauth2/"+itoa(a.ID), map[string]any{"name": "x", "redirect_uris": []string{"https://x/"}}, apitest.Basic(bob)).Expect(t, 404)
	e.Do("DELETE", "user/applications/oauth2/"+itoa(a.ID), nil, apitest.Basic(bob)).Expect(t, 404)
	e.Do("GET", "user/applications/oauth2", nil, apitest.Basic(bob)).Expect(t, 200).JSON(t, &list)
	if len(list) != 0 {
		t.Fatalf("bob sees %+v", list)
	}
	// Editing issues a new secret, shown in that answer only.
	var ed oauthApp
	e.Do("PATCH", "user/applications/oauth2/"+itoa(a.ID), map[string]any{"name": "ci2", "redirect_uris": []string{"https://ci.example/cb2"}}, apitest.Basic(alice)).Expect(t, 200).JSON(t, &ed)
	if ed.Name != "ci2" || ed.ClientSecret == "" || ed.ClientSecret == a.ClientSecret || ed.ConfidentialClient || ed.ClientID != a.ClientID {
		t.Fatalf("edited %+v", ed)
	}
	log.ExpectKinds(t, "edit application", events.OAuth2AppEdited)
	// Bad input.
	e.Do("POST", "user/applications/oauth2", map[string]any{"redirect_uris": []string{"https://x/"}}, apitest.Basic(alice)).Expect(t, 422)
	e.Do("POST", "user/applications/oauth2", map[string]any{"name": "x"}, apitest.Basic(alice)).Expect(t, 422)
	e.Do("POST", "user/applications/oauth2", map[string]any{"name": "x", "redirect_uris": []string{"/relative"}}, apitest.Basic(alice)).Expect(t, 400)
	e.Do("GET", "user/applications/oauth2", nil, nil).Expect(t, 401)
	e.Do("POST", "user/applications/oauth2", map[string]any{"name": "x", "redirect_uris": []string{"https://x/"}}, apitest.TokenCred(e.Token(alice, "read:user"))).Expect(t, 403)
	e.Do("POST", "user/applications/oauth2", map[string]any{"name": "x", "redirect_uris": []string{"https://x/"}}, apitest.TokenCred(e.Token(alice, "write:user", "public-only"))).Expect(t, 403)
	log.ExpectKinds(t, "refused changes")
	// Deleting.
	e.Do("DELETE", "user/applications/oauth2/"+itoa(a.ID), nil, apitest.Basic(alice)).Expect(t, 204)
	log.ExpectKinds(t, "delete application", events.OAuth2AppDeleted)
	e.Do("GET", "user/applications/oauth2/"+itoa(a.ID), nil, apitest.Basic(alice)).Expect(t, 404)
	e.Do("DELETE", "user/applications/oauth2/"+itoa(a.ID), nil, apitest.Basic(alice)).Expect(t, 404)
}

// browser is a person's browser: it keeps cookies and stops at every
// redirect, so the test sees where it would go.
type browser struct {
	t *testing.T
	c *http.Client
}

func newBrowser(t *testing.T) *browser {
	jar, _ := cookiejar.New(nil)
	return &browser{t, &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

func (b *browser) do(req *http.Request) (*http.Response, string) {
	b.t.Helper()
	resp, err := b.c.Do(req)
	if err != nil {
		b.t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return resp, string(raw)
}

func (b *browser) get(u string) (*http.Response, string) {
	req, _ := http.NewRequest("GET", u, nil)
	return b.do(req)
}

var (
	csrfField  = regexp.MustCompile(`name="_csrf" value="([^"]+)"`)
	formAction = regexp.MustCompile(`<form method="post" action="([^"]+)"`)
)

// submit posts the page's form with fields (plus its CSRF token).
func (b *browser) submit(base, page string, fields url.Values) (*http.Response, string) {
	b.t.Helper()
	tok, act := csrfField.FindStringSubmatch(page), formAction.FindStringSubmatch(page)
	if tok == nil || act == nil {
		b.t.Fatalf("no form in %s", page)
	}
	fields.Set("_csrf", tok[1])
	req, _ := http.NewRequest("POST", html.UnescapeString(act[1]), strings.NewReader(fields.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	return b.do(req)
}

func expectStatus(t *testing.T, resp *http.Response, body string, status int) {
	t.Helper()
	if resp.StatusCode != status {
		t.Fatalf("status %d, want %d: %s", resp.StatusCode, status, body)
	}
}

// callback reads the code (or error) the provider sent back.
func callback(t *testing.T, resp *http.Response, body string, state string) url.Values {
	t.Helper()
	expectStatus(t, resp, body, http.StatusFound)
	u, err := url.Parse(resp.Header.Get("Location"))
	if err != nil || !strings.HasPrefix(u.String(), "http://127.0.0.1:9/cb") {
		t.Fatalf("redirected to %q", resp.Header.Get("Location"))
	}
	if u.Query().Get("state") != state {
		t.Fatalf("state %q", u.Query().Get("state"))
	}
	return u.Query()
}

func bearer(tok string) apitest.Cred {
	return func(r *http.Request) { r.Header.Set("Authorization", "Bearer "+tok) }
}

// TestOAuth2Flow drives the authorization-code flow with PKCE as a
// client (golang.org/x/oauth2) and a person's browser would: sign in,
// consent, exchange the code, use the token on the API, refresh it,
// revoke it; and the refusals on the way.
func TestOAuth2Flow(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	alice := e.CreateUser("alice", false)
	ctx := context.Background()
	app := oaCreate(t, e, apitest.Basic(alice), map[string]any{"name": "Desktop app", "redirect_uris": []string{"http://127.0.0.1:9/cb"}})
	conf := &oauth2.Config{
		ClientID:    app.ClientID,
		Endpoint:    oauth2.Endpoint{AuthURL: e.URL + "login/oauth/authorize", TokenURL: e.URL + "login/oauth/access_token", AuthStyle: oauth2.AuthStyleInParams},
		RedirectURL: "http://127.0.0.1:9/cb",
		Scopes:      []string{"openid", "profile", "email", "read:user"},
	}
	b := newBrowser(t)

	// A redirect URI the application did not register is refused to the
	// person, never followed.
	resp, body := b.get(strings.Replace(conf.AuthCodeURL("s0", oauth2.S256ChallengeOption(oauth2.GenerateVerifier())), "127.0.0.1%3A9", "evil.example", 1))
	expectStatus(t, resp, body, http.StatusBadRequest)
	// A public client must use PKCE.
	resp, body = b.get(conf.AuthCodeURL("s1"))
	if q := callback(t, resp, body, "s1"); q.Get("error") != "invalid_request" {
		t.Fatalf("without PKCE: %v", q)
	}

	// Sign in (a wrong password first), then consent.
	verifier := oauth2.GenerateVerifier()
	authURL := conf.AuthCodeURL("s2", oauth2.S256ChallengeOption(verifier), oauth2.SetAuthURLParam("nonce", "n-2"))
	resp, page := b.get(authURL)
	expectStatus(t, resp, page, http.StatusOK)
	if !strings.Contains(page, "Sign in") || !strings.Contains(page, "Desktop app") {
		t.Fatalf("sign-in page: %s", page)
	}
	if c := resp.Header.Get("Set-Cookie"); !strings.Contains(c, "HttpOnly") || !strings.Contains(c, "SameSite") {
		t.Fatalf("csrf cookie %q", c)
	}
	// Without the CSRF token the form is refused.
	req, _ := http.NewRequest("POST", authURL, strings.NewReader(url.Values{"action": {"signin"}, "user_name": {"alice"}, "password": {alice.Password}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, body = b.do(req)
	expectStatus(t, resp, body, http.StatusForbidden)
	resp, body = b.submit(e.URL, page, url.Values{"action": {"signin"}, "user_name": {"alice"}, "password": {"wrong"}})
	expectStatus(t, resp, body, http.StatusUnauthorized)
	resp, body = b.submit(e.URL, body, url.Values{"action": {"signin"}, "user_name": {"alice"}, "password": {alice.Password}})
	expectStatus(t, resp, body, http.StatusSeeOther)
	if c := resp.Header.Get("Set-Cookie"); !strings.Contains(c, "repohost_session=") || !strings.Contains(c, "HttpOnly") || !strings.Contains(c, "SameSite=Lax") {
		t.Fatalf("session cookie %q", c)
	}
	resp, page = b.get(resp.Header.Get("Location"))
	expectStatus(t, resp, page, http.StatusOK)
	if !strings.Contains(page, "Authorize Desktop app") || !strings.Contains(page, "read your user data") {
		t.Fatalf("consent page: %s", page)
	}
	resp, body = b.submit(e.URL, page, url.Values{"action": {"grant"}})
	code := callback(t, resp, body, "s2").Get("code")

	// A wrong verifier is refused (and the code is spent).
	if _, err := conf.Exchange(ctx, code, oauth2.VerifierOption(oauth2.GenerateVerifier())); !oaErr(err, "invalid_grant") {
		t.Fatalf("wrong verifier: %v", err)
	}
	// Consent given, a new request is answered at once.
	nextCode := func(state string) (string, string) {
		v := oauth2.GenerateVerifier()
		resp, body := b.get(conf.AuthCodeURL(state, oauth2.S256ChallengeOption(v), oauth2.SetAuthURLParam("nonce", "n-"+state)))
		return callback(t, resp, body, state).Get("code"), v
	}
	code, verifier = nextCode("s3")
	if _, err := conf.Exchange(ctx, code, oauth2.VerifierOption(verifier), oauth2.SetAuthURLParam("redirect_uri", "http://127.0.0.1:9/other")); !oaErr(err, "invalid_grant") {
		t.Fatalf("wrong redirect_uri at exchange: %v", err)
	}
	code, verifier = nextCode("s4")
	tok, err := conf.Exchange(ctx, code, oauth2.VerifierOption(verifier))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conf.Exchange(ctx, code, oauth2.VerifierOption(verifier)); !oaErr(err, "invalid_grant") {
		t.Fatalf("reused code: %v", err)
	}

	// The token works on the API, within its scope, in every form.
	var me struct {
		Login string `json:"login"`
	}
	e.Do("GET", "user", nil, bearer(tok.AccessToken)).Expect(t, 200).JSON(t, &me)
	if me.Login != "alice" {
		t.Fatalf("user %q", me.Login)
	}
	e.Do("GET", "user", nil, apitest.TokenCred(tok.AccessToken)).Expect(t, 200)
	e.Do("GET", "user", nil, func(r *http.Request) { r.SetBasicAuth(tok.AccessToken, "x-oauth-basic") }).Expect(t, 200)
	e.Do("POST", "user/emails", map[string]any{"emails": []string{"a2@example.com"}}, bearer(tok.AccessToken)).Expect(t, 403)
	e.Do("POST", "user/emails", map[string]any{"emails": []string{"a2@example.com"}}, func(r *http.Request) { r.SetBasicAuth(tok.AccessToken, "x") }).Expect(t, 403)
	e.Do("GET", "user/repos", nil, bearer(tok.AccessToken)).Expect(t, 403)
	// It cannot manage tokens.
	e.Do("GET", "users/alice/tokens", nil, bearer(tok.AccessToken)).Expect(t, 401)

	// The ID token verifies against the published keys.
	idToken, _ := tok.Extra("id_token").(string)
	var jwks jose.JSONWebKeySet
	oaGetJSON(t, e.URL+"login/oauth/keys", &jwks)
	var disc map[string]any
	oaGetJSON(t, e.URL+".well-known/openid-configuration", &disc)
	if disc["jwks_uri"] != e.URL+"login/oauth/keys" || disc["token_endpoint"] != conf.Endpoint.TokenURL {
		t.Fatalf("discovery %v", disc)
	}
	parsed, err := jwt.ParseSigned(idToken, []jose.SignatureAlgorithm{jose.RS256})
	if err != nil || len(jwks.Keys) != 1 {
		t.Fatalf("id token %q: %v (%d keys)", idToken, err, len(jwks.Keys))
	}
	if parsed.Headers[0].KeyID != jwks.Keys[0].KeyID {
		t.Fatalf("kid %q, keys %q", parsed.Headers[0].KeyID, jwks.Keys[0].KeyID)
	}
	var std jwt.Claims
	var extra struct {
		Nonce    string `json:"nonce"`
		Username string `json:"preferred_username"`
		Email    string `json:"email"`
	}
	if err := parsed.Claims(jwks.Keys[0].Key, &std, &extra); err != nil {
		t.Fatal(err)
	}
	if err := std.Validate(jwt.Expected{Issuer: disc["issuer"].(string), AnyAudience: jwt.Audience{app.ClientID}, Subject: itoa(alice.User.ID)}); err != nil {
		t.Fatal(err)
	}
	if extra.Nonce != "n-s4" || extra.Username != "alice" || extra.Email != "alice@example.com" {
		t.Fatalf("claims %+v", extra)
	}
	var info map[string]any
	e.Do("GET", "/login/oauth/userinfo", nil, bearer(tok.AccessToken)).Expect(t, 200).JSON(t, &info)
	if info["sub"] != itoa(alice.User.ID) || info["preferred_username"] != "alice" {
		t.Fatalf("userinfo %v", info)
	}
	e.Do("GET", "/login/oauth/userinfo", nil, bearer("nonsense")).Expect(t, 401)

	// Refreshing gives a new pair; the old refresh token used again
	// revokes the grant and everything issued under it.
	fresh, err := conf.TokenSource(ctx, &oauth2.Token{RefreshToken: tok.RefreshToken}).Token()
	if err != nil {
		t.Fatal(err)
	}
	if fresh.AccessToken == tok.AccessToken || fresh.RefreshToken == tok.RefreshToken {
		t.Fatal("refresh gave the same tokens")
	}
	e.Do("GET", "user", nil, bearer(fresh.AccessToken)).Expect(t, 200)
	if _, err := conf.TokenSource(ctx, &oauth2.Token{RefreshToken: tok.RefreshToken}).Token(); !oaErr(err, "invalid_grant") {
		t.Fatalf("reused refresh token: %v", err)
	}
	e.Do("GET", "user", nil, bearer(fresh.AccessToken)).Expect(t, 401)
	e.Do("GET", "user", nil, bearer(tok.AccessToken)).Expect(t, 401)
	if _, err := conf.TokenSource(ctx, &oauth2.Token{RefreshToken: fresh.RefreshToken}).Token(); !oaErr(err, "invalid_grant") {
		t.Fatalf("refresh after revocation: %v", err)
	}

	// The grant is gone: the person is asked again; cancelling sends
	// access_denied.
	resp, page = b.get(conf.AuthCodeURL("s5", oauth2.S256ChallengeOption(verifier)))
	expectStatus(t, resp, page, http.StatusOK)
	resp, body = b.submit(e.URL, page, url.Values{"action": {"deny"}})
	if q := callback(t, resp, body, "s5"); q.Get("error") != "access_denied" {
		t.Fatalf("deny: %v", q)
	}
	resp, page = b.get(conf.AuthCodeURL("s6", oauth2.S256ChallengeOption(verifier)))
	resp, body = b.submit(e.URL, page, url.Values{"action": {"grant"}})
	tok, err = conf.Exchange(ctx, callback(t, resp, body, "s6").Get("code"), oauth2.VerifierOption(verifier))
	if err != nil {
		t.Fatal(err)
	}
	// Revocation (RFC 7009) of the access token, then of the refresh
	// token.
	oaRevoke(t, e, url.Values{"client_id": {app.ClientID}, "token": {tok.AccessToken}})
	e.Do("GET", "user", nil, bearer(tok.AccessToken)).Expect(t, 401)
	fresh, err = conf.TokenSource(ctx, &oauth2.Token{RefreshToken: tok.RefreshToken}).Token()
	if err != nil {
		t.Fatal(err)
	}
	oaRevoke(t, e, url.Values{"client_id": {app.ClientID}, "token": {fresh.RefreshToken}})
	e.Do("GET", "user", nil, bearer(fresh.AccessToken)).Expect(t, 401)
}

// TestOAuth2ConfidentialClient exchanges codes as a confidential client,
// with its secret in the Basic header and in the form, and without PKCE.
func TestOAuth2ConfidentialClient(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	alice := e.CreateUser("alice", false)
	ctx := context.Background()
	app := oaCreate(t, e, apitest.Basic(alice), map[string]any{"name": "web", "redirect_uris": []string{"http://127.0.0.1:9/cb"},
		"confidential_client": true, "skip_secondary_authorization": true})
	b := newBrowser(t)
	var last string
	for i, style := range []oauth2.AuthStyle{oauth2.AuthStyleInHeader, oauth2.AuthStyleInParams} {
		conf := &oauth2.Config{ClientID: app.ClientID, ClientSecret: app.ClientSecret, RedirectURL: "http://127.0.0.1:9/cb",
			Endpoint: oauth2.Endpoint{AuthURL: e.URL + "login/oauth/authorize", TokenURL: e.URL + "login/oauth/access_token", AuthStyle: style}}
		state := "c" + itoa(int64(i))
		resp, page := b.get(conf.AuthCodeURL(state))
		if i == 0 {
			expectStatus(t, resp, page, http.StatusOK)
			resp, page = b.submit(e.URL, page, url.Values{"action": {"signin"}, "user_name": {"alice"}, "password": {alice.Password}})
			resp, page = b.get(resp.Header.Get("Location"))
		}
		// skip_secondary_authorization: no consent page.
		code := callback(t, resp, page, state).Get("code")
		bad := *conf
		bad.ClientSecret = "gto_wrong"
		if _, err := bad.Exchange(ctx, code); !oaErr(err, "invalid_client") {
			t.Fatalf("wrong secret: %v", err)
		}
		tok, err := conf.Exchange(ctx, code)
		if err != nil {
			t.Fatal(err)
		}
		if tok.Extra("id_token") != nil {
			t.Fatal("an ID token without the openid scope")
		}
		// Without a token scope the grant acts fully.
		e.Do("POST", "user/emails", map[string]any{"emails": []string{state + "@example.com"}}, bearer(tok.AccessToken)).Expect(t, 201)
		last = tok.AccessToken
	}
	// Removing the application takes its tokens with it.
	e.Do("DELETE", "user/applications/oauth2/"+itoa(app.ID), nil, apitest.Basic(alice)).Expect(t, 204)
	e.Do("GET", "user", nil, bearer(last)).Expect(t, 401)
}

func oaErr(err error, code string) bool {
	var re *oauth2.RetrieveError
	return errors.As(err, &re) && re.ErrorCode == code
}

func oaGetJSON(t *testing.T, u string, v any) {
	t.Helper()
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("GET %s: %d", u, resp.StatusCode)
	}
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		t.Fatal(err)
	}
}

func oaRevoke(t *testing.T, e *apitest.Env, form url.Values) {
	t.Helper()
	resp, err := http.PostForm(e.URL+"login/oauth/revoke", form)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("revoke: %d", resp.StatusCode)
	}
}

// TestOAuth2SignInThrottled checks that the sign-in page counts failed
// passwords with the API's throttle: past the limit even the right
// password is refused for a while.
func TestOAuth2SignInThrottled(t *testing.T) {
	t.Parallel()
	e := apitest.NewWithConfig(t, func(c *app.Config) { c.LoginFailures = 2 })
	alice := e.CreateUser("alice", false)
	client := oaCreate(t, e, apitest.Basic(alice), map[string]any{"name": "x", "redirect_uris": []string{"http://127.0.0.1:9/cb"}})
	conf := &oauth2.Config{ClientID: client.ClientID, RedirectURL: "http://127.0.0.1:9/cb",
		Endpoint: oauth2.Endpoint{AuthURL: e.URL + "login/oauth/authorize"}}
	b := newBrowser(t)
	_, page := b.get(conf.AuthCodeURL("s", oauth2.S256ChallengeOption(oauth2.GenerateVerifier())))
	for range 2 {
		var resp *http.Response
		resp, page = b.submit(e.URL, page, url.Values{"action": {"signin"}, "user_name": {"alice"}, "password": {"wrong"}})
		expectStatus(t, resp, page, http.StatusUnauthorized)
	}
	resp, page := b.submit(e.URL, page, url.Values{"action": {"signin"}, "user_name": {"alice"}, "password": {alice.Password}})
	expectStatus(t, resp, page, http.StatusTooManyRequests)
	// The API's password sign-in shares the count.
	e.Do("GET", "user", nil, apitest.Basic(alice)).Expect(t, http.StatusTooManyRequests)
}
