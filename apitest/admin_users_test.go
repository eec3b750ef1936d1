package apitest_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"repohost/apitest"
	"repohost/gen/client/admin"
	"repohost/models"
	"repohost/store"
)

// TestAdminUsersGate runs every admin user route as callers that may not
// use it.
func TestAdminUsersGate(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	cs := utSetup(e)
	routes := []struct {
		method, path string
		body         any
	}{
		{"GET", "admin/users", nil},
		{"POST", "admin/users", map[string]any{"username": "zed", "email": "zed@example.com", "password": "zed-password"}},
		{"PATCH", "admin/users/bob", map[string]any{"login_name": "bob", "source_id": 0, "full_name": "x"}},
		{"DELETE", "admin/users/bob", nil},
		{"POST", "admin/users/bob/rename", map[string]any{"new_username": "robert"}},
	}
	for _, tc := range []struct {
		name    string
		cred    apitest.Cred
		status  int
		message string
	}{
		{"anonymous", nil, 401, "token is required"},
		{"user", apitest.Basic(cs.alice), 403, "user should be the site admin"},
		{"user's token", apitest.TokenCred(e.Token(cs.alice, "all")), 403, "user should be the site admin"},
		{"admin token without admin scope", apitest.TokenCred(e.Token(e.Admin, "write:user")), 403, "admin"},
		{"admin read token on writes", apitest.TokenCred(e.Token(e.Admin, "read:admin")), 403, "write:admin"},
		{"admin acting as a user", func(r *http.Request) { apitest.Basic(e.Admin)(r); r.Header.Set("Sudo", "alice") }, 403, "user should be the site admin"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, rt := range routes {
				if tc.name == "admin read token on writes" && rt.method == "GET" {
					e.Do(rt.method, rt.path, rt.body, tc.cred).Expect(t, 200)
					continue
				}
				utErr(t, e.Do(rt.method, rt.path, rt.body, tc.cred), tc.status, tc.message)
			}
		})
	}
	// Nothing changed.
	var users []*models.User
	e.Do("GET", "admin/users", nil, apitest.Basic(e.Admin)).Expect(t, 200).JSON(t, &users)
	if got := utJoin(utLogins(t, users)); got != "admin,alice,bob" {
		t.Fatalf("users after refused calls: %s", got)
	}
}

