package apitest_test

import (
	"context"
	"errors"
	"net/http"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"repohost/apitest"
	"repohost/gen/client/organization"
	"repohost/models"
	"repohost/store"
)

func roOrgNames(os []*models.Organization) []string {
	out := make([]string, 0, len(os))
	for _, o := range os {
		out = append(out, o.UserName)
	}
	return out
}

func roUserNames(us []*models.User) []string {
	out := make([]string, 0, len(us))
	for _, u := range us {
		out = append(out, u.UserName)
	}
	return out
}

func TestOrgCreate(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	alice, bob := e.CreateUser("alice", false), e.CreateUser("bob", false)
	cred := apitest.Basic(alice)

	e.Do("POST", "orgs", map[string]any{"username": "acme"}, nil).Expect(t, http.StatusUnauthorized)
	e.Do("POST", "orgs", map[string]any{"username": "acme"}, apitest.TokenCred(e.Token(alice, "write:repository"))).
		Expect(t, http.StatusForbidden)

	c, authw := e.Client(apitest.TokenCred(e.Token(alice, "write:organization")))
	name, full, desc, site, loc, mail := "acme", "Acme Inc.", "makes things", "https://acme.example", "Earth", "info@acme.example"
	yes := true
	resp, err := c.Organization.OrgCreate(organization.NewOrgCreateParams().WithOrganization(&models.CreateOrgOption{
		UserName: &name, FullName: &full, Description: &desc, Website: &site, Location: &loc, Email: &mail,
		RepoAdminChangeTeamAccess: &yes,
	}), authw)
	if err != nil {
		t.Fatal(err)
	}
	o := resp.Payload
	want := models.Organization{ID: o.ID, Name: "acme", UserName: "acme", FullName: full, Description: desc, Website: site,
		Location: loc, Email: mail, Visibility: "public", RepoAdminChangeTeamAccess: true, AvatarURL: o.AvatarURL}
	if o.ID == 0 || !reflect.DeepEqual(*o, want) {
		t.Fatalf("created %+v", o)
	}
	m, err := e.DB.Orgs().FindMember(context.Background(), o.ID, alice.User.ID)
	if err != nil || !m.IsOwner {
		t.Fatalf("creator membership %+v %v", m, err)
	}

	priv := roCreateOrg(t, e, cred, map[string]any{"username": "Quiet", "visibility": "private"})
	if priv.Visibility != "private" || priv.UserName != "Quiet" {
		t.Fatalf("created %+v", priv)
	}
	if o := roCreateOrg(t, e, cred, map[string]any{"username": "blank", "visibility": ""}); o.Visibility != "public" {
		t.Fatalf("empty visibility gave %q", o.Visibility)
	}

	for _, tc := range []struct {
		body map[string]any
		msg  string
	}{
		{map[string]any{"username": "acme"}, "user already exists [name: acme]"},
		{map[string]any{"username": "ACME"}, "user already exists [name: ACME]"},
		{map[string]any{"username": "bob"}, "user already exists [name: bob]"},
		{map[string]any{"username": ".."}, ""},
		{map[string]any{"username": "a/b"}, ""},
		{map[string]any{"username": "-x"}, ""},
		{map[string]any{"username": "x-"}, ""},
		{map[string]any{"username": "a..b"}, ""},
		{map[string]any{"username": "api"}, "reserved"},
		{map[string]any{"username": strings.Repeat("o", 41)}, ""},
		{map[string]any{"username": ""}, ""},
		{map[string]any{}, ""},
		{map[string]any{"username": "ok1", "visibility": "secret"}, ""},
		{map[string]any{"username": "ok2", "email": "not-an-address"}, "e-mail invalid"},
		{map[string]any{"username": "ok3", "website": "javascript:alert(1)"}, "Website"},
	} {
		r := e.Do("POST", "orgs", tc.body, cred)
		if r.Status != http.StatusUnprocessableEntity || !strings.Contains(string(r.Body), tc.msg) {
			t.Errorf("%v: status %d: %s", tc.body, r.Status, r.Body)
		}
	}

	// A user who may not create organizations gets 403; a site admin may
	// always.
	u := *bob.User
	u.AllowCreateOrg = false
	if err := e.DB.Users().Update(context.Background(), &u); err != nil {
		t.Fatal(err)
	}
	r := e.Do("POST", "orgs", map[string]any{"username": "bobco"}, apitest.Basic(bob)).Expect(t, http.StatusForbidden)
	if !strings.Contains(string(r.Body), "not allowed") {
		t.Fatalf("403 body %s", r.Body)
	}
	roCreateOrg(t, e, apitest.Basic(e.Admin), map[string]any{"username": "adminco"})
}

