package apitest_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"repohost/apitest"
	"repohost/gen/client/user"
	"repohost/models"
	"repohost/store"
	"repohost/store/gitstore"
)

// Helpers of the user-area tests. They build fixtures straight in the store,
// so these tests do not depend on the organization and repository APIs.

// utOrg makes an organization with the given visibility; owner (if any)
// becomes its owner.
func utOrg(t *testing.T, e *apitest.Env, name string, vis store.Visibility, owner *apitest.Account) *store.User {
	t.Helper()
	o := &store.User{Name: name, Type: store.UserTypeOrganization, IsActive: true, Visibility: vis, MaxRepoCreation: -1}
	if err := e.DB.Users().Create(context.Background(), o); err != nil {
		t.Fatalf("create org %s: %v", name, err)
	}
	if owner != nil {
		utMember(t, e, o, owner, true)
	}
	return o
}

// utMember adds a to org.
func utMember(t *testing.T, e *apitest.Env, org *store.User, a *apitest.Account, owner bool) {
	t.Helper()
	e.AddOrgMember(t, org.ID, a.User.ID, owner, true)
}

// utRepo makes a repository row (and, with git, its bare directory).
func utRepo(t *testing.T, e *apitest.Env, owner *store.User, name string, private, git bool) *store.Repository {
	t.Helper()
	r := &store.Repository{OwnerID: owner.ID, Name: name, IsPrivate: private, IsEmpty: true, DefaultBranch: "main",
		ObjectFormat: "sha1", HasIssues: true, HasWiki: true, HasPullRequests: true, HasCode: true}
	if err := e.DB.Repos().Create(context.Background(), r); err != nil {
		t.Fatalf("create repo %s/%s: %v", owner.Name, name, err)
	}
	if git {
		if _, err := e.Deps.Git.Create(owner.Name, name, gitstore.InitOptions{DefaultBranch: "main"}); err != nil {
			t.Fatalf("create git dir %s/%s: %v", owner.Name, name, err)
		}
	}
	return r
}

// utUpdate changes a's account in the store and keeps a.User in step.
func utUpdate(t *testing.T, e *apitest.Env, a *apitest.Account, fn func(u *store.User)) {
	t.Helper()
	fn(a.User)
	if err := e.DB.Users().Update(context.Background(), a.User); err != nil {
		t.Fatal(err)
	}
}

// utErr checks an error answer: its status and a {message, url} body whose
// message contains want.
func utErr(t *testing.T, r *apitest.Response, status int, want string) {
	t.Helper()
	r.Expect(t, status)
	var body struct {
		Message *string `json:"message"`
		URL     *string `json:"url"`
	}
	r.JSON(t, &body)
	if body.Message == nil || body.URL == nil || *body.URL == "" {
		t.Fatalf("error body %s lacks message or url", r.Body)
	}
	if !strings.Contains(*body.Message, want) {
		t.Fatalf("message %q does not contain %q", *body.Message, want)
	}
}

// utLogins lists the "login" of each user in a JSON array body.
func utLogins(t *testing.T, users []*models.User) []string {
	t.Helper()
	out := make([]string, 0, len(users))
	for _, u := range users {
		out = append(out, u.UserName)
	}
	return out
}

func utJoin(names []string) string { return strings.Join(names, ",") }

// utCallers are the usual callers: anonymous, alice (the subject of most
// tests), bob (another user) and the site admin.
type utCallers struct {
	alice, bob *apitest.Account
	all        map[string]apitest.Cred
}

func utSetup(e *apitest.Env) utCallers {
	alice := e.CreateUser("alice", false)
	bob := e.CreateUser("bob", false)
	return utCallers{alice: alice, bob: bob, all: map[string]apitest.Cred{
		"anonymous": nil,
		"alice":     apitest.Basic(alice),
		"bob":       apitest.Basic(bob),
		"admin":     apitest.Basic(e.Admin),
	}}
}

