package apitest_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"testing"

	"repohost/apitest"
	"repohost/impl"
	"repohost/impl/apierr"
	"repohost/impl/events"
	"repohost/impl/org"
	"repohost/impl/user"
	"repohost/models"
	"repohost/store"
)

// isStatus tells whether err is an API error answered with status.
func isStatus(err error, status int) bool {
	var e *apierr.Error
	return errors.As(err, &e) && e.Status == status
}

// evNamed fails t unless ev is about the account id named name, caused by
// actor.
func evNamed(t *testing.T, ev events.Event, actor, id int64, name string) {
	t.Helper()
	if ev.ActorID != actor || ev.RepoID != 0 || ev.Payload != (events.Named{ID: id, Name: name}) {
		t.Errorf("%s: actor %d, repo %d, payload %+v; want actor %d, payload {%d %s}", ev.Kind, ev.ActorID, ev.RepoID, ev.Payload, actor, id, name)
	}
}

// Every route that creates, edits, renames or deletes an account records
// exactly one event, after its change committed; a refused request
// records none.
func TestUserEvents(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	log := e.RecordEvents()
	admin := apitest.Basic(e.Admin)
	adminID := e.Admin.User.ID

	alice := e.CreateUser("alice", false)
	evNamed(t, log.ExpectKinds(t, "service create", events.UserCreated)[0], 0, alice.User.ID, "alice")

	// Create.
	var bob models.User
	e.Do("POST", "admin/users", map[string]any{"username": "bob", "email": "bob@example.com", "password": "bob-password",
		"must_change_password": false}, admin).Expect(t, http.StatusCreated).JSON(t, &bob)
	evNamed(t, log.ExpectKinds(t, "admin create", events.UserCreated)[0], adminID, bob.ID, "bob")
	for _, body := range []map[string]any{
		{"username": "bob", "email": "bob2@example.com", "password": "bob-password"},  // name taken
		{"username": "BOB", "email": "bob3@example.com", "password": "bob-password"},  // name taken
		{"username": "bobby", "email": "bob@example.com", "password": "bob-password"}, // address taken
		{"username": "bobby", "email": "no-address", "password": "bob-password"},      // bad address
		{"username": "bo/b", "email": "bob4@example.com", "password": "bob-password"}, // bad name
	} {
		e.Do("POST", "admin/users", body, admin).Expect(t, http.StatusUnprocessableEntity)
	}
	log.ExpectKinds(t, "refused admin creates")
	bobAcc := &apitest.Account{User: &store.User{ID: bob.ID, Name: "bob"}, Password: "bob-password"}

	// Edit.
	edit := func(extra map[string]any) *apitest.Response {
		body := map[string]any{"login_name": "bob", "source_id": 0}
		for k, v := range extra {
			body[k] = v
		}
		return e.Do("PATCH", "admin/users/bob", body, admin)
	}
	edit(map[string]any{"full_name": "Bob B.", "email": "bob.b@example.com"}).Expect(t, http.StatusOK)
	evNamed(t, log.ExpectKinds(t, "admin edit", events.UserEdited)[0], adminID, bob.ID, "bob")
	edit(map[string]any{"email": "alice@example.com"}).Expect(t, http.StatusBadRequest) // another's address
	edit(map[string]any{"email": "no-address"}).Expect(t, http.StatusUnprocessableEntity)
	edit(map[string]any{"max_repo_creation": -2}).Expect(t, http.StatusUnprocessableEntity)
	e.Do("PATCH", "admin/users/nobody", map[string]any{"login_name": "x", "source_id": 0}, admin).Expect(t, http.StatusNotFound)
	e.Do("PATCH", "admin/users/admin", map[string]any{"login_name": "admin", "source_id": 0, "admin": false}, admin).
		Expect(t, http.StatusBadRequest) // the last admin
	log.ExpectKinds(t, "refused admin edits")

	// Emails of one's own.
	e.Do("POST", "user/emails", map[string]any{"emails": []string{"b1@example.com", "b2@example.com"}}, apitest.Basic(bobAcc)).
		Expect(t, http.StatusCreated)
	evNamed(t, log.ExpectKinds(t, "add emails", events.UserEmailsAdded)[0], bob.ID, bob.ID, "bob")
	e.Do("POST", "user/emails", map[string]any{"emails": []string{"b3@example.com", "no-address"}}, apitest.Basic(bobAcc)).
		Expect(t, http.StatusUnprocessableEntity)
	e.Do("POST", "user/emails", map[string]any{"emails": []string{"alice@example.com"}}, apitest.Basic(bobAcc)).
		Expect(t, http.StatusUnprocessableEntity)
	e.Do("DELETE", "user/emails", map[string]any{"emails": []string{"b1@example.com", "unknown@example.com"}}, apitest.Basic(bobAcc)).
		Expect(t, http.StatusNotFound)
	e.Do("DELETE", "user/emails", map[string]any{"emails": []string{"bob.b@example.com"}}, apitest.Basic(bobAcc)).
		Expect(t, http.StatusUnprocessableEntity) // the primary one
	e.Do("DELETE", "user/emails", map[string]any{"emails": []string{}}, apitest.Basic(bobAcc)).Expect(t, http.StatusNoContent)
	log.ExpectKinds(t, "refused or empty email changes")
	e.Do("DELETE", "user/emails", map[string]any{"emails": []string{"b1@example.com", "B2@example.com"}}, apitest.Basic(bobAcc)).
		Expect(t, http.StatusNoContent)
	evNamed(t, log.ExpectKinds(t, "delete emails", events.UserEmailsDeleted)[0], bob.ID, bob.ID, "bob")

	// Tokens: created and revoked by name, by id and by themselves.
	var tok models.AccessToken
	e.Do("POST", "users/bob/tokens", map[string]any{"name": "ci", "scopes": []string{"all"}}, apitest.Basic(bobAcc)).
		Expect(t, http.StatusCreated).JSON(t, &tok)
	ev := log.ExpectKinds(t, "create token", events.TokenCreated)[0]
	if want := (events.Token{ID: tok.ID, Name: "ci", Owner: events.Named{ID: bob.ID, Name: "bob"}}); ev.Payload != want || ev.ActorID != bob.ID {
		t.Errorf("token event %+v by %d, want %+v", ev.Payload, ev.ActorID, want)
	}
	e.Do("POST", "users/bob/tokens", map[string]any{"name": "ci", "scopes": []string{"all"}}, apitest.Basic(bobAcc)).
		Expect(t, http.StatusBadRequest)
	e.Do("POST", "users/bob/tokens", map[string]any{"name": "x", "scopes": []string{"sudo"}}, apitest.Basic(bobAcc)).
		Expect(t, http.StatusBadRequest)
	e.Do("DELETE", "users/bob/tokens/nope", nil, apitest.Basic(bobAcc)).Expect(t, http.StatusNotFound)
	log.ExpectKinds(t, "refused token changes")
	e.Do("DELETE", fmt.Sprintf("users/bob/tokens/%d", tok.ID), nil, apitest.Basic(bobAcc)).Expect(t, http.StatusNoContent)
	log.ExpectKinds(t, "delete token", events.TokenDeleted)
	var own models.AccessToken
	e.Do("POST", "users/bob/tokens", map[string]any{"name": "self", "scopes": []string{"read:user"}}, apitest.Basic(bobAcc)).
		Expect(t, http.StatusCreated).JSON(t, &own)
	e.Do("DELETE", "/api/v1/token", nil, apitest.TokenCred(own.Token)).Expect(t, http.StatusNoContent)
	log.ExpectKinds(t, "create and revoke the current token", events.TokenCreated, events.TokenDeleted)

	// Rename.
	e.Do("POST", "admin/users/bob/rename", map[string]any{"new_username": "robert"}, admin).Expect(t, http.StatusNoContent)
	ev = log.ExpectKinds(t, "rename", events.UserRenamed)[0]
	if want := (events.Renamed{ID: bob.ID, Name: "robert", OldName: "bob"}); ev.Payload != want || ev.ActorID != adminID {
		t.Errorf("rename event %+v by %d, want %+v", ev.Payload, ev.ActorID, want)
	}
	e.Do("POST", "admin/users/robert/rename", map[string]any{"new_username": "robert"}, admin).Expect(t, http.StatusNoContent)
	e.Do("POST", "admin/users/robert/rename", map[string]any{"new_username": "ALICE"}, admin).Expect(t, http.StatusUnprocessableEntity)
	e.Do("POST", "admin/users/robert/rename", map[string]any{"new_username": "a/b"}, admin).Expect(t, http.StatusUnprocessableEntity)
	log.ExpectKinds(t, "refused or empty renames")

	// Delete.
	e.Do("DELETE", "admin/users/admin", nil, admin).Expect(t, http.StatusUnprocessableEntity)
	e.Do("DELETE", "admin/users/nobody", nil, admin).Expect(t, http.StatusNotFound)
	log.ExpectKinds(t, "refused deletes")
	e.Do("DELETE", "admin/users/robert", nil, admin).Expect(t, http.StatusNoContent)
	evNamed(t, log.ExpectKinds(t, "delete", events.UserDeleted)[0], adminID, bob.ID, "robert")

	// Purge: alice owns a repository and is the only owner of an
	// organization that owns one too; all go, each with its own event.
	var solo models.Organization
	e.Do("POST", "orgs", map[string]any{"username": "solo"}, apitest.Basic(alice)).Expect(t, http.StatusCreated).JSON(t, &solo)
	log.ExpectKinds(t, "create org", events.OrgCreated)
	utRepo(t, e, alice.User, "mine", false, true)
	utRepo(t, e, &store.User{ID: solo.ID, Name: "solo"}, "theirs", false, true)
	e.Do("DELETE", "admin/users/alice", nil, admin).Expect(t, http.StatusUnprocessableEntity)
	log.ExpectKinds(t, "refused delete of an owner")
	e.Do("DELETE", "admin/users/alice?purge=true", nil, admin).Expect(t, http.StatusNoContent)
	// Each repository goes through the repository service, which
	// announces it, before its owner goes.
	got := log.ExpectKinds(t, "purge", events.RepoDeleted, events.RepoDeleted, events.OrgDeleted, events.UserDeleted)
	if len(got) == 4 {
		evNamed(t, got[2], adminID, solo.ID, "solo")
		evNamed(t, got[3], adminID, alice.User.ID, "alice")
	}
	for _, id := range []int64{alice.User.ID, solo.ID} {
		if n, err := e.DB.Repos().CountByOwner(context.Background(), id); err != nil || n != 0 {
			t.Errorf("owner %d still has %d repositories (%v)", id, n, err)
		}
	}
}

