package apitest_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"testing"

	"code.gitea.io/sdk/gitea"

	"repohost/apitest"
)

// TestPackagesSDK: an SDK program uploads a generic package over HTTP
// (the SDK has no upload call) with the token the SDK made, then reads it
// back with the SDK's package calls, and reads GET /admin/packages (which
// the SDK does not wrap) into the SDK's own Package type.
func TestPackagesSDK(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	e.CreateUser("alice", false)
	basic := sdkClient(t, e, gitea.SetBasicAuth("alice", "alice-pw"))
	tok, _, err := basic.CreateAccessToken(gitea.CreateAccessTokenOption{
		Name: "ci", Scopes: []gitea.AccessTokenScope{gitea.AccessTokenScopeWritePackage, gitea.AccessTokenScope("write:repository")},
	})
	if err != nil {
		t.Fatal(err)
	}
	c := sdkClient(t, e, gitea.SetToken(tok.Token))
	put := func(file string, body []byte) int {
		req, _ := http.NewRequest("PUT", e.Server.URL+pkGeneric("alice", "sdkpkg", "1.2.3", file), bytes.NewReader(body))
		req.Header.Set("Authorization", "token "+tok.Token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if s := put("a.txt", []byte("hello")); s != http.StatusCreated {
		t.Fatalf("upload: %d", s)
	}
	if s := put("a.txt", []byte("hello")); s != http.StatusConflict {
		t.Fatalf("repeated upload: %d", s)
	}

	list, resp, err := c.ListPackages("alice", gitea.ListPackagesOptions{Type: "generic"})
	if err != nil || resp.StatusCode != 200 || len(list) != 1 || list[0].Name != "sdkpkg" || list[0].Version != "1.2.3" ||
		list[0].Owner == nil || list[0].Owner.UserName != "alice" || list[0].Creator == nil || list[0].Repository != nil ||
		list[0].CreatedAt.IsZero() || list[0].HTMLURL == "" {
		t.Fatalf("ListPackages: %v %+v", err, list)
	}
	if resp.Header.Get("X-Total-Count") != "1" {
		t.Fatalf("X-Total-Count %q", resp.Header.Get("X-Total-Count"))
	}
	p, _, err := c.GetPackage("alice", "generic", "sdkpkg", "1.2.3")
	if err != nil || p.ID != list[0].ID {
		t.Fatalf("GetPackage: %v %+v", err, p)
	}
	latest, _, err := c.GetLatestPackage("alice", "generic", "sdkpkg")
	if err != nil || latest.Version != "1.2.3" {
		t.Fatalf("GetLatestPackage: %v %+v", err, latest)
	}
	files, _, err := c.ListPackageFiles("alice", "generic", "sdkpkg", "1.2.3")
	if err != nil || len(files) != 1 || files[0].Name != "a.txt" || files[0].Size != 5 ||
		files[0].SHA256 != sha256Hex([]byte("hello")) || files[0].MD5 == "" || files[0].SHA1 == "" || files[0].SHA512 == "" {
		t.Fatalf("ListPackageFiles: %v %+v", err, files)
	}
	if _, _, err := c.CreateRepo(gitea.CreateRepoOption{Name: "home"}); err != nil {
		t.Fatal(err)
	}
	if resp, err := c.LinkPackage("alice", "generic", "sdkpkg", "home"); err != nil || resp.StatusCode != 201 {
		t.Fatalf("LinkPackage: %v", err)
	}
	p, _, _ = c.GetPackage("alice", "generic", "sdkpkg", "1.2.3")
	if p.Repository == nil || p.Repository.FullName != "alice/home" {
		t.Fatalf("linked: %+v", p)
	}
	if resp, err := c.UnlinkPackage("alice", "generic", "sdkpkg"); err != nil || resp.StatusCode != 201 {
		t.Fatalf("UnlinkPackage: %v", err)
	}
	if _, resp, err := c.GetPackage("alice", "generic", "nope", "1"); err == nil || resp.StatusCode != 404 {
		t.Fatalf("missing package: %v", err)
	}

	// The admin list, into the SDK's type.
	req, _ := http.NewRequest("GET", e.Server.URL+"/api/v1/admin/packages?type=generic", nil)
	req.SetBasicAuth(e.Admin.User.Name, e.Admin.Password)
	r, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var all []*gitea.Package
	err = json.NewDecoder(r.Body).Decode(&all)
	r.Body.Close()
	if err != nil || r.StatusCode != 200 || len(all) != 1 || all[0].Name != "sdkpkg" || all[0].Owner.UserName != "alice" ||
		r.Header.Get("X-Total-Count") != "1" {
		t.Fatalf("admin list: %d %v %+v", r.StatusCode, err, all)
	}

	if resp, err := c.DeletePackage("alice", "generic", "sdkpkg", "1.2.3"); err != nil || resp.StatusCode != 204 {
		t.Fatalf("DeletePackage: %v", err)
	}
	if list, _, _ := c.ListPackages("alice", gitea.ListPackagesOptions{}); len(list) != 0 {
		t.Fatalf("after delete: %+v", list)
	}
}
