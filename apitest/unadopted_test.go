package apitest_test

import (
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/go-git/go-git/v6"
	"github.com/go-git/go-git/v6/plumbing"
	"github.com/go-git/go-git/v6/plumbing/object"

	"repohost/apitest"
	"repohost/models"
	"repohost/store/gitstore"
)

// unStray makes a bare repository directory with no database row.
func unStray(t *testing.T, e *apitest.Env, owner, name string, opts gitstore.InitOptions) string {
	t.Helper()
	if opts.DefaultBranch == "" {
		opts.DefaultBranch = "main"
	}
	if len(opts.Files) > 0 {
		opts.CommitMessage = "stray\n"
		opts.Author = object.Signature{Name: "x", Email: "x@example.com"}
	}
	initial, err := e.Deps.Git.Create(owner, name, opts)
	if err != nil {
		t.Fatal(err)
	}
	p, _ := e.Deps.Git.Path(owner, name)
	if !initial.IsZero() {
		// Files left behind by some other tool: their branch is written
		// with go-git directly, not by the server.
		repo, err := git.PlainOpen(p)
		if err != nil {
			t.Fatal(err)
		}
		ref := plumbing.NewHashReference(plumbing.NewBranchReferenceName(opts.DefaultBranch), initial)
		if err := repo.Storer.SetReference(ref); err != nil {
			t.Fatal(err)
		}
	}
	return p
}

func unList(t *testing.T, e *apitest.Env, query string) ([]string, *apitest.Response) {
	t.Helper()
	var out []string
	r := e.Do("GET", "admin/unadopted"+query, nil, apitest.Basic(e.Admin)).Expect(t, http.StatusOK)
	r.JSON(t, &out)
	return out, r
}

