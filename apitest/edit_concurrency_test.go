package apitest_test

import (
	"fmt"
	"net/http"
	"testing"

	"repohost/apitest"
)

// ecTarget is one resource edited by PATCH: two requests that each set a
// different field, and where to read both back.
type ecTarget struct {
	name           string
	patch, get     string
	fieldA, fieldB string
	editor         *apitest.Account
	// body adds what the operation requires besides the field itself.
	body func(field, value string) map[string]any
}

func ecOnly(field, value string) map[string]any { return map[string]any{field: value} }

// TestConcurrentEditsKeepEachOther: two PATCHes of different fields of
// the same row, sent at once, both take effect. An edit that read the row
// before the other wrote it and then wrote every column back would undo
// the other's field (seen on PostgreSQL before the edit paths locked the
// row they re-read).
func TestConcurrentEditsKeepEachOther(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	alice := e.CreateUser("alice", false)
	e.CreateUser("bob", false)
	a := apitest.Basic(alice)
	roCreateRepo(t, e, a, map[string]any{"name": "tool"})
	roCreateOrg(t, e, a, map[string]any{"username": "acme"})

	targets := []ecTarget{
		{name: "repository", patch: "repos/alice/tool", get: "repos/alice/tool",
			fieldA: "description", fieldB: "website", editor: alice, body: ecOnly},
		{name: "organization", patch: "orgs/acme", get: "orgs/acme",
			fieldA: "full_name", fieldB: "location", editor: alice, body: ecOnly},
		{name: "admin user edit", patch: "admin/users/bob", get: "users/bob",
			fieldA: "full_name", fieldB: "location", editor: e.Admin, body: func(field, value string) map[string]any {
				return map[string]any{field: value, "login_name": "bob", "source_id": 0}
			}},
	}
	for _, tg := range targets {
		t.Run(tg.name, func(t *testing.T) {
			for round := 0; round < 40; round++ {
				want := map[string]string{
					tg.fieldA: fmt.Sprintf("a-%d", round),
					tg.fieldB: fmt.Sprintf("https://b%d.example.com", round),
				}
				fields := []string{tg.fieldA, tg.fieldB}
				statuses := make([]int, len(fields))
				isParallel(len(fields), func(i int) {
					statuses[i] = e.DoFor(t, "PATCH", tg.patch, tg.body(fields[i], want[fields[i]]), apitest.Basic(tg.editor)).Status
				})
				for i, st := range statuses {
					if st != http.StatusOK {
						t.Fatalf("round %d: PATCH of %s answered %d", round, fields[i], st)
					}
				}
				var got map[string]any
				e.Do("GET", tg.get, nil, a).Expect(t, http.StatusOK).JSON(t, &got)
				for _, f := range fields {
					if got[f] != want[f] {
						t.Fatalf("round %d: %s is %q, want %q (lost to the concurrent edit)", round, f, got[f], want[f])
					}
				}
			}
		})
	}
}
