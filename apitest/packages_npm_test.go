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