func TestUnadoptedList(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	alice := e.CreateUser("alice", false)
	e.CreateUser("bob", false)
	roCreateRepo(t, e, apitest.Basic(alice), map[string]any{"name": "live"})
	unStray(t, e, "alice", "stray1", gitstore.InitOptions{})
	unStray(t, e, "alice", "stray2", gitstore.InitOptions{})
	unStray(t, e, "bob", "s", gitstore.InitOptions{})
	unStray(t, e, "ghost", "x", gitstore.InitOptions{}) // no such owner
	root := e.Deps.Git.Root()
	// Entries that are not adoptable: a bad name, upper case, a file, a
	// symbolic link (to a real repository outside the root), a hidden one.
	outside := t.TempDir()
	for _, d := range []string{"alice/Bad Name.git", "alice/UPPER.git", "alice/.hidden.git", ".hidden/x.git"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(root, "alice", "file.git"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(root, "alice", "link.git")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(root, "alice"), filepath.Join(root, "carol")); err != nil {
		t.Fatal(err)
	}

	got, r := unList(t, e, "")
	if strings.Join(got, ",") != "alice/stray1,alice/stray2,bob/s" || r.Header.Get("X-Total-Count") != "3" {
		t.Fatalf("unadopted %v %v", got, r.Header)
	}
	got, r = unList(t, e, "?limit=1&page=2")
	if strings.Join(got, ",") != "alice/stray2" || r.Header.Get("X-Total-Count") != "3" || r.Header.Get("Link") == "" {
		t.Fatalf("page 2 %v %v", got, r.Header)
	}
	for q, want := range map[string]string{
		"?query=alice":              "alice/stray1,alice/stray2",
		"?query=alice/*2":           "alice/stray2",
		"?pattern=b*":               "bob/s",
		"?query=*/s&pattern=alice":  "bob/s", // query wins
		"?query=a?ice/stray%5B1%5D": "alice/stray1",
		"?query=%25":                "",
		"?query=%27%20OR%201%3D1--": "",
		"?query=nobody/*":           "",
	} {
		if got, _ := unList(t, e, q); strings.Join(got, ",") != want {
			t.Fatalf("%s: %v, want %q", q, got, want)
		}
	}
	e.Do("GET", "admin/unadopted?query=%5B", nil, apitest.Basic(e.Admin)).Expect(t, http.StatusUnprocessableEntity)
	e.Do("GET", "admin/unadopted", nil, nil).Expect(t, http.StatusUnauthorized)
	e.Do("GET", "admin/unadopted", nil, apitest.Basic(alice)).Expect(t, http.StatusForbidden)
	e.Do("POST", "admin/unadopted/alice/stray1", nil, apitest.Basic(alice)).Expect(t, http.StatusForbidden)
	e.Do("DELETE", "admin/unadopted/alice/stray1", nil, apitest.Basic(alice)).Expect(t, http.StatusForbidden)
}

func TestUnadoptedAdoptAndDelete(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	alice := e.CreateUser("alice", false)
	admin := apitest.Basic(e.Admin)
	live := roCreateRepo(t, e, apitest.Basic(alice), map[string]any{"name": "live", "auto_init": true})
	unStray(t, e, "alice", "full", gitstore.InitOptions{DefaultBranch: "trunk", Files: map[string]string{"a.txt": "a\n"}})
	unStray(t, e, "alice", "empty", gitstore.InitOptions{DefaultBranch: "dev"})
	gone := unStray(t, e, "alice", "gone", gitstore.InitOptions{})

	e.Do("POST", "admin/unadopted/alice/full", nil, admin).Expect(t, http.StatusNoContent)
	var r models.Repository
	e.Do("GET", "repos/alice/full", nil, admin).Expect(t, http.StatusOK).JSON(t, &r)
	if !r.Private || r.Empty || r.DefaultBranch != "trunk" || r.Owner.UserName != "alice" {
		t.Fatalf("adopted %+v", r)
	}
	if got := roFile(t, roGit(t, e, "alice", "full"), "trunk", "a.txt"); got != "a\n" {
		t.Fatalf("adopted content %q", got)
	}
	e.Do("GET", "repos/alice/full", nil, nil).Expect(t, http.StatusNotFound) // private
	e.Do("POST", "admin/unadopted/alice/empty", nil, admin).Expect(t, http.StatusNoContent)
	e.Do("GET", "repos/alice/empty", nil, admin).Expect(t, http.StatusOK).JSON(t, &r)
	if !r.Empty || r.DefaultBranch != "dev" {
		t.Fatalf("adopted empty %+v", r)
	}
	if got, _ := unList(t, e, ""); strings.Join(got, ",") != "alice/gone" {
		t.Fatalf("left after adoption %v", got)
	}

	// Refusals: 404 for an adopted or live repository, an unknown owner,
	// a missing directory; nothing is touched.
	for _, path := range []string{"alice/full", "alice/live", "ghost/x", "alice/missing"} {
		e.Do("POST", "admin/unadopted/"+path, nil, admin).Expect(t, http.StatusNotFound)
		e.Do("DELETE", "admin/unadopted/"+path, nil, admin).Expect(t, http.StatusNotFound)
	}
	if !roGitExists(t, e, "alice", "live") || !roGitExists(t, e, "alice", "full") {
		t.Fatal("a live repository lost its directory")
	}
	e.Do("GET", "repos/alice/live/branches/main", nil, apitest.Basic(alice)).Expect(t, http.StatusOK)
	_ = live

	e.Do("DELETE", "admin/unadopted/alice/gone", nil, admin).Expect(t, http.StatusNoContent)
	if _, err := os.Stat(gone); !os.IsNotExist(err) {
		t.Fatalf("deleted directory still there: %v", err)
	}
	if got, _ := unList(t, e, ""); len(got) != 0 {
		t.Fatalf("left after delete %v", got)
	}
	// Nothing parked is left behind in the owner's directory.
	entries, _ := os.ReadDir(filepath.Join(e.Deps.Git.Root(), "alice"))
	for _, en := range entries {
		if strings.HasPrefix(en.Name(), ".") {
			t.Fatalf("left over %s", en.Name())
		}
	}

	// A symbolic link in place of a directory is neither adopted nor
	// followed when deleting.
	outside := t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "precious"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(e.Deps.Git.Root(), "alice", "link.git")); err != nil {
		t.Fatal(err)
	}
	e.Do("DELETE", "admin/unadopted/alice/link", nil, admin).Expect(t, http.StatusNotFound)
	e.Do("POST", "admin/unadopted/alice/link", nil, admin).Expect(t, http.StatusNotFound)
	if _, err := os.Stat(filepath.Join(outside, "precious")); err != nil {
		t.Fatalf("followed a symbolic link: %v", err)
	}
}

