package apitest_test

import (
	"context"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"repohost/apitest"
	"repohost/gen/client/user"
	"repohost/impl/auth"
	"repohost/models"
	"repohost/store"
)

var hex40 = regexp.MustCompile(`^[0-9a-f]{40}$`)

// TestUserTokensGate checks who may list, create and delete a user's
// tokens: the user with a password, or a site admin; never a token.
func TestUserTokensGate(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	cs := utSetup(e)
	priv := e.CreateUser("priv", false)
	utUpdate(t, e, priv, func(u *store.User) { u.Visibility = store.VisibilityPrivate })
	utOrg(t, e, "someorg", store.VisibilityPublic, cs.alice)
	aliceToken := e.Token(cs.alice, "write:user")

	for _, tc := range []struct {
		name, target string
		cred         apitest.Cred
		status       int
		message      string
	}{
		{"anonymous", "alice", nil, 401, "token is required"},
		{"alice's own token", "alice", apitest.TokenCred(aliceToken), 401, "basic authentication"},
		{"alice's token as basic user", "alice", func(r *http.Request) { r.SetBasicAuth(aliceToken, "x") }, 401, "basic authentication"},
		{"admin's token", "alice", apitest.TokenCred(e.Token(e.Admin, "all")), 401, "basic authentication"},
		{"bob", "alice", apitest.Basic(cs.bob), 403, "site admin or be same"},
		{"bob on a hidden user", "priv", apitest.Basic(cs.bob), 404, "not found"},
		{"alice on an unknown user", "nobody", apitest.Basic(cs.alice), 404, "not found"},
		{"admin on an organization", "someorg", apitest.Basic(e.Admin), 404, "not found"},
		{"alice", "alice", apitest.Basic(cs.alice), 0, ""},
		{"admin", "alice", apitest.Basic(e.Admin), 0, ""},
		{"admin on a hidden user", "priv", apitest.Basic(e.Admin), 0, ""},
		{"admin with sudo as alice", "alice", func(r *http.Request) { apitest.Basic(e.Admin)(r); r.Header.Set("Sudo", "alice") }, 0, ""},
		{"admin with sudo as bob", "alice", func(r *http.Request) { apitest.Basic(e.Admin)(r); r.Header.Set("Sudo", "bob") }, 403, "site admin or be same"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			base := "users/" + tc.target + "/tokens"
			name := strings.ReplaceAll(tc.name, " ", "-")
			if tc.status != 0 {
				utErr(t, e.Do("GET", base, nil, tc.cred), tc.status, tc.message)
				utErr(t, e.Do("POST", base, map[string]any{"name": name, "scopes": []string{"all"}}, tc.cred), tc.status, tc.message)
				utErr(t, e.Do("DELETE", base+"/1", nil, tc.cred), tc.status, tc.message)
				return
			}
			e.Do("GET", base, nil, tc.cred).Expect(t, http.StatusOK)
			var tok models.AccessToken
			e.Do("POST", base, map[string]any{"name": name, "scopes": []string{"read:user"}}, tc.cred).Expect(t, http.StatusCreated).JSON(t, &tok)
			e.Do("DELETE", fmt.Sprintf("%s/%d", base, tok.ID), nil, tc.cred).Expect(t, http.StatusNoContent)
		})
	}
	// A token lacking the user scope is stopped by the scope check first.
	utErr(t, e.Do("GET", "users/alice/tokens", nil, apitest.TokenCred(e.Token(cs.alice, "read:repository"))), 403, "required=[read:user]")
}

