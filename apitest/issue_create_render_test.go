package apitest_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"testing"

	"repohost/apitest"
)

// TestCreatedIssueAnswersAsItReads: the answer to creating an issue is
// rendered from what the request knows when the issue has no links, and
// from the database otherwise; either way it is byte for byte what reading
// the issue back answers, for its author and for the site admin alike.
func TestCreatedIssueAnswersAsItReads(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	alice := e.CreateUser("alice", false)
	a := apitest.Basic(alice)
	roCreateRepo(t, e, a, map[string]any{"name": "pub"})
	var label struct {
		ID int64 `json:"id"`
	}
	e.Do("POST", "repos/alice/pub/labels", map[string]any{"name": "bug", "color": "#ff0000"}, a).
		Expect(t, http.StatusCreated).JSON(t, &label)
	for _, c := range []struct {
		name string
		cred apitest.Cred
		body map[string]any
	}{
		{"plain, by the owner", a, map[string]any{"title": "plain", "body": "hello @alice"}},
		{"closed, by the admin", apitest.Basic(e.Admin), map[string]any{"title": "closed", "closed": true}},
		{"with links", a, map[string]any{"title": "linked", "labels": []int64{label.ID}, "assignees": []string{"alice"}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			created := e.Do("POST", "repos/alice/pub/issues", c.body, c.cred).Expect(t, http.StatusCreated)
			var is struct {
				Number int64 `json:"number"`
			}
			created.JSON(t, &is)
			read := e.Do("GET", "repos/alice/pub/issues/"+itoa(is.Number), nil, c.cred).Expect(t, http.StatusOK)
			if !bytes.Equal(canonical(t, created.Body), canonical(t, read.Body)) {
				t.Errorf("created:\n%s\nread back:\n%s", created.Body, read.Body)
			}
		})
	}
}

func canonical(t *testing.T, raw []byte) []byte {
	t.Helper()
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatal(err)
	}
	out, _ := json.Marshal(v)
	return out
}

func itoa(n int64) string {
	b, _ := json.Marshal(n)
	return string(b)
}