func TestAdminSearchUsers(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	cs := utSetup(e)
	carol := e.CreateUser("carol", false)
	dave := e.CreateUser("dave", false)
	utUpdate(t, e, cs.alice, func(u *store.User) {
		u.FullName = "Alice Liddell"
		u.LoginName = "aliceL"
		u.SourceID = 3
		u.Visibility = store.VisibilityLimited
	})
	utUpdate(t, e, cs.bob, func(u *store.User) { u.IsActive = false; u.KeepEmailPrivate = true; u.Email = "robert@mail.test" })
	utUpdate(t, e, carol, func(u *store.User) { u.Restricted = true; u.Visibility = store.VisibilityPrivate })
	utUpdate(t, e, dave, func(u *store.User) { u.ProhibitLogin = true })
	utOrg(t, e, "anorg", store.VisibilityPublic, cs.alice)

	search := func(t *testing.T, query string) ([]*models.User, *apitest.Response) {
		t.Helper()
		r := e.Do("GET", "admin/users"+query, nil, apitest.Basic(e.Admin)).Expect(t, 200)
		var users []*models.User
		r.JSON(t, &users)
		// Every answer here fits on one page, which sends no Link.
		if r.Header.Get("X-Total-Count") == "" || r.Header.Get("Link") != "" {
			t.Fatalf("paging headers: %v", r.Header)
		}
		return users, r
	}
	for query, want := range map[string]string{
		"":                        "admin,alice,bob,carol,dave",
		"?q=LIDDELL":              "alice",
		"?q=ali":                  "alice",
		"?q=mail.test":            "bob", // by address, even one kept private
		"?q=example.com":          "admin,alice,carol,dave",
		"?login_name=aliceL":      "alice",
		"?source_id=3":            "alice",
		"?source_id=0":            "admin,alice,bob,carol,dave",
		"?visibility=limited":     "alice",
		"?visibility=private":     "carol",
		"?visibility=public":      "admin,bob,dave",
		"?is_active=false":        "bob",
		"?is_active=true":         "admin,alice,carol,dave",
		"?is_admin=true":          "admin",
		"?is_admin=false":         "alice,bob,carol,dave",
		"?is_restricted=true":     "carol",
		"?is_prohibit_login=true": "dave",
		"?is_2fa_enabled=true":    "",
		"?is_2fa_enabled=false":   "admin,alice,bob,carol,dave",
		"?is_admin=false&is_active=true&visibility=public": "dave",
		"?sort=name&order=desc":                            "dave,carol,bob,alice,admin",
		"?sort=name&order=DESC":                            "dave,carol,bob,alice,admin",
		"?order=desc":                                      "admin,alice,bob,carol,dave", // order needs sort
		"?order=sideways":                                  "admin,alice,bob,carol,dave",
	} {
		t.Run(query, func(t *testing.T) {
			users, r := search(t, query)
			if got := utJoin(utLogins(t, users)); got != want {
				t.Fatalf("got %s, want %s", got, want)
			}
			if r.Header.Get("X-Total-Count") != fmt.Sprint(len(users)) {
				t.Fatalf("X-Total-Count %s for %d", r.Header.Get("X-Total-Count"), len(users))
			}
		})
	}
	// Full detail for the admin.
	users, _ := search(t, "?q=alice")
	a := users[0]
	if a.LoginName != "aliceL" || a.SourceID != 3 || !a.IsActive || string(a.Email) != "alice@example.com" {
		t.Fatalf("admin view of alice: %+v", a)
	}
	users, _ = search(t, "?q=bob")
	if string(users[0].Email) != "robert@mail.test" || users[0].IsActive {
		t.Fatalf("admin view of bob: %+v", users[0])
	}

	for query, message := range map[string]string{
		"?sort=size":                "Invalid sort mode: \"size\"",
		"?sort=name&order=sideways": "Invalid sort order: \"sideways\"",
		"?visibility=secret":        "Invalid visibility: \"secret\"",
		"?source_id=x":              "[SourceId]",
	} {
		utErr(t, e.Do("GET", "admin/users"+query, nil, apitest.Basic(e.Admin)), 422, message)
	}

	// Paging through the generated client.
	c, authw := e.Client(apitest.Basic(e.Admin))
	page, limit := int64(2), int64(2)
	ok, err := c.Admin.AdminSearchUsers(admin.NewAdminSearchUsersParams().WithPage(&page).WithLimit(&limit), authw)
	if err != nil {
		t.Fatal(err)
	}
	if utJoin(utLogins(t, ok.Payload)) != "bob,carol" || ok.XTotalCount != 5 ||
		!strings.Contains(ok.Link, `rel="next"`) || !strings.Contains(ok.Link, `rel="prev"`) {
		t.Fatalf("page 2: %v total %d link %q", utLogins(t, ok.Payload), ok.XTotalCount, ok.Link)
	}
}

// TestAdminSearchUsersSort checks every sort key in both directions on
// accounts created (through the API) with back-dated creation times.
func TestAdminSearchUsersSort(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	for _, u := range []struct{ name, created string }{
		{"yan", "2003-01-01T00:00:00Z"}, {"zoe", "2001-01-01T00:00:00Z"}, {"xav", "2002-01-01T00:00:00Z"},
	} {
		e.Do("POST", "admin/users", map[string]any{"username": u.name, "email": u.name + "@example.com", "password": "p-password",
			"login_name": "imported", "created_at": u.created}, apitest.Basic(e.Admin)).Expect(t, 201)
	}
	// Touching zoe makes her the most recently updated.
	e.Do("PATCH", "admin/users/zoe", map[string]any{"login_name": "imported", "source_id": 0, "location": "here"}, apitest.Basic(e.Admin)).Expect(t, 200)
	for query, want := range map[string]string{
		"":                         "xav,yan,zoe",
		"&sort=name":               "xav,yan,zoe",
		"&sort=name&order=desc":    "zoe,yan,xav",
		"&sort=created":            "zoe,xav,yan",
		"&sort=created&order=desc": "yan,xav,zoe",
		"&sort=updated":            "xav,yan,zoe",
		"&sort=updated&order=desc": "zoe,yan,xav",
		"&sort=id":                 "yan,zoe,xav",
		"&sort=id&order=desc":      "xav,zoe,yan",
		"&sort=id&order=asc":       "yan,zoe,xav",
	} {
		r := e.Do("GET", "admin/users?login_name=imported"+query, nil, apitest.Basic(e.Admin)).Expect(t, 200)
		var users []*models.User
		r.JSON(t, &users)
		if got := utJoin(utLogins(t, users)); got != want {
			t.Fatalf("%s: got %s, want %s", query, got, want)
		}
	}
}

