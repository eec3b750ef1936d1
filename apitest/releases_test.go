package apitest_test

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"code.gitea.io/sdk/gitea"

	"repohost/apitest"
	"repohost/impl/app"
	"repohost/models"
	"repohost/store"
	"repohost/store/objects"
)

func rlCreate(t *testing.T, e *apitest.Env, cred apitest.Cred, repo string, body map[string]any) *models.Release {
	t.Helper()
	var r models.Release
	e.Do("POST", "repos/"+repo+"/releases", body, cred).Expect(t, http.StatusCreated).JSON(t, &r)
	return &r
}

func rlGet(t *testing.T, e *apitest.Env, cred apitest.Cred, path string) *models.Release {
	t.Helper()
	var r models.Release
	e.Do("GET", path, nil, cred).Expect(t, http.StatusOK).JSON(t, &r)
	return &r
}

func rlList(t *testing.T, e *apitest.Env, cred apitest.Cred, path string) ([]string, string) {
	t.Helper()
	var rs []*models.Release
	r := e.Do("GET", path, nil, cred).Expect(t, http.StatusOK)
	r.JSON(t, &rs)
	var tags []string
	for _, x := range rs {
		tags = append(tags, x.TagName)
	}
	return tags, r.Header.Get("X-Total-Count")
}

// rlUpload posts a multipart asset; name, when set, goes in ?name=.
func rlUpload(t *testing.T, e *apitest.Env, cred apitest.Cred, path, filename, name string, data []byte) *apitest.Response {
	t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	fw, err := mw.CreateFormFile("attachment", filename)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = fw.Write(data)
	_ = mw.Close()
	if name != "" {
		path += "?name=" + name
	}
	req, err := http.NewRequest("POST", e.URL+"api/v1/"+path, &buf)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", mw.FormDataContentType())
	if cred != nil {
		cred(req)
	}
	resp, err := e.HTTPClient().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return &apitest.Response{Status: resp.StatusCode, Header: resp.Header, Body: body}
}

