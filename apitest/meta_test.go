package apitest_test

import (
	"net/http"
	"regexp"
	"strings"
	"testing"

	"repohost/apitest"
	"repohost/gen/client/miscellaneous"
	"repohost/gen/client/settings"
)

func TestVersionAndSettings(t *testing.T) {
	e := apitest.New(t)
	token := e.Token(e.Admin, "read:repository")
	for name, cred := range map[string]apitest.Cred{
		"anonymous": nil, "basic": apitest.Basic(e.Admin), "unrelated-scope token": apitest.TokenCred(token),
	} {
		t.Run(name, func(t *testing.T) {
			c, authw := e.Client(cred)
			v, err := c.Miscellaneous.GetVersion(miscellaneous.NewGetVersionParams(), authw)
			if err != nil {
				t.Fatal(err)
			}
			if v.Payload.Version != "28.1.0" {
				t.Fatalf("version %q", v.Payload.Version)
			}
			s, err := c.Settings.GetGeneralAPISettings(settings.NewGetGeneralAPISettingsParams(), authw)
			if err != nil {
				t.Fatal(err)
			}
			if s.Payload.MaxResponseItems != 50 || s.Payload.DefaultPagingNum != 30 {
				t.Fatalf("paging caps %+v", s.Payload)
			}
		})
	}
	for _, p := range []string{"settings/repository", "settings/ui", "settings/attachment"} {
		e.Do("GET", p, nil, nil).Expect(t, http.StatusOK)
	}
}

func TestBadCredentialsAnswer401Everywhere(t *testing.T) {
	e := apitest.New(t)
	bad := []apitest.Cred{
		func(r *http.Request) { r.SetBasicAuth("admin", "wrong") },
		func(r *http.Request) { r.SetBasicAuth("nobody", "x") },
		apitest.TokenCred("0123456789abcdef0123456789abcdef01234567"),
		func(r *http.Request) { r.Header.Set("Authorization", "Bearer nope") },
		func(r *http.Request) { r.Header.Set("Authorization", "Weird x") },
	}
	for i, cred := range bad {
		for _, path := range []string{"version", "user", "repos/search", "admin/users"} {
			r := e.Do("GET", path, nil, cred).Expect(t, http.StatusUnauthorized)
			if !strings.Contains(string(r.Body), `"message"`) {
				t.Fatalf("cred %d %s: body %s", i, path, r.Body)
			}
		}
	}
}

func TestSwaggerDocumentServed(t *testing.T) {
	e := apitest.New(t)
	r := e.Do("GET", "/swagger.v1.json", nil, nil).Expect(t, http.StatusOK)
	if !strings.Contains(string(r.Body), `"basePath":"/api/v1"`) && !strings.Contains(string(r.Body), `"basePath": "/api/v1"`) {
		t.Fatalf("unexpected document: %.200s", r.Body)
	}
}

// TestEveryOperationIsImplemented calls each operation of swagger.yml as
// the site admin with placeholder arguments: none may be unrouted or answer
// 501, and every answer must match the contract.
func TestEveryOperationIsImplemented(t *testing.T) {
	e := apitest.New(t)
	c, err := apitest.SharedContract()
	if err != nil {
		t.Fatal(err)
	}
	placeholder := regexp.MustCompile(`\{[^}]+\}`)
	for key := range c.Operations() {
		method, path, _ := strings.Cut(key, " ")
		concrete := placeholder.ReplaceAllString(path, "nothing-here")
		r := e.Do(method, strings.TrimPrefix(concrete, "/"), "{}", apitest.Basic(e.Admin))
		if r.Status == http.StatusNotImplemented || r.Status == http.StatusMethodNotAllowed {
			t.Errorf("%s: status %d: %s", key, r.Status, r.Body)
		}
	}
}
