package apitest_test

import (
	"context"
	"crypto/sha512"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"repohost/apitest"
	"repohost/models"
)

// npmEnv runs the real npm client against the server's registry for
// alice, with her token in a private .npmrc and no other registry.
type npmEnv struct {
	t        *testing.T
	home     string
	registry string
}

func newNpmEnv(t *testing.T, e *apitest.Env, owner, token string) *npmEnv {
	t.Helper()
	if _, err := exec.LookPath("npm"); err != nil {
		t.Skip("npm is not installed")
	}
	home := t.TempDir()
	registry := e.URL + "api/packages/" + owner + "/npm/"
	hostPath := strings.TrimPrefix(registry, "http:")
	rc := "registry=" + registry + "\n" +
		"@" + owner + ":registry=" + registry + "\n" +
		hostPath + ":_authToken=" + token + "\n" +
		"update-notifier=false\naudit=false\nfund=false\n"
	if err := os.WriteFile(filepath.Join(home, ".npmrc"), []byte(rc), 0o600); err != nil {
		t.Fatal(err)
	}
	return &npmEnv{t: t, home: home, registry: registry}
}

// run runs npm in dir and returns its standard output.
func (n *npmEnv) run(dir string, args ...string) string {
	n.t.Helper()
	out, err := n.try(dir, args...)
	if err != nil {
		n.t.Fatalf("npm %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

func (n *npmEnv) try(dir string, args ...string) (string, error) {
	cmd := exec.Command("npm", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "HOME="+n.home, "npm_config_userconfig="+filepath.Join(n.home, ".npmrc"),
		"npm_config_cache="+filepath.Join(n.home, "cache"), "npm_config_registry="+n.registry)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// writePackage writes a package source directory and returns it.
func (n *npmEnv) writePackage(name, version, code string) string {
	n.t.Helper()
	dir := filepath.Join(n.home, "src", strings.ReplaceAll(name, "/", "_")+"-"+version)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		n.t.Fatal(err)
	}
	pj, _ := json.Marshal(map[string]any{"name": name, "version": version, "main": "index.js", "description": "test package " + name})
	if err := os.WriteFile(filepath.Join(dir, "package.json"), pj, 0o644); err != nil {
		n.t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "index.js"), []byte(code), 0o644); err != nil {
		n.t.Fatal(err)
	}
	return dir
}

func TestPackagesNpmClient(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	alice := e.CreateUser("alice", false)
	n := newNpmEnv(t, e, "alice", e.Token(alice, "write:package"))

	n.run(n.writePackage("hello-pkg", "1.0.0", "module.exports = 'hello 1.0.0';\n"), "publish")
	n.run(n.writePackage("hello-pkg", "1.1.0", "module.exports = 'hello 1.1.0';\n"), "publish")
	n.run(n.writePackage("@alice/greet", "0.1.0", "module.exports = 'greet';\n"), "publish")
	// The same version again is refused (npm sees it in the document
	// first; the registry would answer 409).
	if out, err := n.try(n.writePackage("hello-pkg", "1.0.0", "// again\n"), "publish"); err == nil ||
		!strings.Contains(out, "409") && !strings.Contains(out, "previously published") {
		t.Fatalf("republishing 1.0.0: %v\n%s", err, out)
	}

	var view struct {
		Name     string            `json:"name"`
		Version  string            `json:"version"`
		Versions []string          `json:"versions"`
		DistTags map[string]string `json:"dist-tags"`
	}
	if err := json.Unmarshal([]byte(n.run(n.home, "view", "hello-pkg", "--json")), &view); err != nil {
		t.Fatal(err)
	}
	if view.Name != "hello-pkg" || view.Version != "1.1.0" || len(view.Versions) != 2 || view.DistTags["latest"] != "1.1.0" {
		t.Fatalf("npm view %+v", view)
	}
	if out := n.run(n.home, "view", "@alice/greet", "version"); strings.TrimSpace(out) != "0.1.0" {
		t.Fatalf("npm view scoped: %q", out)
	}

	// Install into a fresh project: npm checks each tarball's integrity
	// against the registry's, and the lock file records it.
	app := filepath.Join(n.home, "app")
	if err := os.MkdirAll(app, 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(app, "package.json"), []byte(`{"name":"app","version":"1.0.0","private":true}`), 0o644)
	n.run(app, "install", "hello-pkg@1.0.0", "@alice/greet")
	got, err := os.ReadFile(filepath.Join(app, "node_modules", "hello-pkg", "index.js"))
	if err != nil || !strings.Contains(string(got), "hello 1.0.0") {
		t.Fatalf("installed hello-pkg: %q %v", got, err)
	}
	if _, err := os.Stat(filepath.Join(app, "node_modules", "@alice", "greet", "index.js")); err != nil {
		t.Fatal(err)
	}
	var lock struct {
		Packages map[string]struct {
			Version   string `json:"version"`
			Resolved  string `json:"resolved"`
			Integrity string `json:"integrity"`
		} `json:"packages"`
	}
	raw, _ := os.ReadFile(filepath.Join(app, "package-lock.json"))
	if err := json.Unmarshal(raw, &lock); err != nil {
		t.Fatal(err)
	}
	entry := lock.Packages["node_modules/hello-pkg"]
	var files []models.PackageFile
	e.Do("GET", "packages/alice/npm/hello-pkg/1.0.0/files", nil, nil).Expect(t, http.StatusOK).JSON(t, &files)
	if len(files) != 1 || files[0].Name != "hello-pkg-1.0.0.tgz" {
		t.Fatalf("files %+v", files)
	}
	status, tarball, _ := rlFetch(t, e, nil, entry.Resolved)
	sum := sha512.Sum512(tarball)
	if status != http.StatusOK || entry.Version != "1.0.0" || entry.Integrity != "sha512-"+base64.StdEncoding.EncodeToString(sum[:]) {
		t.Fatalf("lock entry %+v (tarball %d)", entry, status)
	}

	// dist-tags.
	n.run(n.home, "dist-tag", "add", "hello-pkg@1.0.0", "stable")
	if out := n.run(n.home, "dist-tag", "ls", "hello-pkg"); !strings.Contains(out, "stable: 1.0.0") || !strings.Contains(out, "latest: 1.1.0") {
		t.Fatalf("dist-tag ls: %q", out)
	}
	n.run(n.home, "dist-tag", "rm", "hello-pkg", "stable")
	if out := n.run(n.home, "dist-tag", "ls", "hello-pkg"); strings.Contains(out, "stable") {
		t.Fatalf("dist-tag ls after rm: %q", out)
	}

	// Unpublish one version, then a whole scoped package.
	n.run(n.home, "unpublish", "hello-pkg@1.1.0")
	var versions []models.Package
	e.Do("GET", "packages/alice/npm/hello-pkg", nil, nil).Expect(t, http.StatusOK).JSON(t, &versions)
	if len(versions) != 1 || versions[0].Version != "1.0.0" {
		t.Fatalf("versions after unpublish %+v", versions)
	}
	if out := n.run(n.home, "view", "hello-pkg", "dist-tags.latest"); strings.TrimSpace(out) != "1.0.0" {
		t.Fatalf("latest after unpublish: %q", out)
	}
	n.run(n.home, "unpublish", "@alice/greet", "--force")
	e.Do("GET", "packages/alice/npm/@alice%2Fgreet", nil, nil).Expect(t, http.StatusNotFound)
	if _, err := n.try(n.home, "view", "@alice/greet"); err == nil {
		t.Fatal("npm view of an unpublished package succeeded")
	}

	// Without a token nothing is published.
	anon := newNpmEnv(t, e, "alice", "invalid")
	if out, err := anon.try(anon.writePackage("other", "1.0.0", ""), "publish"); err == nil {
		t.Fatalf("publish with a bad token: %s", out)
	}
	_ = context.Background
}

// TestPackagesNpmSearch: GET /-/v1/search answers as the npm registry
// protocol defines it, one object per package at its newest version,
// newest first and paged with size and from, over the owner's packages the
// caller may read; the npm client's own search reads it.
func TestPackagesNpmSearch(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	alice := e.CreateUser("alice", false)
	token := e.Token(alice, "write:package", "write:organization")
	n := newNpmEnv(t, e, "alice", token)
	hello := n.writePackage("hello-pkg", "1.0.0", "module.exports = 1;\n")
	n.run(hello, "publish")
	// The newest version carries keywords, a homepage, a repository and
	// an author, which the search shows.
	pj, _ := json.Marshal(map[string]any{"name": "hello-pkg", "version": "1.1.0", "main": "index.js",
		"description": "says hello", "keywords": []string{"greeting", "demo"}, "homepage": "https://example.com/hello",
		"repository": map[string]string{"type": "git", "url": "https://example.com/hello.git"},
		"author":     "Alice Doe <alice@example.com> (https://example.com/alice)"})
	if err := os.WriteFile(filepath.Join(hello, "package.json"), pj, 0o644); err != nil {
		t.Fatal(err)
	}
	n.run(hello, "publish")
	n.run(n.writePackage("@alice/greet", "0.1.0", "module.exports = 2;\n"), "publish")
	n.run(n.writePackage("other-thing", "2.0.0", "module.exports = 3;\n"), "publish")

	type person struct {
		Username, Name, Email, URL string
	}
	type result struct {
		Objects []struct {
			Package struct {
				Name, Scope, Version, Description, Date string
				Keywords                                []string
				Links                                   struct{ NPM, Homepage, Repository string }
				Author                                  *person
				Publisher                               person
				Maintainers                             []person
			}
			Score struct {
				Final  float64
				Detail map[string]float64
			}
			SearchScore *float64
		}
		Total int64
		Time  string
	}
	search := func(query string, cred apitest.Cred, status int) result {
		t.Helper()
		var res result
		r := e.Do("GET", "/api/packages/alice/npm/-/v1/search"+query, nil, cred).Expect(t, status)
		if status == http.StatusOK {
			r.JSON(t, &res)
		}
		return res
	}
	names := func(res result) string {
		var out []string
		for _, o := range res.Objects {
			out = append(out, o.Package.Name+"@"+o.Package.Version)
		}
		return strings.Join(out, ",")
	}

	all := search("", nil, http.StatusOK)
	if got := names(all); got != "other-thing@2.0.0,@alice/greet@0.1.0,hello-pkg@1.1.0" || all.Total != 3 || all.Time == "" {
		t.Fatalf("search all: %s (total %d, time %q)", got, all.Total, all.Time)
	}
	greet := all.Objects[1].Package
	if greet.Scope != "alice" || all.Objects[0].Package.Scope != "unscoped" {
		t.Fatalf("scopes %q %q", greet.Scope, all.Objects[0].Package.Scope)
	}
	h := search("?text=HELLO", nil, http.StatusOK)
	if names(h) != "hello-pkg@1.1.0" || h.Total != 1 {
		t.Fatalf("search hello: %s (total %d)", names(h), h.Total)
	}
	p := h.Objects[0].Package
	if p.Description != "says hello" || strings.Join(p.Keywords, ",") != "greeting,demo" ||
		p.Links.Homepage != "https://example.com/hello" || p.Links.Repository != "https://example.com/hello.git" ||
		p.Links.NPM != e.URL+"api/packages/alice/npm" || p.Publisher.Username != "alice" ||
		len(p.Maintainers) != 1 || p.Maintainers[0].Username != "alice" ||
		p.Author == nil || *p.Author != (person{Name: "Alice Doe", Email: "alice@example.com", URL: "https://example.com/alice"}) {
		t.Fatalf("package %+v", p)
	}
	if _, err := time.Parse(time.RFC3339, p.Date); err != nil {
		t.Fatalf("date %q: %v", p.Date, err)
	}
	if o := h.Objects[0]; o.SearchScore == nil || *o.SearchScore <= 0 || o.Score.Final != *o.SearchScore || len(o.Score.Detail) != 3 {
		t.Fatalf("scores %+v", o)
	}

	// Paging: size is the page, from the number of results skipped.
	if page := search("?size=1&from=1", nil, http.StatusOK); names(page) != "@alice/greet@0.1.0" || page.Total != 3 {
		t.Fatalf("size=1 from=1: %s (total %d)", names(page), page.Total)
	}
	if page := search("?size=2&from=2", nil, http.StatusOK); names(page) != "hello-pkg@1.1.0" {
		t.Fatalf("size=2 from=2: %s", names(page))
	}
	if page := search("?from=9", nil, http.StatusOK); len(page.Objects) != 0 || page.Total != 3 {
		t.Fatalf("past the end: %s (total %d)", names(page), page.Total)
	}
	if none := search("?text=nothing-like-it", nil, http.StatusOK); len(none.Objects) != 0 || none.Total != 0 {
		t.Fatalf("no match: %s", names(none))
	}
	search("?size=many", nil, http.StatusBadRequest)
	search("?from=-1", nil, http.StatusBadRequest)

	// A private organization's packages are searched by its members only.
	e.Do("POST", "orgs", map[string]any{"username": "hidden", "visibility": "private"}, apitest.TokenCred(token)).
		Expect(t, http.StatusCreated)
	hn := newNpmEnv(t, e, "hidden", token)
	hn.run(hn.writePackage("secret-pkg", "1.0.0", "module.exports = 4;\n"), "publish")
	e.Do("GET", "/api/packages/hidden/npm/-/v1/search?text=secret", nil, nil).Expect(t, http.StatusNotFound)
	bob := e.CreateUser("bob", false)
	e.Do("GET", "/api/packages/hidden/npm/-/v1/search?text=secret", nil, apitest.Basic(bob)).Expect(t, http.StatusNotFound)
	var mine result
	e.Do("GET", "/api/packages/hidden/npm/-/v1/search?text=secret", nil, apitest.TokenCred(token)).
		Expect(t, http.StatusOK).JSON(t, &mine)
	if names(mine) != "secret-pkg@1.0.0" {
		t.Fatalf("member's search: %s", names(mine))
	}

	// The npm client's search.
	var found []struct {
		Name, Version, Description string
		Keywords                   []string
	}
	if err := json.Unmarshal([]byte(n.run(n.home, "search", "--json", "hello")), &found); err != nil {
		t.Fatal(err)
	}
	if len(found) != 1 || found[0].Name != "hello-pkg" || found[0].Version != "1.1.0" || found[0].Description != "says hello" {
		t.Fatalf("npm search --json: %+v", found)
	}
	if out := n.run(n.home, "search", "--parseable", "thing"); !strings.Contains(out, "other-thing") || strings.Contains(out, "hello-pkg") {
		t.Fatalf("npm search thing:\n%s", out)
	}
}
