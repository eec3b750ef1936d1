package apitest_test

import (
	"bytes"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"repohost/apitest"
	"repohost/impl/app"
	"repohost/impl/packages"
	"repohost/models"
)

// TestObjectStorageBackends: every kind of large file the server keeps
// (package blobs, release files, repository archives) is stored, served
// with ranges and conditional requests, and removed, the same on the local
// disk and on S3 (REPOHOST_TEST_S3, scripts/with-s3.sh); a refused upload
// leaves nothing behind on either.
func TestObjectStorageBackends(t *testing.T) {
	t.Parallel()
	for _, b := range apitest.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel()
			e := apitest.NewWithDeps(t, func(d *app.Deps) {
				if b.Configure != nil {
					b.Configure(d)
				}
				d.Config.MaxPackageFileBytes = 1 << 20
			})
			alice := e.CreateUser("alice", false)
			owner := apitest.Basic(alice)

			// A package file: stored under its SHA-256, served whole and by
			// range, conditional on its ETag.
			content := bytes.Repeat([]byte("0123456789"), 10000)
			pkUpload(t, e, owner, "alice", "tool", "1.0", "tool.bin", content).Expect(t, http.StatusCreated)
			blob := packages.BlobKey(sha256Hex(content))
			if got := apitest.Keys(t, e.Deps.Objects.Packages, ""); len(got) != 1 || got[0] != blob {
				t.Fatalf("package store holds %v, want %s", got, blob)
			}
			r := e.Do("GET", pkGeneric("alice", "tool", "1.0", "tool.bin"), nil, owner).Expect(t, http.StatusOK)
			if !bytes.Equal(r.Body, content) {
				t.Fatalf("package download: %d bytes", len(r.Body))
			}
			etag := r.Header.Get("ETag")
			req, _ := http.NewRequest("GET", strings.TrimSuffix(e.URL, "/")+pkGeneric("alice", "tool", "1.0", "tool.bin"), nil)
			owner(req)
			req.Header.Set("Range", "bytes=10-19")
			resp, err := e.HTTPClient().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			part := make([]byte, 32)
			n, _ := resp.Body.Read(part)
			resp.Body.Close()
			if resp.StatusCode != http.StatusPartialContent || string(part[:n]) != "0123456789" {
				t.Fatalf("range: %d %q", resp.StatusCode, part[:n])
			}
			req.Header.Del("Range")
			req.Header.Set("If-None-Match", etag)
			resp, err = e.HTTPClient().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusNotModified {
				t.Fatalf("If-None-Match: %d", resp.StatusCode)
			}
			// Too large: refused while it streams, nothing stored or staged.
			pkUpload(t, e, owner, "alice", "tool", "1.0", "big.bin", make([]byte, 1<<20+1)).Expect(t, http.StatusRequestEntityTooLarge)
			if got := pkFiles(t, e); len(got) != 1 {
				t.Fatalf("after a refused upload the package storage holds %v", got)
			}
			// Deleted: the cleanup removes the blob from the store.
			e.Do("DELETE", pkGeneric("alice", "tool", "1.0", ""), nil, owner).Expect(t, http.StatusNoContent)
			runCron(t, e, "cleanup_packages")
			if got := pkFiles(t, e); len(got) != 0 {
				t.Fatalf("after cleanup the package storage holds %v", got)
			}

			// A release file.
			repo := roCreateRepo(t, e, owner, map[string]any{"name": "pub", "auto_init": true})
			rel := rlCreate(t, e, owner, "alice/pub", map[string]any{"tag_name": "v1"})
			var a models.Attachment
			rlUpload(t, e, owner, fmt.Sprintf("repos/alice/pub/releases/%d/assets", rel.ID), "notes.txt", "", content).
				Expect(t, http.StatusCreated).JSON(t, &a)
			if got := apitest.Keys(t, e.Deps.Objects.Attachments, ""); len(got) != 1 || got[0] != app.AttachmentKey(repo.ID, a.UUID) {
				t.Fatalf("attachment store holds %v", got)
			}
			if status, body, _ := rlFetch(t, e, nil, a.DownloadURL); status != http.StatusOK || !bytes.Equal(body, content) {
				t.Fatalf("attachment download: %d, %d bytes", status, len(body))
			}

			// An archive, kept once made and served again from the store.
			first := e.Do("GET", "repos/alice/pub/archive/main.zip", nil, owner).Expect(t, http.StatusOK)
			if got := apitest.Keys(t, e.Deps.Objects.Archives, app.RepoKeyPrefix(repo.ID)); len(got) != 1 {
				t.Fatalf("archive store holds %v", got)
			}
			again := e.Do("GET", "repos/alice/pub/archive/main.zip", nil, owner).Expect(t, http.StatusOK)
			if !bytes.Equal(first.Body, again.Body) {
				t.Fatal("the kept archive differs from the one made")
			}

			// Deleting the repository removes its files and archives.
			e.Do("DELETE", "repos/alice/pub", nil, owner).Expect(t, http.StatusNoContent)
			if got := apitest.Keys(t, e.Deps.Objects.Attachments, ""); len(got) != 0 {
				t.Fatalf("attachments left: %v", got)
			}
			if got := apitest.Keys(t, e.Deps.Objects.Archives, ""); len(got) != 0 {
				t.Fatalf("archives left: %v", got)
			}
			if got := e.TempFiles(); len(got) != 0 {
				t.Fatalf("staged uploads left: %v", got)
			}
		})
	}
}

