package apitest_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/go-git/go-git/v6"
	"github.com/go-git/go-git/v6/plumbing"

	"repohost/apitest"
	"repohost/models"
)

// tgRef reads a tag ref in the bare repository; ok is false when missing.
func tgRef(t *testing.T, r *git.Repository, tag string) (plumbing.Hash, bool) {
	t.Helper()
	ref, err := r.Reference(plumbing.NewTagReferenceName(tag), false)
	if err != nil {
		return plumbing.ZeroHash, false
	}
	return ref.Hash(), true
}

func TestTagsLifecycle(t *testing.T) {
	t.Parallel()
	w := ctSetup(t)
	e := w.e
	repo := roGit(t, e, "alice", "pub")
	first := ctBranchCommit(t, repo, "main")
	var fr models.FileResponse
	e.Do("POST", "repos/alice/pub/contents/second.txt", map[string]any{"content": b64("2")}, w.owner).
		Expect(t, http.StatusCreated).JSON(t, &fr)

	// Lightweight tag of the default branch: its id is the commit.
	var light models.Tag
	e.Do("POST", "repos/alice/pub/tags", map[string]any{"tag_name": "v1.0"}, w.owner).
		Expect(t, http.StatusCreated).JSON(t, &light)
	if light.Name != "v1.0" || light.Commit == nil || light.Commit.SHA != fr.Commit.SHA || light.ID != fr.Commit.SHA ||
		!strings.HasSuffix(light.TarballURL, "/alice/pub/archive/v1.0.tar.gz") || !strings.HasSuffix(light.ZipballURL, "/alice/pub/archive/v1.0.zip") {
		t.Fatalf("lightweight tag %+v", light)
	}
	if h, ok := tgRef(t, repo, "v1.0"); !ok || h.String() != fr.Commit.SHA {
		t.Fatalf("tag in git: %v %s", ok, h)
	}

	// Annotated tag of an older commit: its id is the tag object.
	var ann models.Tag
	e.Do("POST", "repos/alice/pub/tags", map[string]any{"tag_name": "rel/v0.9", "target": first.Hash.String(), "message": "Old one"}, w.owner).
		Expect(t, http.StatusCreated).JSON(t, &ann)
	if ann.Commit.SHA != first.Hash.String() || ann.ID == first.Hash.String() || ann.Message != "Old one" {
		t.Fatalf("annotated tag %+v", ann)
	}
	h, ok := tgRef(t, repo, "rel/v0.9")
	if !ok {
		t.Fatal("annotated tag missing in git")
	}
	to, err := repo.TagObject(h)
	if err != nil || to.Target != first.Hash || to.Tagger.Email != "alice@example.com" || to.Message != "Old one\n" {
		t.Fatalf("tag object %+v: %v", to, err)
	}

	// Refusals: duplicate, bad names, missing target.
	e.Do("POST", "repos/alice/pub/tags", map[string]any{"tag_name": "v1.0"}, w.owner).Expect(t, http.StatusConflict)
	for _, bad := range []string{"", "a..b", "../x", "/abs", "has space", "x.lock", "-dash"} {
		e.Do("POST", "repos/alice/pub/tags", map[string]any{"tag_name": bad}, w.owner).Expect(t, http.StatusUnprocessableEntity)
	}
	e.Do("POST", "repos/alice/pub/tags", map[string]any{"tag_name": "v2", "target": "nope"}, w.owner).Expect(t, http.StatusNotFound)
	e.Do("POST", "repos/alice/pub/tags", map[string]any{"tag_name": "v2"}, nil).Expect(t, http.StatusUnauthorized)
	e.Do("POST", "repos/alice/pub/tags", map[string]any{"tag_name": "v2"}, w.outsider).Expect(t, http.StatusForbidden)
	e.Do("POST", "repos/alice/priv/tags", map[string]any{"tag_name": "v2"}, w.outsider).Expect(t, http.StatusNotFound)

	// List (newest first, paged) and get, including a name with a slash.
	var tags []*models.Tag
	r := e.Do("GET", "repos/alice/pub/tags?limit=1", nil, nil).Expect(t, http.StatusOK)
	r.JSON(t, &tags)
	if len(tags) != 1 || r.Header.Get("X-Total-Count") != "2" || !strings.Contains(r.Header.Get("Link"), `rel="next"`) {
		t.Fatalf("page 1: %d tags, total %s, link %s", len(tags), r.Header.Get("X-Total-Count"), r.Header.Get("Link"))
	}
	e.Do("GET", "repos/alice/pub/tags", nil, nil).Expect(t, http.StatusOK).JSON(t, &tags)
	// Newest first by creation: the annotated tag's tagger date is not
	// older than the commit the lightweight tag names (ties go by name).
	if len(tags) != 2 || tags[0].Name != "rel/v0.9" || tags[1].Name != "v1.0" {
		t.Fatalf("tags %s, %s", tags[0].Name, tags[1].Name)
	}
	var got models.Tag
	e.Do("GET", "repos/alice/pub/tags/rel/v0.9", nil, nil).Expect(t, http.StatusOK).JSON(t, &got)
	if got.ID != ann.ID || got.Message != "Old one" {
		t.Fatalf("get %+v", got)
	}
	e.Do("GET", "repos/alice/pub/tags/rel%2Fv0.9", nil, nil).Expect(t, http.StatusOK)
	e.Do("GET", "repos/alice/pub/tags/nope", nil, nil).Expect(t, http.StatusNotFound)
	e.Do("GET", "repos/alice/priv/tags", nil, nil).Expect(t, http.StatusNotFound)

	// A tag under a release cannot be deleted; a free one can.
	e.Do("POST", "repos/alice/pub/releases", map[string]any{"tag_name": "v1.0", "name": "One"}, w.owner).Expect(t, http.StatusCreated)
	e.Do("DELETE", "repos/alice/pub/tags/v1.0", nil, w.owner).Expect(t, http.StatusConflict)
	e.Do("DELETE", "repos/alice/pub/tags/rel/v0.9", nil, w.outsider).Expect(t, http.StatusForbidden)
	e.Do("DELETE", "repos/alice/pub/tags/rel/v0.9", nil, w.owner).Expect(t, http.StatusNoContent)
	if _, ok := tgRef(t, repo, "rel/v0.9"); ok {
		t.Fatal("deleted tag still in git")
	}
	e.Do("DELETE", "repos/alice/pub/tags/rel/v0.9", nil, w.owner).Expect(t, http.StatusNotFound)

	// An archived repository keeps its tags.
	e.Do("PATCH", "repos/alice/pub", map[string]any{"archived": true}, w.owner).Expect(t, http.StatusOK)
	e.Do("POST", "repos/alice/pub/tags", map[string]any{"tag_name": "v3"}, w.owner).Expect(t, http.StatusLocked)
	e.Do("DELETE", "repos/alice/pub/tags/v1.0", nil, w.owner).Expect(t, http.StatusLocked)
	e.Do("GET", "repos/alice/pub/tags/v1.0", nil, apitest.Basic(e.Admin)).Expect(t, http.StatusOK)
}
