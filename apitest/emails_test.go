package apitest_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"repohost/apitest"
	"repohost/gen/client/admin"
	"repohost/gen/client/user"
	"repohost/models"
	"repohost/store"
)

func utAddresses(es []*models.Email) string {
	var out []string
	for _, e := range es {
		s := string(e.Email)
		if e.Primary {
			s += "*"
		}
		out = append(out, s)
	}
	return utJoin(out)
}

func TestUserEmails(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	cs := utSetup(e)
	aliceCred := apitest.Basic(cs.alice)
	list := func(t *testing.T) string {
		t.Helper()
		r := e.Do("GET", "user/emails", nil, aliceCred).Expect(t, http.StatusOK)
		var es []*models.Email
		r.JSON(t, &es)
		if r.Header.Get("X-Total-Count") != fmt.Sprint(len(es)) {
			t.Fatalf("X-Total-Count %q for %d", r.Header.Get("X-Total-Count"), len(es))
		}
		for _, em := range es {
			if em.UserID != cs.alice.User.ID || em.UserName != "alice" || !em.Verified {
				t.Fatalf("address %+v", em)
			}
		}
		return utAddresses(es)
	}

	// Anonymous callers get 401 on every route; tokens need the user scope.
	utErr(t, e.Do("GET", "user/emails", nil, nil), 401, "token is required")
	utErr(t, e.Do("POST", "user/emails", map[string]any{"emails": []string{"a@b.test"}}, nil), 401, "token is required")
	utErr(t, e.Do("DELETE", "user/emails", map[string]any{"emails": []string{"a@b.test"}}, nil), 401, "token is required")
	readOnly := apitest.TokenCred(e.Token(cs.alice, "read:user"))
	e.Do("GET", "user/emails", nil, readOnly).Expect(t, 200)
	utErr(t, e.Do("POST", "user/emails", map[string]any{"emails": []string{"a@b.test"}}, readOnly), 403, "write:user")
	utErr(t, e.Do("DELETE", "user/emails", map[string]any{"emails": []string{"a@b.test"}}, readOnly), 403, "write:user")

	if got := list(t); got != "alice@example.com*" {
		t.Fatalf("initial addresses %s", got)
	}

	c, authw := e.Client(aliceCred)
	added, err := c.User.UserAddEmail(user.NewUserAddEmailParams().WithBody(&models.CreateEmailOption{
		Emails: []string{"second@mail.test", " Third@Mail.test "}}), authw)
	if err != nil {
		t.Fatal(err)
	}
	// The answer lists all of the caller's addresses, as the reference's
	// does, not only the new ones.
	if got := utAddresses(added.Payload); got != "alice@example.com*,second@mail.test,Third@Mail.test" {
		t.Fatalf("added %s", got)
	}
	if got := list(t); got != "alice@example.com*,second@mail.test,Third@Mail.test" {
		t.Fatalf("after adding: %s", got)
	}
	// Signing in with a secondary address is not affected; the new
	// address is usable with a write token too.
	e.Do("POST", "user/emails", map[string]any{"emails": []string{"fourth@mail.test"}},
		apitest.TokenCred(e.Token(cs.alice, "write:user"))).Expect(t, 201)

	for _, tc := range []struct {
		name    string
		emails  any
		status  int
		message string
	}{
		{"invalid", []string{"ok@mail.test", "not-an-address"}, 422, `Email address "not-an-address" invalid`},
		{"used by another user", []string{"bob@example.com"}, 422, "Email address has been used: bob@example.com"},
		{"used by another user, other case", []string{"BOB@example.com"}, 422, "Email address has been used: BOB@example.com"},
		{"already mine", []string{"second@mail.test"}, 422, "Email address has been used: second@mail.test"},
		{"twice in the request", []string{"new@mail.test", "NEW@mail.test"}, 422, "Email address has been used: NEW@mail.test"},
		{"empty list", []string{}, 422, "Email list empty"},
		{"no list", nil, 422, "Email list empty"},
	} {
		t.Run("add/"+tc.name, func(t *testing.T) {
			body := map[string]any{}
			if tc.emails != nil {
				body["emails"] = tc.emails
			}
			utErr(t, e.Do("POST", "user/emails", body, aliceCred), tc.status, tc.message)
		})
	}
	// A refused request adds nothing.
	if got := list(t); got != "alice@example.com*,fourth@mail.test,second@mail.test,Third@Mail.test" {
		t.Fatalf("after refused adds: %s", got)
	}

	for _, tc := range []struct {
		name    string
		emails  []string
		status  int
		message string
	}{
		{"someone else's", []string{"second@mail.test", "bob@example.com"}, 404, "Email address does not exist [email: bob@example.com]"},
		{"unknown", []string{"nobody@mail.test"}, 404, "Email address does not exist"},
		{"primary", []string{"second@mail.test", "alice@example.com"}, 422, "Primary email address cannot be deleted"},
	} {
		t.Run("delete/"+tc.name, func(t *testing.T) {
			utErr(t, e.Do("DELETE", "user/emails", map[string]any{"emails": tc.emails}, aliceCred), tc.status, tc.message)
		})
	}
	if got := list(t); got != "alice@example.com*,fourth@mail.test,second@mail.test,Third@Mail.test" {
		t.Fatalf("after refused deletes: %s", got)
	}
	e.Do("DELETE", "user/emails", map[string]any{"emails": []string{"SECOND@mail.test", "third@mail.test", "second@mail.test"}}, aliceCred).
		Expect(t, http.StatusNoContent)
	e.Do("DELETE", "user/emails", map[string]any{"emails": []string{}}, aliceCred).Expect(t, http.StatusNoContent)
	if got := list(t); got != "alice@example.com*,fourth@mail.test" {
		t.Fatalf("after deleting: %s", got)
	}
	// A freed address can be taken by someone else.
	e.Do("POST", "user/emails", map[string]any{"emails": []string{"second@mail.test"}}, apitest.Basic(cs.bob)).Expect(t, 201)
}