func TestAdminCreateUser(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	cs := utSetup(e)
	c, authw := e.Client(apitest.Basic(e.Admin))
	name, email, pw := "newbie", "newbie@example.com", "newbie-password"
	created, err := c.Admin.AdminCreateUser(admin.NewAdminCreateUserParams().WithBody(&models.CreateUserOption{
		Username: &name, Email: &email, Password: &pw}), authw)
	if err != nil {
		t.Fatal(err)
	}
	u := created.Payload
	if u.UserName != "newbie" || string(u.Email) != email || !u.IsActive || u.IsAdmin || u.Visibility != "public" || u.ID == 0 {
		t.Fatalf("created %+v", u)
	}
	// must_change_password defaults to true: the account cannot use the
	// API until the password is changed.
	newbie := &apitest.Account{Password: pw, User: &store.User{Name: "newbie"}}
	r := e.Do("GET", "user", nil, apitest.Basic(newbie)).Expect(t, 403)
	if !strings.Contains(string(r.Body), "You must change your password") {
		t.Fatalf("must-change-password answer %s", r.Body)
	}
	stored, err := e.DB.Users().FindByName(context.Background(), "newbie")
	if err != nil || !stored.MustChangePassword {
		t.Fatalf("stored %+v %v", stored, err)
	}
	// The primary address row exists: it is taken for everyone else.
	utErr(t, e.Do("POST", "user/emails", map[string]any{"emails": []string{"NEWBIE@example.com"}}, apitest.Basic(cs.alice)), 422, "has been used")

	// Every honoured option.
	created2 := e.Do("POST", "admin/users", map[string]any{
		"username": "Full", "email": "full@example.com", "password": "full-password", "must_change_password": false,
		"full_name": "Full Name", "login_name": "full-ldap", "source_id": 7, "restricted": true, "visibility": "limited",
		"created_at": "2001-02-03T04:05:06Z", "send_notify": true,
	}, apitest.Basic(e.Admin)).Expect(t, 201)
	var full models.User
	created2.JSON(t, &full)
	if full.UserName != "Full" || full.FullName != "Full Name" || full.LoginName != "full-ldap" || full.SourceID != 7 ||
		!full.Restricted || full.Visibility != "limited" || full.Created == nil ||
		time.Time(*full.Created).UTC().Format(time.RFC3339) != "2001-02-03T04:05:06Z" {
		t.Fatalf("created %+v", full)
	}
	var me models.User
	e.Do("GET", "user", nil, apitest.Basic(&apitest.Account{Password: "full-password", User: &store.User{Name: "full"}})).Expect(t, 200).JSON(t, &me)
	if me.ID != full.ID {
		t.Fatalf("signed in as %+v", me)
	}

	// An externally authenticated account needs no password, and no empty
	// password signs it in.
	e.Do("POST", "admin/users", map[string]any{"username": "ext", "email": "ext@example.com", "source_id": 2, "login_name": "ext",
		"must_change_password": false}, apitest.Basic(e.Admin)).Expect(t, 201)
	utErr(t, e.Do("GET", "user", nil, apitest.Basic(&apitest.Account{User: &store.User{Name: "ext"}})), 401, "invalid username")

	for _, tc := range []struct {
		name    string
		body    any
		message string
	}{
		{"taken name", map[string]any{"username": "ALICE", "email": "x1@example.com", "password": "p-password"}, "user already exists"},
		{"taken email", map[string]any{"username": "x2", "email": "Bob@Example.com", "password": "p-password"}, "e-mail already in use"},
		{"reserved name", map[string]any{"username": "api", "email": "x3@example.com", "password": "p-password"}, "name is reserved"},
		{"invalid name", map[string]any{"username": "bad..name", "email": "x4@example.com", "password": "p-password"}, "invalid username"},
		{"name too long", map[string]any{"username": strings.Repeat("a", 41), "email": "x5@example.com", "password": "p-password"}, "Username"},
		{"invalid email", map[string]any{"username": "x6", "email": "not-an-email", "password": "p-password"}, "e-mail invalid"},
		{"no username", map[string]any{"email": "x7@example.com", "password": "p-password"}, "Username"},
		{"no email", map[string]any{"username": "x8", "password": "p-password"}, "Email"},
		{"empty email", map[string]any{"username": "x8", "email": "", "password": "p-password"}, "Email"},
		{"no password", map[string]any{"username": "x9", "email": "x9@example.com"}, "[Password]: Required"},
		{"bad visibility", map[string]any{"username": "x10", "email": "x10@example.com", "password": "p-password", "visibility": "secret"}, "Visibility"},
		{"no body", nil, "Username"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			utErr(t, e.Do("POST", "admin/users", tc.body, apitest.Basic(e.Admin)), 422, tc.message)
		})
	}
	var users []*models.User
	e.Do("GET", "admin/users", nil, apitest.Basic(e.Admin)).Expect(t, 200).JSON(t, &users)
	if got := utJoin(utLogins(t, users)); got != "admin,alice,bob,ext,Full,newbie" {
		t.Fatalf("users: %s", got)
	}
}