func TestUserCreateToken(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	cs := utSetup(e)
	c, authw := e.Client(apitest.Basic(cs.alice))
	name := "ci"
	created, err := c.User.UserCreateToken(user.NewUserCreateTokenParams().WithUsername("alice").
		WithBody(&models.CreateAccessTokenOption{Name: &name, Scopes: []string{"read:repository", "write:repository", "read:user,read:issue"}}), authw)
	if err != nil {
		t.Fatal(err)
	}
	tok := created.Payload
	if !hex40.MatchString(tok.Token) || tok.TokenLastEight != tok.Token[32:] || tok.Name != "ci" || tok.ID == 0 {
		t.Fatalf("created token %+v", tok)
	}
	// Scopes come back normalised: write implies read.
	if strings.Join(tok.Scopes, ",") != "read:issue,write:repository,read:user" {
		t.Fatalf("scopes %v", tok.Scopes)
	}
	// Only the hash is stored.
	stored, err := e.DB.Tokens().FindByID(context.Background(), cs.alice.User.ID, tok.ID)
	if err != nil {
		t.Fatal(err)
	}
	if stored.TokenHash != auth.HashToken(tok.Token) || strings.Contains(stored.TokenHash, tok.Token) {
		t.Fatalf("stored hash %q", stored.TokenHash)
	}
	// The token works within its scopes.
	var me models.User
	e.Do("GET", "user", nil, apitest.TokenCred(tok.Token)).Expect(t, http.StatusOK).JSON(t, &me)
	if me.UserName != "alice" {
		t.Fatalf("token signs in as %s", me.UserName)
	}
	utErr(t, e.Do("POST", "user/emails", map[string]any{"emails": []string{"x@y.test"}}, apitest.TokenCred(tok.Token)),
		http.StatusForbidden, "required=[write:user]")

	post := func(body any) *apitest.Response {
		return e.Do("POST", "users/alice/tokens", body, apitest.Basic(cs.alice))
	}
	for _, tc := range []struct {
		name    string
		body    any
		status  int
		message string
	}{
		{"duplicate name", map[string]any{"name": "ci", "scopes": []string{"all"}}, 400, "has been used already"},
		{"no scopes", map[string]any{"name": "a"}, 400, "access token must have a scope"},
		{"empty scopes", map[string]any{"name": "b", "scopes": []string{}}, 400, "access token must have a scope"},
		{"only public-only", map[string]any{"name": "c", "scopes": []string{"public-only"}}, 400, "access token must have a scope"},
		{"unknown scope", map[string]any{"name": "d", "scopes": []string{"read:everything"}}, 400, "read:everything"},
		{"bad level", map[string]any{"name": "e", "scopes": []string{"delete:user"}}, 400, "invalid access token scope"},
		{"missing name", map[string]any{"scopes": []string{"all"}}, 422, "Name"},
		{"empty name", map[string]any{"name": "  ", "scopes": []string{"all"}}, 422, "[Name]: Required"},
		{"no body", nil, 422, "Name"},
		{"name too long", map[string]any{"name": strings.Repeat("n", 256), "scopes": []string{"all"}}, 422, "Name"},
		{"malformed JSON", `{"name":`, 422, ""},
	} {
		t.Run(tc.name, func(t *testing.T) { utErr(t, post(tc.body), tc.status, tc.message) })
	}

	// "all" swallows the rest; public-only is kept.
	var all models.AccessToken
	post(map[string]any{"name": "wide", "scopes": []string{"read:user", "all", "public-only"}}).Expect(t, 201).JSON(t, &all)
	if strings.Join(all.Scopes, ",") != "all,public-only" {
		t.Fatalf("scopes %v", all.Scopes)
	}
	// The same name is fine for another user; an admin may mint for alice.
	e.Do("POST", "users/bob/tokens", map[string]any{"name": "ci", "scopes": []string{"all"}}, apitest.Basic(cs.bob)).Expect(t, 201)
	var adminMade models.AccessToken
	e.Do("POST", "users/alice/tokens", map[string]any{"name": "by-admin", "scopes": []string{"read:user"}}, apitest.Basic(e.Admin)).
		Expect(t, 201).JSON(t, &adminMade)
	e.Do("GET", "user", nil, apitest.TokenCred(adminMade.Token)).Expect(t, 200).JSON(t, &me)
	if me.UserName != "alice" {
		t.Fatalf("admin-made token signs in as %s", me.UserName)
	}
}

