package apitest_test

import (
	"encoding/base64"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"testing"

	runnerv1 "code.gitea.io/actions-proto-go/runner/v1"

	"repohost/apitest"
	"repohost/models"
)

// secretValue is the value every test secret holds: no answer, stored
// row, event or uploaded log may show it.
const secretValue = "s3cr3t-V4lue-never-shown"

// neverShown fails when any answer of e so far carried secretValue: each
// response goes through r.
func neverShown(t *testing.T, r *apitest.Response) *apitest.Response {
	t.Helper()
	if strings.Contains(string(r.Body), secretValue) {
		t.Fatalf("an answer shows the secret: %s", r.Body)
	}
	for k, v := range r.Header {
		if strings.Contains(strings.Join(v, " "), secretValue) {
			t.Fatalf("header %s shows the secret", k)
		}
	}
	return r
}

// TestActionsSecretsAndVariablesAtEachScope: the routes of the three
// scopes, as the reference answers them: a secret is written (201, then
// 204 on replace) and listed by name only; names are case-insensitive,
// kept upper case and checked (400); a variable is created once (409 on a
// taken name), read, renamed, listed in pages and deleted (404 after);
// only the scope's owners may touch it.
func TestActionsSecretsAndVariablesAtEachScope(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	aliceAcc := e.CreateUser("alice", false)
	alice := apitest.Basic(aliceAcc)
	bob := apitest.Basic(e.CreateUser("bob", false))
	roCreateOrg(t, e, alice, map[string]any{"username": "acme"})
	roCreateRepo(t, e, alice, map[string]any{"name": "proj", "auto_init": true})
	roCreateRepo(t, e, alice, map[string]any{"name": "hidden", "private": true})
	// bob administers alice/proj but does not own it: the reference's
	// reqOwner refuses him, as for the repository's runners.
	e.Do("PUT", "repos/alice/proj/collaborators/bob", map[string]any{"permission": "admin"}, alice).Expect(t, http.StatusNoContent)

	for _, base := range []string{"repos/alice/proj/actions/", "orgs/acme/actions/", "user/actions/"} {
		t.Run(strings.Split(base, "/")[0], func(t *testing.T) {
			do := func(method, path string, body any, status int) *apitest.Response {
				t.Helper()
				return neverShown(t, e.Do(method, base+path, body, alice).Expect(t, status))
			}
			// Secrets: created, replaced, listed without values.
			do("PUT", "secrets/deploy_key", map[string]any{"data": secretValue, "description": "ssh"}, http.StatusCreated)
			do("PUT", "secrets/DEPLOY_KEY", map[string]any{"data": secretValue + "2", "description": "ssh key"}, http.StatusNoContent)
			do("PUT", "secrets/_other", map[string]any{"data": secretValue}, http.StatusCreated)
			for _, bad := range []string{"GITEA_TOKEN", "github_x", "1ABC", "A-B", "A%20B"} {
				do("PUT", "secrets/"+bad, map[string]any{"data": "x"}, http.StatusBadRequest)
			}
			do("PUT", "secrets/EMPTY", map[string]any{"data": ""}, http.StatusUnprocessableEntity)
			do("PUT", "secrets/NODATA", map[string]any{"description": "d"}, http.StatusUnprocessableEntity)
			do("PUT", "secrets/BIG", map[string]any{"data": strings.Repeat("x", 65537)}, http.StatusBadRequest)
			if !strings.HasPrefix(base, "user/") {
				var list []*models.Secret
				r := do("GET", "secrets", nil, http.StatusOK)
				r.JSON(t, &list)
				if len(list) != 2 || list[0].Name != "DEPLOY_KEY" || list[0].Description != "ssh key" || list[1].Name != "_OTHER" ||
					r.Header.Get("X-Total-Count") != "2" {
					t.Fatalf("secrets %s", r.Body)
				}
				if strings.Contains(string(r.Body), `"data"`) || list[0].Created.String() == "" {
					t.Fatalf("secret list %s", r.Body)
				}
				var page []*models.Secret
				r = do("GET", "secrets?limit=1&page=2", nil, http.StatusOK)
				if r.JSON(t, &page); len(page) != 1 || page[0].Name != "_OTHER" || !strings.Contains(r.Header.Get("Link"), `rel="first"`) {
					t.Fatalf("second page %s %v", r.Body, r.Header)
				}
			}
			do("DELETE", "secrets/_Other", nil, http.StatusNoContent)
			do("DELETE", "secrets/_OTHER", nil, http.StatusNotFound)

			// Variables.
			do("POST", "variables/build_mode", map[string]any{"value": "fast\r\nlane", "description": "how"}, http.StatusCreated)
			do("POST", "variables/BUILD_MODE", map[string]any{"value": "again"}, http.StatusConflict)
			do("POST", "variables/GITEA_X", map[string]any{"value": "v"}, http.StatusBadRequest)
			do("POST", "variables/EMPTY", map[string]any{"value": ""}, http.StatusUnprocessableEntity)
			var v models.ActionVariable
			do("GET", "variables/Build_Mode", nil, http.StatusOK).JSON(t, &v)
			if v.Name != "BUILD_MODE" || v.Data != "fast\nlane" || v.Description != "how" {
				t.Fatalf("variable %s", mustJSON(v))
			}
			if strings.HasPrefix(base, "repos/") && (v.RepoID == 0 || v.OwnerID != 0) || !strings.HasPrefix(base, "repos/") && (v.OwnerID == 0 || v.RepoID != 0) {
				t.Fatalf("variable's scope %s", mustJSON(v))
			}
			do("POST", "variables/second", map[string]any{"value": "2"}, http.StatusCreated)
			do("PUT", "variables/second", map[string]any{"name": "build_mode", "value": "3"}, http.StatusConflict)
			do("PUT", "variables/second", map[string]any{"name": "third", "value": "3"}, http.StatusNoContent)
			do("PUT", "variables/second", map[string]any{"value": "4"}, http.StatusNotFound)
			do("PUT", "variables/third", map[string]any{"name": "GITHUB_3", "value": "4"}, http.StatusBadRequest)
			do("PUT", "variables/third", map[string]any{"value": "4"}, http.StatusNoContent)
			var list []*models.ActionVariable
			r := do("GET", "variables?limit=1", nil, http.StatusOK)
			if r.JSON(t, &list); len(list) != 1 || list[0].Name != "BUILD_MODE" || r.Header.Get("X-Total-Count") != "2" ||
				!strings.Contains(r.Header.Get("Link"), `rel="next"`) {
				t.Fatalf("variables page 1 %s %v", r.Body, r.Header)
			}
			do("GET", "variables?limit=1&page=2", nil, http.StatusOK).JSON(t, &list)
			if len(list) != 1 || list[0].Name != "THIRD" || list[0].Data != "4" {
				t.Fatalf("variables page 2 %s", mustJSON(list))
			}
			do("DELETE", "variables/third", nil, http.StatusNoContent)
			do("DELETE", "variables/third", nil, http.StatusNotFound)
			do("GET", "variables/third", nil, http.StatusNotFound)
		})
	}

	// Who may: the repository's admin collaborator is refused (403), as
	// is an outsider of the organization; a private repository is
	// missing to an outsider; anonymous callers must sign in.
	e.Do("PUT", "repos/alice/proj/actions/secrets/X", map[string]any{"data": "x"}, bob).Expect(t, http.StatusForbidden)
	e.Do("GET", "repos/alice/proj/actions/variables", nil, bob).Expect(t, http.StatusForbidden)
	e.Do("GET", "repos/alice/hidden/actions/secrets", nil, bob).Expect(t, http.StatusNotFound)
	e.Do("GET", "orgs/acme/actions/variables/BUILD_MODE", nil, bob).Expect(t, http.StatusForbidden)
	e.Do("DELETE", "orgs/acme/actions/secrets/DEPLOY_KEY", nil, bob).Expect(t, http.StatusForbidden)
	e.Do("GET", "repos/alice/proj/actions/secrets", nil, nil).Expect(t, http.StatusUnauthorized)
	e.Do("GET", "user/actions/variables", nil, nil).Expect(t, http.StatusUnauthorized)
	// bob's own scope is his: alice's variables are not there.
	var mine []*models.ActionVariable
	e.Do("GET", "user/actions/variables", nil, bob).Expect(t, http.StatusOK).JSON(t, &mine)
	if len(mine) != 0 {
		t.Fatalf("bob's variables %s", mustJSON(mine))
	}
	// A token limited to public data may not touch a user's secrets
	// (the reference's CVE-2026-24791); a read token may not write.
	public := apitest.TokenCred(e.Token(aliceAcc, "write:user", "public-only"))
	e.Do("PUT", "user/actions/secrets/X", map[string]any{"data": "x"}, public).Expect(t, http.StatusForbidden)
	read := apitest.TokenCred(e.Token(aliceAcc, "read:repository"))
	e.Do("PUT", "repos/alice/proj/actions/secrets/X", map[string]any{"data": "x"}, read).Expect(t, http.StatusForbidden)

	// At rest: sealed, and no event names the value.
	for _, q := range []string{"SELECT COUNT(*) FROM action_secrets WHERE data LIKE '%" + secretValue + "%'",
		"SELECT COUNT(*) FROM events WHERE payload LIKE '%" + secretValue + "%'",
		"SELECT COUNT(*) FROM action_secrets WHERE data NOT LIKE 'sb1:%'"} {
		if n := countRows(t, e, q); n != 0 {
			t.Fatalf("%s: %d rows", q, n)
		}
	}
}

