package apitest_test

import (
	"net/http"
	"testing"

	"repohost/apitest"
	"repohost/models"
)

// refTypes are the types of the reference entries of a timeline.
func refEntries(t *testing.T, e *apitest.Env, path string, cred apitest.Cred) []*models.TimelineComment {
	t.Helper()
	var list, out []*models.TimelineComment
	e.Do("GET", path+"/timeline", nil, cred).Expect(t, http.StatusOK).JSON(t, &list)
	for _, c := range list {
		if c.RefIssue != nil {
			out = append(out, c)
		}
	}
	return out
}

// TestIssueRefTokenScope: whether a reference is recorded depends on what
// the caller may read with the token used: a public-only token cannot
// reach the caller's own private repository, so a reference into it
// records nothing there.
func TestIssueRefTokenScope(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	alice := e.CreateUser("alice", false)
	ac := apitest.Basic(alice)
	e.Do("POST", "user/repos", map[string]any{"name": "proj"}, ac).Expect(t, http.StatusCreated)
	e.Do("POST", "user/repos", map[string]any{"name": "secret", "private": true}, ac).Expect(t, http.StatusCreated)
	e.Do("POST", "repos/alice/secret/issues", map[string]any{"title": "hidden"}, ac).Expect(t, http.StatusCreated)
	e.Do("POST", "repos/alice/proj/issues", map[string]any{"title": "open"}, ac).Expect(t, http.StatusCreated)

	public := apitest.TokenCred(e.Token(alice, "public-only", "write:issue", "write:repository"))
	e.Do("POST", "repos/alice/proj/issues/1/comments", map[string]any{"body": "see alice/secret#1"}, public).Expect(t, http.StatusCreated)
	if got := refEntries(t, e, "repos/alice/secret/issues/1", ac); len(got) != 0 {
		t.Fatalf("a public-only token recorded %d references in a private repository", len(got))
	}
	full := apitest.TokenCred(e.Token(alice, "write:issue", "write:repository"))
	e.Do("POST", "repos/alice/proj/issues/1/comments", map[string]any{"body": "again alice/secret#1"}, full).Expect(t, http.StatusCreated)
	if got := refEntries(t, e, "repos/alice/secret/issues/1", ac); len(got) != 1 || got[0].Type != "comment_ref" {
		t.Fatalf("a full token's reference: %d entries", len(got))
	}
}
