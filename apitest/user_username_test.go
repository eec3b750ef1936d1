package apitest_test

import (
	"net/http"
	"testing"

	"repohost/apitest"
)

// TestUserObjectsCarryUsername: every User object, wherever it appears,
// has "username" beside "login" with the same value, as the reference's
// responses do.
func TestUserObjectsCarryUsername(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	alice := e.CreateUser("alice", false)
	a := apitest.Basic(alice)
	roCreateRepo(t, e, a, map[string]any{"name": "tool"})
	e.Do("POST", "repos/alice/tool/issues", map[string]any{"title": "first"}, a).Expect(t, http.StatusCreated)

	cases := []struct {
		name, path string
		cred       apitest.Cred
		// user picks the user object out of the decoded body.
		user func(body any) any
	}{
		{"GET /user", "user", a, uuSelf},
		{"GET /users/{u} anonymously", "users/alice", nil, uuSelf},
		{"GET /users/{u} as admin", "users/alice", apitest.Basic(e.Admin), uuSelf},
		{"repository owner", "repos/alice/tool", nil, uuField("owner")},
		{"issue poster", "repos/alice/tool/issues/1", nil, uuField("user")},
		{"user search", "users/search?q=alice", nil, func(b any) any { return uuFirst(uuField("data")(b)) }},
		{"admin user list", "admin/users?limit=50", apitest.Basic(e.Admin), uuFirst},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var body any
			e.Do("GET", c.path, nil, c.cred).Expect(t, http.StatusOK).JSON(t, &body)
			u, ok := c.user(body).(map[string]any)
			if !ok {
				t.Fatalf("no user object in %v", body)
			}
			login, _ := u["login"].(string)
			username, present := u["username"]
			if !present || login == "" || username != login {
				t.Fatalf("login %q, username %v (present %v)", login, username, present)
			}
		})
	}
}

func uuSelf(body any) any { return body }

func uuField(name string) func(any) any {
	return func(body any) any {
		m, _ := body.(map[string]any)
		return m[name]
	}
}

func uuFirst(body any) any {
	list, _ := body.([]any)
	if len(list) == 0 {
		return nil
	}
	return list[0]
}
