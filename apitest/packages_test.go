package apitest_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"repohost/apitest"
	"repohost/impl/app"
	"repohost/impl/events"
	"repohost/impl/packages"
	"repohost/models"
)

// pkGeneric is the URL path of a generic package file (or version, when
// file is "").
func pkGeneric(owner, name, version, file string) string {
	p := "/api/packages/" + owner + "/generic/" + name + "/" + version
	if file != "" {
		p += "/" + file
	}
	return p
}

func pkUpload(t *testing.T, e *apitest.Env, cred apitest.Cred, owner, name, version, file string, body []byte) *apitest.Response {
	t.Helper()
	return e.Do("PUT", pkGeneric(owner, name, version, file), body, cred)
}

// pkFiles lists what the package storage holds: blobs by key, and
// staged uploads (under "tmp/").
func pkFiles(t *testing.T, e *apitest.Env) []string {
	t.Helper()
	out := apitest.Keys(t, e.Deps.Objects.Packages, "")
	for _, name := range e.TempFiles() {
		out = append(out, "tmp/"+name)
	}
	return out
}

// pkWaitFiles waits for the server to have finished with an upload and
// checks the number of files the package storage holds.
func pkWaitFiles(t *testing.T, e *apitest.Env, what string, want int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for len(pkFiles(t, e)) != want && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if got := pkFiles(t, e); len(got) != want {
		t.Fatalf("%s: package storage holds %v, want %d files", what, got, want)
	}
}