// snapshot lists every path under dir except the embedded database files,
// which change with every request.
func snapshot(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !strings.Contains(filepath.Base(p), "repohost.db") {
			out = append(out, p)
		}
		return nil
	})
	sort.Strings(out)
	return out
}

// TestPathTraversalNames sends traversal, separator and encoded names
// through API and git routes that reach the disk: every one is refused
// (never a 500), and nothing on disk changes.
func TestPathTraversalNames(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	alice := e.CreateUser("alice", false)
	token := e.Token(alice, "all")
	roCreateRepo(t, e, apitest.TokenCred(token), map[string]any{"name": "proj", "auto_init": true, "template": true})
	dataDir := filepath.Dir(e.Deps.Git.Root())
	parent := filepath.Dir(dataDir)
	before := snapshot(t, parent)

	bad := []string{"..", ".", "%2e%2e", "%2E%2E", "%2e%2e%2f%2e%2e", "..%2f..%2fetc", "a%2fb", "a%5cb", "%252e%252e",
		"proj.git.git", "x.git", "%00", "x%00y", ".git", "...", "alice%2f..%2f..", "-", "~"}
	// The contract-checking client: what reaches the API must answer as
	// swagger.yml says; the front mux's redirects are not followed.
	client := e.HTTPClient()
	client.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	do := func(method, path string, body string, auth bool) int {
		t.Helper()
		req, err := http.NewRequest(method, e.Server.URL+path, strings.NewReader(body))
		if err != nil {
			return http.StatusBadRequest // the client refuses it, which is fine
		}
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		if auth {
			req.Header.Set("Authorization", "token "+token)
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatalf("%s %s: %v", method, path, err)
		}
		resp.Body.Close()
		if resp.StatusCode >= 500 {
			t.Fatalf("%s %s: %d", method, path, resp.StatusCode)
		}
		return resp.StatusCode
	}
	gen := `{"owner":"alice","name":"new","git_content":true}`
	for _, n := range bad {
		for _, c := range []struct{ method, path, body string }{
			{"GET", "/api/v1/repos/" + n + "/proj/branches", ""},
			{"GET", "/api/v1/repos/alice/" + n + "/branches", ""},
			{"POST", "/api/v1/repos/alice/" + n + "/branches", `{"new_branch_name":"x"}`},
			{"PUT", "/api/v1/repos/alice/" + n + "/topics", `{"topics":["x"]}`},
			{"POST", "/api/v1/repos/" + n + "/proj/generate", gen},
			{"POST", "/api/v1/repos/alice/" + n + "/generate", gen},
			{"POST", "/api/v1/admin/unadopted/" + n + "/x", ""},
			{"DELETE", "/api/v1/admin/unadopted/alice/" + n, ""},
			{"DELETE", "/api/v1/admin/unadopted/" + n + "/proj", ""},
			{"GET", "/" + n + "/proj.git/info/refs?service=git-upload-pack", ""},
			{"GET", "/alice/" + n + "/info/refs?service=git-receive-pack", ""},
			{"POST", "/alice/" + n + ".git/git-receive-pack", ""},
		} {
			for _, auth := range []bool{false, true} {
				status := do(c.method, c.path, c.body, auth)
				if status < 300 {
					t.Fatalf("%s %s (auth %v): %d", c.method, c.path, auth, status)
				}
			}
		}
		// As names in bodies: repository creation and generation.
		for _, body := range []string{`{"name":"` + n + `"}`, `{"owner":"alice","name":"` + n + `","git_content":true}`} {
			path := "/api/v1/user/repos"
			if strings.Contains(body, "owner") {
				path = "/api/v1/repos/alice/proj/generate"
			}
			if status := do("POST", path, body, true); status != http.StatusUnprocessableEntity {
				t.Fatalf("POST %s %s: %d", path, body, status)
			}
		}
	}
	if after := snapshot(t, parent); strings.Join(after, "\n") != strings.Join(before, "\n") {
		t.Fatalf("the disk changed:\nbefore %v\nafter  %v", before, after)
	}
}