func TestAdminEmails(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	cs := utSetup(e)
	utUpdate(t, e, cs.bob, func(u *store.User) { u.FullName = "Robert Tables" })
	e.Do("POST", "user/emails", map[string]any{"emails": []string{"zed@other.test"}}, apitest.Basic(cs.alice)).Expect(t, 201)
	// An organization's address is never listed.
	org := utOrg(t, e, "someorg", store.VisibilityPublic, cs.alice)
	if err := e.DB.Emails().Create(context.Background(), &store.Email{UserID: org.ID, Email: "org@example.com", IsPrimary: true}); err != nil {
		t.Fatal(err)
	}

	for _, path := range []string{"admin/emails", "admin/emails/search?q=x"} {
		utErr(t, e.Do("GET", path, nil, nil), 401, "token is required")
		utErr(t, e.Do("GET", path, nil, apitest.Basic(cs.alice)), 403, "user should be the site admin")
		utErr(t, e.Do("GET", path, nil, apitest.TokenCred(e.Token(e.Admin, "read:user"))), 403, "read:admin")
		e.Do("GET", path, nil, apitest.TokenCred(e.Token(e.Admin, "read:admin"))).Expect(t, 200)
	}

	c, authw := e.Client(apitest.Basic(e.Admin))
	all, err := c.Admin.AdminGetAllEmails(admin.NewAdminGetAllEmailsParams(), authw)
	if err != nil {
		t.Fatal(err)
	}
	if got := utAddresses(all.Payload); got != "admin@example.com*,alice@example.com*,bob@example.com*,zed@other.test" || all.XTotalCount != 4 {
		t.Fatalf("all addresses %s (total %d)", got, all.XTotalCount)
	}
	for _, em := range all.Payload {
		if em.UserName == "" || em.UserID == 0 {
			t.Fatalf("address without owner %+v", em)
		}
	}
	if all.Payload[3].UserName != "alice" || all.Payload[3].Primary {
		t.Fatalf("zed@other.test %+v", all.Payload[3])
	}

	search := func(q string) (string, *apitest.Response) {
		r := e.Do("GET", "admin/emails/search"+q, nil, apitest.Basic(e.Admin)).Expect(t, 200)
		var es []*models.Email
		r.JSON(t, &es)
		return utAddresses(es), r
	}
	for q, want := range map[string]string{
		"":              "admin@example.com*,alice@example.com*,bob@example.com*,zed@other.test",
		"?q=":           "admin@example.com*,alice@example.com*,bob@example.com*,zed@other.test",
		"?q=ALICE":      "alice@example.com*,zed@other.test", // by owner name
		"?q=tables":     "bob@example.com*",                  // by full name
		"?q=other.test": "zed@other.test",                    // by address
		"?q=%20zed%20":  "zed@other.test",                    // trimmed
		"?q=org":        "",
		"?q=%25":        "",
	} {
		if got, _ := search(q); got != want {
			t.Fatalf("search %q: got %s, want %s", q, got, want)
		}
	}
	got, r := search("?q=example&limit=2&page=2")
	if got != "bob@example.com*" || r.Header.Get("X-Total-Count") != "3" || !strings.Contains(r.Header.Get("Link"), `rel="prev"`) {
		t.Fatalf("page 2: %s, headers %v", got, r.Header)
	}
	limit := int64(1)
	page, err := c.Admin.AdminGetAllEmails(admin.NewAdminGetAllEmailsParams().WithLimit(&limit), authw)
	if err != nil || len(page.Payload) != 1 || page.XTotalCount != 4 || !strings.Contains(page.Link, `rel="next"`) {
		t.Fatalf("limit 1: %v %+v", err, page)
	}
}
