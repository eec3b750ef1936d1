package apitest_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"repohost/apitest"
	"repohost/models"
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

// TestListStatementCountIgnoresTeams: GET /user/repos, the repository
// search, an organization's issues and the cross-repository issue search
// run as many statements for a page of 1 as for a page of 50, and as many
// for a caller in one team as in twelve (teams in several organizations,
// some with every repository, some given repositories one by one, plus
// collaborations).
func TestListStatementCountIgnoresTeams(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	boss, few, many := e.CreateUser("boss", false), e.CreateUser("few", false), e.CreateUser("many", false)
	bc := apitest.Basic(boss)
	for o := 0; o < 3; o++ {
		org := fmt.Sprintf("org%d", o)
		roCreateOrg(t, e, bc, map[string]any{"username": org})
		for i := 0; i < 20; i++ {
			e.Do("POST", "orgs/"+org+"/repos", map[string]any{"name": fmt.Sprintf("r%02d", i), "private": i%2 == 0}, bc).
				Expect(t, http.StatusCreated)
		}
		e.Do("POST", "repos/"+org+"/r01/issues", map[string]any{"title": "one"}, bc).Expect(t, http.StatusCreated)
		e.Do("POST", "repos/"+org+"/r00/issues", map[string]any{"title": "two"}, bc).Expect(t, http.StatusCreated)
		for k := 0; k < 4; k++ {
			body := map[string]any{"name": fmt.Sprintf("t%d", k), "units_map": map[string]string{"repo.code": "read", "repo.issues": "write"}}
			if k == 0 {
				body["includes_all_repositories"], body["permission"] = true, "read"
			}
			team := tmTeam(t, e, bc, org, body, "many")
			if k > 0 {
				for i := k; i < 20; i += 4 {
					e.Do("PUT", fmt.Sprintf("teams/%d/repos/%s/r%02d", team.ID, org, i), nil, bc).Expect(t, http.StatusNoContent)
				}
			}
			if o == 0 && k == 0 {
				e.Do("PUT", fmt.Sprintf("teams/%d/members/few", team.ID), nil, bc).Expect(t, http.StatusNoContent)
			}
		}
		e.Do("PUT", "repos/"+org+"/r02/collaborators/many", map[string]any{"permission": "write"}, bc).Expect(t, http.StatusNoContent)
	}
	for _, path := range []string{"user/repos", "repos/search", "repos/issues/search?state=all", "repos/org0/r00/issues?state=all"} {
		counts := map[string]int64{}
		for _, who := range []*apitest.Account{few, many} {
			for _, limit := range []int{1, 50} {
				sep := "?"
				if strings.Contains(path, "?") {
					sep = "&"
				}
				before := e.Statements()
				e.Do("GET", fmt.Sprintf("%s%slimit=%d", path, sep, limit), nil, apitest.Basic(who)).Expect(t, http.StatusOK)
				counts[fmt.Sprintf("%s limit=%d", who.User.Name, limit)] = e.Statements() - before
			}
		}
		t.Logf("%s: %v", path, counts)
		var first int64 = -1
		for k, n := range counts {
			if first == -1 {
				first = n
			}
			if n != first {
				t.Errorf("%s: %s ran %d statements, others %d: %v", path, k, n, first, counts)
			}
		}
	}
}

// TestGetIssueStatementCount: GET /repos/{owner}/{repo}/issues/{index} of
// an issue with two labels, two assignees, a milestone and a project runs
// at most a few statements more than one of an issue without links (the
// links of every kind come in one statement, whatever their number), and
// still renders them all in their order: labels by name, assignees as
// assigned. Without the read cache the labels, projects, milestone and
// project counts each cost one statement; with it, as `repohost serve`
// runs, only the project counts do.
func TestGetIssueStatementCount(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name   string
		cached bool
		extra  int64
	}{{"uncached", false, 4}, {"cached", true, 1}} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			var e *apitest.Env
			if c.cached {
				e = apitest.NewCached(t)
			} else {
				e = apitest.New(t)
			}
			alice := e.CreateUser("alice", false)
			e.CreateUser("bob", false)
			a := apitest.Basic(alice)
			roCreateRepo(t, e, a, map[string]any{"name": "pub"})
			e.Do("PUT", "repos/alice/pub/collaborators/bob", map[string]any{"permission": "write"}, a).Expect(t, http.StatusNoContent)
			zeta := isLabel(t, e, "alice/pub", a, map[string]any{"name": "zeta", "color": "#ff0000"})
			alpha := isLabel(t, e, "alice/pub", a, map[string]any{"name": "alpha", "color": "#00ff00"})
			var ms, pr struct {
				ID int64 `json:"id"`
			}
			e.Do("POST", "repos/alice/pub/milestones", map[string]any{"title": "v1"}, a).Expect(t, http.StatusCreated).JSON(t, &ms)
			e.Do("POST", "repos/alice/pub/projects", map[string]any{"title": "board"}, a).Expect(t, http.StatusCreated).JSON(t, &pr)
			plain := isCreate(t, e, "alice/pub", a, map[string]any{"title": "plain"})
			linked := isCreate(t, e, "alice/pub", a, map[string]any{"title": "linked", "labels": []int64{zeta.ID, alpha.ID},
				"assignees": []string{"bob", "alice"}, "milestone": ms.ID, "projects": []int64{pr.ID}})
			// The fewest statements of a few tries, each after a warming
			// read: a cached row may expire (after half a second) between
			// two requests of a slow run.
			count := func(n int64) (int64, *models.Issue) {
				var best int64 = -1
				var is models.Issue
				path := fmt.Sprintf("repos/alice/pub/issues/%d", n)
				for try := 0; try < 3; try++ {
					e.Do("GET", path, nil, a).Expect(t, http.StatusOK)
					before := e.Statements()
					r := e.Do("GET", path, nil, a).Expect(t, http.StatusOK)
					if got := e.Statements() - before; best < 0 || got < best {
						best = got
					}
					r.JSON(t, &is)
				}
				return best, &is
			}
			none, _ := count(plain.Index)
			all, is := count(linked.Index)
			t.Logf("GET issue statements: without links %d, with 2 labels, 2 assignees, a milestone and a project %d", none, all)
			if all > none+c.extra {
				t.Errorf("an issue with links ran %d statements, one without %d: more than %d extra", all, none, c.extra)
			}
			var labels, assignees []string
			for _, l := range is.Labels {
				labels = append(labels, l.Name)
			}
			for _, u := range is.Assignees {
				assignees = append(assignees, u.UserName)
			}
			if got := strings.Join(labels, ","); got != "alpha,zeta" {
				t.Errorf("labels %q, want alpha,zeta", got)
			}
			if got := strings.Join(assignees, ","); got != "bob,alice" {
				t.Errorf("assignees %q, want bob,alice", got)
			}
			if is.Assignee == nil || is.Assignee.UserName != "bob" {
				t.Errorf("assignee %+v, want bob", is.Assignee)
			}
			if is.Milestone == nil || is.Milestone.ID != ms.ID || is.Milestone.Title != "v1" {
				t.Errorf("milestone %+v, want v1", is.Milestone)
			}
			if len(is.Projects) != 1 || is.Projects[0].ID != pr.ID {
				t.Errorf("projects %+v, want board", is.Projects)
			}
		})
	}
}