// rlFetch GETs an absolute URL (outside the API) with cred.
func rlFetch(t *testing.T, e *apitest.Env, cred apitest.Cred, url string) (int, []byte, http.Header) {
	t.Helper()
	req, err := http.NewRequest("GET", url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if cred != nil {
		cred(req)
	}
	resp, err := e.HTTPClient().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b, resp.Header
}

func TestReleasesLifecycle(t *testing.T) {
	t.Parallel()
	w := ctSetup(t)
	e := w.e
	repo := roGit(t, e, "alice", "pub")
	main := ctBranchCommit(t, repo, "main").Hash.String()

	// A draft makes no tag and is invisible to readers.
	draft := rlCreate(t, e, w.owner, "alice/pub", map[string]any{
		"tag_name": "v1.0", "name": "First", "body": "notes", "draft": true,
	})
	if !draft.IsDraft || draft.PublishedAt == nil || draft.PublishedAt.String() != draft.CreatedAt.String() || draft.CreatedAt == nil || draft.Target != "main" ||
		draft.Author == nil || draft.Author.UserName != "alice" || draft.Attachments == nil ||
		!strings.HasSuffix(draft.UploadURL, fmt.Sprintf("/api/v1/repos/alice/pub/releases/%d/assets", draft.ID)) {
		t.Fatalf("draft %+v", draft)
	}
	if _, ok := tgRef(t, repo, "v1.0"); ok {
		t.Fatal("a draft created its tag")
	}
	id := fmt.Sprint(draft.ID)
	for _, cred := range []apitest.Cred{nil, w.outsider} {
		e.Do("GET", "repos/alice/pub/releases/"+id, nil, cred).Expect(t, http.StatusNotFound)
		e.Do("GET", "repos/alice/pub/releases/tags/v1.0", nil, cred).Expect(t, http.StatusNotFound)
		e.Do("GET", "repos/alice/pub/releases/"+id+"/assets", nil, cred).Expect(t, http.StatusNotFound)
		if tags, total := rlList(t, e, cred, "repos/alice/pub/releases?draft=true"); len(tags) != 0 || total != "0" {
			t.Fatalf("reader sees drafts: %v %s", tags, total)
		}
	}
	if tags, _ := rlList(t, e, w.owner, "repos/alice/pub/releases"); len(tags) != 1 {
		t.Fatalf("writer list %v", tags)
	}
	e.Do("GET", "repos/alice/pub/releases/latest", nil, w.owner).Expect(t, http.StatusNotFound)

	// Empty strings leave fields as they are; publishing creates the tag
	// at target_commitish and sets published_at.
	var edited models.Release
	e.Do("PATCH", "repos/alice/pub/releases/"+id, map[string]any{"name": "", "body": "", "tag_name": "", "target_commitish": ""}, w.owner).
		Expect(t, http.StatusOK).JSON(t, &edited)
	if edited.Title != "First" || edited.Note != "notes" || edited.TagName != "v1.0" || !edited.IsDraft {
		t.Fatalf("empty strings changed fields: %+v", edited)
	}
	e.Do("PATCH", "repos/alice/pub/releases/"+id, map[string]any{"draft": false, "name": "First!"}, w.owner).
		Expect(t, http.StatusOK).JSON(t, &edited)
	if edited.IsDraft || edited.PublishedAt == nil || edited.Title != "First!" || edited.Note != "notes" {
		t.Fatalf("published %+v", edited)
	}
	if h, ok := tgRef(t, repo, "v1.0"); !ok || h.String() != main {
		t.Fatalf("publishing did not tag main: %v %s", ok, h)
	}
	for _, cred := range []apitest.Cred{nil, w.outsider} {
		rlGet(t, e, cred, "repos/alice/pub/releases/"+id)
		rlGet(t, e, cred, "repos/alice/pub/releases/tags/v1.0")
	}
	if got := rlGet(t, e, nil, "repos/alice/pub/releases/latest"); got.ID != draft.ID {
		t.Fatalf("latest %d", got.ID)
	}

	// A published release with a new tag at a chosen commit; a pre-release.
	var fr models.FileResponse
	e.Do("POST", "repos/alice/pub/contents/b.txt", map[string]any{"content": b64("b"), "new_branch": "dev"}, w.owner).
		Expect(t, http.StatusCreated).JSON(t, &fr)
	second := rlCreate(t, e, w.owner, "alice/pub", map[string]any{"tag_name": "v2.0", "target_commitish": "dev", "name": "Second"})
	if h, _ := tgRef(t, repo, "v2.0"); h.String() != fr.Commit.SHA || second.PublishedAt == nil || second.Target != "dev" {
		t.Fatalf("v2.0 at %s, want %s (%+v)", h, fr.Commit.SHA, second)
	}
	pre := rlCreate(t, e, w.owner, "alice/pub", map[string]any{"tag_name": "v3.0-rc1", "prerelease": true, "tag_message": "RC"})
	if h, _ := tgRef(t, repo, "v3.0-rc1"); h.IsZero() {
		t.Fatal("pre-release not tagged")
	} else if to, err := repo.TagObject(h); err != nil || to.Message != "RC\n" {
		t.Fatalf("tag_message did not make an annotated tag: %v", err)
	}
	if got := rlGet(t, e, nil, "repos/alice/pub/releases/latest"); got.ID != second.ID {
		t.Fatalf("latest is %s, want v2.0 (pre-releases never count)", got.TagName)
	}
	if tags, total := rlList(t, e, nil, "repos/alice/pub/releases"); strings.Join(tags, ",") != "v3.0-rc1,v2.0,v1.0" || total != "3" {
		t.Fatalf("list %v %s", tags, total)
	}
	if tags, _ := rlList(t, e, nil, "repos/alice/pub/releases?pre-release=true"); strings.Join(tags, ",") != "v3.0-rc1" {
		t.Fatalf("pre-release filter %v", tags)
	}
	if tags, total := rlList(t, e, nil, "repos/alice/pub/releases?pre-release=false&limit=1&page=2"); strings.Join(tags, ",") != "v1.0" || total != "2" {
		t.Fatalf("paged filter %v %s", tags, total)
	}
	var rr models.Repository
	e.Do("GET", "repos/alice/pub", nil, nil).Expect(t, http.StatusOK).JSON(t, &rr)
	if rr.Releases != 3 {
		t.Fatalf("release_counter %d", rr.Releases)
	}

	// Refusals.
	body := e.Do("POST", "repos/alice/pub/releases", map[string]any{"tag_name": "v2.0"}, w.owner).Expect(t, http.StatusConflict).Body
	if !strings.Contains(string(body), "Release is has no Tag") {
		t.Fatalf("duplicate body %s", body)
	}
	e.Do("POST", "repos/alice/pub/releases", map[string]any{"tag_name": "v9", "target_commitish": "nope"}, w.owner).Expect(t, http.StatusNotFound)
	if _, ok := tgRef(t, repo, "v9"); ok {
		t.Fatal("failed release left a tag")
	}
	for _, bad := range []string{"../../x", "..", "/abs", "a b"} {
		e.Do("POST", "repos/alice/pub/releases", map[string]any{"tag_name": bad}, w.owner).Expect(t, http.StatusUnprocessableEntity)
	}
	e.Do("POST", "repos/alice/pub/releases", map[string]any{"tag_name": "x"}, nil).Expect(t, http.StatusUnauthorized)
	e.Do("POST", "repos/alice/pub/releases", map[string]any{"tag_name": "x"}, w.outsider).Expect(t, http.StatusForbidden)
	e.Do("PATCH", "repos/alice/pub/releases/"+id, map[string]any{"name": "x"}, w.outsider).Expect(t, http.StatusForbidden)
	e.Do("PATCH", "repos/alice/pub/releases/"+id, map[string]any{"tag_name": "v2.0"}, w.owner).Expect(t, http.StatusConflict)
	e.Do("PATCH", "repos/alice/pub/releases/999999", map[string]any{"name": "x"}, w.owner).Expect(t, http.StatusNotFound)
	e.Do("DELETE", "repos/alice/pub/releases/"+id, nil, w.outsider).Expect(t, http.StatusForbidden)
	// Another repository's release id is not found here.
	priv := rlCreate(t, e, w.owner, "alice/priv", map[string]any{"tag_name": "p1"})
	e.Do("GET", fmt.Sprintf("repos/alice/pub/releases/%d", priv.ID), nil, w.owner).Expect(t, http.StatusNotFound)
	e.Do("GET", fmt.Sprintf("repos/alice/priv/releases/%d", priv.ID), nil, w.outsider).Expect(t, http.StatusNotFound)

	// Deleting a release keeps its tag, by id and by tag.
	e.Do("DELETE", "repos/alice/pub/releases/"+id, nil, w.owner).Expect(t, http.StatusNoContent)
	e.Do("GET", "repos/alice/pub/releases/"+id, nil, w.owner).Expect(t, http.StatusNotFound)
	e.Do("DELETE", "repos/alice/pub/releases/tags/v2.0", nil, w.owner).Expect(t, http.StatusNoContent)
	e.Do("DELETE", "repos/alice/pub/releases/tags/v2.0", nil, w.owner).Expect(t, http.StatusNotFound)
	if _, ok := tgRef(t, repo, "v1.0"); !ok {
		t.Fatal("deleting the release removed its tag")
	}
	// With the release gone, the tag can go too.
	e.Do("DELETE", "repos/alice/pub/tags/v1.0", nil, w.owner).Expect(t, http.StatusNoContent)

	// Archived: every release change is 423 and nothing moves.
	e.Do("PATCH", "repos/alice/pub", map[string]any{"archived": true}, w.owner).Expect(t, http.StatusOK)
	pid := fmt.Sprint(pre.ID)
	e.Do("POST", "repos/alice/pub/releases", map[string]any{"tag_name": "v4"}, w.owner).Expect(t, http.StatusLocked)
	e.Do("PATCH", "repos/alice/pub/releases/"+pid, map[string]any{"name": "changed"}, w.owner).Expect(t, http.StatusLocked)
	e.Do("DELETE", "repos/alice/pub/releases/"+pid, nil, w.owner).Expect(t, http.StatusLocked)
	e.Do("DELETE", "repos/alice/pub/releases/tags/v3.0-rc1", nil, w.owner).Expect(t, http.StatusLocked)
	if r := rlUpload(t, e, w.owner, "repos/alice/pub/releases/"+pid+"/assets", "a.bin", "", []byte("x")); r.Status != http.StatusLocked {
		t.Fatalf("upload to archived: %d", r.Status)
	}
	if got := rlGet(t, e, nil, "repos/alice/pub/releases/"+pid); got.Title != "" {
		t.Fatalf("archived release changed: %+v", got)
	}
}

func TestReleaseAssets(t *testing.T) {
	t.Parallel()
	w := ctSetup(t)
	e := w.e
	rel := rlCreate(t, e, w.owner, "alice/pub", map[string]any{"tag_name": "v1"})
	assets := fmt.Sprintf("repos/alice/pub/releases/%d/assets", rel.ID)

	data := bytes.Repeat([]byte("0123456789"), 1000)
	var a1, a2 models.Attachment
	rlUpload(t, e, w.owner, assets, "dist.tar.gz", "", data).Expect(t, http.StatusCreated).JSON(t, &a1)
	rlUpload(t, e, w.owner, assets, "ignored.txt", "notes.txt", []byte("hello")).Expect(t, http.StatusCreated).JSON(t, &a2)
	if a1.Name != "dist.tar.gz" || a1.Size != int64(len(data)) || a1.UUID == "" || a1.DownloadURL != e.URL+"attachments/"+a1.UUID ||
		a2.Name != "notes.txt" || a2.Size != 5 {
		t.Fatalf("assets %+v %+v", a1, a2)
	}
	// Refusals: no file, path-like names, readers, another content type.
	rlUpload(t, e, w.owner, assets, "x", "..%2F..%2Fetc", []byte("x")).Expect(t, http.StatusUnprocessableEntity)
	rlUpload(t, e, w.owner, assets, "x", "a%2Fb", []byte("x")).Expect(t, http.StatusUnprocessableEntity)
	rlUpload(t, e, w.outsider, assets, "x", "", []byte("x")).Expect(t, http.StatusForbidden)
	rlUpload(t, e, nil, assets, "x", "", []byte("x")).Expect(t, http.StatusUnauthorized)
	rlUpload(t, e, w.owner, "repos/alice/pub/releases/999/assets", "x", "", []byte("x")).Expect(t, http.StatusNotFound)
	e.Do("POST", assets, "raw bytes", w.owner).Expect(t, http.StatusUnprocessableEntity)

	// List (paged), get, and the release embeds its assets.
	var list []*models.Attachment
	r := e.Do("GET", assets+"?limit=1", nil, nil).Expect(t, http.StatusOK)
	r.JSON(t, &list)
	if len(list) != 1 || list[0].ID != a1.ID || r.Header.Get("X-Total-Count") != "2" {
		t.Fatalf("asset page %v %s", list, r.Header.Get("X-Total-Count"))
	}
	var got models.Attachment
	e.Do("GET", fmt.Sprintf("%s/%d", assets, a2.ID), nil, nil).Expect(t, http.StatusOK).JSON(t, &got)
	if got.UUID != a2.UUID {
		t.Fatalf("get %+v", got)
	}
	if full := rlGet(t, e, nil, fmt.Sprintf("repos/alice/pub/releases/%d", rel.ID)); len(full.Attachments) != 2 {
		t.Fatalf("release assets %v", full.Attachments)
	}
	// Download at browser_download_url counts.
	status, body, hdr := rlFetch(t, e, nil, a1.DownloadURL)
	if status != http.StatusOK || !bytes.Equal(body, data) || !strings.Contains(hdr.Get("Content-Disposition"), "dist.tar.gz") {
		t.Fatalf("download %d %d bytes %v", status, len(body), hdr)
	}
	e.Do("GET", fmt.Sprintf("%s/%d", assets, a1.ID), nil, nil).Expect(t, http.StatusOK).JSON(t, &got)
	if got.DownloadCount != 1 {
		t.Fatalf("download_count %d", got.DownloadCount)
	}
	if status, _, _ := rlFetch(t, e, nil, e.URL+"attachments/not-a-uuid"); status != http.StatusNotFound {
		t.Fatalf("unknown uuid: %d", status)
	}

	// Delete one: row and file go.
	var rr models.Repository
	e.Do("GET", "repos/alice/pub", nil, nil).Expect(t, http.StatusOK).JSON(t, &rr)
	file := app.AttachmentKey(rr.ID, a2.UUID)
	if _, err := e.Deps.Objects.Attachments.Stat(context.Background(), file); err != nil {
		t.Fatalf("attachment file: %v", err)
	}
	e.Do("DELETE", fmt.Sprintf("%s/%d", assets, a2.ID), nil, w.outsider).Expect(t, http.StatusForbidden)
	e.Do("DELETE", fmt.Sprintf("%s/%d", assets, a2.ID), nil, w.owner).Expect(t, http.StatusNoContent)
	e.Do("GET", fmt.Sprintf("%s/%d", assets, a2.ID), nil, nil).Expect(t, http.StatusNotFound)
	if _, err := e.Deps.Objects.Attachments.Stat(context.Background(), file); !objects.IsNotExist(err) {
		t.Fatalf("attachment file left behind: %v", err)
	}
	if status, _, _ := rlFetch(t, e, nil, a2.DownloadURL); status != http.StatusNotFound {
		t.Fatalf("deleted asset downloads: %d", status)
	}

	// Back to draft: the asset is hidden from readers, download included.
	e.Do("PATCH", fmt.Sprintf("repos/alice/pub/releases/%d", rel.ID), map[string]any{"draft": true}, w.owner).Expect(t, http.StatusOK)
	e.Do("GET", fmt.Sprintf("%s/%d", assets, a1.ID), nil, w.outsider).Expect(t, http.StatusNotFound)
	if status, _, _ := rlFetch(t, e, w.outsider, a1.DownloadURL); status != http.StatusNotFound {
		t.Fatalf("draft asset downloads for a reader: %d", status)
	}
	if status, _, _ := rlFetch(t, e, w.owner, a1.DownloadURL); status != http.StatusOK {
		t.Fatalf("draft asset for its writer: %d", status)
	}
	// A token without repository scope cannot download either.
	if status, _, _ := rlFetch(t, e, apitest.TokenCred(e.Token(w.alice, "read:user")), a1.DownloadURL); status != http.StatusForbidden {
		t.Fatalf("token without repository scope: %d", status)
	}

	// Deleting the release takes its files.
	a1file := filepath.Join(filepath.Dir(file), a1.UUID)
	e.Do("DELETE", fmt.Sprintf("repos/alice/pub/releases/%d", rel.ID), nil, w.owner).Expect(t, http.StatusNoContent)
	if _, err := os.Stat(a1file); !os.IsNotExist(err) {
		t.Fatalf("release deletion left its file: %v", err)
	}

	// Deleting the repository removes its release and attachment rows (the
	// foreign keys cascade on both databases).
	rel2 := rlCreate(t, e, w.owner, "alice/pub", map[string]any{"tag_name": "v2"})
	var a3 models.Attachment
	rlUpload(t, e, w.owner, fmt.Sprintf("repos/alice/pub/releases/%d/assets", rel2.ID), "x.bin", "", []byte("x")).
		Expect(t, http.StatusCreated).JSON(t, &a3)
	e.Do("DELETE", "repos/alice/pub", nil, w.owner).Expect(t, http.StatusNoContent)
	ctx := context.Background()
	if _, total, err := e.DB.Releases().List(ctx, store.ReleaseSearch{RepoID: rr.ID, IncludeDrafts: true}, store.Page{Limit: 1}); err != nil || total != 0 {
		t.Fatalf("releases of a deleted repository: %d (%v)", total, err)
	}
	if _, err := e.DB.ReleaseAttachments().FindByUUID(ctx, a3.UUID); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("attachment row of a deleted repository: %v", err)
	}
}

