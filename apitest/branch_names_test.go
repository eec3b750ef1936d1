package apitest_test

import (
	"net/http"
	"strconv"
	"strings"
	"testing"

	"repohost/apitest"
)

// TestBranchPathNamesThatCannotExist: a branch or rule name in the path
// that no branch can have (traversal, NUL, slashes and backslashes, sent
// percent-encoded) is simply not found on every route that takes one,
// never a server error, and touches nothing; as a new or renamed
// branch's name (in the body) it is a validation error.
func TestBranchPathNamesThatCannotExist(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	alice := e.CreateUser("alice", false)
	tok := e.Token(alice, "write:repository")
	cred := apitest.TokenCred(tok)
	roCreateRepo(t, e, cred, map[string]any{"name": "proj", "auto_init": true})
	e.Do("POST", "repos/alice/proj/branches", map[string]any{"new_branch_name": "dev"}, cred).Expect(t, http.StatusCreated)
	main := ghBranch(t, e, cred, "alice", "proj", "main").Commit.ID

	for _, c := range []struct{ escaped, name string }{
		{"%2e%2e", ".."},
		{"%2e", "."},
		{"%00", "\x00"},
		{"a%00b", "a\x00b"},
		{"a%0ab", "a\nb"},
		{"%2f", "/"},
		{"%2fa", "/a"},
		{"a%2f", "a/"},
		{"a%2f%2fb", "a//b"},
		{"%2e%2e%2fmain", "../main"},
		{"a/%2e%2e/b", "a/../b"},
		{"%5c", `\`},
		{"a%5cb", `a\b`},
		{"%ff", "\xff"},          // not UTF-8
		{"%252e%252e", "%2e%2e"}, // double-encoded: a literal name, missing
	} {
		t.Run(c.escaped, func(t *testing.T) {
			for _, r := range []struct {
				method, path string
				body         any
			}{
				{"GET", "repos/alice/proj/branches/" + c.escaped, nil},
				{"PUT", "repos/alice/proj/branches/" + c.escaped, map[string]any{"new_commit_id": main}},
				{"DELETE", "repos/alice/proj/branches/" + c.escaped, nil},
				{"PATCH", "repos/alice/proj/branches/" + c.escaped, map[string]any{"name": "renamed"}},
				{"GET", "repos/alice/proj/branch_protections/" + c.escaped, nil},
				{"PATCH", "repos/alice/proj/branch_protections/" + c.escaped, map[string]any{"enable_push": true}},
				{"DELETE", "repos/alice/proj/branch_protections/" + c.escaped, nil},
			} {
				e.DoFor(t, r.method, r.path, r.body, cred).Expect(t, http.StatusNotFound)
			}
			if c.name == "%2e%2e" || c.name == "\xff" {
				return // a valid name, just missing; JSON cannot carry \xff
			}
			// As the name of a new branch, or a rename's target: 422.
			e.DoFor(t, "POST", "repos/alice/proj/branches", map[string]any{"new_branch_name": c.name}, cred).
				Expect(t, http.StatusUnprocessableEntity)
			e.DoFor(t, "PATCH", "repos/alice/proj/branches/dev", map[string]any{"name": c.name}, cred).
				Expect(t, http.StatusUnprocessableEntity)
		})
	}
	// Nothing moved.
	var list []map[string]any
	e.Do("GET", "repos/alice/proj/branches", nil, cred).Expect(t, http.StatusOK).JSON(t, &list)
	if len(list) != 2 || ghBranch(t, e, cred, "alice", "proj", "main").Commit.ID != main {
		t.Fatalf("branches after the probes: %v", list)
	}
}

// TestNewBranchNameRule: every route where a client names a branch to
// come into being (a new branch, a rename's target, a new or generated
// repository's default branch, a contents change's new branch) applies
// the same rule: what git refuses and names past 100 bytes are 422.
func TestNewBranchNameRule(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	alice := e.CreateUser("alice", false)
	cred := apitest.Basic(alice)
	roCreateRepo(t, e, cred, map[string]any{"name": "tpl", "auto_init": true, "template": true})
	e.Do("POST", "repos/alice/tpl/branches", map[string]any{"new_branch_name": "dev"}, cred).Expect(t, http.StatusCreated)
	n := 0
	routes := func(name string) []func() *apitest.Response {
		n++
		repo := "r" + strconv.Itoa(n)
		return []func() *apitest.Response{
			func() *apitest.Response {
				return e.Do("POST", "repos/alice/tpl/branches", map[string]any{"new_branch_name": name}, cred)
			},
			func() *apitest.Response {
				return e.Do("PATCH", "repos/alice/tpl/branches/dev", map[string]any{"name": name}, cred)
			},
			func() *apitest.Response {
				return e.Do("POST", "user/repos", map[string]any{"name": repo + "c", "auto_init": true, "default_branch": name}, cred)
			},
			func() *apitest.Response {
				return e.Do("POST", "repos/alice/tpl/generate", map[string]any{"owner": "alice", "name": repo + "g", "git_content": true, "default_branch": name}, cred)
			},
			func() *apitest.Response {
				return e.Do("POST", "repos/alice/tpl/contents/"+repo+".txt", map[string]any{"content": "eA==", "new_branch": name}, cred)
			},
		}
	}
	for _, bad := range []string{strings.Repeat("b", 101), "a~b", "a..b", "-x", "a b", "x.lock"} {
		for i, do := range routes(bad) {
			if r := do(); r.Status != http.StatusUnprocessableEntity {
				t.Errorf("route %d with branch name %.20q: %d, want 422", i, bad, r.Status)
			}
		}
	}
	ok := routes(strings.Repeat("g", 100))
	ok[3]().Expect(t, http.StatusCreated) // generation with the longest name allowed
	ok[2]().Expect(t, http.StatusCreated)
}