func TestAdminCreateOrg(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	alice := e.CreateUser("alice", false)
	body := map[string]any{"username": "acme", "visibility": "limited"}

	e.Do("POST", "admin/users/alice/orgs", body, nil).Expect(t, http.StatusUnauthorized)
	e.Do("POST", "admin/users/alice/orgs", body, apitest.Basic(alice)).Expect(t, http.StatusForbidden)
	e.Do("POST", "admin/users/nobody/orgs", body, apitest.Basic(e.Admin)).Expect(t, http.StatusNotFound)

	var o models.Organization
	e.Do("POST", "admin/users/alice/orgs", body, apitest.Basic(e.Admin)).Expect(t, http.StatusCreated).JSON(t, &o)
	if o.UserName != "acme" || o.Visibility != "limited" {
		t.Fatalf("created %+v", o)
	}
	// The named user owns it; the admin is not a member.
	ctx := context.Background()
	if m, err := e.DB.Orgs().FindMember(ctx, o.ID, alice.User.ID); err != nil || !m.IsOwner {
		t.Fatalf("alice's membership %+v %v", m, err)
	}
	if _, err := e.DB.Orgs().FindMember(ctx, o.ID, e.Admin.User.ID); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("admin became a member: %v", err)
	}
	e.Do("POST", "admin/users/alice/orgs", body, apitest.Basic(e.Admin)).Expect(t, http.StatusUnprocessableEntity)
	// An organization cannot own an organization.
	e.Do("POST", "admin/users/acme/orgs", map[string]any{"username": "sub"}, apitest.Basic(e.Admin)).Expect(t, http.StatusUnprocessableEntity)
}

// roOrgWorld: alice owns pub (public), lim (limited) and priv (private);
// bob belongs to priv; carol is an outsider.
func roOrgWorld(t *testing.T, e *apitest.Env) (alice, bob, carol *apitest.Account, orgs map[string]*models.Organization) {
	t.Helper()
	alice, bob, carol = e.CreateUser("alice", false), e.CreateUser("bob", false), e.CreateUser("carol", false)
	orgs = map[string]*models.Organization{}
	for _, v := range []string{"public", "limited", "private"} {
		name := v[:3]
		orgs[name] = roCreateOrg(t, e, apitest.Basic(alice), map[string]any{"username": name, "visibility": v})
	}
	roAddMember(t, e, orgs["pri"].ID, bob, false, false)
	return alice, bob, carol, orgs
}

func TestOrgVisibility(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	alice, bob, carol, _ := roOrgWorld(t, e)
	for _, tc := range []struct {
		name string
		cred apitest.Cred
		sees []string // in name order
	}{
		{"anonymous", nil, []string{"pub"}},
		{"outsider", apitest.Basic(carol), []string{"lim", "pub"}},
		{"member", apitest.Basic(bob), []string{"lim", "pri", "pub"}},
		{"owner", apitest.Basic(alice), []string{"lim", "pri", "pub"}},
		{"admin", apitest.Basic(e.Admin), []string{"lim", "pri", "pub"}},
		{"public-only token", apitest.TokenCred(e.Token(alice, "public-only", "read:organization")), []string{"pub"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, org := range []string{"pub", "lim", "pri"} {
				want := http.StatusNotFound
				for _, s := range tc.sees {
					if s == org {
						want = http.StatusOK
					}
				}
				r := e.Do("GET", "orgs/"+org, nil, tc.cred)
				if r.Status != want {
					t.Errorf("GET orgs/%s: %d, want %d", org, r.Status, want)
				}
			}
			var list []*models.Organization
			r := e.Do("GET", "orgs", nil, tc.cred).Expect(t, http.StatusOK)
			r.JSON(t, &list)
			if got := roOrgNames(list); !reflect.DeepEqual(got, tc.sees) || r.Header.Get("X-Total-Count") != strconv.Itoa(len(tc.sees)) {
				t.Fatalf("GET /orgs: %v (total %s), want %v", got, r.Header.Get("X-Total-Count"), tc.sees)
			}
		})
	}
	// A hidden organization answers exactly like a missing one.
	hidden := e.Do("GET", "orgs/pri", nil, apitest.Basic(carol))
	missing := e.Do("GET", "orgs/none", nil, apitest.Basic(carol))
	if hidden.Status != missing.Status || string(hidden.Body) != string(missing.Body) {
		t.Fatalf("hidden %s vs missing %s", hidden.Body, missing.Body)
	}
	// A user is not an organization.
	e.Do("GET", "orgs/alice", nil, nil).Expect(t, http.StatusNotFound)

	c, authw := e.Client(nil)
	got, err := c.Organization.OrgGet(organization.NewOrgGetParams().WithOrg("pub"), authw)
	if err != nil || got.Payload.Name != "pub" || got.Payload.Visibility != "public" {
		t.Fatalf("OrgGet: %v %+v", err, got)
	}
}