func TestUserGetCurrent(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	cs := utSetup(e)

	utErr(t, e.Do("GET", "user", nil, nil), http.StatusUnauthorized, "token is required")

	c, authw := e.Client(apitest.Basic(cs.alice))
	ok, err := c.User.UserGetCurrent(user.NewUserGetCurrentParams(), authw)
	if err != nil {
		t.Fatal(err)
	}
	me := ok.Payload
	if me.UserName != "alice" || me.ID != cs.alice.User.ID || string(me.Email) != "alice@example.com" || me.Type != "User" ||
		!me.IsActive || me.IsAdmin || me.Visibility != "public" || me.Created == nil || me.LastLogin != nil {
		t.Fatalf("GET /user: %+v", me)
	}

	// Tokens work with the user scope and are refused without it.
	e.Do("GET", "user", nil, apitest.TokenCred(e.Token(cs.alice, "read:user"))).Expect(t, http.StatusOK)
	utErr(t, e.Do("GET", "user", nil, apitest.TokenCred(e.Token(cs.alice, "read:repository"))), http.StatusForbidden, "required=[read:user]")

	// Sudo: a site admin acts as alice; anyone else is refused; an unknown
	// target is 404.
	sudo := func(base apitest.Cred, target string) apitest.Cred {
		return func(r *http.Request) { base(r); r.Header.Set("Sudo", target) }
	}
	var got models.User
	e.Do("GET", "user", nil, sudo(apitest.Basic(e.Admin), "alice")).Expect(t, http.StatusOK).JSON(t, &got)
	if got.UserName != "alice" {
		t.Fatalf("sudo as alice answered %s", got.UserName)
	}
	e.Do("GET", "user?sudo=alice", nil, apitest.Basic(e.Admin)).Expect(t, http.StatusOK).JSON(t, &got)
	if got.UserName != "alice" {
		t.Fatalf("?sudo=alice answered %s", got.UserName)
	}
	e.Do("GET", "user", nil, sudo(apitest.Basic(cs.bob), "alice")).Expect(t, http.StatusForbidden)
	e.Do("GET", "user", nil, sudo(apitest.Basic(e.Admin), "nobody")).Expect(t, http.StatusNotFound)
}

func TestUserGetVisibility(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	cs := utSetup(e)
	lim := e.CreateUser("lim", false)
	utUpdate(t, e, lim, func(u *store.User) { u.Visibility = store.VisibilityLimited })
	priv := e.CreateUser("priv", false)
	utUpdate(t, e, priv, func(u *store.User) { u.Visibility = store.VisibilityPrivate })
	restricted := e.CreateUser("restricted", false)
	utUpdate(t, e, restricted, func(u *store.User) { u.Restricted = true })
	privOrg := utOrg(t, e, "privorg", store.VisibilityPrivate, cs.alice)
	utOrg(t, e, "puborg", store.VisibilityPublic, nil)

	callers := map[string]apitest.Cred{
		"anonymous": nil, "alice": apitest.Basic(cs.alice), "bob": apitest.Basic(cs.bob),
		"admin": apitest.Basic(e.Admin), "restricted": apitest.Basic(restricted),
		"priv": apitest.Basic(priv), "public-only token": apitest.TokenCred(e.Token(cs.bob, "public-only", "read:user")),
	}
	// want[target][caller] is the status; absent means 200.
	want := map[string]map[string]int{
		"alice":   {},
		"lim":     {"anonymous": 404, "restricted": 404, "public-only token": 404},
		"priv":    {"anonymous": 404, "alice": 404, "bob": 404, "restricted": 404, "public-only token": 404},
		"privorg": {"anonymous": 404, "bob": 404, "restricted": 404, "priv": 404, "public-only token": 404},
		"puborg":  {},
		"nobody":  {"anonymous": 404, "alice": 404, "bob": 404, "admin": 404, "restricted": 404, "priv": 404, "public-only token": 404},
	}
	for target, exceptions := range want {
		for caller, cred := range callers {
			status, ok := exceptions[caller]
			if !ok {
				status = http.StatusOK
			}
			t.Run(target+"/"+caller, func(t *testing.T) {
				r := e.Do("GET", "users/"+target, nil, cred)
				if status == http.StatusNotFound {
					utErr(t, r, status, "not found")
					return
				}
				r.Expect(t, status)
			})
		}
	}

	var org models.User
	e.Do("GET", "users/privorg", nil, apitest.Basic(cs.alice)).Expect(t, http.StatusOK).JSON(t, &org)
	if org.Type != "Organization" || org.ID != privOrg.ID || org.Visibility != "private" {
		t.Fatalf("organization as a user: %+v", org)
	}
}

