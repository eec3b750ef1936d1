package apitest_test

import (
	"bytes"
	"fmt"
	"io"
	"mime/multipart"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"repohost/apitest"
	"repohost/impl/app"
	"repohost/models"
)

// TestReleaseAssetUploadsAreCapped (regression): release asset uploads had
// no size cap, and the generated binding read the whole multipart body
// (32 MiB into memory, the rest into a temporary file) before any check.
// Now an upload streams into its attachment file, Config.MaxAssetBytes at
// most (413 past it), and one that is too large, refused, or cut off
// leaves neither a file nor a row behind.
func TestReleaseAssetUploadsAreCapped(t *testing.T) {
	t.Parallel()
	const limit = 1000
	e := apitest.NewWithConfig(t, func(c *app.Config) { c.MaxAssetBytes = limit })
	alice, bob := e.CreateUser("alice", false), e.CreateUser("bob", false)
	owner := apitest.Basic(alice)
	repo := roCreateRepo(t, e, owner, map[string]any{"name": "pub", "auto_init": true})
	rel := rlCreate(t, e, owner, "alice/pub", map[string]any{"tag_name": "v1"})
	assets := fmt.Sprintf("repos/alice/pub/releases/%d/assets", rel.ID)
	// files lists the repository's stored files and the staged uploads.
	files := func() []string {
		return append(apitest.Keys(t, e.Deps.Objects.Attachments, app.RepoKeyPrefix(repo.ID)), e.TempFiles()...)
	}
	// nothingLeft waits for the server to have finished with a refused
	// upload and checks that only the accepted assets remain.
	nothingLeft := func(what string, want int) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for len(files()) != want && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond)
		}
		if got := files(); len(got) != want {
			t.Fatalf("%s: attachment directory holds %v, want %d files", what, got, want)
		}
		var list []models.Attachment
		e.Do("GET", assets, nil, owner).Expect(t, http.StatusOK).JSON(t, &list)
		if len(list) != want {
			t.Fatalf("%s: %d assets listed, want %d", what, len(list), want)
		}
	}

	exact := bytes.Repeat([]byte("a"), limit)
	var a models.Attachment
	rlUpload(t, e, owner, assets, "exact.bin", "", exact).Expect(t, http.StatusCreated).JSON(t, &a)
	if a.Size != limit || a.Name != "exact.bin" {
		t.Fatalf("asset %+v", a)
	}
	if status, body, _ := rlFetch(t, e, nil, a.DownloadURL); status != http.StatusOK || !bytes.Equal(body, exact) {
		t.Fatalf("download: %d, %d bytes", status, len(body))
	}
	nothingLeft("one byte under the cap", 1)

	// One byte over, and far over (refused on its Content-Length alone).
	r := rlUpload(t, e, owner, assets, "over.bin", "", append(exact, 'b')).Expect(t, http.StatusRequestEntityTooLarge)
	var apiErr models.APIError
	r.JSON(t, &apiErr)
	if !strings.Contains(apiErr.Message, "1000 bytes") {
		t.Errorf("413 message %q", apiErr.Message)
	}
	nothingLeft("one byte over the cap", 1)
	rlUpload(t, e, owner, assets, "huge.bin", "", bytes.Repeat([]byte("h"), 200<<10)).Expect(t, http.StatusRequestEntityTooLarge)
	nothingLeft("far over the cap", 1)

	// Over the cap without a Content-Length (chunked): cut off as it streams.
	pr, pw := io.Pipe()
	mw := multipart.NewWriter(pw)
	go func() {
		fw, _ := mw.CreateFormFile("attachment", "stream.bin")
		for i := 0; i < 100; i++ {
			if _, err := fw.Write(bytes.Repeat([]byte("s"), 1024)); err != nil {
				pw.CloseWithError(err)
				return
			}
		}
		pw.CloseWithError(mw.Close())
	}()
	req, _ := http.NewRequest("POST", e.URL+"api/v1/"+assets, pr)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	owner(req)
	resp, err := e.HTTPClient().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	pr.Close()
	if resp.StatusCode != http.StatusRequestEntityTooLarge {
		t.Fatalf("chunked upload over the cap: %d", resp.StatusCode)
	}
	nothingLeft("chunked over the cap", 1)

	// Refused callers are refused before the body is read, and leave
	// nothing either.
	rlUpload(t, e, apitest.Basic(bob), assets, "x.bin", "", []byte("x")).Expect(t, http.StatusForbidden)
	rlUpload(t, e, nil, assets, "x.bin", "", []byte("x")).Expect(t, http.StatusUnauthorized)
	rlUpload(t, e, owner, assets, "x.bin", "..%2Fx", []byte("x")).Expect(t, http.StatusUnprocessableEntity)
	rlUpload(t, e, owner, assets, "x.bin", strings.Repeat("n", 256), []byte("x")).Expect(t, http.StatusUnprocessableEntity)
	e.Do("POST", assets, map[string]any{"attachment": "x"}, owner).Expect(t, http.StatusUnprocessableEntity)
	rlUpload(t, e, owner, "repos/alice/pub/releases/abc/assets", "x.bin", "", []byte("x")).Expect(t, http.StatusUnprocessableEntity)
	rlUpload(t, e, owner, "repos/alice/pub/releases/999/assets", "x.bin", "", []byte("x")).Expect(t, http.StatusNotFound)
	nothingLeft("refused uploads", 1)

	// A client that goes away halfway through its upload.
	conn, err := net.Dial("tcp", strings.TrimPrefix(e.Server.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	var head bytes.Buffer
	mw = multipart.NewWriter(&head)
	if _, err := mw.CreateFormFile("attachment", "cut.bin"); err != nil {
		t.Fatal(err)
	}
	req, _ = http.NewRequest("POST", e.URL+"api/v1/"+assets, nil)
	owner(req)
	fmt.Fprintf(conn, "POST /api/v1/%s HTTP/1.1\r\nHost: x\r\nAuthorization: %s\r\nContent-Type: %s\r\nContent-Length: %d\r\n\r\n",
		assets, req.Header.Get("Authorization"), mw.FormDataContentType(), head.Len()+limit)
	conn.Write(head.Bytes())
	conn.Write(bytes.Repeat([]byte("c"), limit/2))
	// The bytes stream into a temporary file while the server waits for
	// the rest; once the client is gone it is removed.
	deadline := time.Now().Add(10 * time.Second)
	for len(files()) != 2 {
		if time.Now().After(deadline) {
			t.Fatalf("no temporary file while the upload streams: %v", files())
		}
		time.Sleep(10 * time.Millisecond)
	}
	conn.Close()
	nothingLeft("an upload cut off halfway", 1)

	// Under the cap, uploads still work, by multipart name or by ?name.
	rlUpload(t, e, owner, assets, "ignored.bin", "named.txt", []byte("named")).Expect(t, http.StatusCreated).JSON(t, &a)
	if a.Name != "named.txt" || a.Size != 5 {
		t.Fatalf("asset %+v", a)
	}
	nothingLeft("a second asset", 2)
}