// Every route that creates, edits or deletes an organization, or removes
// a member, records exactly one event; a refused request records none.
func TestOrgEvents(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	alice, bob := e.CreateUser("alice", false), e.CreateUser("bob", false)
	log := e.RecordEvents()
	admin, cred := apitest.Basic(e.Admin), apitest.Basic(alice)

	// Create, by a user and by an admin for a user.
	var acme, beta models.Organization
	e.Do("POST", "orgs", map[string]any{"username": "acme", "email": "info@acme.example"}, cred).
		Expect(t, http.StatusCreated).JSON(t, &acme)
	evNamed(t, log.ExpectKinds(t, "create", events.OrgCreated)[0], alice.User.ID, acme.ID, "acme")
	e.Do("POST", "admin/users/alice/orgs", map[string]any{"username": "beta"}, admin).Expect(t, http.StatusCreated).JSON(t, &beta)
	evNamed(t, log.ExpectKinds(t, "admin create", events.OrgCreated)[0], e.Admin.User.ID, beta.ID, "beta")
	for _, body := range []map[string]any{
		{"username": "acme"}, {"username": "ACME"}, {"username": "bob"}, // name taken
		{"username": "gamma", "email": "no-address"}, // bad address
		{"username": "gamma", "website": "ftp://x.example"},
		{"username": "a/b"},
	} {
		e.Do("POST", "orgs", body, cred).Expect(t, http.StatusUnprocessableEntity)
		e.Do("POST", "admin/users/alice/orgs", body, admin).Expect(t, http.StatusUnprocessableEntity)
	}
	e.Do("POST", "orgs", map[string]any{"username": "gamma"}, apitest.TokenCred(e.Token(alice, "read:organization"))).
		Expect(t, http.StatusForbidden)
	log.ExpectKinds(t, "refused creates")

	// Edit.
	e.Do("PATCH", "orgs/acme", map[string]any{"full_name": "Acme Inc.", "visibility": "limited"}, cred).Expect(t, http.StatusOK)
	evNamed(t, log.ExpectKinds(t, "edit", events.OrgEdited)[0], alice.User.ID, acme.ID, "acme")
	e.Do("PATCH", "orgs/acme", map[string]any{"email": "no-address"}, cred).Expect(t, http.StatusUnprocessableEntity)
	e.Do("PATCH", "orgs/acme", map[string]any{"full_name": "Bob's"}, apitest.Basic(bob)).Expect(t, http.StatusForbidden)
	log.ExpectKinds(t, "refused edits")

	// Members.
	roAddMember(t, e, acme.ID, bob, false, true)
	e.Do("DELETE", "orgs/acme/members/alice", nil, cred).Expect(t, http.StatusUnprocessableEntity) // the last owner
	e.Do("DELETE", "orgs/acme/members/admin", nil, cred).Expect(t, http.StatusNotFound)
	log.ExpectKinds(t, "refused member removals")
	e.Do("DELETE", "orgs/acme/members/bob", nil, cred).Expect(t, http.StatusNoContent)
	ev := log.ExpectKinds(t, "remove member", events.OrgMemberRemoved)[0]
	if want := (events.Member{Org: events.Named{ID: acme.ID, Name: "acme"}, User: events.Named{ID: bob.User.ID, Name: "bob"}}); ev.Payload != want {
		t.Errorf("member event %+v, want %+v", ev.Payload, want)
	}

	// Delete.
	utRepo(t, e, &store.User{ID: beta.ID, Name: "beta"}, "r", false, false)
	e.Do("DELETE", "orgs/beta", nil, cred).Expect(t, http.StatusUnprocessableEntity) // owns a repository
	e.Do("DELETE", "orgs/acme", nil, apitest.Basic(bob)).Expect(t, http.StatusForbidden)
	log.ExpectKinds(t, "refused deletes")
	e.Do("DELETE", "orgs/acme", nil, cred).Expect(t, http.StatusNoContent)
	evNamed(t, log.ExpectKinds(t, "delete", events.OrgDeleted)[0], alice.User.ID, acme.ID, "acme")
}

