package apitest_test

import (
	"context"
	"net/http"
	"slices"
	"testing"

	"repohost/apitest"
	"repohost/models"
)

// TestRenameNeedsRepoAdmin: a writer who is not a repository admin may
// rename an ordinary branch, but not the default branch nor a branch with
// a protection rule of its own name (403, the reference's rule); an admin
// collaborator may.
func TestRenameNeedsRepoAdmin(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	owner := e.CreateUser("owner", false)
	oc := apitest.Basic(owner)
	roCreateRepo(t, e, oc, map[string]any{"name": "r", "auto_init": true})
	for _, b := range []string{"guarded", "plain"} {
		e.Do("POST", "repos/owner/r/branches", map[string]any{"new_branch_name": b}, oc).Expect(t, http.StatusCreated)
	}
	bpCreate(t, e, oc, "owner/r", map[string]any{"rule_name": "guarded"})
	creds := map[string]apitest.Cred{}
	for _, m := range []string{"write", "admin"} {
		u := e.CreateUser("c"+m, false)
		e.Do("PUT", "repos/owner/r/collaborators/c"+m, map[string]any{"permission": m}, oc).Expect(t, http.StatusNoContent)
		creds[m] = apitest.Basic(u)
	}
	const msg = "User must be a repo or site admin to rename default or protected branches."
	for _, b := range []string{"main", "guarded"} {
		r := e.Do("PATCH", "repos/owner/r/branches/"+b, map[string]any{"name": b + "-x"}, creds["write"]).Expect(t, http.StatusForbidden)
		var body models.APIError
		r.JSON(t, &body)
		if body.Message != msg {
			t.Errorf("rename %s by a writer: %q", b, body.Message)
		}
	}
	e.Do("PATCH", "repos/owner/r/branches/plain", map[string]any{"name": "plain-x"}, creds["write"]).Expect(t, http.StatusNoContent)
	e.Do("PATCH", "repos/owner/r/branches/guarded", map[string]any{"name": "guarded-x"}, creds["admin"]).Expect(t, http.StatusNoContent)
	e.Do("PATCH", "repos/owner/r/branches/main", map[string]any{"name": "trunk"}, creds["admin"]).Expect(t, http.StatusNoContent)
	var repo models.Repository
	e.Do("GET", "repos/owner/r", nil, oc).Expect(t, http.StatusOK).JSON(t, &repo)
	if repo.DefaultBranch != "trunk" {
		t.Fatalf("default branch %q", repo.DefaultBranch)
	}
}

// TestTrackedTimesOfReadCollaborators: a read collaborator sees only its
// own tracked times on a repository, and asking for someone else's is
// 403; a writer sees everyone's.
func TestTrackedTimesOfReadCollaborators(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	owner := e.CreateUser("owner", false)
	oc := apitest.Basic(owner)
	roCreateRepo(t, e, oc, map[string]any{"name": "r", "private": true})
	creds := map[string]apitest.Cred{}
	for _, m := range []string{"read", "write"} {
		u := e.CreateUser("c"+m, false)
		e.Do("PUT", "repos/owner/r/collaborators/c"+m, map[string]any{"permission": m}, oc).Expect(t, http.StatusNoContent)
		creds[m] = apitest.Basic(u)
	}
	// The reader tracks time on its own issue (contributors only: the
	// poster counts), the owner on the same issue.
	e.Do("POST", "repos/owner/r/issues", map[string]any{"title": "mine"}, creds["read"]).Expect(t, http.StatusCreated)
	e.Do("POST", "repos/owner/r/issues/1/times", map[string]any{"time": 60}, creds["read"]).Expect(t, http.StatusOK)
	e.Do("POST", "repos/owner/r/issues/1/times", map[string]any{"time": 120}, oc).Expect(t, http.StatusOK)

	users := func(cred apitest.Cred, path string) []string {
		var times []*models.TrackedTime
		e.Do("GET", path, nil, cred).Expect(t, http.StatusOK).JSON(t, &times)
		var out []string
		for _, tt := range times {
			out = append(out, tt.UserName)
		}
		return out
	}
	for _, path := range []string{"repos/owner/r/times", "repos/owner/r/issues/1/times"} {
		if got := users(creds["read"], path); len(got) != 1 || got[0] != "cread" {
			t.Errorf("%s as a reader: %v", path, got)
		}
		if got := users(creds["write"], path); len(got) != 2 {
			t.Errorf("%s as a writer: %v", path, got)
		}
		e.Do("GET", path+"?user=owner", nil, creds["read"]).Expect(t, http.StatusForbidden)
		e.Do("GET", path+"?user=cread", nil, creds["read"]).Expect(t, http.StatusOK)
		e.Do("GET", path+"?user=owner", nil, creds["write"]).Expect(t, http.StatusOK)
	}
}

// TestReviewersList: GET /repos/{owner}/{repo}/reviewers (and assignees)
// lists, as the
// reference does, every active collaborator by name and then the owning
// user, the caller included (the list is not for one pull request, so
// nobody is left out as its poster); only those who may request reviews
// may read it.
func TestReviewersList(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	owner := e.CreateUser("rvowner", false)
	oc := apitest.Basic(owner)
	users := map[string]*apitest.Account{}
	for _, n := range []string{"rvzed", "rvamy", "rvgone", "rvout"} {
		users[n] = e.CreateUser(n, false)
	}
	roCreateRepo(t, e, oc, map[string]any{"name": "proj", "auto_init": true})
	for n, perm := range map[string]string{"rvzed": "write", "rvamy": "read", "rvgone": "read"} {
		e.Do("PUT", "repos/rvowner/proj/collaborators/"+n, map[string]any{"permission": perm}, oc).Expect(t, http.StatusNoContent)
	}
	// An account that is no longer active reviews nothing.
	gone := users["rvgone"].User
	gone.IsActive = false
	if err := e.DB.WithTx(context.Background(), func(ctx context.Context) error { return e.DB.Users().Update(ctx, gone) }); err != nil {
		t.Fatal(err)
	}
	want := []string{"rvamy", "rvzed", "rvowner"}
	for _, caller := range []apitest.Cred{oc, apitest.Basic(users["rvamy"]), apitest.Basic(users["rvzed"]), apitest.Basic(e.Admin)} {
		var got []*models.User
		e.Do("GET", "repos/rvowner/proj/reviewers", nil, caller).Expect(t, http.StatusOK).JSON(t, &got)
		if names := roUserNames(got); !slices.Equal(names, want) {
			t.Errorf("reviewers %v, want %v", names, want)
		}
	}
	// Assignees: the active writers by name, then the owner, likewise.
	var assignees []*models.User
	e.Do("GET", "repos/rvowner/proj/assignees", nil, apitest.Basic(users["rvamy"])).Expect(t, http.StatusOK).JSON(t, &assignees)
	if names := roUserNames(assignees); !slices.Equal(names, []string{"rvzed", "rvowner"}) {
		t.Errorf("assignees %v", names)
	}
	e.Do("GET", "repos/rvowner/proj/reviewers", nil, apitest.Basic(users["rvout"])).Expect(t, http.StatusForbidden)
	e.Do("GET", "repos/rvowner/proj/reviewers", nil, nil).Expect(t, http.StatusUnauthorized)
}