// TestUserGetFields checks which fields a caller sees: the real address
// only when signed in (and not kept private), account details only for the
// user themself and site admins.
func TestUserGetFields(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	cs := utSetup(e)
	utUpdate(t, e, cs.alice, func(u *store.User) { u.LoginName = "alice-ldap"; u.Language = "de-DE" })
	keeper := e.CreateUser("keeper", false)
	utUpdate(t, e, keeper, func(u *store.User) { u.KeepEmailPrivate = true })

	for _, tc := range []struct {
		caller   string
		cred     apitest.Cred
		target   string
		email    string
		detailed bool
	}{
		{"anonymous", nil, "alice", "alice@noreply.localhost", false},
		{"bob", apitest.Basic(cs.bob), "alice", "alice@example.com", false},
		{"alice", apitest.Basic(cs.alice), "alice", "alice@example.com", true},
		{"admin", apitest.Basic(e.Admin), "alice", "alice@example.com", true},
		{"bob", apitest.Basic(cs.bob), "keeper", "keeper@noreply.localhost", false},
		{"keeper", apitest.Basic(keeper), "keeper", "keeper@example.com", true},
		{"admin", apitest.Basic(e.Admin), "keeper", "keeper@example.com", true},
	} {
		t.Run(tc.caller+"/"+tc.target, func(t *testing.T) {
			c, authw := e.Client(tc.cred)
			ok, err := c.User.UserGet(user.NewUserGetParams().WithUsername(tc.target), authw)
			if err != nil {
				t.Fatal(err)
			}
			u := ok.Payload
			if string(u.Email) != tc.email {
				t.Fatalf("email %q, want %q", u.Email, tc.email)
			}
			if u.IsActive != tc.detailed {
				t.Fatalf("active=%v shown to %s", u.IsActive, tc.caller)
			}
			if tc.target == "alice" && (u.LoginName == "alice-ldap") != tc.detailed || (u.Language == "de-DE") != (tc.detailed && tc.target == "alice") {
				t.Fatalf("login_name %q / language %q shown to %s", u.LoginName, u.Language, tc.caller)
			}
		})
	}
	// GET /users/{name} matches the name case-insensitively.
	var u models.User
	e.Do("GET", "users/ALICE", nil, nil).Expect(t, http.StatusOK).JSON(t, &u)
	if u.UserName != "alice" {
		t.Fatalf("case-insensitive lookup gave %q", u.UserName)
	}
}