func TestAdminEditUser(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	cs := utSetup(e)
	patch := func(t *testing.T, name string, body map[string]any) *apitest.Response {
		t.Helper()
		return e.Do("PATCH", "admin/users/"+name, body, apitest.Basic(e.Admin))
	}

	var u models.User
	patch(t, "alice", map[string]any{
		"login_name": "alice-ext", "source_id": 4, "full_name": "Alice L", "website": "https://alice.test", "location": "Wonderland",
		"description": "curious", "visibility": "private", "restricted": true, "allow_git_hook": true, "allow_import_local": true,
		"allow_create_organization": false, "max_repo_creation": 5, "admin": true, "active": true, "prohibit_login": false,
		"must_change_password": false,
	}).Expect(t, 200).JSON(t, &u)
	if u.LoginName != "alice-ext" || u.SourceID != 4 || u.FullName != "Alice L" || u.Website != "https://alice.test" ||
		u.Location != "Wonderland" || u.Description != "curious" || u.Visibility != "private" || !u.Restricted || !u.IsAdmin {
		t.Fatalf("edited %+v", u)
	}
	stored, err := e.DB.Users().FindByName(context.Background(), "alice")
	if err != nil {
		t.Fatal(err)
	}
	if !stored.AllowGitHook || !stored.AllowImportLocal || stored.AllowCreateOrg || stored.MaxRepoCreation != 5 {
		t.Fatalf("stored %+v", stored)
	}
	// Fields left out keep their values; source_id 0 leaves the source.
	patch(t, "alice", map[string]any{"login_name": "alice-ext", "source_id": 0, "admin": false}).Expect(t, 200).JSON(t, &u)
	if u.FullName != "Alice L" || u.SourceID != 4 || u.IsAdmin || u.Visibility != "private" {
		t.Fatalf("partial edit %+v", u)
	}

	// A new email becomes the primary address; the old one stays.
	patch(t, "alice", map[string]any{"login_name": "", "source_id": 0, "email": "new-alice@mail.test"}).Expect(t, 200).JSON(t, &u)
	if string(u.Email) != "new-alice@mail.test" {
		t.Fatalf("email %s", u.Email)
	}
	r := e.Do("GET", "user/emails", nil, apitest.Basic(cs.alice)).Expect(t, 200)
	var es []*models.Email
	r.JSON(t, &es)
	if got := utAddresses(es); got != "new-alice@mail.test*,alice@example.com" {
		t.Fatalf("addresses after email change: %s", got)
	}
	// Switching back promotes the existing address.
	patch(t, "alice", map[string]any{"login_name": "", "source_id": 0, "email": "alice@example.com"}).Expect(t, 200)
	e.Do("GET", "user/emails", nil, apitest.Basic(cs.alice)).Expect(t, 200).JSON(t, &es)
	if got := utAddresses(es); got != "alice@example.com*,new-alice@mail.test" {
		t.Fatalf("addresses after switching back: %s", got)
	}

	// A new password replaces the old one.
	patch(t, "bob", map[string]any{"login_name": "", "source_id": 0, "password": "bob-new-password"}).Expect(t, 200)
	utErr(t, e.Do("GET", "user", nil, apitest.Basic(cs.bob)), 401, "invalid username")
	e.Do("GET", "user", nil, apitest.Basic(&apitest.Account{User: cs.bob.User, Password: "bob-new-password"})).Expect(t, 200)
	// prohibit_login and active lock the account out.
	patch(t, "bob", map[string]any{"login_name": "", "source_id": 0, "prohibit_login": true}).Expect(t, 200)
	e.Do("GET", "user", nil, apitest.Basic(&apitest.Account{User: cs.bob.User, Password: "bob-new-password"})).Expect(t, 403)

	for _, tc := range []struct {
		name, target string
		body         any
		status       int
		message      string
	}{
		{"unknown user", "nobody", map[string]any{"login_name": "", "source_id": 0}, 404, "not found"},
		{"organization", "someorg", map[string]any{"login_name": "", "source_id": 0}, 404, "not found"},
		{"email of another user", "alice", map[string]any{"login_name": "", "source_id": 0, "email": "BOB@example.com"}, 400, "e-mail already in use"},
		{"malformed email", "alice", map[string]any{"login_name": "", "source_id": 0, "email": "nope"}, 422, "Email"},
		{"bad visibility", "alice", map[string]any{"login_name": "", "source_id": 0, "visibility": "secret"}, 422, "Visibility"},
		{"missing login_name", "alice", map[string]any{"source_id": 0}, 422, "LoginName"},
		{"missing source_id", "alice", map[string]any{"login_name": ""}, 422, "[SourceId]: Required"},
		{"no body", "alice", nil, 422, "LoginName"},
		{"bad max_repo_creation", "alice", map[string]any{"login_name": "", "source_id": 0, "max_repo_creation": -2}, 422, "MaxRepoCreation"},
		{"full name too long", "alice", map[string]any{"login_name": "", "source_id": 0, "full_name": strings.Repeat("x", 101)}, 422, "FullName"},
		{"demoting the last admin", "admin", map[string]any{"login_name": "", "source_id": 0, "admin": false}, 400, "last admin"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.target == "someorg" {
				utOrg(t, e, "someorg", store.VisibilityPublic, nil)
			}
			utErr(t, e.Do("PATCH", "admin/users/"+tc.target, tc.body, apitest.Basic(e.Admin)), tc.status, tc.message)
		})
	}
	// The refused edits changed nothing.
	e.Do("GET", "user/emails", nil, apitest.Basic(cs.alice)).Expect(t, 200).JSON(t, &es)
	if got := utAddresses(es); got != "alice@example.com*,new-alice@mail.test" {
		t.Fatalf("addresses after refused edits: %s", got)
	}
	patch(t, "admin", map[string]any{"login_name": "", "source_id": 0}).Expect(t, 200).JSON(t, &u)
	if !u.IsAdmin {
		t.Fatalf("the last admin was demoted")
	}
}