func TestAdminGetAllOrgs(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	_, _, carol, _ := roOrgWorld(t, e)
	roCreateOrg(t, e, apitest.Basic(carol), map[string]any{"username": "Zeta"})
	roCreateOrg(t, e, apitest.Basic(carol), map[string]any{"username": "alpha"})

	e.Do("GET", "admin/orgs", nil, nil).Expect(t, http.StatusUnauthorized)
	e.Do("GET", "admin/orgs", nil, apitest.Basic(carol)).Expect(t, http.StatusForbidden)
	var list []*models.Organization
	r := e.Do("GET", "admin/orgs", nil, apitest.Basic(e.Admin)).Expect(t, http.StatusOK)
	r.JSON(t, &list)
	if got := roOrgNames(list); !reflect.DeepEqual(got, []string{"alpha", "lim", "pri", "pub", "Zeta"}) || r.Header.Get("X-Total-Count") != "5" {
		t.Fatalf("%v %s", got, r.Header.Get("X-Total-Count"))
	}
	r = e.Do("GET", "admin/orgs?limit=2&page=3", nil, apitest.Basic(e.Admin)).Expect(t, http.StatusOK)
	r.JSON(t, &list)
	if got := roOrgNames(list); !reflect.DeepEqual(got, []string{"Zeta"}) || !strings.Contains(r.Header.Get("Link"), `rel="prev"`) {
		t.Fatalf("page 3: %v %s", got, r.Header.Get("Link"))
	}
}

