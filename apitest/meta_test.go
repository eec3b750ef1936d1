package apitest_test

import (
	"maps"
	"net/http"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/go-openapi/spec"

	"repohost/apitest"
	"repohost/gen/client/miscellaneous"
	"repohost/gen/client/settings"
)

func TestVersionAndSettings(t *testing.T) {
	t.Parallel()
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
	t.Parallel()
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
	t.Parallel()
	e := apitest.New(t)
	r := e.Do("GET", "/swagger.v1.json", nil, nil).Expect(t, http.StatusOK)
	if !strings.Contains(string(r.Body), `"basePath":"/api/v1"`) && !strings.Contains(string(r.Body), `"basePath": "/api/v1"`) {
		t.Fatalf("unexpected document: %.200s", r.Body)
	}
}

// TestEveryOperationIsDispatched sends one request per operation of the
// embedded spec, as the site admin with real arguments where they are cheap,
// and fails unless the generated router dispatched it to that operation's
// handler. The server names the operation in apitest.OperationHeader only
// after routing, so a route the router lacks, a route another one shadows
// and the router's own 404 and 405 all fail here, whatever the status; a
// handler's own 404 for a missing resource passes. Slash-holding parameters
// get values with slashes, sent unescaped, so the front mux's folding is
// covered too. Every answer is also checked against the contract.
func TestEveryOperationIsDispatched(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	args := dispatchArguments(t, e)
	c, err := apitest.SharedContract()
	if err != nil {
		t.Fatal(err)
	}
	ops := c.Operations()
	for _, key := range deletesLast(ops) {
		method, tmpl, _ := strings.Cut(key, " ")
		path := fillTemplate(tmpl, argsFor(tmpl, args))
		var body any
		if method != http.MethodGet && method != http.MethodHead {
			body = "{}"
		}
		r := e.Do(method, strings.TrimPrefix(path, "/"), body, apitest.Basic(e.Admin))
		if got := r.Header.Get(apitest.OperationHeader); got != ops[key].ID || r.Status == http.StatusNotImplemented {
			t.Errorf("%s %s (%s): dispatched to %q, status %d: %.200s", method, path, ops[key].ID, got, r.Status, r.Body)
		}
	}
}

// dispatchArguments creates what the operations' path parameters name
// (alice's repository demo with a branch feature/x, a file, a release with
// the tag v1/rc, a protection rule release/x, issue 1 with a comment, label,
// milestone and project 1, the organization acme) and returns a value for
// each parameter name, so that most requests get past the lookups.
func dispatchArguments(t *testing.T, e *apitest.Env) map[string]string {
	t.Helper()
	a := apitest.Basic(e.CreateUser("alice", false))
	roCreateRepo(t, e, a, map[string]any{"name": "demo", "auto_init": true})
	roCreateOrg(t, e, a, map[string]any{"username": "acme"})
	for path, body := range map[string]map[string]any{
		"branches":                     {"new_branch_name": "feature/x"},
		"contents/docs/guide/intro.md": {"content": b64("hello\n")},
		"releases":                     {"tag_name": "v1/rc", "target_commitish": "main", "name": "rc"},
		"branch_protections":           {"rule_name": "release/x"},
		"issues":                       {"title": "first"},
		"labels":                       {"name": "bug", "color": "#ff0000"},
		"milestones":                   {"title": "m1"},
		"projects":                     {"title": "p1"},
		"topics/go":                    nil,
	} {
		method := "POST"
		if body == nil {
			method = "PUT"
		}
		e.Do(method, "repos/alice/demo/"+path, body, a).Expect(t, statusFor(method))
	}
	e.Do("POST", "repos/alice/demo/issues/1/comments", map[string]any{"body": "hi"}, a).Expect(t, http.StatusCreated)
	return map[string]string{
		"owner": "alice", "repo": "demo", "template_owner": "alice", "template_repo": "demo",
		"username": "alice", "user": "alice", "org": "acme", "index": "1",
		"branch": "feature/x", "name": "release/x", "filepath": "docs/guide/intro.md",
		"tag": "v1/rc", "archive": "main.zip", "topic": "go",
	}
}

// templateNames are the one-segment names the template and push mirror
// routes serve; their {name} is not the protection rule's "release/x".
var templateNames = map[string]string{
	"/gitignore/templates/{name}": "Go", "/licenses/{name}": "MIT", "/label/templates/{name}": "Default",
	"/repos/{owner}/{repo}/push_mirrors/{name}": "remote_mirror_x",
}

// argsFor is args with the route-specific values of tmpl.
func argsFor(tmpl string, args map[string]string) map[string]string {
	if strings.HasPrefix(tmpl, "/packages/") {
		// A package's {name} is one segment (an npm scope's slash comes
		// escaped), and {type} one of the registry's types.
		out := maps.Clone(args)
		out["name"], out["type"] = "tool", "generic"
		return out
	}
	name, ok := templateNames[tmpl]
	if !ok {
		return args
	}
	out := maps.Clone(args)
	out["name"] = name
	return out
}

// fillTemplate puts args into a path template; a parameter without an
// argument gets "1", which routes like any other one-segment value.
func fillTemplate(tmpl string, args map[string]string) string {
	return regexp.MustCompile(`\{[^}]+\}`).ReplaceAllStringFunc(tmpl, func(p string) string {
		if v, ok := args[strings.Trim(p, "{}")]; ok {
			return v
		}
		return "1"
	})
}

// statusFor is what creating a fixture answers.
func statusFor(method string) int {
	if method == "PUT" {
		return http.StatusNoContent
	}
	return http.StatusCreated
}

// deletesLast orders the "METHOD path" keys so that the run is the same
// every time and deletions come after everything that needs what they
// remove.
func deletesLast(ops map[string]*spec.Operation) []string {
	keys := make([]string, 0, len(ops))
	for k := range ops {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		di, dj := strings.HasPrefix(keys[i], "DELETE "), strings.HasPrefix(keys[j], "DELETE ")
		if di != dj {
			return dj
		}
		if di {
			// Reverse order: a resource's children go before it, and
			// /admin/users/{username} goes last.
			return keys[i] > keys[j]
		}
		return keys[i] < keys[j]
	})
	return keys
}