const settingsWorkflow = `on: push
jobs:
  build:
    runs-on: linux
    steps:
      - run: echo ${{ secrets.DEPLOY_KEY }} ${{ vars.SHARED }}
`

// TestActionsTaskSecretsAndVariables: a task fetched over the runner
// protocol carries its repository's secrets and variables over its
// organization's (the repository's win on a shared name), never another
// owner's, and the log its runner uploads is kept with every secret value
// masked.
func TestActionsTaskSecretsAndVariables(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	alice := apitest.Basic(e.CreateUser("alice", false))
	roCreateOrg(t, e, alice, map[string]any{"username": "acme"})
	e.Do("POST", "orgs/acme/repos", map[string]any{"name": "svc", "auto_init": true}, alice).Expect(t, http.StatusCreated)
	put := func(path string, body map[string]any, status int) {
		t.Helper()
		e.Do(strings.Fields(path)[0], strings.Fields(path)[1], body, alice).Expect(t, status)
	}
	put("POST orgs/acme/actions/variables/SHARED", map[string]any{"value": "from the organization"}, http.StatusCreated)
	put("POST orgs/acme/actions/variables/ORG_ONLY", map[string]any{"value": "org"}, http.StatusCreated)
	put("POST repos/acme/svc/actions/variables/SHARED", map[string]any{"value": "from the repository"}, http.StatusCreated)
	put("PUT orgs/acme/actions/secrets/DEPLOY_KEY", map[string]any{"data": "the organization's key"}, http.StatusCreated)
	put("PUT orgs/acme/actions/secrets/ORG_SECRET", map[string]any{"data": "multi\nline-secret"}, http.StatusCreated)
	put("PUT repos/acme/svc/actions/secrets/DEPLOY_KEY", map[string]any{"data": secretValue}, http.StatusCreated)
	// alice's own are not acme's.
	put("PUT user/actions/secrets/ALICE_ONLY", map[string]any{"data": "alice"}, http.StatusCreated)
	put("POST user/actions/variables/ALICE_VAR", map[string]any{"value": "alice"}, http.StatusCreated)

	runner := registerRunner(t, e, regToken(t, e, "orgs/acme/actions/runners/registration-token", alice), "acme", "linux")
	e.Do("POST", "repos/acme/svc/contents/.gitea/workflows/ci.yml",
		map[string]any{"content": base64.StdEncoding.EncodeToString([]byte(settingsWorkflow)), "message": "ci"}, alice).
		Expect(t, http.StatusCreated)
	task := runner.fetch(t)
	if task == nil {
		t.Fatal("no task")
	}
	wantSecrets := map[string]string{"DEPLOY_KEY": secretValue, "ORG_SECRET": "multi\nline-secret"}
	for k, v := range wantSecrets {
		if task.Secrets[k] != v {
			t.Fatalf("secret %s: %q", k, task.Secrets[k])
		}
	}
	if task.Secrets["GITEA_TOKEN"] == "" || task.Secrets["GITHUB_TOKEN"] != task.Secrets["GITEA_TOKEN"] || len(task.Secrets) != 4 {
		t.Fatalf("secrets %v", slices.Sorted(maps.Keys(task.Secrets)))
	}
	if fmt.Sprint(task.Vars) != fmt.Sprint(map[string]string{"ORG_ONLY": "org", "SHARED": "from the repository"}) {
		t.Fatalf("variables %v", task.Vars)
	}

	runner.log(t, task.Id, 0, true, "deploying with "+secretValue+".", "line-secret and multi", "nothing secret")
	runner.finish(t, task.Id, runnerv1.Result_RESULT_SUCCESS, nil)
	jobs := listJobs(t, e, "repos/acme/svc/actions/jobs", alice)
	logs := string(e.Do("GET", fmt.Sprintf("repos/acme/svc/actions/jobs/%d/logs", jobs[0].ID), nil, alice).Expect(t, http.StatusOK).Body)
	if strings.Contains(logs, secretValue) || !strings.Contains(logs, " deploying with ***.\n") ||
		!strings.Contains(logs, " *** and ***\n") || !strings.Contains(logs, " nothing secret\n") {
		t.Fatalf("stored log %q", logs)
	}
	if n := countRows(t, e, "SELECT COUNT(*) FROM action_task_logs WHERE content LIKE '%"+secretValue+"%'"); n != 0 {
		t.Fatalf("%d log rows show the secret", n)
	}
}

// countRows runs a COUNT query on the server's database.
func countRows(t *testing.T, e *apitest.Env, query string) int64 {
	t.Helper()
	db, err := e.DB.SQL()
	if err != nil {
		t.Fatal(err)
	}
	var n int64
	if err := db.QueryRow(query).Scan(&n); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return n
}
