package apitest_test

import (
	"net/http"
	"strings"
	"testing"

	"repohost/apitest"
	"repohost/store/gitstore"
)

// TestPublicOnlyTokenCannotMakePrivateRepositories: a token limited to
// public data (scope public-only) could create private repositories on
// every creation route and make a public one private, although it could
// not see them afterwards. Each route now refuses with the reference's 403
// for such a token, and nothing is created or changed; the same request
// with a token that is not limited succeeds.
func TestPublicOnlyTokenCannotMakePrivateRepositories(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	alice := e.CreateUser("poalice", false)
	aliceCred := apitest.Basic(alice)
	roCreateOrg(t, e, aliceCred, map[string]any{"username": "poorg", "visibility": "public"})
	roCreateRepo(t, e, aliceCred, map[string]any{"name": "tpl", "template": true, "auto_init": true})
	roCreateRepo(t, e, aliceCred, map[string]any{"name": "open"})
	unStray(t, e, "poalice", "stray", gitstore.InitOptions{})

	userScopes := []string{"write:repository", "write:organization", "write:user"}
	limited := apitest.TokenCred(e.Token(alice, append([]string{"public-only"}, userScopes...)...))
	full := apitest.TokenCred(e.Token(alice, userScopes...))
	adminLimited := apitest.TokenCred(e.Token(e.Admin, "public-only", "write:admin", "write:repository"))
	adminFull := apitest.TokenCred(e.Token(e.Admin, "write:admin", "write:repository"))

	refused := func(t *testing.T, r *apitest.Response) {
		t.Helper()
		r.Expect(t, http.StatusForbidden)
		if !strings.Contains(string(r.Body), "token scope is limited to public repos") {
			t.Fatalf("body %s", r.Body)
		}
	}
	absent := func(t *testing.T, full string) {
		t.Helper()
		e.Do("GET", "repos/"+full, nil, apitest.Basic(e.Admin)).Expect(t, http.StatusNotFound)
		owner, name, _ := strings.Cut(full, "/")
		if roGitExists(t, e, owner, name) {
			t.Fatalf("%s has a directory on disk", full)
		}
	}
	private := func(t *testing.T, full string, want bool) {
		t.Helper()
		var r struct {
			Private bool `json:"private"`
		}
		e.Do("GET", "repos/"+full, nil, apitest.Basic(e.Admin)).Expect(t, http.StatusOK).JSON(t, &r)
		if r.Private != want {
			t.Fatalf("%s: private %v, want %v", full, r.Private, want)
		}
	}
	generate := func(name string, private bool) map[string]any {
		return map[string]any{"owner": "poalice", "name": name, "private": private, "git_content": true}
	}

	for _, c := range []struct {
		name, method, path string
		body               func(name string, private bool) map[string]any
		limited, full      apitest.Cred
		owner              string
	}{
		{"POST /user/repos", "POST", "user/repos", roBody, limited, full, "poalice"},
		{"POST /orgs/{org}/repos", "POST", "orgs/poorg/repos", roBody, limited, full, "poorg"},
		{"POST /repos/{o}/{r}/generate", "POST", "repos/poalice/tpl/generate", generate, limited, full, "poalice"},
		{"POST /admin/users/{u}/repos", "POST", "admin/users/poalice/repos", roBody, adminLimited, adminFull, "poalice"},
	} {
		t.Run(c.name, func(t *testing.T) {
			slug := strings.NewReplacer("/", "", "{", "", "}", "", " ", "").Replace(strings.ToLower(c.name))
			refused(t, e.Do(c.method, c.path, c.body(slug+"-refused", true), c.limited))
			absent(t, c.owner+"/"+slug+"-refused")
			// A public repository is still the limited token's to make.
			e.Do(c.method, c.path, c.body(slug+"-public", false), c.limited).Expect(t, http.StatusCreated)
			private(t, c.owner+"/"+slug+"-public", false)
			// Only the scope refuses: the same request goes through
			// with a token that is not limited to public data.
			e.Do(c.method, c.path, c.body(slug+"-private", true), c.full).Expect(t, http.StatusCreated)
			private(t, c.owner+"/"+slug+"-private", true)
		})
	}

	t.Run("PATCH /repos/{o}/{r}", func(t *testing.T) {
		refused(t, e.Do("PATCH", "repos/poalice/open", map[string]any{"private": true}, limited))
		private(t, "poalice/open", false)
		// Other changes, and keeping it public, remain allowed.
		e.Do("PATCH", "repos/poalice/open", map[string]any{"private": false, "description": "d"}, limited).Expect(t, http.StatusOK)
		e.Do("PATCH", "repos/poalice/open", map[string]any{"private": true}, full).Expect(t, http.StatusOK)
		private(t, "poalice/open", true)
	})

	t.Run("POST /admin/unadopted/{owner}/{repo}", func(t *testing.T) {
		// An adopted repository starts private.
		refused(t, e.Do("POST", "admin/unadopted/poalice/stray", nil, adminLimited))
		e.Do("GET", "repos/poalice/stray", nil, apitest.Basic(e.Admin)).Expect(t, http.StatusNotFound)
		if !roGitExists(t, e, "poalice", "stray") {
			t.Fatal("the refused adoption removed the directory")
		}
		e.Do("POST", "admin/unadopted/poalice/stray", nil, adminFull).Expect(t, http.StatusNoContent)
		private(t, "poalice/stray", true)
	})
}

// roBody is a CreateRepoOption.
func roBody(name string, private bool) map[string]any {
	return map[string]any{"name": name, "private": private}
}