func TestOrgEdit(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	alice, bob, carol, _ := roOrgWorld(t, e)
	roAddMember(t, e, mustOrgID(t, e, "pub"), bob, false, true)
	body := map[string]any{"description": "changed"}
	for _, tc := range []struct {
		name string
		cred apitest.Cred
		org  string
		want int
	}{
		{"anonymous", nil, "pub", http.StatusUnauthorized},
		{"outsider", apitest.Basic(carol), "pub", http.StatusForbidden},
		{"outsider, private", apitest.Basic(carol), "pri", http.StatusNotFound},
		{"member", apitest.Basic(bob), "pub", http.StatusForbidden},
		{"member, private", apitest.Basic(bob), "pri", http.StatusForbidden},
		{"owner", apitest.Basic(alice), "pub", http.StatusOK},
		{"admin", apitest.Basic(e.Admin), "pri", http.StatusOK},
		{"unknown", apitest.Basic(alice), "nothing", http.StatusNotFound},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := e.Do("PATCH", "orgs/"+tc.org, body, tc.cred).Expect(t, tc.want)
			if tc.want == http.StatusForbidden && !strings.Contains(string(r.Body), "Must be an organization owner") {
				t.Fatalf("403 body %s", r.Body)
			}
		})
	}

	cred := apitest.Basic(alice)
	var o models.Organization
	e.Do("PATCH", "orgs/pub", map[string]any{"full_name": "Public Org", "website": "https://pub.example", "location": "Mars",
		"email": "pub@example.com", "repo_admin_change_team_access": true}, cred).Expect(t, http.StatusOK).JSON(t, &o)
	if o.FullName != "Public Org" || o.Website != "https://pub.example" || o.Location != "Mars" || o.Email != "pub@example.com" ||
		!o.RepoAdminChangeTeamAccess || o.Description != "changed" || o.Visibility != "public" {
		t.Fatalf("edited %+v", o)
	}
	// Absent fields stay; an empty body changes nothing.
	var again models.Organization
	e.Do("PATCH", "orgs/pub", map[string]any{}, cred).Expect(t, http.StatusOK).JSON(t, &again)
	if !reflect.DeepEqual(o, again) {
		t.Fatalf("empty PATCH changed %+v into %+v", o, again)
	}
	// Clearing a field with "" works.
	e.Do("PATCH", "orgs/pub", map[string]any{"website": ""}, cred).Expect(t, http.StatusOK).JSON(t, &again)
	if again.Website != "" || again.FullName != "Public Org" {
		t.Fatalf("%+v", again)
	}
	for _, b := range []map[string]any{{"email": "nope"}, {"website": "not a url"}, {"visibility": "hidden"}} {
		e.Do("PATCH", "orgs/pub", b, cred).Expect(t, http.StatusUnprocessableEntity)
	}
	// Turning the organization private hides it from outsiders.
	e.Do("PATCH", "orgs/pub", map[string]any{"visibility": "private"}, cred).Expect(t, http.StatusOK)
	e.Do("GET", "orgs/pub", nil, apitest.Basic(carol)).Expect(t, http.StatusNotFound)
	e.Do("GET", "orgs/pub", nil, apitest.Basic(bob)).Expect(t, http.StatusOK)
}

func mustOrgID(t *testing.T, e *apitest.Env, name string) int64 {
	t.Helper()
	u, err := e.DB.Users().FindByName(context.Background(), name)
	if err != nil {
		t.Fatal(err)
	}
	return u.ID
}

func TestOrgDelete(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	alice, bob, carol, _ := roOrgWorld(t, e)
	roAddMember(t, e, mustOrgID(t, e, "pub"), bob, false, true)
	cred := apitest.Basic(alice)
	e.Do("POST", "orgs/pub/repos", map[string]any{"name": "keep"}, cred).Expect(t, http.StatusCreated)

	e.Do("DELETE", "orgs/pub", nil, nil).Expect(t, http.StatusUnauthorized)
	e.Do("DELETE", "orgs/pub", nil, apitest.Basic(carol)).Expect(t, http.StatusForbidden)
	e.Do("DELETE", "orgs/pri", nil, apitest.Basic(carol)).Expect(t, http.StatusNotFound)
	e.Do("DELETE", "orgs/pub", nil, apitest.Basic(bob)).Expect(t, http.StatusForbidden)
	e.Do("DELETE", "orgs/nothing", nil, cred).Expect(t, http.StatusNotFound)
	r := e.Do("DELETE", "orgs/pub", nil, cred).Expect(t, http.StatusUnprocessableEntity)
	if !strings.Contains(string(r.Body), "organization still has ownership of repositories") {
		t.Fatalf("422 body %s", r.Body)
	}
	e.Do("DELETE", "repos/pub/keep", nil, cred).Expect(t, http.StatusNoContent)

	c, authw := e.Client(cred)
	if _, err := c.Organization.OrgDelete(organization.NewOrgDeleteParams().WithOrg("pub"), authw); err != nil {
		t.Fatal(err)
	}
	e.Do("GET", "orgs/pub", nil, apitest.Basic(e.Admin)).Expect(t, http.StatusNotFound)
	var orgs []*models.Organization
	e.Do("GET", "user/orgs", nil, apitest.Basic(bob)).Expect(t, http.StatusOK).JSON(t, &orgs)
	if got := roOrgNames(orgs); !reflect.DeepEqual(got, []string{"pri"}) {
		t.Fatalf("bob's orgs after delete: %v", got)
	}
	// The name is free again, and a site admin may delete any organization.
	roCreateOrg(t, e, apitest.Basic(carol), map[string]any{"username": "pub"})
	e.Do("DELETE", "orgs/pub", nil, apitest.Basic(e.Admin)).Expect(t, http.StatusNoContent)
}