func TestAdminDeleteUser(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	cs := utSetup(e)
	carol := e.CreateUser("carol", false)
	gitDir := func(owner, name string) string {
		p, err := e.Deps.Git.Path(owner, name)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	exists := func(p string) bool { _, err := os.Stat(p); return err == nil }

	// carol: only a token and a second address; deleting her is plain.
	carolToken := e.Token(carol, "all")
	e.Do("POST", "user/emails", map[string]any{"emails": []string{"carol2@mail.test"}}, apitest.Basic(carol)).Expect(t, 201)
	c, authw := e.Client(apitest.Basic(e.Admin))
	if _, err := c.Admin.AdminDeleteUser(admin.NewAdminDeleteUserParams().WithUsername("carol"), authw); err != nil {
		t.Fatal(err)
	}
	utErr(t, e.Do("GET", "users/carol", nil, apitest.Basic(e.Admin)), 404, "not found")
	utErr(t, e.Do("GET", "user", nil, apitest.TokenCred(carolToken)), 401, "invalid username")
	ctx := context.Background()
	if _, err := e.DB.Emails().FindByEmail(ctx, "carol2@mail.test"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("carol's address survived: %v", err)
	}
	if _, n, _ := e.DB.Tokens().ListByUser(ctx, carol.User.ID, store.Page{Limit: 10}); n != 0 {
		t.Fatalf("carol's tokens survived: %d", n)
	}
	// Her name and address are free again.
	e.Do("POST", "admin/users", map[string]any{"username": "carol", "email": "carol2@mail.test", "password": "carol-password"},
		apitest.Basic(e.Admin)).Expect(t, 201)

	// alice owns repositories and an organization (as its only owner);
	// bob is a plain member of it and of another.
	utRepo(t, e, cs.alice.User, "r1", false, true)
	utRepo(t, e, cs.alice.User, "r2", true, true)
	solo := utOrg(t, e, "solo", store.VisibilityPublic, cs.alice)
	utMember(t, e, solo, cs.bob, false)
	utRepo(t, e, solo, "sr", false, true)
	shared := utOrg(t, e, "shared", store.VisibilityPublic, cs.alice)
	utMember(t, e, shared, e.Admin, true)
	utRepo(t, e, shared, "kept", false, true)

	for _, tc := range []struct {
		name, path string
		status     int
		message    string
	}{
		{"owns repositories", "admin/users/alice", 422, "user still has ownership of repositories"},
		{"purge=false", "admin/users/alice?purge=false", 422, "user still has ownership of repositories"},
		{"member of organizations", "admin/users/bob", 422, "user still has membership of organizations"},
		{"an organization", "admin/users/solo", 422, "solo is an organization not a user"},
		{"yourself", "admin/users/admin", 422, "you cannot delete yourself"},
		{"unknown", "admin/users/nobody", 404, "not found"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			utErr(t, e.Do("DELETE", tc.path, nil, apitest.Basic(e.Admin)), tc.status, tc.message)
		})
	}
	if !exists(gitDir("alice", "r1")) || !exists(gitDir("solo", "sr")) {
		t.Fatalf("a refused delete removed repositories")
	}

	// purge removes alice, her repositories (rows and directories), the
	// organization she alone owned, and her other memberships.
	e.Do("DELETE", "admin/users/alice?purge=true", nil, apitest.Basic(e.Admin)).Expect(t, 204)
	utErr(t, e.Do("GET", "users/alice", nil, apitest.Basic(e.Admin)), 404, "not found")
	utErr(t, e.Do("GET", "users/solo", nil, apitest.Basic(e.Admin)), 404, "not found")
	for _, dir := range []string{gitDir("alice", "r1"), gitDir("alice", "r2"), gitDir("solo", "sr")} {
		if exists(dir) {
			t.Fatalf("%s survived the purge", dir)
		}
	}
	if !exists(gitDir("shared", "kept")) {
		t.Fatalf("the shared organization's repository was removed")
	}
	if n, _ := e.DB.Repos().CountByOwner(ctx, cs.alice.User.ID); n != 0 {
		t.Fatalf("alice's repository rows survived: %d", n)
	}
	if n, _ := e.DB.Repos().CountByOwner(ctx, solo.ID); n != 0 {
		t.Fatalf("solo's repository rows survived: %d", n)
	}
	if _, err := e.DB.Orgs().FindMember(ctx, shared.ID, cs.alice.User.ID); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("alice's membership survived: %v", err)
	}
	if _, err := e.DB.Orgs().FindMember(ctx, solo.ID, cs.bob.User.ID); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("bob's membership of the deleted organization survived: %v", err)
	}
	// bob's only membership went with "solo", so he can now be deleted
	// without purge.
	e.Do("DELETE", "admin/users/bob", nil, apitest.Basic(e.Admin)).Expect(t, 204)
	e.Do("GET", "users/shared", nil, nil).Expect(t, 200)
}