func sha256Hex(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

func TestPackagesGenericRegistry(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	alice, bob := e.CreateUser("alice", false), e.CreateUser("bob", false)
	owner := apitest.Basic(alice)
	content := []byte("0123456789abcdef")

	// Writes: the owner (with a password or a package token), not others.
	pkUpload(t, e, nil, "alice", "tool", "1.0.0", "tool.bin", content).Expect(t, http.StatusUnauthorized)
	pkUpload(t, e, apitest.Basic(bob), "alice", "tool", "1.0.0", "tool.bin", content).Expect(t, http.StatusForbidden)
	readOnly := apitest.TokenCred(e.Token(alice, "read:package"))
	pkUpload(t, e, readOnly, "alice", "tool", "1.0.0", "tool.bin", content).Expect(t, http.StatusForbidden)
	pkUpload(t, e, owner, "nobody", "tool", "1.0.0", "tool.bin", content).Expect(t, http.StatusNotFound)
	pkUpload(t, e, owner, "alice", "bad%20name", "1.0.0", "tool.bin", content).Expect(t, http.StatusBadRequest)
	pkUpload(t, e, owner, "alice", "tool", "1.0.0", "tool.bin", content).Expect(t, http.StatusCreated)
	writeTok := apitest.TokenCred(e.Token(alice, "write:package"))
	pkUpload(t, e, writeTok, "alice", "tool", "1.0.0", "notes.txt", []byte("notes")).Expect(t, http.StatusCreated)
	// The same file again, whatever its bytes: 409, nothing changed.
	pkUpload(t, e, owner, "alice", "tool", "1.0.0", "tool.bin", []byte("other")).Expect(t, http.StatusConflict)
	pkUpload(t, e, owner, "alice", "tool", "1.0.0", "TOOL.bin", content).Expect(t, http.StatusConflict)

	// Downloads: whole, ranges, conditional.
	url := e.Server.URL + pkGeneric("alice", "tool", "1.0.0", "tool.bin")
	status, body, hdr := rlFetch(t, e, nil, url)
	if status != http.StatusOK || !bytes.Equal(body, content) || hdr.Get("Content-Length") != "16" ||
		hdr.Get("ETag") != `"`+sha256Hex(content)+`"` {
		t.Fatalf("download: %d %q %v", status, body, hdr)
	}
	get := func(headers map[string]string) (int, []byte, http.Header) {
		req, _ := http.NewRequest("GET", url, nil)
		for k, v := range headers {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, b, resp.Header
	}
	if status, body, hdr := get(map[string]string{"Range": "bytes=2-5"}); status != http.StatusPartialContent ||
		string(body) != "2345" || hdr.Get("Content-Range") != "bytes 2-5/16" || hdr.Get("Content-Length") != "4" {
		t.Fatalf("range: %d %q %v", status, body, hdr)
	}
	if status, body, _ := get(map[string]string{"Range": "bytes=-3"}); status != http.StatusPartialContent || string(body) != "def" {
		t.Fatalf("suffix range: %d %q", status, body)
	}
	if status, _, _ := get(map[string]string{"Range": "bytes=100-"}); status != http.StatusRequestedRangeNotSatisfiable {
		t.Fatalf("range past the end: %d", status)
	}
	if status, _, _ := get(map[string]string{"If-None-Match": `"` + sha256Hex(content) + `"`}); status != http.StatusNotModified {
		t.Fatalf("If-None-Match: %d", status)
	}
	if status, _, _ := rlFetch(t, e, nil, e.Server.URL+pkGeneric("alice", "tool", "1.0.0", "missing.bin")); status != http.StatusNotFound {
		t.Fatalf("missing file: %d", status)
	}

	// The package API sees the version and its files.
	var files []models.PackageFile
	e.Do("GET", "packages/alice/generic/tool/1.0.0/files", nil, nil).Expect(t, http.StatusOK).JSON(t, &files)
	if len(files) != 2 || files[0].Name != "notes.txt" || files[1].Name != "tool.bin" || files[1].Size != 16 ||
		files[1].HashSHA256 != sha256Hex(content) || len(files[1].HashSHA512) != 128 || len(files[1].HashMD5) != 32 || len(files[1].HashSHA1) != 40 {
		t.Fatalf("files %+v", files)
	}
	var pkg models.Package
	e.Do("GET", "packages/alice/generic/tool/1.0.0", nil, nil).Expect(t, http.StatusOK).JSON(t, &pkg)
	if pkg.Name != "tool" || pkg.Version != "1.0.0" || pkg.Type != "generic" || pkg.Owner == nil || pkg.Owner.UserName != "alice" ||
		pkg.Creator == nil || pkg.Creator.UserName != "alice" || pkg.Repository != nil ||
		pkg.HTMLURL != e.URL+"alice/-/packages/generic/tool/1.0.0" || time.Time(pkg.CreatedAt).IsZero() {
		t.Fatalf("package %+v", pkg)
	}
	pkUpload(t, e, owner, "alice", "tool", "2.0.0", "tool.bin", []byte("v2")).Expect(t, http.StatusCreated)
	var latest models.Package
	e.Do("GET", "packages/alice/generic/tool/-/latest", nil, nil).Expect(t, http.StatusOK).JSON(t, &latest)
	if latest.Version != "2.0.0" {
		t.Fatalf("latest %+v", latest)
	}
	var versions []models.Package
	r := e.Do("GET", "packages/alice/generic/tool", nil, nil).Expect(t, http.StatusOK)
	r.JSON(t, &versions)
	if len(versions) != 2 || versions[0].Version != "2.0.0" || r.Header.Get("X-Total-Count") != "2" {
		t.Fatalf("versions %+v", versions)
	}
	e.Do("GET", "packages/alice/npm/tool", nil, nil).Expect(t, http.StatusNotFound)
	e.Do("GET", "packages/alice/nonsense/tool", nil, nil).Expect(t, http.StatusNotFound)

	// Linking to a repository of the owner.
	roCreateRepo(t, e, owner, map[string]any{"name": "src"})
	e.Do("POST", "packages/alice/generic/tool/-/link/src", nil, apitest.Basic(bob)).Expect(t, http.StatusForbidden)
	e.Do("POST", "packages/alice/generic/tool/-/link/nope", nil, owner).Expect(t, http.StatusNotFound)
	e.Do("POST", "packages/alice/generic/tool/-/link/src", nil, owner).Expect(t, http.StatusCreated)
	e.Do("GET", "packages/alice/generic/tool/1.0.0", nil, nil).Expect(t, http.StatusOK).JSON(t, &pkg)
	if pkg.Repository == nil || pkg.Repository.FullName != "alice/src" {
		t.Fatalf("linked package %+v", pkg)
	}
	e.Do("POST", "packages/alice/generic/tool/-/unlink", nil, owner).Expect(t, http.StatusCreated)
	pkg = models.Package{}
	e.Do("GET", "packages/alice/generic/tool/1.0.0", nil, nil).Expect(t, http.StatusOK).JSON(t, &pkg)
	if pkg.Repository != nil {
		t.Fatalf("unlinked package %+v", pkg)
	}

	// Deletes: a file, then a version by its last file, then a whole
	// version through the registry, each announced.
	e.Do("DELETE", pkGeneric("alice", "tool", "1.0.0", "notes.txt"), nil, apitest.Basic(bob)).Expect(t, http.StatusForbidden)
	e.Do("DELETE", pkGeneric("alice", "tool", "1.0.0", "notes.txt"), nil, owner).Expect(t, http.StatusNoContent)
	e.Do("DELETE", pkGeneric("alice", "tool", "1.0.0", "notes.txt"), nil, owner).Expect(t, http.StatusNotFound)
	e.Do("DELETE", pkGeneric("alice", "tool", "1.0.0", "tool.bin"), nil, owner).Expect(t, http.StatusNoContent)
	e.Do("GET", "packages/alice/generic/tool/1.0.0", nil, nil).Expect(t, http.StatusNotFound)
	e.Do("DELETE", pkGeneric("alice", "tool", "2.0.0", ""), nil, owner).Expect(t, http.StatusNoContent)
	e.Do("GET", "packages/alice/generic/tool", nil, nil).Expect(t, http.StatusNotFound)

	evs, err := e.DB.Events().ListAfter(context.Background(), 0, 1000)
	if err != nil {
		t.Fatal(err)
	}
	counts := map[string]int{}
	for _, ev := range evs {
		counts[ev.Kind]++
	}
	if counts[string(events.PackageCreated)] != 2 || counts[string(events.PackageDeleted)] != 2 || counts[string(events.PackageLinked)] != 2 {
		t.Fatalf("events %v", counts)
	}
}

func TestPackagesAPIDeletes(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	alice, bob := e.CreateUser("alice", false), e.CreateUser("bob", false)
	owner := apitest.Basic(alice)
	for _, v := range []string{"1", "2", "3"} {
		pkUpload(t, e, owner, "alice", "lib", v, "lib.tgz", []byte("lib "+v)).Expect(t, http.StatusCreated)
	}
	e.Do("DELETE", "packages/alice/generic/lib/1", nil, nil).Expect(t, http.StatusUnauthorized)
	e.Do("DELETE", "packages/alice/generic/lib/1", nil, apitest.Basic(bob)).Expect(t, http.StatusForbidden)
	e.Do("DELETE", "packages/alice/generic/lib/1", nil, owner).Expect(t, http.StatusNoContent)
	e.Do("DELETE", "packages/alice/generic/lib/1", nil, owner).Expect(t, http.StatusNotFound)
	var versions []models.Package
	e.Do("GET", "packages/alice/generic/lib", nil, nil).Expect(t, http.StatusOK).JSON(t, &versions)
	if len(versions) != 2 {
		t.Fatalf("versions %+v", versions)
	}
	e.Do("DELETE", "packages/alice/generic/lib", nil, apitest.Basic(bob)).Expect(t, http.StatusForbidden)
	e.Do("DELETE", "packages/alice/generic/lib", nil, apitest.Basic(e.Admin)).Expect(t, http.StatusNoContent)
	e.Do("GET", "packages/alice/generic/lib", nil, nil).Expect(t, http.StatusNotFound)
	e.Do("GET", "packages/alice/generic/lib/2/files", nil, nil).Expect(t, http.StatusNotFound)
}

// TestPackagesBlobsAreSharedAndCleanedUp: identical bytes are stored once
// whichever package holds them, and a blob goes only when the cleanup
// finds that no file uses it any more.
func TestPackagesBlobsAreSharedAndCleanedUp(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	alice := e.CreateUser("alice", false)
	owner := apitest.Basic(alice)
	org := roCreateOrg(t, e, owner, map[string]any{"username": "acme"})
	same := bytes.Repeat([]byte("same bytes "), 100)
	pkUpload(t, e, owner, "alice", "one", "1", "a.bin", same).Expect(t, http.StatusCreated)
	pkUpload(t, e, owner, "alice", "two", "1", "b.bin", same).Expect(t, http.StatusCreated)
	pkUpload(t, e, owner, org.UserName, "three", "1", "c.bin", same).Expect(t, http.StatusCreated)
	pkUpload(t, e, owner, "alice", "one", "1", "other.bin", []byte("other")).Expect(t, http.StatusCreated)
	blob := filepath.Join("blobs", sha256Hex(same)[:2], sha256Hex(same)[2:4], sha256Hex(same))
	if got := pkFiles(t, e); len(got) != 2 || !strings.Contains(strings.Join(got, " "), blob) {
		t.Fatalf("storage %v, want the shared blob %s and one more", got, blob)
	}
	svc := packages.Service{Deps: e.Deps}
	cleanup := func() {
		t.Helper()
		if err := svc.CleanupBlobs(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	cleanup()
	pkWaitFiles(t, e, "nothing unused", 2)

	e.Do("DELETE", pkGeneric("alice", "one", "1", ""), nil, owner).Expect(t, http.StatusNoContent)
	e.Do("DELETE", "packages/alice/generic/two", nil, owner).Expect(t, http.StatusNoContent)
	// Still used by acme's package; "other" is unused but stays until the
	// cleanup.
	pkWaitFiles(t, e, "before the cleanup", 2)
	cleanup()
	pkWaitFiles(t, e, "one blob still used", 1)
	status, body, _ := rlFetch(t, e, nil, e.Server.URL+pkGeneric(org.UserName, "three", "1", "c.bin"))
	if status != http.StatusOK || !bytes.Equal(body, same) {
		t.Fatalf("shared blob after the cleanup: %d", status)
	}
	e.Do("DELETE", "packages/acme/generic/three/1", nil, owner).Expect(t, http.StatusNoContent)
	// The scheduled task is the same cleanup.
	runCron(t, e, "cleanup_packages")
	pkWaitFiles(t, e, "no package left", 0)

	// A blob file without a row (a crash between placing and recording
	// it) goes too; uploading the same bytes afterwards works.
	stray := packages.BlobKey("abcd" + strings.Repeat("0", 60))
	if err := e.Deps.Objects.Packages.Put(context.Background(), stray, strings.NewReader("x"), 1); err != nil {
		t.Fatal(err)
	}
	cleanup()
	pkWaitFiles(t, e, "stray blob", 0)
	pkUpload(t, e, owner, "alice", "one", "1", "a.bin", same).Expect(t, http.StatusCreated)
	pkWaitFiles(t, e, "uploaded again", 1)
}

// TestPackagesSizeLimits: a file past the per-file limit and an upload
// past the owner's total are refused with 413, before or while they
// stream, and an aborted upload leaves nothing behind.
func TestPackagesSizeLimits(t *testing.T) {
	t.Parallel()
	const fileLimit, ownerLimit = 1000, 2500
	e := apitest.NewWithConfig(t, func(c *app.Config) {
		c.MaxPackageFileBytes, c.MaxPackageOwnerBytes = fileLimit, ownerLimit
	})
	alice := e.CreateUser("alice", false)
	owner := apitest.Basic(alice)
	full := bytes.Repeat([]byte("a"), fileLimit)
	pkUpload(t, e, owner, "alice", "big", "1", "over.bin", append(full, 'b')).Expect(t, http.StatusRequestEntityTooLarge)
	pkWaitFiles(t, e, "over the file limit", 0)

	// Without a Content-Length: cut off as it streams.
	pr, pw := io.Pipe()
	go func() {
		for i := 0; i < 50; i++ {
			if _, err := pw.Write(bytes.Repeat([]byte("s"), 100)); err != nil {
				return
			}
		}
		pw.Close()
	}()
	req, _ := http.NewRequest("PUT", e.Server.URL+pkGeneric("alice", "big", "1", "chunked.bin"), pr)
	owner(req)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	pr.Close()
	if resp.StatusCode != http.StatusRequestEntityTooLarge {
		t.Fatalf("chunked upload over the limit: %d", resp.StatusCode)
	}
	pkWaitFiles(t, e, "chunked over the file limit", 0)

	pkUpload(t, e, owner, "alice", "big", "1", "a.bin", full).Expect(t, http.StatusCreated)
	pkUpload(t, e, owner, "alice", "big", "2", "a.bin", bytes.Repeat([]byte("b"), fileLimit)).Expect(t, http.StatusCreated)
	r := pkUpload(t, e, owner, "alice", "big", "3", "a.bin", bytes.Repeat([]byte("c"), fileLimit)).Expect(t, http.StatusRequestEntityTooLarge)
	var apiErr models.APIError
	r.JSON(t, &apiErr)
	if !strings.Contains(apiErr.Message, "2500 bytes") {
		t.Errorf("413 message %q", apiErr.Message)
	}
	pkWaitFiles(t, e, "over the owner's limit", 2)
	e.Do("GET", "packages/alice/generic/big/3", nil, nil).Expect(t, http.StatusNotFound)

	// A client that goes away halfway through its upload (another owner:
	// alice's uploads would be refused on their length alone by now).
	bob := e.CreateUser("bob", false)
	conn, err := net.Dial("tcp", strings.TrimPrefix(e.Server.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	auth, _ := http.NewRequest("GET", "/", nil)
	apitest.Basic(bob)(auth)
	fmt.Fprintf(conn, "PUT %s HTTP/1.1\r\nHost: x\r\nAuthorization: %s\r\nContent-Length: %d\r\n\r\n",
		pkGeneric("bob", "cut", "1", "cut.bin"), auth.Header.Get("Authorization"), fileLimit)
	conn.Write(bytes.Repeat([]byte("c"), fileLimit/2))
	// The bytes stream into a temporary file while the server waits.
	pkWaitFiles(t, e, "while the upload streams", 3)
	conn.Close()
	pkWaitFiles(t, e, "an upload cut off halfway", 2)
	e.Do("GET", "packages/bob/generic/cut/1", nil, nil).Expect(t, http.StatusNotFound)
}

// TestPackagesOfPrivateOwners: the packages of an owner a caller may not
// see answer 404 everywhere, exactly like missing ones.
func TestPackagesOfPrivateOwners(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	alice, bob, carol := e.CreateUser("alice", false), e.CreateUser("bob", false), e.CreateUser("carol", false)
	owner := apitest.Basic(alice)
	org := roCreateOrg(t, e, owner, map[string]any{"username": "secret", "visibility": "private"})
	roAddMember(t, e, org.ID, bob, false, false)
	pkUpload(t, e, owner, "secret", "hidden", "1", "h.bin", []byte("hidden")).Expect(t, http.StatusCreated)
	// A plain member may read but not publish.
	pkUpload(t, e, apitest.Basic(bob), "secret", "hidden", "2", "h.bin", []byte("x")).Expect(t, http.StatusForbidden)

	publicOnly := apitest.TokenCred(e.Token(alice, "read:package", "public-only"))
	for _, c := range []struct {
		name string
		cred apitest.Cred
		sees bool
	}{
		{"anonymous", nil, false},
		{"outsider", apitest.Basic(carol), false},
		{"public-only token of the owner", publicOnly, false},
		{"member", apitest.Basic(bob), true},
		{"org owner", owner, true},
		{"site admin", apitest.Basic(e.Admin), true},
	} {
		want := http.StatusNotFound
		if c.sees {
			want = http.StatusOK
		}
		for _, path := range []string{"packages/secret", "packages/secret/generic/hidden", "packages/secret/generic/hidden/1",
			"packages/secret/generic/hidden/1/files", "packages/secret/generic/hidden/-/latest", pkGeneric("secret", "hidden", "1", "h.bin")} {
			if got := e.Do("GET", path, nil, c.cred).Status; got != want {
				t.Errorf("%s: GET %s: %d, want %d", c.name, path, got, want)
			}
		}
		// (A token is refused for its scope before the owner is looked at.)
		if !c.sees && c.name != "public-only token of the owner" {
			e.Do("DELETE", "packages/secret/generic/hidden/1", nil, c.cred).Expect(t, map[bool]int{true: http.StatusUnauthorized, false: http.StatusNotFound}[c.cred == nil])
		}
	}
	var list []models.Package
	e.Do("GET", "packages/secret", nil, apitest.Basic(bob)).Expect(t, http.StatusOK).JSON(t, &list)
	if len(list) != 1 || list[0].Name != "hidden" {
		t.Fatalf("member's list %+v", list)
	}
}

func TestPackagesListFiltersAndAdminList(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	alice, bob := e.CreateUser("alice", false), e.CreateUser("bob", false)
	for i := 1; i <= 3; i++ {
		pkUpload(t, e, apitest.Basic(alice), "alice", fmt.Sprintf("alpha-%d", i), "1.0", "f", []byte("a")).Expect(t, http.StatusCreated)
	}
	pkUpload(t, e, apitest.Basic(bob), "bob", "beta", "1.0", "f", []byte("b")).Expect(t, http.StatusCreated)
	pkUpload(t, e, apitest.Basic(bob), "bob", "beta", "2.0", "f", []byte("b")).Expect(t, http.StatusCreated)

	e.Do("GET", "admin/packages", nil, nil).Expect(t, http.StatusUnauthorized)
	e.Do("GET", "admin/packages", nil, apitest.Basic(alice)).Expect(t, http.StatusForbidden)
	e.Do("GET", "admin/packages?type=bogus", nil, apitest.Basic(e.Admin)).Expect(t, http.StatusUnprocessableEntity)
	e.Do("GET", "packages/alice?type=bogus", nil, nil).Expect(t, http.StatusUnprocessableEntity)

	list := func(path string, cred apitest.Cred) ([]models.Package, *apitest.Response) {
		t.Helper()
		var out []models.Package
		r := e.Do("GET", path, nil, cred).Expect(t, http.StatusOK)
		r.JSON(t, &out)
		return out, r
	}
	all, r := list("admin/packages", apitest.Basic(e.Admin))
	if len(all) != 5 || r.Header.Get("X-Total-Count") != "5" || r.Header.Get("Link") != "" {
		t.Fatalf("admin list %d, headers %v", len(all), r.Header)
	}
	if all[0].Name != "beta" || all[0].Version != "2.0" || all[0].Owner.UserName != "bob" || all[0].Creator.UserName != "bob" ||
		all[0].HTMLURL != e.URL+"bob/-/packages/generic/beta/2.0" || all[4].Name != "alpha-1" {
		t.Fatalf("admin list order %+v ... %+v", all[0], all[4])
	}
	page2, r := list("admin/packages?limit=2&page=2", apitest.Basic(e.Admin))
	if len(page2) != 2 || page2[0].Name != all[2].Name || r.Header.Get("X-Total-Count") != "5" ||
		!strings.Contains(r.Header.Get("Link"), `rel="next"`) || !strings.Contains(r.Header.Get("Link"), `rel="prev"`) {
		t.Fatalf("page 2 %+v, headers %v", page2, r.Header)
	}
	if got, _ := list("admin/packages?type=npm", apitest.Basic(e.Admin)); len(got) != 0 {
		t.Fatalf("npm filter %+v", got)
	}
	if got, r := list("admin/packages?type=generic&q=ALPHA", apitest.Basic(e.Admin)); len(got) != 3 || r.Header.Get("X-Total-Count") != "3" {
		t.Fatalf("q filter %+v", got)
	}
	if got, _ := list("admin/packages?q=a_", apitest.Basic(e.Admin)); len(got) != 0 {
		t.Fatalf("q is literal: %+v", got)
	}
	if got, r := list("packages/bob", nil); len(got) != 2 || r.Header.Get("X-Total-Count") != "2" {
		t.Fatalf("bob's list %+v", got)
	}
	if got, _ := list("packages/alice?q=2&type=generic&limit=1", nil); len(got) != 1 || got[0].Name != "alpha-2" {
		t.Fatalf("alice's filtered list %+v", got)
	}
}