// The service actions no route reaches yet (membership changes, a user
// editing their own account) announce themselves the same way.
func TestAccountServiceEvents(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	ctx := context.Background()
	svc := impl.NewServices(e.Deps)
	alice, bob := e.CreateUser("alice", false), e.CreateUser("bob", false)
	o, err := svc.Orgs.Create(ctx, alice.User, alice.User, org.CreateInput{Name: "acme"})
	if err != nil {
		t.Fatal(err)
	}
	team, err := svc.Orgs.CreateTeam(ctx, alice.User, o, org.TeamInput{Name: func() *string { s := "devs"; return &s }()})
	if err != nil {
		t.Fatal(err)
	}
	log := e.RecordEvents()
	member := events.Member{Org: events.Named{ID: o.ID, Name: "acme"}, User: events.Named{ID: bob.User.ID, Name: "bob"}}

	steps := []struct {
		name string
		do   func() error
		want []events.Kind
	}{
		{"add", func() error { return svc.Orgs.AddTeamMember(ctx, alice.User, team, bob.User) },
			[]events.Kind{events.TeamMemberAdded, events.OrgMemberAdded}},
		{"add again", func() error { return svc.Orgs.AddTeamMember(ctx, alice.User, team, bob.User) }, nil},
		{"publicize", func() error { return svc.Orgs.Publicize(ctx, bob.User, o, bob.User) }, []events.Kind{events.OrgMemberPublicized}},
		{"publicize again", func() error { return svc.Orgs.Publicize(ctx, bob.User, o, bob.User) }, nil},
		{"conceal", func() error { return svc.Orgs.Conceal(ctx, bob.User, o, bob.User) }, []events.Kind{events.OrgMemberConcealed}},
	}
	for _, s := range steps {
		if err := s.do(); err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		for _, ev := range log.ExpectKinds(t, s.name, s.want...) {
			if ev.Kind == events.TeamMemberAdded {
				continue
			}
			if ev.Payload != member {
				t.Errorf("%s: payload %+v", s.name, ev.Payload)
			}
		}
	}
	m, err := e.DB.Orgs().FindMember(ctx, o.ID, bob.User.ID)
	if err != nil || m.IsPublic || m.IsOwner {
		t.Fatalf("membership %+v %v", m, err)
	}
	if err := svc.Orgs.Publicize(ctx, e.Admin.User, o, e.Admin.User); !isStatus(err, http.StatusNotFound) {
		t.Errorf("publicize a non-member: %v", err)
	}
	if err := svc.Orgs.AddTeamMember(ctx, alice.User, team, o); !isStatus(err, http.StatusUnprocessableEntity) {
		t.Errorf("add an organization: %v", err)
	}

	// A user may change their profile, not what only a site admin may.
	name := "Bob B."
	if _, err := svc.Users.Edit(ctx, bob.User, bob.User, user.EditInput{FullName: &name}); err != nil {
		t.Fatal(err)
	}
	evNamed(t, log.ExpectKinds(t, "self edit", events.UserEdited)[0], bob.User.ID, bob.User.ID, "bob")
	yes := true
	if _, err := svc.Users.Edit(ctx, bob.User, bob.User, user.EditInput{Admin: &yes}); !isStatus(err, http.StatusForbidden) {
		t.Errorf("self promotion: %v", err)
	}
	log.ExpectKinds(t, "refused service actions")
	if u, err := e.DB.Users().FindByID(ctx, bob.User.ID); err != nil || u.IsAdmin || u.FullName != name {
		t.Fatalf("bob %+v %v", u, err)
	}
}
