package apitest_test

import (
	"context"
	"fmt"
	"net/http"
	"testing"

	"repohost/apitest"
	"repohost/store"
	"repohost/store/gitstore"
)

// TestListReposStatementCountIsFixed checks that GET /users/{owner}/repos
// runs the same number of SQL statements for a page of 1 and a page of 50:
// no per-repository query (owner, permission, counts) may hide in the list.
func TestListReposStatementCountIsFixed(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	owner := e.CreateUser("many", false)
	ctx := context.Background()
	const total, private = 60, 20 // every third repository is private
	for i := 0; i < total; i++ {
		name := fmt.Sprintf("repo-%02d", i)
		if _, err := e.Deps.Git.Create(owner.User.Name, name, gitstore.InitOptions{DefaultBranch: "main"}); err != nil {
			t.Fatal(err)
		}
		r := &store.Repository{
			OwnerID: owner.User.ID, Name: name, DefaultBranch: "main", ObjectFormat: "sha1",
			IsPrivate: i%3 == 0, IsEmpty: true,
			HasIssues: true, HasWiki: true, HasPullRequests: true, HasProjects: true, HasReleases: true,
			HasPackages: true, HasActions: true, HasCode: true, ProjectsMode: "all",
			AllowMerge: true, AllowRebase: true, AllowRebaseMerge: true, AllowSquash: true,
			AllowFastForwardOnly: true, AllowRebaseUpdate: true, DefaultMergeStyle: "merge",
		}
		if err := e.Deps.Store.Repos().Create(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	path := "users/" + owner.User.Name + "/repos"
	for _, c := range []struct {
		name    string
		cred    apitest.Cred
		visible int
	}{
		{"owner", apitest.Basic(owner), total},
		{"anonymous", nil, total - private},
		{"admin", apitest.Basic(e.Admin), total},
	} {
		t.Run(c.name, func(t *testing.T) {
			counts := map[int]int64{}
			for _, limit := range []int{1, 50} {
				before := e.Statements()
				r := e.Do(http.MethodGet, fmt.Sprintf("%s?limit=%d", path, limit), nil, c.cred).Expect(t, http.StatusOK)
				counts[limit] = e.Statements() - before
				var page []map[string]any
				r.JSON(t, &page)
				if want := min(limit, c.visible); len(page) != want {
					t.Errorf("limit=%d: %d repositories, want %d", limit, len(page), want)
				}
				if got, want := r.Header.Get("X-Total-Count"), fmt.Sprint(c.visible); got != want {
					t.Errorf("limit=%d: X-Total-Count %q, want %s", limit, got, want)
				}
			}
			t.Logf("statements: limit=1 → %d, limit=50 → %d", counts[1], counts[50])
			if counts[1] != counts[50] {
				t.Errorf("statement count depends on the page size: limit=1 ran %d, limit=50 ran %d", counts[1], counts[50])
			}
		})
	}
}