func TestUserSearch(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	cs := utSetup(e)
	utUpdate(t, e, cs.alice, func(u *store.User) { u.FullName = "Alice Liddell" })
	lim := e.CreateUser("lim", false)
	utUpdate(t, e, lim, func(u *store.User) { u.Visibility = store.VisibilityLimited })
	priv := e.CreateUser("priv", false)
	utUpdate(t, e, priv, func(u *store.User) { u.Visibility = store.VisibilityPrivate })
	restricted := e.CreateUser("restricted", false)
	utUpdate(t, e, restricted, func(u *store.User) { u.Restricted = true; u.Visibility = store.VisibilityLimited })
	utOrg(t, e, "someorg", store.VisibilityPublic, cs.alice)

	search := func(t *testing.T, query string, cred apitest.Cred) (*models.UserSearchResults, *apitest.Response) {
		t.Helper()
		r := e.Do("GET", "users/search"+query, nil, cred).Expect(t, http.StatusOK)
		var out models.UserSearchResults
		r.JSON(t, &out)
		if !out.Ok {
			t.Fatalf("ok is false: %s", r.Body)
		}
		return &out, r
	}

	// Visibility: organizations never appear; each caller sees what it may.
	for caller, tc := range map[string]struct {
		cred apitest.Cred
		want string
	}{
		"anonymous":         {nil, "admin,alice,bob"},
		"alice":             {apitest.Basic(cs.alice), "admin,alice,bob,lim,restricted"},
		"priv":              {apitest.Basic(priv), "admin,alice,bob,lim,priv,restricted"},
		"restricted":        {apitest.Basic(restricted), "admin,alice,bob,restricted"},
		"admin":             {apitest.Basic(e.Admin), "admin,alice,bob,lim,priv,restricted"},
		"public-only token": {apitest.TokenCred(e.Token(priv, "public-only", "read:user")), "admin,alice,bob"},
	} {
		t.Run("visibility/"+caller, func(t *testing.T) {
			out, r := search(t, "", tc.cred)
			if got := utJoin(utLogins(t, out.Data)); got != tc.want {
				t.Fatalf("got %s, want %s", got, tc.want)
			}
			if r.Header.Get("X-Total-Count") != fmt.Sprint(len(out.Data)) {
				t.Fatalf("X-Total-Count %q for %d users", r.Header.Get("X-Total-Count"), len(out.Data))
			}
		})
	}

	// The keyword matches the login and full name case-insensitively.
	for q, want := range map[string]string{"?q=ALI": "alice", "?q=liddell": "alice", "?q=zzz": "", "?q=%25": "", "?q=_": ""} {
		out, _ := search(t, q, nil)
		if got := utJoin(utLogins(t, out.Data)); got != want {
			t.Fatalf("%s: got %q, want %q", q, got, want)
		}
	}
	// Addresses match only for signed-in callers, and never an address its
	// owner keeps private (except for themself and site admins).
	utUpdate(t, e, cs.bob, func(u *store.User) { u.Email = "robert@mail.test"; u.KeepEmailPrivate = true })
	utUpdate(t, e, cs.alice, func(u *store.User) { u.Email = "wonder@mail.test" })
	for _, tc := range []struct {
		name string
		cred apitest.Cred
		want string
	}{
		{"anonymous", nil, ""},
		{"alice", apitest.Basic(cs.alice), "alice"},
		{"bob", apitest.Basic(cs.bob), "alice,bob"},
		{"admin", apitest.Basic(e.Admin), "alice,bob"},
	} {
		out, _ := search(t, "?q=mail.test", tc.cred)
		if got := utJoin(utLogins(t, out.Data)); got != tc.want {
			t.Fatalf("email search as %s: got %q, want %q", tc.name, got, tc.want)
		}
	}

	// uid keeps one user, still subject to visibility.
	out, _ := search(t, fmt.Sprintf("?uid=%d", cs.bob.User.ID), nil)
	if utJoin(utLogins(t, out.Data)) != "bob" {
		t.Fatalf("uid search: %v", utLogins(t, out.Data))
	}
	out, _ = search(t, fmt.Sprintf("?uid=%d", priv.User.ID), nil)
	if len(out.Data) != 0 {
		t.Fatalf("uid search found a private user for anonymous")
	}

	// Paging over the admin's view (6 users): page 2 of size 4 holds 2.
	c, authw := e.Client(apitest.Basic(e.Admin))
	page, limit := int64(2), int64(4)
	ok, err := c.User.UserSearch(user.NewUserSearchParams().WithPage(&page).WithLimit(&limit), authw)
	if err != nil {
		t.Fatal(err)
	}
	if got := utJoin(utLogins(t, ok.Payload.Data)); got != "priv,restricted" || ok.XTotalCount != 6 {
		t.Fatalf("page 2: %s total %d", got, ok.XTotalCount)
	}
	if !strings.Contains(ok.Link, `page=1>; rel="first"`) || !strings.Contains(ok.Link, `rel="prev"`) || strings.Contains(ok.Link, `rel="next"`) {
		t.Fatalf("Link %q", ok.Link)
	}
	// A limit above the cap is capped; page 0 means 1.
	all, r := search(t, "?limit=500&page=0", nil)
	if len(all.Data) != 3 || r.Header.Get("X-Total-Count") != "3" || strings.Contains(r.Header.Get("Link"), `rel="next"`) {
		t.Fatalf("%d users, headers %v", len(all.Data), r.Header)
	}
}