// rlTarFiles reads a .tar.gz into name → content.
func rlTarFiles(t *testing.T, b []byte) map[string]string {
	t.Helper()
	gz, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("not gzip: %v", err)
	}
	tr := tar.NewReader(gz)
	out := map[string]string{}
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatalf("bad tar: %v", err)
		}
		c, _ := io.ReadAll(tr)
		out[h.Name] = string(c)
	}
}

// rlZipFiles reads a .zip into name → content.
func rlZipFiles(t *testing.T, b []byte) map[string]string {
	t.Helper()
	zr, err := zip.NewReader(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatalf("bad zip: %v", err)
	}
	out := map[string]string{}
	for _, f := range zr.File {
		rc, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		c, _ := io.ReadAll(rc)
		rc.Close()
		out[f.Name] = string(c)
	}
	return out
}

func rlKeys(m map[string]string) string {
	var k []string
	for n := range m {
		k = append(k, n)
	}
	sort.Strings(k)
	return strings.Join(k, ",")
}

func TestReleaseArchives(t *testing.T) {
	t.Parallel()
	w := ctSetup(t)
	e := w.e
	e.Do("POST", "repos/alice/pub/contents/src/app/main.go", map[string]any{"content": b64("package main\n")}, w.owner).
		Expect(t, http.StatusCreated)
	rel := rlCreate(t, e, w.owner, "alice/pub", map[string]any{"tag_name": "v1.0"})
	// A later commit must not show up in the tag's archives.
	e.Do("POST", "repos/alice/pub/contents/later.txt", map[string]any{"content": b64("later")}, w.owner).
		Expect(t, http.StatusCreated)
	readme := roFile(t, roGit(t, e, "alice", "pub"), "main", "README.md")

	status, body, hdr := rlFetch(t, e, nil, rel.TarURL)
	if status != http.StatusOK || hdr.Get("Content-Type") != "application/gzip" || !strings.Contains(hdr.Get("Content-Disposition"), "pub-v1.0.tar.gz") {
		t.Fatalf("tarball %d %v", status, hdr)
	}
	files := rlTarFiles(t, body)
	if rlKeys(files) != "pub/README.md,pub/src/app/main.go" || files["pub/src/app/main.go"] != "package main\n" || files["pub/README.md"] != readme {
		t.Fatalf("tarball holds %s", rlKeys(files))
	}
	status, body, hdr = rlFetch(t, e, nil, rel.ZipURL)
	if status != http.StatusOK || hdr.Get("Content-Type") != "application/zip" {
		t.Fatalf("zipball %d %v", status, hdr)
	}
	if files := rlZipFiles(t, body); rlKeys(files) != "pub/README.md,pub/src/app/main.go" || files["pub/src/app/main.go"] != "package main\n" {
		t.Fatalf("zipball holds %s", rlKeys(files))
	}

	// The API operation serves the same archives, of any ref, and can keep
	// only some paths.
	r := e.Do("GET", "repos/alice/pub/archive/v1.0.zip", nil, nil).Expect(t, http.StatusOK)
	if files := rlZipFiles(t, r.Body); rlKeys(files) != "pub/README.md,pub/src/app/main.go" {
		t.Fatalf("API zip holds %s", rlKeys(files))
	}
	r = e.Do("GET", "repos/alice/pub/archive/main.tar.gz?path=src", nil, nil).Expect(t, http.StatusOK)
	if files := rlTarFiles(t, r.Body); rlKeys(files) != "pub/src/app/main.go" {
		t.Fatalf("API tar of src holds %s", rlKeys(files))
	}
	e.Do("GET", "repos/alice/pub/archive/main.tar.gz?path=..", nil, nil).Expect(t, http.StatusUnprocessableEntity)
	e.Do("POST", "repos/alice/pub/contents/x.txt", map[string]any{"content": b64("x"), "new_branch": "feat/x"}, w.owner).
		Expect(t, http.StatusCreated)
	r = e.Do("GET", "repos/alice/pub/archive/feat/x.tar.gz", nil, nil).Expect(t, http.StatusOK)
	if files := rlTarFiles(t, r.Body); files["pub/x.txt"] != "x" {
		t.Fatalf("archive of a branch with a slash holds %s", rlKeys(files))
	}
	for _, path := range []string{"repos/alice/pub/archive/nope.zip", "repos/alice/pub/archive/v1.0.rar", "repos/alice/priv/archive/main.zip"} {
		e.Do("GET", path, nil, nil).Expect(t, http.StatusNotFound)
	}
	// A private repository's archive needs read access there too.
	if status, _, _ := rlFetch(t, e, nil, e.URL+"alice/priv/archive/main.zip"); status != http.StatusNotFound {
		t.Fatalf("private archive for anonymous: %d", status)
	}
	if status, _, _ := rlFetch(t, e, w.owner, e.URL+"alice/priv/archive/main.zip"); status != http.StatusOK {
		t.Fatalf("private archive for its owner: %d", status)
	}
}

