package apitest_test

import (
	"testing"

	"code.gitea.io/sdk/gitea"

	"repohost/apitest"
)

// sdkClient is the official Gitea SDK pointed at e, signed in as the admin.
func sdkClient(t *testing.T, e *apitest.Env, opts ...gitea.ClientOption) *gitea.Client {
	t.Helper()
	if len(opts) == 0 {
		opts = []gitea.ClientOption{gitea.SetBasicAuth(e.Admin.User.Name, e.Admin.Password)}
	}
	c, err := gitea.NewClient(e.Server.URL, opts...)
	if err != nil {
		t.Fatalf("SDK client: %v", err)
	}
	return c
}

// TestSDKFoundationFlow drives the server with the unchanged official SDK:
// an admin creates a user, the user mints a token and, with it, creates an
// organization and repositories and reads everything back.
func TestSDKFoundationFlow(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	admin := sdkClient(t, e)

	no := false
	u, resp, err := admin.AdminCreateUser(gitea.CreateUserOption{
		Username: "sdkuser", Email: "sdkuser@example.com", Password: "sdk-password-1", MustChangePassword: &no,
	})
	if err != nil || resp.StatusCode != 201 {
		t.Fatalf("AdminCreateUser: %v (%v)", err, resp)
	}
	if u.UserName != "sdkuser" || u.ID == 0 || u.Email != "sdkuser@example.com" {
		t.Fatalf("created user %+v", u)
	}
	// A duplicate answers 422 with a message.
	if _, resp, err = admin.AdminCreateUser(gitea.CreateUserOption{
		Username: "sdkuser", Email: "other@example.com", Password: "x-password-1", MustChangePassword: &no,
	}); err == nil || resp.StatusCode != 422 {
		t.Fatalf("duplicate user: %v (%v)", err, resp)
	}

	basic := sdkClient(t, e, gitea.SetBasicAuth("sdkuser", "sdk-password-1"))
	tok, resp, err := basic.CreateAccessToken(gitea.CreateAccessTokenOption{
		Name: "ci", Scopes: []gitea.AccessTokenScope{gitea.AccessTokenScopeAll},
	})
	if err != nil || resp.StatusCode != 201 || len(tok.Token) != 40 {
		t.Fatalf("CreateAccessToken: %v (%v) %+v", err, resp, tok)
	}
	tokens, _, err := basic.ListAccessTokens(gitea.ListAccessTokensOptions{})
	if err != nil || len(tokens) != 1 || tokens[0].Name != "ci" || tokens[0].Token != "" {
		t.Fatalf("ListAccessTokens: %v %+v", err, tokens)
	}

	c := sdkClient(t, e, gitea.SetToken(tok.Token))
	me, _, err := c.GetMyUserInfo()
	if err != nil || me.UserName != "sdkuser" {
		t.Fatalf("GetMyUserInfo: %v %+v", err, me)
	}

	org, resp, err := c.CreateOrg(gitea.CreateOrgOption{Name: "sdkorg", FullName: "SDK Org"})
	if err != nil || resp.StatusCode != 201 || org.UserName != "sdkorg" || org.Visibility != "public" {
		t.Fatalf("CreateOrg: %v (%v) %+v", err, resp, org)
	}
	if got, _, err := c.GetOrg("sdkorg"); err != nil || got.FullName != "SDK Org" {
		t.Fatalf("GetOrg: %v %+v", err, got)
	}
	member, _, err := c.CheckOrgMembership("sdkorg", "sdkuser")
	if err != nil || !member {
		t.Fatalf("CheckOrgMembership: %v %v", err, member)
	}

	repo, resp, err := c.CreateRepo(gitea.CreateRepoOption{Name: "tool", Description: "a tool", AutoInit: true})
	if err != nil || resp.StatusCode != 201 {
		t.Fatalf("CreateRepo: %v (%v)", err, resp)
	}
	if repo.FullName != "sdkuser/tool" || repo.Empty || repo.DefaultBranch != "main" || !repo.Permissions.Admin {
		t.Fatalf("created repo %+v", repo)
	}
	if _, resp, err = c.CreateRepo(gitea.CreateRepoOption{Name: "tool"}); err == nil || resp.StatusCode != 409 {
		t.Fatalf("duplicate repo: %v (%v)", err, resp)
	}
	if _, resp, err = c.CreateRepo(gitea.CreateRepoOption{Name: "bad/name"}); err == nil || resp.StatusCode != 422 {
		t.Fatalf("invalid repo name: %v (%v)", err, resp)
	}
	orgRepo, resp, err := c.CreateOrgRepo("sdkorg", gitea.CreateRepoOption{Name: "service", Private: true})
	if err != nil || resp.StatusCode != 201 || !orgRepo.Private || orgRepo.Owner.UserName != "sdkorg" {
		t.Fatalf("CreateOrgRepo: %v (%v) %+v", err, resp, orgRepo)
	}

	got, _, err := c.GetRepo("sdkuser", "tool")
	if err != nil || got.ID != repo.ID || got.Description != "a tool" {
		t.Fatalf("GetRepo: %v %+v", err, got)
	}
	desc := "a better tool"
	edited, _, err := c.EditRepo("sdkuser", "tool", gitea.EditRepoOption{Description: &desc})
	if err != nil || edited.Description != desc {
		t.Fatalf("EditRepo: %v %+v", err, edited)
	}
	mine, resp, err := c.ListMyRepos(gitea.ListReposOptions{})
	if err != nil || len(mine) != 2 || resp.Header.Get("X-Total-Count") != "2" {
		t.Fatalf("ListMyRepos: %v %d %v", err, len(mine), resp.Header)
	}
	orgRepos, _, err := c.ListOrgRepos("sdkorg", gitea.ListOrgReposOptions{})
	if err != nil || len(orgRepos) != 1 || orgRepos[0].Name != "service" {
		t.Fatalf("ListOrgRepos: %v %+v", err, orgRepos)
	}
	found, _, err := c.SearchRepos(gitea.SearchRepoOptions{Keyword: "tool"})
	if err != nil || len(found) != 1 {
		t.Fatalf("SearchRepos: %v %+v", err, found)
	}

	// The private org repository is invisible (404) to anonymous callers.
	anon := sdkClient(t, e, gitea.SetToken(""))
	if _, resp, err = anon.GetRepo("sdkorg", "service"); err == nil || resp.StatusCode != 404 {
		t.Fatalf("anonymous GetRepo of a private repo: %v (%v)", err, resp)
	}
	if _, resp, err = c.GetRepo("sdkuser", "missing"); err == nil || resp.StatusCode != 404 {
		t.Fatalf("GetRepo missing: %v (%v)", err, resp)
	}

	if resp, err = c.DeleteRepo("sdkuser", "tool"); err != nil || resp.StatusCode != 204 {
		t.Fatalf("DeleteRepo: %v (%v)", err, resp)
	}
	if resp, err = basic.DeleteAccessToken(tok.ID); err != nil || resp.StatusCode != 204 {
		t.Fatalf("DeleteAccessToken: %v (%v)", err, resp)
	}
	if _, resp, err = c.GetMyUserInfo(); err == nil || resp.StatusCode != 401 {
		t.Fatalf("revoked token still works: %v (%v)", err, resp)
	}
}