func TestUserListTokens(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	cs := utSetup(e)
	for i := 0; i < 5; i++ {
		e.Do("POST", "users/alice/tokens", map[string]any{"name": fmt.Sprintf("t%d", i), "scopes": []string{"read:user", "write:issue"}},
			apitest.Basic(cs.alice)).Expect(t, 201)
	}
	e.Do("POST", "users/bob/tokens", map[string]any{"name": "bobs", "scopes": []string{"all"}}, apitest.Basic(cs.bob)).Expect(t, 201)

	c, authw := e.Client(apitest.Basic(cs.alice))
	limit := int64(2)
	ok, err := c.User.UserGetTokens(user.NewUserGetTokensParams().WithUsername("alice").WithLimit(&limit), authw)
	if err != nil {
		t.Fatal(err)
	}
	if ok.XTotalCount != 5 || len(ok.Payload) != 2 || !strings.Contains(ok.Link, `rel="next"`) || !strings.Contains(ok.Link, `rel="last"`) {
		t.Fatalf("page 1: %d items, total %d, link %q", len(ok.Payload), ok.XTotalCount, ok.Link)
	}
	// Newest first; never the secret.
	if ok.Payload[0].Name != "t4" || ok.Payload[1].Name != "t3" {
		t.Fatalf("order %s,%s", ok.Payload[0].Name, ok.Payload[1].Name)
	}
	for _, tok := range ok.Payload {
		if tok.Token != "" || len(tok.TokenLastEight) != 8 || strings.Join(tok.Scopes, ",") != "write:issue,read:user" || tok.Created == nil {
			t.Fatalf("listed token %+v", tok)
		}
	}
	r := e.Do("GET", "users/alice/tokens?limit=2&page=3", nil, apitest.Basic(e.Admin)).Expect(t, 200)
	var last []*models.AccessToken
	r.JSON(t, &last)
	if len(last) != 1 || last[0].Name != "t0" || strings.Contains(r.Header.Get("Link"), `rel="next"`) {
		t.Fatalf("last page %d items, link %q", len(last), r.Header.Get("Link"))
	}
	// The raw body never carries a secret either.
	if strings.Contains(string(r.Body), `"sha1":"`) && !strings.Contains(string(r.Body), `"sha1":""`) {
		t.Fatalf("secret leaked: %s", r.Body)
	}
	// Using a token records its last use.
	var mine models.AccessToken
	e.Do("POST", "users/bob/tokens", map[string]any{"name": "used", "scopes": []string{"read:user"}}, apitest.Basic(cs.bob)).Expect(t, 201).JSON(t, &mine)
	e.Do("GET", "user", nil, apitest.TokenCred(mine.Token)).Expect(t, 200)
	var bobs []*models.AccessToken
	e.Do("GET", "users/bob/tokens", nil, apitest.Basic(cs.bob)).Expect(t, 200).JSON(t, &bobs)
	if len(bobs) != 2 || bobs[0].Name != "used" || bobs[0].Updated == nil || bobs[1].Updated != nil {
		t.Fatalf("bob's tokens %+v %+v", bobs[0], bobs[1])
	}
}

func TestUserDeleteToken(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	cs := utSetup(e)
	mk := func(a *apitest.Account, name string) models.AccessToken {
		var tok models.AccessToken
		e.Do("POST", "users/"+a.User.Name+"/tokens", map[string]any{"name": name, "scopes": []string{"read:user"}}, apitest.Basic(a)).
			Expect(t, 201).JSON(t, &tok)
		return tok
	}
	byID := mk(cs.alice, "by-id")
	byName := mk(cs.alice, "by name")
	numeric := mk(cs.alice, "987654")
	bobs := mk(cs.bob, "bobs")

	e.Do("DELETE", fmt.Sprintf("users/alice/tokens/%d", byID.ID), nil, apitest.Basic(cs.alice)).Expect(t, 204)
	utErr(t, e.Do("GET", "user", nil, apitest.TokenCred(byID.Token)), 401, "invalid username, password or token")
	// By name, including a name that looks like a number.
	e.Do("DELETE", "users/alice/tokens/by%20name", nil, apitest.Basic(cs.alice)).Expect(t, 204)
	e.Do("DELETE", "users/alice/tokens/987654", nil, apitest.Basic(cs.alice)).Expect(t, 204)
	utErr(t, e.Do("GET", "user", nil, apitest.TokenCred(numeric.Token)), 401, "")
	utErr(t, e.Do("GET", "user", nil, apitest.TokenCred(byName.Token)), 401, "")
	// Gone, unknown, or someone else's: 404, and bob's token survives.
	utErr(t, e.Do("DELETE", fmt.Sprintf("users/alice/tokens/%d", byID.ID), nil, apitest.Basic(cs.alice)), 404, "does not exist")
	utErr(t, e.Do("DELETE", "users/alice/tokens/nothing", nil, apitest.Basic(cs.alice)), 404, "does not exist")
	utErr(t, e.Do("DELETE", fmt.Sprintf("users/alice/tokens/%d", bobs.ID), nil, apitest.Basic(cs.alice)), 404, "does not exist")
	utErr(t, e.Do("DELETE", "users/alice/tokens/bobs", nil, apitest.Basic(cs.alice)), 404, "does not exist")
	e.Do("GET", "user", nil, apitest.TokenCred(bobs.Token)).Expect(t, 200)
	// A site admin may revoke anyone's token.
	e.Do("DELETE", "users/bob/tokens/bobs", nil, apitest.Basic(e.Admin)).Expect(t, 204)
	utErr(t, e.Do("GET", "user", nil, apitest.TokenCred(bobs.Token)), 401, "")
}