func TestOrgMembers(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	alice, bob, carol := e.CreateUser("alice", false), e.CreateUser("bob", false), e.CreateUser("carol", false)
	dave := e.CreateUser("dave", false)
	acme := roCreateOrg(t, e, apitest.Basic(alice), map[string]any{"username": "acme"})
	roAddMember(t, e, acme.ID, bob, false, true)
	roAddMember(t, e, acme.ID, dave, false, false)
	priv := roCreateOrg(t, e, apitest.Basic(alice), map[string]any{"username": "priv", "visibility": "private"})
	roAddMember(t, e, priv.ID, bob, false, true)

	t.Run("list", func(t *testing.T) {
		for _, tc := range []struct {
			name string
			cred apitest.Cred
			org  string
			want []string
			code int
		}{
			{"anonymous", nil, "acme", []string{"bob"}, http.StatusOK},
			{"outsider", apitest.Basic(carol), "acme", []string{"bob"}, http.StatusOK},
			{"member", apitest.Basic(dave), "acme", []string{"alice", "bob", "dave"}, http.StatusOK},
			{"owner", apitest.Basic(alice), "acme", []string{"alice", "bob", "dave"}, http.StatusOK},
			{"admin", apitest.Basic(e.Admin), "acme", []string{"alice", "bob", "dave"}, http.StatusOK},
			{"outsider, private org", apitest.Basic(carol), "priv", nil, http.StatusNotFound},
			{"member, private org", apitest.Basic(bob), "priv", []string{"alice", "bob"}, http.StatusOK},
		} {
			t.Run(tc.name, func(t *testing.T) {
				r := e.Do("GET", "orgs/"+tc.org+"/members", nil, tc.cred).Expect(t, tc.code)
				if tc.code != http.StatusOK {
					return
				}
				var users []*models.User
				r.JSON(t, &users)
				if got := roUserNames(users); !reflect.DeepEqual(got, tc.want) || r.Header.Get("X-Total-Count") != strconv.Itoa(len(tc.want)) {
					t.Fatalf("got %v (total %s), want %v", got, r.Header.Get("X-Total-Count"), tc.want)
				}
			})
		}
		var users []*models.User
		r := e.Do("GET", "orgs/acme/members?limit=1&page=2", nil, apitest.Basic(alice)).Expect(t, http.StatusOK)
		r.JSON(t, &users)
		if got := roUserNames(users); !reflect.DeepEqual(got, []string{"bob"}) || !strings.Contains(r.Header.Get("Link"), `rel="next"`) {
			t.Fatalf("page 2: %v %s", got, r.Header.Get("Link"))
		}
	})

	t.Run("is member", func(t *testing.T) {
		for _, tc := range []struct {
			name, org, user string
			cred            apitest.Cred
			want            int
		}{
			{"anonymous", "acme", "bob", nil, http.StatusUnauthorized},
			{"outsider asks about public member", "acme", "bob", apitest.Basic(carol), http.StatusNoContent},
			{"outsider asks about private member", "acme", "dave", apitest.Basic(carol), http.StatusNotFound},
			{"outsider asks about owner with private membership", "acme", "alice", apitest.Basic(carol), http.StatusNotFound},
			{"outsider asks about non-member", "acme", "carol", apitest.Basic(carol), http.StatusNotFound},
			{"member asks about private member", "acme", "alice", apitest.Basic(dave), http.StatusNoContent},
			{"member asks about non-member", "acme", "carol", apitest.Basic(dave), http.StatusNotFound},
			{"admin asks about private member", "acme", "dave", apitest.Basic(e.Admin), http.StatusNoContent},
			{"unknown user", "acme", "nobody", apitest.Basic(alice), http.StatusNotFound},
			{"unknown org", "nothing", "bob", apitest.Basic(alice), http.StatusNotFound},
			{"outsider, private org", "priv", "bob", apitest.Basic(carol), http.StatusNotFound},
			{"member, private org", "priv", "alice", apitest.Basic(bob), http.StatusNoContent},
		} {
			t.Run(tc.name, func(t *testing.T) {
				e.Do("GET", "orgs/"+tc.org+"/members/"+tc.user, nil, tc.cred).Expect(t, tc.want)
			})
		}
		c, authw := e.Client(apitest.Basic(dave))
		if _, err := c.Organization.OrgIsMember(organization.NewOrgIsMemberParams().WithOrg("acme").WithUsername("bob"), authw); err != nil {
			t.Fatal(err)
		}
	})

	// The answers above are what a client that follows redirects sees. The
	// first answer, as the reference sends it: a caller outside the
	// organization (and no site admin) may learn public memberships only,
	// so it is sent to the public membership check (303); asking about
	// oneself is answered at once.
	t.Run("non-members are sent to the public check", func(t *testing.T) {
		hc := e.HTTPClient()
		hc.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
		for _, tc := range []struct {
			name, user string
			cred       apitest.Cred
			want       int
		}{
			{"outsider asks about a member", "dave", apitest.Basic(carol), http.StatusSeeOther},
			{"outsider asks about a non-member", "alice", apitest.Basic(carol), http.StatusSeeOther},
			{"outsider asks about themselves", "carol", apitest.Basic(carol), http.StatusNotFound},
			{"member", "dave", apitest.Basic(bob), http.StatusNoContent},
		} {
			t.Run(tc.name, func(t *testing.T) {
				req, err := http.NewRequest("GET", e.Server.URL+"/api/v1/orgs/acme/members/"+tc.user, nil)
				if err != nil {
					t.Fatal(err)
				}
				tc.cred(req)
				resp, err := hc.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				if resp.StatusCode != tc.want {
					t.Fatalf("status %d, want %d", resp.StatusCode, tc.want)
				}
				if want := e.Server.URL + "/api/v1/orgs/acme/public_members/" + tc.user; tc.want == http.StatusSeeOther && resp.Header.Get("Location") != want {
					t.Fatalf("Location %q, want %q", resp.Header.Get("Location"), want)
				}
			})
		}
		e.Do("GET", "orgs/acme/public_members/bob", nil, nil).Expect(t, http.StatusNoContent)
		e.Do("GET", "orgs/acme/public_members/dave", nil, nil).Expect(t, http.StatusNotFound)
		e.Do("GET", "orgs/acme/public_members/nobody", nil, nil).Expect(t, http.StatusNotFound)
		e.Do("GET", "orgs/priv/public_members/bob", nil, apitest.Basic(carol)).Expect(t, http.StatusNotFound)
	})
}