// TestObjectStorageServeDirect: with serve_direct on, package and release
// file downloads redirect to the S3 service's presigned address, which
// serves the bytes under the file's name.
func TestObjectStorageServeDirect(t *testing.T) {
	t.Parallel()
	e := apitest.NewWithDeps(t, func(d *app.Deps) { d.Objects = apitest.S3Stores(t, true) })
	alice := e.CreateUser("alice", false)
	owner := apitest.Basic(alice)
	content := []byte("served straight from the bucket")
	pkUpload(t, e, owner, "alice", "tool", "1.0", "tool.bin", content).Expect(t, http.StatusCreated)
	roCreateRepo(t, e, owner, map[string]any{"name": "pub", "auto_init": true})
	rel := rlCreate(t, e, owner, "alice/pub", map[string]any{"tag_name": "v1"})
	var a models.Attachment
	rlUpload(t, e, owner, fmt.Sprintf("repos/alice/pub/releases/%d/assets", rel.ID), "notes.txt", "", content).
		Expect(t, http.StatusCreated).JSON(t, &a)

	// An archive is streamed the first time and kept; the kept one is
	// served by the store, through the API and the web route alike.
	archive := e.Do("GET", "repos/alice/pub/archive/main.zip", nil, owner).Expect(t, http.StatusOK).Body

	noFollow := e.HTTPClient()
	noFollow.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	for _, c := range []struct {
		url, name string
		content   []byte
	}{
		{strings.TrimSuffix(e.URL, "/") + pkGeneric("alice", "tool", "1.0", "tool.bin"), "tool.bin", content},
		{a.DownloadURL, "notes.txt", content},
		{e.URL + "api/v1/repos/alice/pub/archive/main.zip", "pub-main.zip", archive},
		{e.URL + "alice/pub/archive/main.zip", "pub-main.zip", archive},
	} {
		req, _ := http.NewRequest("GET", c.url, nil)
		owner(req)
		resp, err := noFollow.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		loc := resp.Header.Get("Location")
		if resp.StatusCode != http.StatusSeeOther || loc == "" || strings.HasPrefix(loc, e.URL) {
			t.Fatalf("GET %s: %d to %q, want a redirect to the store", c.url, resp.StatusCode, loc)
		}
		resp, err = http.Get(loc) // no credentials: the address is signed
		if err != nil {
			t.Fatal(err)
		}
		body := new(bytes.Buffer)
		_, _ = body.ReadFrom(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || !bytes.Equal(body.Bytes(), c.content) ||
			!strings.Contains(resp.Header.Get("Content-Disposition"), c.name) {
			t.Fatalf("presigned GET: %d %q, Content-Disposition %q", resp.StatusCode, body, resp.Header.Get("Content-Disposition"))
		}
	}
}
