package apitest_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"repohost/apitest"
	"repohost/impl/app"
	"repohost/impl/lfs"
	"repohost/store/objects"
)

// lfsCall is one request to the LFS API of e, with the LFS media type.
func lfsCall(t *testing.T, e *apitest.Env, method, path string, body any, cred apitest.Cred, header ...string) (int, http.Header, []byte) {
	t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case []byte:
		rd = bytes.NewReader(b)
	default:
		raw, _ := json.Marshal(b)
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequest(method, e.Server.URL+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept", "application/vnd.git-lfs+json")
	req.Header.Set("Content-Type", "application/vnd.git-lfs+json")
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	if cred != nil {
		cred(req)
	}
	resp, err := e.HTTPClient().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, raw
}

type lfsBatchAnswer struct {
	Objects []struct {
		Oid     string `json:"oid"`
		Size    int64  `json:"size"`
		Actions map[string]struct {
			Href   string            `json:"href"`
			Header map[string]string `json:"header"`
		} `json:"actions"`
		Error *struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	} `json:"objects"`
}

func oidOf(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

func batch(t *testing.T, e *apitest.Env, repo, op string, cred apitest.Cred, objs ...map[string]any) (int, lfsBatchAnswer, http.Header) {
	t.Helper()
	status, h, raw := lfsCall(t, e, "POST", "/"+repo+".git/info/lfs/objects/batch",
		map[string]any{"operation": op, "transfers": []string{"basic"}, "objects": objs}, cred)
	var a lfsBatchAnswer
	if status == http.StatusOK {
		if err := json.Unmarshal(raw, &a); err != nil {
			t.Fatalf("batch answer %s: %v", raw, err)
		}
	} else {
		var e struct{ Message string }
		if err := json.Unmarshal(raw, &e); err != nil || e.Message == "" {
			t.Fatalf("batch refusal %d is not in the LFS error shape: %s", status, raw)
		}
	}
	return status, a, h
}

// TestLFSBatchAPI covers the batch, upload, download and verify routes'
// edge cases over plain HTTP.
func TestLFSBatchAPI(t *testing.T) {
	t.Parallel()
	e := apitest.NewWithConfig(t, lfsLimits)
	alice := e.CreateUser("alice", false)
	bob := e.CreateUser("bob", false)
	carol := e.CreateUser("carol", false)
	A, B, C := apitest.Basic(alice), apitest.Basic(bob), apitest.Basic(carol)
	roCreateRepo(t, e, A, map[string]any{"name": "priv", "private": true})
	roCreateRepo(t, e, A, map[string]any{"name": "pub"})
	e.Do("PUT", "repos/alice/priv/collaborators/bob", map[string]any{"permission": "read"}, A).Expect(t, http.StatusNoContent)

	content := []byte("some large binary content")
	obj := map[string]any{"oid": oidOf(content), "size": len(content)}

	// Refusals: a private repository is 401 to anonymous callers (with
	// the challenges), 404 to users who cannot see it and for missing
	// ones, 403 to a reader asking to upload.
	status, _, h := batch(t, e, "alice/priv", "download", nil, obj)
	if status != http.StatusUnauthorized || h.Get("LFS-Authenticate") == "" || h.Get("WWW-Authenticate") == "" {
		t.Fatalf("anonymous batch on a private repository: %d %v", status, h)
	}
	if status, _, _ := batch(t, e, "alice/priv", "download", C, obj); status != http.StatusNotFound {
		t.Fatalf("batch on a private repository the caller cannot see: %d, want 404", status)
	}
	if status, _, _ := batch(t, e, "alice/nothing", "download", A, obj); status != http.StatusNotFound {
		t.Fatalf("batch on a missing repository: %d, want 404", status)
	}
	if status, _, _ := batch(t, e, "alice/priv", "upload", B, obj); status != http.StatusForbidden {
		t.Fatalf("upload batch by a reader: %d, want 403", status)
	}
	if status, _, _ := batch(t, e, "alice/pub", "upload", nil, obj); status != http.StatusUnauthorized {
		t.Fatalf("anonymous upload batch on a public repository: %d, want 401", status)
	}
	if status, _, _ := batch(t, e, "alice/priv", "delete", A, obj); status != http.StatusBadRequest {
		t.Fatalf("batch with an unknown operation: %d, want 400", status)
	}
	if status, _, _ := lfsCall(t, e, "POST", "/alice/priv.git/info/lfs/objects/batch", map[string]any{"operation": "download"}, A, "Accept", "application/json"); status != http.StatusUnsupportedMediaType {
		t.Fatalf("batch without the LFS media type: %d, want 415", status)
	}

	// Per object: a bad oid or size is 422, a too large object 413, one
	// not stored yet is to be uploaded (and verified).
	status, a, _ := batch(t, e, "alice/priv", "upload", A,
		map[string]any{"oid": "xyz", "size": 1},
		map[string]any{"oid": oidOf(content), "size": -1},
		map[string]any{"oid": strings.Repeat("a", 64), "size": 1<<20 + 1},
		obj)
	if status != http.StatusOK || len(a.Objects) != 4 {
		t.Fatalf("upload batch: %d %+v", status, a)
	}
	for i, code := range []int{422, 422, 413} {
		if a.Objects[i].Error == nil || a.Objects[i].Error.Code != code {
			t.Fatalf("object %d of the batch: %+v, want error %d", i, a.Objects[i], code)
		}
	}
	up, ok := a.Objects[3].Actions["upload"]
	if !ok || a.Objects[3].Actions["verify"].Href == "" {
		t.Fatalf("upload batch of a new object: %+v", a.Objects[3])
	}
	if !strings.HasPrefix(up.Href, e.URL+"alice/priv.git/info/lfs/objects/"+oidOf(content)+"/") || up.Header["Authorization"] == "" {
		t.Fatalf("upload action: %+v", up)
	}
	// Not stored: a download answers 404 for the object.
	if _, a, _ := batch(t, e, "alice/priv", "download", A, obj); a.Objects[0].Error == nil || a.Objects[0].Error.Code != 404 {
		t.Fatalf("download batch of a missing object: %+v", a.Objects[0])
	}

	put := func(repo, oid string, size int, body []byte, cred apitest.Cred) int {
		status, _, _ := lfsCall(t, e, "PUT", fmt.Sprintf("/%s.git/info/lfs/objects/%s/%d", repo, oid, size), body, cred, "Content-Type", "application/octet-stream")
		return status
	}
	// Uploads: bad oid 422, wrong content 422 (nothing stored), too
	// large 413, a reader 403.
	if s := put("alice/priv", "nothex", len(content), content, A); s != http.StatusUnprocessableEntity {
		t.Fatalf("PUT with a bad oid: %d", s)
	}
	if s := put("alice/priv", oidOf(content), len(content), []byte("other content of a size"), A); s != http.StatusUnprocessableEntity {
		t.Fatalf("PUT of content that is not the object: %d, want 422", s)
	}
	if s := put("alice/priv", oidOf(content), len(content)+5, append(content, "12345"...), A); s != http.StatusUnprocessableEntity {
		t.Fatalf("PUT of content of the right size but the wrong hash: %d, want 422", s)
	}
	if s := put("alice/priv", strings.Repeat("b", 64), 1<<20+1, nil, A); s != http.StatusRequestEntityTooLarge {
		t.Fatalf("PUT over the largest size: %d, want 413", s)
	}
	if s := put("alice/priv", oidOf(content), len(content), content, B); s != http.StatusForbidden {
		t.Fatalf("PUT by a reader: %d, want 403", s)
	}
	// Verify before the upload: 404.
	if s, _, _ := lfsCall(t, e, "POST", "/alice/priv.git/info/lfs/verify", obj, A); s != http.StatusNotFound {
		t.Fatalf("verify of an object not uploaded: %d, want 404", s)
	}
	if s := put("alice/priv", oidOf(content), len(content), content, A); s != http.StatusOK {
		t.Fatalf("PUT: %d", s)
	}
	if s, _, _ := lfsCall(t, e, "POST", "/alice/priv.git/info/lfs/verify", obj, A); s != http.StatusOK {
		t.Fatalf("verify: %d", s)
	}
	if s, _, _ := lfsCall(t, e, "POST", "/alice/priv.git/info/lfs/verify", map[string]any{"oid": oidOf(content), "size": 3}, A); s != http.StatusUnprocessableEntity {
		t.Fatalf("verify with the wrong size: %d, want 422", s)
	}

	// Download: the reader gets it, whole or a range; others do not.
	_, a, _ = batch(t, e, "alice/priv", "download", B, obj)
	dl, ok := a.Objects[0].Actions["download"]
	if !ok {
		t.Fatalf("download batch: %+v", a.Objects[0])
	}
	path := strings.TrimPrefix(dl.Href, e.URL[:len(e.URL)-1])
	if s, _, body := lfsCall(t, e, "GET", path, nil, B); s != http.StatusOK || !bytes.Equal(body, content) {
		t.Fatalf("download: %d %q", s, body)
	}
	if s, h, body := lfsCall(t, e, "GET", path, nil, B, "Range", "bytes=5-9"); s != http.StatusPartialContent || string(body) != string(content[5:10]) || h.Get("Content-Range") == "" {
		t.Fatalf("ranged download: %d %q %v", s, body, h)
	}
	if s, _, _ := lfsCall(t, e, "GET", path, nil, C); s != http.StatusNotFound {
		t.Fatalf("download by a stranger: %d, want 404", s)
	}
	if s, _, _ := lfsCall(t, e, "GET", path, nil, nil); s != http.StatusUnauthorized {
		t.Fatalf("anonymous download: %d, want 401", s)
	}

	// Another repository of alice's gets the stored object linked without
	// an upload (she reads the one that has it); carol, who cannot read
	// it, must send the bytes to link it to hers.
	roCreateRepo(t, e, A, map[string]any{"name": "second", "private": true})
	_, a, _ = batch(t, e, "alice/second", "upload", A, obj)
	if len(a.Objects[0].Actions) != 0 || a.Objects[0].Error != nil {
		t.Fatalf("upload batch of an object alice can read elsewhere: %+v", a.Objects[0])
	}
	if _, a, _ := batch(t, e, "alice/second", "download", A, obj); a.Objects[0].Actions["download"].Href == "" {
		t.Fatalf("the linked object is not served: %+v", a.Objects[0])
	}
	roCreateRepo(t, e, C, map[string]any{"name": "mine", "private": true})
	_, a, _ = batch(t, e, "carol/mine", "upload", C, obj)
	if _, ok := a.Objects[0].Actions["upload"]; !ok {
		t.Fatalf("upload batch of an object carol cannot read: %+v", a.Objects[0])
	}
	if s := put("carol/mine", oidOf(content), len(content), []byte("wrong content, same size!"), C); s != http.StatusUnprocessableEntity {
		t.Fatalf("carol's PUT of the wrong content of a stored object: %d, want 422", s)
	}
	if _, a, _ := batch(t, e, "carol/mine", "download", C, obj); a.Objects[0].Error == nil {
		t.Fatalf("the wrong content linked the object for carol: %+v", a.Objects[0])
	}
	if s := put("carol/mine", oidOf(content), len(content), content, C); s != http.StatusOK {
		t.Fatalf("carol's PUT of the content: %d", s)
	}

	// A fork serves its base's objects.
	e.Do("POST", "repos/alice/priv/forks", map[string]any{}, B).Expect(t, http.StatusAccepted)
	if _, a, _ := batch(t, e, "bob/priv", "download", B, obj); a.Objects[0].Actions["download"].Href == "" {
		t.Fatalf("a fork does not serve its base's object: %+v", a.Objects[0])
	}

	// Deleting a repository unlinks its objects.
	e.Do("DELETE", "repos/carol/mine", nil, C).Expect(t, http.StatusNoContent)
	if n, err := e.Deps.Store.LFS().OwnerBytes(t.Context(), carol.User.ID); err != nil || n != 0 {
		t.Fatalf("carol's LFS bytes after deleting her repository: %d %v", n, err)
	}
}

// TestLFSGC runs gc_lfs: it removes an object no repository links once
// it is old enough, and keeps linked ones.
func TestLFSGC(t *testing.T) {
	t.Parallel()
	e := apitest.NewWithConfig(t, func(c *app.Config) { c.LFSGCOlderThan = time.Millisecond })
	alice := e.CreateUser("alice", false)
	A := apitest.Basic(alice)
	roCreateRepo(t, e, A, map[string]any{"name": "keep", "private": true})
	roCreateRepo(t, e, A, map[string]any{"name": "drop", "private": true})
	kept, dropped := []byte("kept object"), []byte("dropped object")
	for _, c := range []struct {
		repo string
		body []byte
	}{{"alice/keep", kept}, {"alice/drop", dropped}} {
		if s, _, raw := lfsCall(t, e, "PUT", fmt.Sprintf("/%s.git/info/lfs/objects/%s/%d", c.repo, oidOf(c.body), len(c.body)), c.body, A); s != http.StatusOK {
			t.Fatalf("PUT to %s: %d %s", c.repo, s, raw)
		}
	}
	e.Do("DELETE", "repos/alice/drop", nil, A).Expect(t, http.StatusNoContent)
	// The server's clock counts whole seconds.
	time.Sleep(1200 * time.Millisecond)
	runCron(t, e, "gc_lfs")
	ctx := t.Context()
	if _, err := e.Deps.Objects.LFS.Stat(ctx, lfs.Key(oidOf(kept))); err != nil {
		t.Fatalf("gc_lfs removed a linked object: %v", err)
	}
	if _, err := e.Deps.Objects.LFS.Stat(ctx, lfs.Key(oidOf(dropped))); !objects.IsNotExist(err) {
		t.Fatalf("gc_lfs kept an orphan: %v", err)
	}
	if s, _, raw := lfsCall(t, e, "GET", "/alice/keep.git/info/lfs/objects/"+oidOf(kept), nil, A); s != http.StatusOK || string(raw) != string(kept) {
		t.Fatalf("the kept object after gc_lfs: %d %q", s, raw)
	}
}

// TestLFSTokens checks the tokens git-lfs-authenticate hands out: they
// reach their repository only, and a download token uploads nothing.
func TestLFSTokens(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	alice := e.CreateUser("alice", false)
	A := apitest.Basic(alice)
	roCreateRepo(t, e, A, map[string]any{"name": "one", "private": true})
	roCreateRepo(t, e, A, map[string]any{"name": "two", "private": true})
	ctx := t.Context()
	one, err := e.Deps.Store.Repos().FindByOwnerAndName(ctx, "alice", "one")
	if err != nil {
		t.Fatal(err)
	}
	svc := lfs.NewService(e.Deps)
	bearer := func(op string) apitest.Cred {
		tok, err := svc.IssueToken(one, alice.User.ID, op, e.URL)
		if err != nil {
			t.Fatal(err)
		}
		if tok.Href != e.URL+"alice/one.git/info/lfs" {
			t.Fatalf("token href %s", tok.Href)
		}
		return func(r *http.Request) { r.Header.Set("Authorization", tok.Header["Authorization"]) }
	}
	obj := map[string]any{"oid": strings.Repeat("c", 64), "size": 3}
	down, up := bearer("download"), bearer("upload")
	if s, _, _ := batch(t, e, "alice/one", "download", down, obj); s != http.StatusOK {
		t.Fatalf("download batch with a download token: %d", s)
	}
	if s, _, _ := batch(t, e, "alice/one", "upload", down, obj); s != http.StatusUnauthorized {
		t.Fatalf("upload batch with a download token: %d, want 401", s)
	}
	if s, _, _ := batch(t, e, "alice/one", "upload", up, obj); s != http.StatusOK {
		t.Fatalf("upload batch with an upload token: %d", s)
	}
	if s, _, _ := batch(t, e, "alice/two", "download", up, obj); s != http.StatusUnauthorized {
		t.Fatalf("a token of another repository: %d, want 401", s)
	}
	forged := func(r *http.Request) { r.Header.Set("Authorization", "Bearer aaa.bbb.ccc") }
	if s, _, _ := batch(t, e, "alice/one", "download", forged, obj); s != http.StatusUnauthorized {
		t.Fatalf("a forged token: %d, want 401", s)
	}
}