func TestUserListRepos(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	cs := utSetup(e)
	carol := e.CreateUser("carol", false)
	pub := utRepo(t, e, cs.alice.User, "pub", false, false)
	utRepo(t, e, cs.alice.User, "secret", true, false)
	utRepo(t, e, cs.alice.User, "zeta", false, false)
	org := utOrg(t, e, "team", store.VisibilityPublic, cs.alice)
	utMember(t, e, org, cs.bob, false)
	utRepo(t, e, org, "opub", false, false)
	utRepo(t, e, org, "opriv", true, false)
	hidden := e.CreateUser("hidden", false)
	utUpdate(t, e, hidden, func(u *store.User) { u.Visibility = store.VisibilityPrivate })
	utRepo(t, e, hidden.User, "h", false, false)

	type perm struct{ admin, push, pull bool }
	list := func(t *testing.T, path string, cred apitest.Cred) ([]*models.Repository, *apitest.Response) {
		t.Helper()
		r := e.Do("GET", path, nil, cred).Expect(t, http.StatusOK)
		var repos []*models.Repository
		r.JSON(t, &repos)
		return repos, r
	}
	names := func(repos []*models.Repository) string {
		var out []string
		for _, r := range repos {
			out = append(out, r.Name)
		}
		return utJoin(out)
	}
	for _, tc := range []struct {
		owner, caller string
		cred          apitest.Cred
		want          string
		perm          perm // the permission on the first repository
	}{
		{"alice", "anonymous", nil, "pub,zeta", perm{pull: true}},
		{"alice", "alice", apitest.Basic(cs.alice), "pub,secret,zeta", perm{true, true, true}},
		{"alice", "bob", apitest.Basic(cs.bob), "pub,zeta", perm{pull: true}},
		{"alice", "admin", apitest.Basic(e.Admin), "pub,secret,zeta", perm{true, true, true}},
		{"team", "anonymous", nil, "opub", perm{pull: true}},
		{"team", "alice (org owner)", apitest.Basic(cs.alice), "opub,opriv", perm{true, true, true}},
		{"team", "bob (member)", apitest.Basic(cs.bob), "opub,opriv", perm{pull: true}},
		{"team", "carol", apitest.Basic(carol), "opub", perm{pull: true}},
		{"hidden", "hidden", apitest.Basic(hidden), "h", perm{true, true, true}},
		{"hidden", "admin", apitest.Basic(e.Admin), "h", perm{true, true, true}},
	} {
		t.Run(tc.owner+"/"+tc.caller, func(t *testing.T) {
			repos, r := list(t, "users/"+tc.owner+"/repos", tc.cred)
			if names(repos) != tc.want {
				t.Fatalf("got %s, want %s", names(repos), tc.want)
			}
			if r.Header.Get("X-Total-Count") != fmt.Sprint(len(repos)) {
				t.Fatalf("X-Total-Count %s for %d", r.Header.Get("X-Total-Count"), len(repos))
			}
			p := repos[0].Permissions
			if (perm{p.Admin, p.Push, p.Pull}) != tc.perm {
				t.Fatalf("permissions %+v, want %+v", *p, tc.perm)
			}
			if repos[0].Owner == nil || repos[0].Owner.UserName != tc.owner {
				t.Fatalf("owner %+v", repos[0].Owner)
			}
		})
	}
	// A hidden or unknown owner is 404 (body included).
	utErr(t, e.Do("GET", "users/hidden/repos", nil, apitest.Basic(cs.bob)), http.StatusNotFound, "not found")
	utErr(t, e.Do("GET", "users/hidden/repos", nil, nil), http.StatusNotFound, "not found")
	utErr(t, e.Do("GET", "users/nobody/repos", nil, nil), http.StatusNotFound, "not found")
	// The repository scope governs this route.
	utErr(t, e.Do("GET", "users/alice/repos", nil, apitest.TokenCred(e.Token(cs.bob, "read:user"))), http.StatusForbidden, "read:repository")
	e.Do("GET", "users/alice/repos", nil, apitest.TokenCred(e.Token(cs.bob, "read:repository"))).Expect(t, http.StatusOK)

	// Paging, oldest first.
	repos, r := list(t, "users/alice/repos?limit=2&page=2", apitest.Basic(cs.alice))
	if names(repos) != "zeta" || r.Header.Get("X-Total-Count") != "3" {
		t.Fatalf("page 2: %s %v", names(repos), r.Header)
	}
	if repos[0].ID <= pub.ID {
		t.Fatalf("not in id order")
	}
	if link := r.Header.Get("Link"); !strings.Contains(link, `rel="first"`) || !strings.Contains(link, `rel="prev"`) {
		t.Fatalf("Link %q", link)
	}

	// The number of statements does not depend on the page size.
	for i := 0; i < 6; i++ {
		utRepo(t, e, org, fmt.Sprintf("more%d", i), i%2 == 0, false)
	}
	count := func(limit int) int64 {
		before := e.Statements()
		list(t, fmt.Sprintf("users/team/repos?limit=%d", limit), apitest.Basic(cs.bob))
		return e.Statements() - before
	}
	if one, many := count(1), count(50); one != many {
		t.Fatalf("statements: %d for one item, %d for a full page", one, many)
	}
}