// TestReleaseListStatementCountIsFixed: a page of 1 and a page of 50 cost
// the same number of SQL statements (publishers and assets are batch-loaded).
func TestReleaseListStatementCountIsFixed(t *testing.T) {
	t.Parallel()
	w := ctSetup(t)
	e := w.e
	for i := 0; i < 6; i++ {
		rel := rlCreate(t, e, w.owner, "alice/pub", map[string]any{"tag_name": fmt.Sprintf("v%d", i), "draft": i%2 == 0})
		rlUpload(t, e, w.owner, fmt.Sprintf("repos/alice/pub/releases/%d/assets", rel.ID), "a.bin", "", []byte("a")).
			Expect(t, http.StatusCreated)
	}
	counts := map[int]int64{}
	for _, limit := range []int{1, 50} {
		before := e.Statements()
		tags, _ := rlList(t, e, w.owner, fmt.Sprintf("repos/alice/pub/releases?limit=%d", limit))
		counts[limit] = e.Statements() - before
		if len(tags) != min(limit, 6) {
			t.Fatalf("limit %d: %d releases", limit, len(tags))
		}
	}
	if counts[1] != counts[50] {
		t.Fatalf("statement count depends on the page size: limit=1 ran %d, limit=50 ran %d", counts[1], counts[50])
	}
}

