package apitest_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// TestContentsControlCharacterPaths (regression): a file path with a
// control character, or another name go-git refuses to look up in a tree
// ("git~1", ".git" spelled as NTFS reads it), used to answer 500 on reads
// and on updates and deletes, and a create wrote it into the tree. Such a
// path cannot exist: reads answer 404, writes 422, nothing moves, and no
// header carries the path's line breaks.
func TestContentsControlCharacterPaths(t *testing.T) {
	t.Parallel()
	w := ctSetup(t)
	e := w.e
	before := ctBranchCommit(t, roGit(t, e, "alice", "pub"), "main").Hash
	bad := []string{"a%01b", "%0d%0aX", "dir/%0aX-Injected:%20yes", "a%7fb", "a%1bb", "git~1", "docs/.git%20", "GIT~1/x", "x/.git%3a%3a$INDEX_ALLOCATION"}
	for _, p := range bad {
		for _, path := range []string{
			"repos/alice/pub/raw/" + p,
			"repos/alice/pub/raw/main/" + p,
			"repos/alice/pub/raw/" + p + "?ref=main",
			"repos/alice/pub/contents/" + p,
			"repos/alice/pub/contents/" + p + "?ref=main",
			"repos/alice/priv/raw/" + p,
			"repos/alice/priv/contents/" + p,
		} {
			r := e.Do("GET", path, nil, w.owner)
			if r.Status != http.StatusNotFound {
				t.Errorf("GET %s: %d %s", path, r.Status, r.Body)
			}
			for k, vs := range r.Header {
				if strings.EqualFold(k, "X-Injected") {
					t.Errorf("GET %s: injected header %s: %v", path, k, vs)
				}
			}
		}
		for _, m := range []string{"POST", "PUT", "DELETE"} {
			body := map[string]any{"content": b64("x")}
			if m != "POST" {
				body["sha"] = "b45ef6fec89518d314f546fd6c3025367b721684"
			}
			path := "repos/alice/pub/contents/" + p
			if r := e.Do(m, path, body, w.owner); r.Status != http.StatusUnprocessableEntity {
				t.Errorf("%s %s: %d %s", m, path, r.Status, r.Body)
			}
		}
		// A move from such a path is refused the same way.
		path := "repos/alice/pub/contents/moved.txt"
		from, err := url.PathUnescape(p)
		if err != nil {
			t.Fatal(err)
		}
		if r := e.Do("PUT", path, map[string]any{"content": b64("x"), "sha": "b45ef6fec89518d314f546fd6c3025367b721684",
			"from_path": from}, w.owner); r.Status != http.StatusUnprocessableEntity {
			t.Errorf("PUT %s from %q: %d %s", path, from, r.Status, r.Body)
		}
	}
	if after := ctBranchCommit(t, roGit(t, e, "alice", "pub"), "main").Hash; after != before {
		t.Fatalf("a refused write moved main from %s to %s", before, after)
	}
	// Ordinary names close to the refused ones still work.
	for _, p := range []string{"git~2", "a.git", "docs/.gitignore", "sp ace"} {
		e.Do("POST", "repos/alice/pub/contents/"+strings.ReplaceAll(p, " ", "%20"), map[string]any{"content": b64(p)}, w.owner).
			Expect(t, http.StatusCreated)
		r := e.Do("GET", "repos/alice/pub/raw/"+strings.ReplaceAll(p, " ", "%20"), nil, nil).Expect(t, http.StatusOK)
		if string(r.Body) != p {
			t.Errorf("raw %s: %q", p, r.Body)
		}
	}
}