func TestUserCurrentListRepos(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	cs := utSetup(e)
	utRepo(t, e, cs.alice.User, "mine", true, false)
	owned := utOrg(t, e, "owned", store.VisibilityPrivate, cs.alice)
	utRepo(t, e, owned, "o1", true, false)
	joined := utOrg(t, e, "joined", store.VisibilityPublic, cs.bob)
	utMember(t, e, joined, cs.alice, false)
	utRepo(t, e, joined, "j1", false, false)
	utRepo(t, e, joined, "j2", true, false)
	// Public repositories of others are not "mine".
	utRepo(t, e, cs.bob.User, "bobs", false, false)

	utErr(t, e.Do("GET", "user/repos", nil, nil), http.StatusUnauthorized, "token is required")

	c, authw := e.Client(apitest.Basic(cs.alice))
	ok, err := c.User.UserCurrentListRepos(user.NewUserCurrentListReposParams(), authw)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]models.Permission{}
	var order []string
	for _, r := range ok.Payload {
		got[r.FullName] = *r.Permissions
		order = append(order, r.FullName)
	}
	// By name, as the reference's search orders them by default.
	if utJoin(order) != "joined/j1,joined/j2,alice/mine,owned/o1" || ok.XTotalCount != 4 {
		t.Fatalf("GET /user/repos: %v (total %d)", order, ok.XTotalCount)
	}
	full := models.Permission{Admin: true, Push: true, Pull: true}
	if got["alice/mine"] != full || got["owned/o1"] != full || got["joined/j1"] != (models.Permission{Pull: true}) {
		t.Fatalf("permissions %+v", got)
	}

	// A public-only token keeps the public ones.
	r := e.Do("GET", "user/repos", nil, apitest.TokenCred(e.Token(cs.alice, "public-only", "read:repository"))).Expect(t, http.StatusOK)
	var pub []*models.Repository
	r.JSON(t, &pub)
	if len(pub) != 1 || pub[0].FullName != "joined/j1" {
		t.Fatalf("public-only token saw %d repositories", len(pub))
	}

	// Paging with a constant number of statements.
	for i := 0; i < 5; i++ {
		utRepo(t, e, joined, fmt.Sprintf("x%d", i), true, false)
	}
	count := func(limit int) int64 {
		before := e.Statements()
		e.Do("GET", fmt.Sprintf("user/repos?limit=%d", limit), nil, apitest.Basic(cs.alice)).Expect(t, http.StatusOK)
		return e.Statements() - before
	}
	if one, many := count(1), count(50); one != many {
		t.Fatalf("statements: %d for one item, %d for a full page", one, many)
	}
	r = e.Do("GET", "user/repos?limit=3&page=3", nil, apitest.Basic(cs.alice)).Expect(t, http.StatusOK)
	var last []*models.Repository
	r.JSON(t, &last)
	if len(last) != 3 || r.Header.Get("X-Total-Count") != "9" || strings.Contains(r.Header.Get("Link"), `rel="next"`) {
		t.Fatalf("last page: %d items, headers %v", len(last), r.Header)
	}
}