// TestOrgUserPermissions: GET /users/{username}/orgs/{org}/permissions
// reports what a user's teams give them in an organization (the
// reference's is_owner, is_admin, can_write, can_read,
// can_create_repository), as far as the caller may know the membership: a
// hidden membership reads as none to callers outside the organization.
func TestOrgUserPermissions(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	alice, bob, carol := e.CreateUser("opalice", false), e.CreateUser("opbob", false), e.CreateUser("opcarol", false)
	dave, erin := e.CreateUser("opdave", false), e.CreateUser("operin", false)
	ac := apitest.Basic(alice)
	org := roCreateOrg(t, e, ac, map[string]any{"username": "opacme"})
	tmTeam(t, e, ac, "opacme", map[string]any{"name": "writers", "permission": "write", "can_create_org_repo": true}, "opbob")
	tmTeam(t, e, ac, "opacme", map[string]any{"name": "admins", "permission": "admin"}, "opdave")
	tmTeam(t, e, ac, "opacme", map[string]any{"name": "readers", "permission": "read"}, "operin")
	for _, u := range []*apitest.Account{bob, dave} {
		e.Do("PUT", "orgs/opacme/public_members/"+u.User.Name, nil, apitest.Basic(u)).Expect(t, http.StatusNoContent)
	}
	roCreateOrg(t, e, ac, map[string]any{"username": "ophidden", "visibility": "private"})
	_ = org

	type perms struct{ owner, admin, write, read, create bool }
	get := func(t *testing.T, user, org string, cred apitest.Cred) perms {
		t.Helper()
		var p models.OrganizationPermissions
		e.Do("GET", "users/"+user+"/orgs/"+org+"/permissions", nil, cred).Expect(t, http.StatusOK).JSON(t, &p)
		return perms{p.IsOwner, p.IsAdmin, p.CanWrite, p.CanRead, p.CanCreateRepository}
	}
	all := perms{true, true, true, true, true}
	for _, tc := range []struct {
		name, user string
		cred       apitest.Cred
		want       perms
	}{
		{"owner about themselves", "opalice", ac, all},
		{"writer about themselves", "opbob", apitest.Basic(bob), perms{write: true, read: true, create: true}},
		{"admin team member", "opdave", ac, perms{admin: true, write: true, read: true}},
		{"reader, asked by the owner", "operin", ac, perms{read: true}},
		{"reader about themselves", "operin", apitest.Basic(erin), perms{read: true}},
		{"public writer, asked by an outsider", "opbob", apitest.Basic(carol), perms{write: true, read: true, create: true}},
		{"hidden reader, asked by an outsider", "operin", apitest.Basic(carol), perms{}},
		{"hidden owner, asked by an outsider", "opalice", apitest.Basic(carol), perms{}},
		{"hidden reader, asked by a member", "operin", apitest.Basic(bob), perms{read: true}},
		{"hidden owner, asked by a site admin", "opalice", apitest.Basic(e.Admin), all},
		{"non-member", "opcarol", ac, perms{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := get(t, tc.user, "opacme", tc.cred); got != tc.want {
				t.Fatalf("got %+v, want %+v", got, tc.want)
			}
		})
	}
	e.Do("GET", "users/opbob/orgs/opacme/permissions", nil, nil).Expect(t, http.StatusUnauthorized)
	e.Do("GET", "users/nobody/orgs/opacme/permissions", nil, ac).Expect(t, http.StatusNotFound)
	e.Do("GET", "users/opbob/orgs/nothing/permissions", nil, ac).Expect(t, http.StatusNotFound)
	e.Do("GET", "users/opalice/orgs/ophidden/permissions", nil, apitest.Basic(carol)).Expect(t, http.StatusNotFound)
	if got := get(t, "opalice", "ophidden", ac); got != all {
		t.Fatalf("owner of a private organization: %+v", got)
	}
}