// TestSDKReleases drives contents, tags, releases and assets with the
// unchanged official SDK, as a release script would.
func TestSDKReleases(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	e.CreateUser("rel", false)
	c := sdkClient(t, e, gitea.SetBasicAuth("rel", "rel-pw"))
	if _, _, err := c.CreateRepo(gitea.CreateRepoOption{Name: "app", AutoInit: true}); err != nil {
		t.Fatal(err)
	}

	fr, resp, err := c.CreateFile("rel", "app", "cmd/app/main.go", gitea.CreateFileOptions{
		FileOptions: gitea.FileOptions{Message: "add main"},
		Content:     b64("package main\n"),
	})
	if err != nil || resp.StatusCode != http.StatusCreated || fr.Content.Name != "main.go" || fr.Commit.Message != "add main\n" {
		t.Fatalf("CreateFile: %v %+v", err, fr)
	}
	got, _, err := c.GetContents("rel", "app", "main", "cmd/app/main.go")
	if err != nil || got.SHA != fr.Content.SHA || got.Content == nil || *got.Content != b64("package main\n") {
		t.Fatalf("GetContents: %v %+v", err, got)
	}
	list, _, err := c.ListContents("rel", "app", "", "cmd")
	if err != nil || len(list) != 1 || list[0].Type != "dir" {
		t.Fatalf("ListContents: %v %+v", err, list)
	}
	up, resp, err := c.UpdateFile("rel", "app", "cmd/app/main.go", gitea.UpdateFileOptions{
		SHA: got.SHA, Content: b64("package main\n\nfunc main() {}\n"),
	})
	if err != nil || resp.StatusCode != http.StatusOK || up.Commit.Message != "Update cmd/app/main.go\n" {
		t.Fatalf("UpdateFile: %v %+v", err, up)
	}
	raw, _, err := c.GetFile("rel", "app", "main", "cmd/app/main.go")
	if err != nil || string(raw) != "package main\n\nfunc main() {}\n" {
		t.Fatalf("GetFile: %v %q", err, raw)
	}
	if _, _, err := c.UpdateFile("rel", "app", "cmd/app/main.go", gitea.UpdateFileOptions{SHA: got.SHA, Content: b64("stale")}); err == nil {
		t.Fatal("a stale sha was accepted")
	}

	tag, _, err := c.CreateTag("rel", "app", gitea.CreateTagOption{TagName: "v1.0.0", Message: "first"})
	if err != nil || tag.Commit == nil || tag.Commit.SHA != up.Commit.SHA {
		t.Fatalf("CreateTag: %v %+v", err, tag)
	}
	tags, _, err := c.ListRepoTags("rel", "app", gitea.ListRepoTagsOptions{})
	if err != nil || len(tags) != 1 || tags[0].Name != "v1.0.0" {
		t.Fatalf("ListRepoTags: %v %+v", err, tags)
	}

	rel, resp, err := c.CreateRelease("rel", "app", gitea.CreateReleaseOption{
		TagName: "v1.0.0", Title: "One", Note: "first release", IsDraft: true,
	})
	if err != nil || resp.StatusCode != http.StatusCreated || !rel.IsDraft {
		t.Fatalf("CreateRelease: %v %+v", err, rel)
	}
	no := false
	rel, _, err = c.EditRelease("rel", "app", rel.ID, gitea.EditReleaseOption{IsDraft: &no})
	if err != nil || rel.IsDraft || rel.Title != "One" || rel.Note != "first release" || rel.PublishedAt.IsZero() {
		t.Fatalf("EditRelease: %v %+v", err, rel)
	}
	byTag, _, err := c.GetReleaseByTag("rel", "app", "v1.0.0")
	if err != nil || byTag.ID != rel.ID {
		t.Fatalf("GetReleaseByTag: %v %+v", err, byTag)
	}
	latest, _, err := c.GetLatestRelease("rel", "app")
	if err != nil || latest.ID != rel.ID {
		t.Fatalf("GetLatestRelease: %v %+v", err, latest)
	}
	att, resp, err := c.CreateReleaseAttachment("rel", "app", rel.ID, strings.NewReader("binary"), "app-linux-amd64")
	if err != nil || resp.StatusCode != http.StatusCreated || att.Size != 6 {
		t.Fatalf("CreateReleaseAttachment: %v %+v", err, att)
	}
	atts, _, err := c.ListReleaseAttachments("rel", "app", rel.ID, gitea.ListReleaseAttachmentsOptions{})
	if err != nil || len(atts) != 1 || atts[0].Name != "app-linux-amd64" {
		t.Fatalf("ListReleaseAttachments: %v %+v", err, atts)
	}
	rels, _, err := c.ListReleases("rel", "app", gitea.ListReleasesOptions{})
	if err != nil || len(rels) != 1 || len(rels[0].Attachments) != 1 {
		t.Fatalf("ListReleases: %v %+v", err, rels)
	}
	archive, _, err := c.GetArchive("rel", "app", "v1.0.0", gitea.TarGZArchive)
	if err != nil {
		t.Fatalf("GetArchive: %v", err)
	}
	if files := rlTarFiles(t, archive); files["app/cmd/app/main.go"] != "package main\n\nfunc main() {}\n" {
		t.Fatalf("archive holds %s", rlKeys(files))
	}
	if _, err := c.DeleteFile("rel", "app", "cmd/app/main.go", gitea.DeleteFileOptions{SHA: up.Content.SHA}); err != nil {
		t.Fatalf("DeleteFile: %v", err)
	}
	if _, err := c.DeleteReleaseByTag("rel", "app", "v1.0.0"); err != nil {
		t.Fatalf("DeleteReleaseByTag: %v", err)
	}
	if _, err := c.DeleteTag("rel", "app", "v1.0.0"); err != nil {
		t.Fatalf("DeleteTag: %v", err)
	}
}
