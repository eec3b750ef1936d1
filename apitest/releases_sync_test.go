package apitest_test

import (
	"context"
	"encoding/base64"
	"net/http"
	"os/exec"
	"strings"
	"testing"

	"repohost/apitest"
	"repohost/impl/release"
)

// TestSyncReleasesFollowsMovedTags: a release's recorded commit follows
// its tag when the tag was moved outside the API (a forced push, a
// restored backup), as `repohost admin repo-sync-releases` does; a
// release whose tag is gone is reported and kept.
func TestSyncReleasesFollowsMovedTags(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	admin := apitest.Basic(e.Admin)
	ctx := context.Background()
	roCreateRepo(t, e, admin, map[string]any{"name": "rel", "auto_init": true, "readme": "Default"})
	rlCreate(t, e, admin, "admin/rel", map[string]any{"tag_name": "v1", "name": "One"})
	rlCreate(t, e, admin, "admin/rel", map[string]any{"tag_name": "v2", "name": "Two"})
	e.Do("POST", "repos/admin/rel/contents/later.txt", map[string]any{
		"content": base64.StdEncoding.EncodeToString([]byte("later\n")), "message": "later"}, admin).Expect(t, http.StatusCreated)
	dir, err := e.Deps.Git.Path("admin", "rel")
	if err != nil {
		t.Fatal(err)
	}
	git := func(args ...string) string {
		out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v %s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	git("tag", "-f", "v1", "main")
	git("tag", "-d", "v2")
	head := git("rev-parse", "main")

	r, err := e.DB.Repos().FindByOwnerAndName(ctx, "admin", "rel")
	if err != nil {
		t.Fatal(err)
	}
	res, err := release.Service{Deps: e.Deps}.SyncReleases(ctx, r)
	if err != nil {
		t.Fatal(err)
	}
	if res.Checked != 2 || res.Updated != 1 || res.Missing != 1 {
		t.Fatalf("%+v, want 2 checked, 1 updated, 1 missing", res)
	}
	v1, err := e.DB.Releases().FindByTag(ctx, r.ID, "v1")
	if err != nil || v1.Sha1 != head {
		t.Fatalf("v1 records %s, want %s (%v)", v1.Sha1, head, err)
	}
	if _, err := e.DB.Releases().FindByTag(ctx, r.ID, "v2"); err != nil {
		t.Fatalf("release of the deleted tag: %v", err)
	}
	again, _ := release.Service{Deps: e.Deps}.SyncReleases(ctx, r)
	if again.Updated != 0 {
		t.Fatalf("second sync updated %d", again.Updated)
	}
}