func TestOrgDeleteMember(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	alice, bob, carol := e.CreateUser("alice", false), e.CreateUser("bob", false), e.CreateUser("carol", false)
	dave := e.CreateUser("dave", false)
	acme := roCreateOrg(t, e, apitest.Basic(alice), map[string]any{"username": "acme"})
	roAddMember(t, e, acme.ID, bob, false, true)
	roAddMember(t, e, acme.ID, dave, false, false)
	priv := roCreateOrg(t, e, apitest.Basic(alice), map[string]any{"username": "priv", "visibility": "private"})

	e.Do("DELETE", "orgs/acme/members/dave", nil, nil).Expect(t, http.StatusUnauthorized)
	e.Do("DELETE", "orgs/acme/members/dave", nil, apitest.Basic(carol)).Expect(t, http.StatusForbidden)
	r := e.Do("DELETE", "orgs/acme/members/dave", nil, apitest.Basic(bob)).Expect(t, http.StatusForbidden)
	if !strings.Contains(string(r.Body), "Must be an organization owner") {
		t.Fatalf("403 body %s", r.Body)
	}
	e.Do("DELETE", "orgs/priv/members/alice", nil, apitest.Basic(carol)).Expect(t, http.StatusNotFound)

	cred := apitest.Basic(alice)
	e.Do("DELETE", "orgs/acme/members/dave", nil, cred).Expect(t, http.StatusNoContent)
	e.Do("GET", "orgs/acme/members/dave", nil, cred).Expect(t, http.StatusNotFound)
	e.Do("DELETE", "orgs/acme/members/dave", nil, cred).Expect(t, http.StatusNotFound)
	e.Do("DELETE", "orgs/acme/members/nobody", nil, cred).Expect(t, http.StatusNotFound)

	// The last owner cannot leave, by their own hand or an admin's.
	r = e.Do("DELETE", "orgs/acme/members/alice", nil, cred).Expect(t, http.StatusUnprocessableEntity)
	if !strings.Contains(string(r.Body), "last owner") {
		t.Fatalf("422 body %s", r.Body)
	}
	e.Do("DELETE", "orgs/priv/members/alice", nil, apitest.Basic(e.Admin)).Expect(t, http.StatusUnprocessableEntity)
	// With a second owner it works.
	roAddMember(t, e, acme.ID, bob, true, true)
	e.Do("DELETE", "orgs/acme/members/alice", nil, cred).Expect(t, http.StatusNoContent)
	e.Do("GET", "orgs/acme/members/alice", nil, apitest.Basic(bob)).Expect(t, http.StatusNotFound)
	// Alice lost her rights with her membership.
	e.Do("PATCH", "orgs/acme", map[string]any{"description": "x"}, cred).Expect(t, http.StatusForbidden)
	// A site admin removes members of any organization.
	roAddMember(t, e, priv.ID, carol, false, false)
	c, authw := e.Client(apitest.Basic(e.Admin))
	if _, err := c.Organization.OrgDeleteMember(organization.NewOrgDeleteMemberParams().WithOrg("priv").WithUsername("carol"), authw); err != nil {
		t.Fatal(err)
	}
}