func TestAdminRenameUser(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	cs := utSetup(e)
	utRepo(t, e, cs.alice.User, "wonder", false, true)
	aliceToken := e.Token(cs.alice, "read:user")
	utOrg(t, e, "someorg", store.VisibilityPublic, cs.bob)

	c, authw := e.Client(apitest.Basic(e.Admin))
	newName := "Alicia"
	if _, err := c.Admin.AdminRenameUser(admin.NewAdminRenameUserParams().WithUsername("alice").
		WithBody(&models.RenameUserOption{NewName: &newName}), authw); err != nil {
		t.Fatal(err)
	}
	utErr(t, e.Do("GET", "users/alice", nil, nil), 404, "not found")
	var u models.User
	e.Do("GET", "users/alicia", nil, nil).Expect(t, 200).JSON(t, &u)
	if u.UserName != "Alicia" || u.ID != cs.alice.User.ID {
		t.Fatalf("renamed user %+v", u)
	}
	// The repositories moved on disk, and the old name is free.
	newDir, _ := e.Deps.Git.Path("Alicia", "wonder")
	oldDir, _ := e.Deps.Git.Path("alice", "wonder")
	if _, err := os.Stat(newDir); err != nil {
		t.Fatalf("repository not moved: %v", err)
	}
	if _, err := os.Stat(filepath.Dir(oldDir)); err == nil {
		t.Fatalf("old owner directory still there")
	}
	var repos []*models.Repository
	e.Do("GET", "users/Alicia/repos", nil, nil).Expect(t, 200).JSON(t, &repos)
	if len(repos) != 1 || repos[0].FullName != "Alicia/wonder" {
		t.Fatalf("repositories after rename: %+v", repos)
	}
	// Sign-in with the new name and existing tokens keep working.
	e.Do("GET", "user", nil, apitest.Basic(&apitest.Account{User: &store.User{Name: "alicia"}, Password: cs.alice.Password})).Expect(t, 200)
	e.Do("GET", "user", nil, apitest.TokenCred(aliceToken)).Expect(t, 200)
	// A change of case only, and a rename to the same name, succeed.
	e.Do("POST", "admin/users/alicia/rename", map[string]any{"new_username": "alicia"}, apitest.Basic(e.Admin)).Expect(t, 204)
	e.Do("POST", "admin/users/alicia/rename", map[string]any{"new_username": "alicia"}, apitest.Basic(e.Admin)).Expect(t, 204)
	if _, err := os.Stat(newDir); err != nil {
		t.Fatalf("repository lost on a case-only rename: %v", err)
	}
	e.Do("POST", "admin/users/alice/rename", map[string]any{"new_username": "x"}, apitest.Basic(e.Admin)).Expect(t, 404)

	for _, tc := range []struct {
		name, target string
		body         any
		status       int
		message      string
	}{
		{"taken by a user", "alicia", map[string]any{"new_username": "BOB"}, 422, "user already exists"},
		{"taken by an organization", "alicia", map[string]any{"new_username": "someorg"}, 422, "user already exists"},
		{"reserved", "alicia", map[string]any{"new_username": "explore"}, 422, "name is reserved"},
		{"invalid", "alicia", map[string]any{"new_username": "-bad"}, 422, "invalid username"},
		{"empty", "alicia", map[string]any{"new_username": ""}, 422, "[NewName]: Required"},
		{"too long", "alicia", map[string]any{"new_username": strings.Repeat("a", 41)}, 422, "NewUsername"},
		{"missing", "alicia", map[string]any{}, 422, "NewUsername"},
		{"organization", "someorg", map[string]any{"new_username": "otherorg"}, 422, "someorg is an organization not a user"},
		{"unknown", "nobody", map[string]any{"new_username": "somebody"}, 404, "not found"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			utErr(t, e.Do("POST", "admin/users/"+tc.target+"/rename", tc.body, apitest.Basic(e.Admin)), tc.status, tc.message)
		})
	}
	// Nothing moved on refusal.
	if _, err := os.Stat(newDir); err != nil {
		t.Fatalf("repository moved by a refused rename: %v", err)
	}
}