func TestOrgListCurrentUserOrgs(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	_, bob, carol, orgs := roOrgWorld(t, e)
	roAddMember(t, e, orgs["pub"].ID, bob, false, false)

	e.Do("GET", "user/orgs", nil, nil).Expect(t, http.StatusUnauthorized)
	var list []*models.Organization
	r := e.Do("GET", "user/orgs", nil, apitest.Basic(bob)).Expect(t, http.StatusOK)
	r.JSON(t, &list)
	if got := roOrgNames(list); !reflect.DeepEqual(got, []string{"pri", "pub"}) || r.Header.Get("X-Total-Count") != "2" {
		t.Fatalf("%v %s", got, r.Header.Get("X-Total-Count"))
	}
	r = e.Do("GET", "user/orgs?limit=1", nil, apitest.Basic(bob)).Expect(t, http.StatusOK)
	r.JSON(t, &list)
	if got := roOrgNames(list); !reflect.DeepEqual(got, []string{"pri"}) || !strings.Contains(r.Header.Get("Link"), `rel="next"`) {
		t.Fatalf("%v %s", got, r.Header.Get("Link"))
	}
	// A public-only token lists public organizations only.
	r = e.Do("GET", "user/orgs", nil, apitest.TokenCred(e.Token(bob, "public-only", "read:organization"))).Expect(t, http.StatusOK)
	r.JSON(t, &list)
	if got := roOrgNames(list); !reflect.DeepEqual(got, []string{"pub"}) {
		t.Fatalf("public-only: %v", got)
	}
	// So do its teams: none of a private organization's.
	teamOrgs := func(cred apitest.Cred) []string {
		var teams []*models.Team
		r := e.Do("GET", "user/teams", nil, cred).Expect(t, http.StatusOK)
		r.JSON(t, &teams)
		seen := []string{}
		for _, tm := range teams {
			if n := tm.Organization.UserName; !slices.Contains(seen, n) {
				seen = append(seen, n)
			}
		}
		if r.Header.Get("X-Total-Count") != strconv.Itoa(len(teams)) {
			t.Fatalf("user/teams: X-Total-Count %s for %d teams", r.Header.Get("X-Total-Count"), len(teams))
		}
		slices.Sort(seen)
		return seen
	}
	if got := teamOrgs(apitest.Basic(bob)); !reflect.DeepEqual(got, []string{"pri", "pub"}) {
		t.Fatalf("bob's teams are in %v", got)
	}
	if got := teamOrgs(apitest.TokenCred(e.Token(bob, "public-only", "read:organization", "read:user"))); !reflect.DeepEqual(got, []string{"pub"}) {
		t.Fatalf("public-only: bob's teams are in %v", got)
	}
	e.Do("GET", "user/orgs", nil, apitest.Basic(carol)).Expect(t, http.StatusOK).JSON(t, &list)
	if len(list) != 0 {
		t.Fatalf("carol: %v", roOrgNames(list))
	}

	c, authw := e.Client(apitest.Basic(bob))
	resp, err := c.Organization.OrgListCurrentUserOrgs(organization.NewOrgListCurrentUserOrgsParams(), authw)
	if err != nil || resp.XTotalCount != 2 {
		t.Fatalf("%v %+v", err, resp)
	}
}
