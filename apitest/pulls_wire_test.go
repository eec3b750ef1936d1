package apitest_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"repohost/apitest"
	"repohost/models"
)

// TestPullReviewSemantics: a review with no event is pending and needs a
// body, a second one by the same reviewer joins it (same id) and its line
// comments carry the diff hunk; only a review's author or a site admin
// deletes it; a team's review request carries the team; replies join the
// review comment's review; resolving records the resolver.
func TestPullReviewSemantics(t *testing.T) {
	t.Parallel()
	p := newPREnv(t, nil)
	admin := apitest.Basic(p.alice)
	bob := p.e.CreateUser("bob", false)
	carol := p.e.CreateUser("carol", false)
	site := p.e.CreateUser("root", true)
	p.e.Do("PUT", "repos/alice/proj/collaborators/bob", map[string]any{"permission": "admin"}, admin).Expect(t, http.StatusNoContent)
	p.branch(t, "feat", "main", "WOW-file", "A new File\n\nand some lines\n")
	pr := p.openPR(t, admin, "feat", "main", "New file")
	path := fmt.Sprintf("repos/alice/proj/pulls/%d", pr.Index)

	// Pending: no event at all, or an empty one; a body is needed.
	p.e.Do("POST", path+"/reviews", map[string]any{"event": ""}, apitest.Basic(carol)).Expect(t, http.StatusUnprocessableEntity)
	var r1, r2 models.PullReview
	p.e.Do("POST", path+"/reviews", map[string]any{"event": "", "body": "...",
		"comments": []map[string]any{{"path": "WOW-file", "body": "its ok", "new_position": 1}}}, apitest.Basic(carol)).
		Expect(t, http.StatusOK).JSON(t, &r1)
	p.e.Do("POST", path+"/reviews", map[string]any{"body": "...",
		"comments": []map[string]any{{"path": "WOW-file", "body": "and here", "new_position": 3}}}, apitest.Basic(carol)).
		Expect(t, http.StatusOK).JSON(t, &r2)
	if r1.State != "PENDING" || r2.ID != r1.ID || r2.State != "PENDING" || r2.CodeCommentsCount != 2 {
		t.Fatalf("pending reviews %+v then %+v", r1, r2)
	}
	var cs []*models.PullReviewComment
	p.e.Do("GET", fmt.Sprintf("%s/reviews/%d/comments", path, r1.ID), nil, apitest.Basic(carol)).Expect(t, http.StatusOK).JSON(t, &cs)
	want := "diff --git a/WOW-file b/WOW-file\n--- /dev/null\n+++ b/WOW-file\n@@ -0,0 +1,3 @@\n+A new File\n+\n+and some lines"
	if len(cs) != 2 || cs[0].DiffHunk != "diff --git a/WOW-file b/WOW-file\n--- /dev/null\n+++ b/WOW-file\n@@ -0,0 +1,3 @@\n+A new File" ||
		cs[1].DiffHunk != want || cs[0].Resolver != nil {
		t.Fatalf("pending review comments %+v / %q", cs, cs[0].DiffHunk)
	}
	// Another's pending review: hidden, except to a site admin.
	p.e.Do("GET", fmt.Sprintf("%s/reviews/%d", path, r1.ID), nil, admin).Expect(t, http.StatusNotFound)
	p.e.Do("GET", fmt.Sprintf("%s/reviews/%d", path, r1.ID), nil, apitest.Basic(site)).Expect(t, http.StatusOK)
	// Submitting needs a real event.
	p.e.Do("POST", fmt.Sprintf("%s/reviews/%d", path, r1.ID), map[string]any{"event": "PENDING"}, apitest.Basic(carol)).Expect(t, http.StatusUnprocessableEntity)
	var sub models.PullReview
	p.e.Do("POST", fmt.Sprintf("%s/reviews/%d", path, r1.ID), map[string]any{"event": "REQUEST_CHANGES", "body": "one nit"}, apitest.Basic(carol)).
		Expect(t, http.StatusOK).JSON(t, &sub)
	if sub.ID != r1.ID || sub.State != "REQUEST_CHANGES" || sub.Submitted == nil {
		t.Fatalf("submitted %+v", sub)
	}

	// bob, a repository admin, may not delete carol's review; carol and a
	// site admin may.
	var bobs models.PullReview
	p.e.Do("POST", path+"/reviews", map[string]any{"event": "COMMENT", "body": "hm"}, apitest.Basic(bob)).Expect(t, http.StatusOK).JSON(t, &bobs)
	p.e.Do("DELETE", fmt.Sprintf("%s/reviews/%d", path, sub.ID), nil, apitest.Basic(bob)).Expect(t, http.StatusForbidden)
	p.e.Do("DELETE", fmt.Sprintf("%s/reviews/%d", path, bobs.ID), nil, apitest.Basic(site)).Expect(t, http.StatusNoContent)

	// A reply joins the comment's review, on its line.
	var reply models.PullReviewComment
	p.e.Do("POST", fmt.Sprintf("%s/comments/%d/replies", path, cs[1].ID), map[string]any{"body": "fixed"}, apitest.Basic(bob)).
		Expect(t, http.StatusCreated).JSON(t, &reply)
	if reply.ReviewID != sub.ID || reply.Body != "fixed" || reply.Path != "WOW-file" || reply.LineNum != 3 || reply.User.UserName != "bob" {
		t.Fatalf("reply %+v", reply)
	}
	p.e.Do("POST", fmt.Sprintf("%s/comments/%d/replies", path, cs[1].ID), map[string]any{"body": " "}, apitest.Basic(bob)).Expect(t, http.StatusUnprocessableEntity)
	p.e.Do("POST", fmt.Sprintf("%s/comments/%d/replies", path, 999999), map[string]any{"body": "x"}, apitest.Basic(bob)).Expect(t, http.StatusNotFound)
	p.e.Do("POST", fmt.Sprintf("%s/comments/%d/replies", path, cs[1].ID), map[string]any{"body": "x"}, nil).Expect(t, http.StatusUnauthorized)

	// Resolving: the pull request's poster or a writer; carol (a reader
	// who is not an official reviewer) may not.
	res := fmt.Sprintf("repos/alice/proj/pulls/comments/%d/resolve", cs[0].ID)
	p.e.Do("POST", res, nil, apitest.Basic(carol)).Expect(t, http.StatusForbidden)
	p.e.Do("POST", res, nil, admin).Expect(t, http.StatusNoContent)
	p.e.Do("POST", res, nil, admin).Expect(t, http.StatusNoContent)
	p.e.Do("GET", fmt.Sprintf("%s/reviews/%d/comments", path, sub.ID), nil, nil).Expect(t, http.StatusOK).JSON(t, &cs)
	if len(cs) != 3 || cs[0].Resolver == nil || cs[0].Resolver.UserName != "alice" || cs[1].Resolver != nil {
		t.Fatalf("resolved comments %+v", cs)
	}
	p.e.Do("POST", fmt.Sprintf("repos/alice/proj/pulls/comments/%d/unresolve", cs[0].ID), nil, apitest.Basic(bob)).Expect(t, http.StatusNoContent)
	p.e.Do("GET", fmt.Sprintf("%s/reviews/%d/comments", path, sub.ID), nil, nil).Expect(t, http.StatusOK).JSON(t, &cs)
	if cs[0].Resolver != nil {
		t.Fatalf("unresolved comment %+v", cs[0])
	}
	p.e.Do("POST", "repos/alice/proj/pulls/comments/999999/resolve", nil, admin).Expect(t, http.StatusNotFound)

	// The requested reviewer withdraws their own request.
	p.e.Do("POST", path+"/requested_reviewers", map[string]any{"reviewers": []string{"carol"}}, admin).Expect(t, http.StatusCreated)
	p.e.Do("DELETE", path+"/requested_reviewers", map[string]any{"reviewers": []string{"carol"}}, apitest.Basic(carol)).Expect(t, http.StatusNoContent)

	// A team's review request carries the team.
	roCreateOrg(t, p.e, admin, map[string]any{"username": "acme"})
	p.e.Do("POST", "repos/alice/proj/transfer", map[string]any{"new_owner": "acme"}, admin).Expect(t, http.StatusAccepted)
	team := tmTeam(t, p.e, admin, "acme", map[string]any{"name": "reviewers", "units_map": tmAllUnits("write")}, "bob")
	p.e.Do("PUT", fmt.Sprintf("teams/%d/repos/acme/proj", team.ID), nil, admin).Expect(t, http.StatusNoContent)
	var reqs []*models.PullReview
	p.e.Do("POST", fmt.Sprintf("repos/acme/proj/pulls/%d/requested_reviewers", pr.Index), map[string]any{"team_reviewers": []string{"reviewers"}}, admin).
		Expect(t, http.StatusCreated).JSON(t, &reqs)
	if len(reqs) != 1 || reqs[0].Team == nil || reqs[0].Team.Name != "reviewers" || reqs[0].User != nil || reqs[0].State != "REQUEST_REVIEW" {
		t.Fatalf("team request %+v", reqs)
	}
	var all []*models.PullReview
	p.e.Do("GET", fmt.Sprintf("repos/acme/proj/pulls/%d/reviews", pr.Index), nil, admin).Expect(t, http.StatusOK).JSON(t, &all)
	last := all[len(all)-1]
	if last.Team == nil || last.Team.ID != team.ID {
		t.Fatalf("listed team request %+v", last)
	}
}

// TestPullFilesAndDiff: changed files name their status as the reference
// does, and .diff and .patch are git's own output between the merge base
// and the head.
func TestPullFilesAndDiff(t *testing.T) {
	t.Parallel()
	p := newPREnv(t, nil)
	p.branch(t, "base", "main", "keep.txt", "one\ntwo\nthree\nfour\nfive\nsix\n")
	p.git.must(p.clone, "checkout", "-q", "-B", "base", "origin/base")
	p.git.commitFile(p.clone, "gone.txt", "bye\n", "gone")
	p.git.commitFile(p.clone, "old-name.txt", "a long enough file to be seen as a rename\nline two\nline three\n", "old")
	p.git.must(p.clone, "push", "-q", "origin", "base")
	p.git.must(p.clone, "checkout", "-q", "-B", "work", "origin/base")
	p.git.commitFile(p.clone, "keep.txt", "one\ntwo\nTHREE\nfour\nfive\nsix\n", "modify")
	p.git.commitFile(p.clone, "new.bin", "\x00\x01\x02binary\n", "add")
	p.git.must(p.clone, "rm", "-q", "gone.txt")
	p.git.must(p.clone, "mv", "old-name.txt", "new-name.txt")
	p.git.must(p.clone, "commit", "-q", "-m", "remove and rename")
	p.git.must(p.clone, "push", "-q", "origin", "work")
	pr := p.openPR(t, p.cred, "work", "base", "Files")
	path := fmt.Sprintf("repos/alice/proj/pulls/%d", pr.Index)

	var files []*models.ChangedFile
	p.e.Do("GET", path+"/files", nil, p.cred).Expect(t, http.StatusOK).JSON(t, &files)
	got := map[string]string{}
	for _, f := range files {
		got[f.Filename] = f.Status
		if f.Filename == "new-name.txt" && f.PreviousFilename != "old-name.txt" {
			t.Fatalf("rename %+v", f)
		}
	}
	if len(files) != 4 || got["keep.txt"] != "changed" || got["new.bin"] != "added" || got["gone.txt"] != "deleted" || got["new-name.txt"] != "renamed" {
		t.Fatalf("files %v", got)
	}

	// The reference's bodies: git diff -p (with --binary --histogram for
	// binary=true) and git format-patch --binary --stdout.
	base := strings.TrimSpace(p.git.must(p.clone, "merge-base", "origin/base", "origin/work"))
	head := strings.TrimSpace(p.git.must(p.clone, "rev-parse", "origin/work"))
	for _, c := range []struct {
		url  string
		args []string
	}{
		{path + ".diff", []string{"diff", "-p", base, head}},
		{path + ".diff?binary=true", []string{"diff", "-p", "--binary", "--histogram", base, head}},
		{path + ".patch", []string{"format-patch", "--binary", "--stdout", base + ".." + head}},
		{path + ".patch?binary=true", []string{"format-patch", "--binary", "--stdout", base + ".." + head}},
	} {
		body := string(p.e.Do("GET", c.url, nil, p.cred).Expect(t, http.StatusOK).Body)
		if want := p.git.must(p.clone, c.args...); body != want {
			t.Fatalf("%s:\n%s\nwant (git %v):\n%s", c.url, body, c.args, want)
		}
	}
	plain := string(p.e.Do("GET", path+".diff", nil, p.cred).Expect(t, http.StatusOK).Body)
	if !strings.Contains(plain, "Binary files /dev/null and b/new.bin differ") || strings.Contains(plain, "GIT binary patch") {
		t.Fatalf("plain diff shows binary content:\n%s", plain)
	}
}

// TestPullSDKWire: what the official SDK (and so tea) sends to edit and
// merge a pull request, and the labels, merge commit and base commit it
// reads back.
func TestPullSDKWire(t *testing.T) {
	t.Parallel()
	p := newPREnv(t, nil)
	admin := apitest.Basic(p.alice)
	var ms models.Milestone
	// A deadline sent as a date (midnight, as tea sends it) is kept as sent.
	p.e.Do("POST", "repos/alice/proj/milestones", map[string]any{"title": "v1", "due_on": "2031-01-15T00:00:00Z"}, admin).
		Expect(t, http.StatusCreated).JSON(t, &ms)
	if ms.Deadline == nil || ms.Deadline.String() != "2031-01-15T00:00:00Z" {
		t.Fatalf("milestone deadline %v", ms.Deadline)
	}
	p.branch(t, "feat", "main", "f.txt", "f\n")
	pr := p.openPR(t, admin, "feat", "main", "Feat")
	path := fmt.Sprintf("repos/alice/proj/pulls/%d", pr.Index)
	if pr.Head.Name != "feat" || pr.Base.Name != "main" {
		t.Fatalf("labels %q %q", pr.Head.Name, pr.Base.Name)
	}
	r := p.e.Do("GET", path, nil, admin).Expect(t, http.StatusOK)
	if !strings.Contains(string(r.Body), `"merge_commit_sha":null`) {
		t.Fatalf("unmerged pull request's merge_commit_sha: %s", r.Body)
	}
	p.e.Do("PATCH", path, map[string]any{"milestone": ms.ID}, admin).Expect(t, http.StatusCreated)
	// The SDK's EditPullRequestOption: every field, empty ones included.
	sdkEdit := func(state string) *models.PullRequest {
		var out models.PullRequest
		p.e.Do("PATCH", path, map[string]any{"title": "", "body": nil, "base": "", "assignee": "", "assignees": nil,
			"milestone": 0, "labels": nil, "state": state, "due_date": nil, "unset_due_date": nil, "allow_maintainer_edit": nil}, admin).
			Expect(t, http.StatusCreated).JSON(t, &out)
		return &out
	}
	if got := sdkEdit("closed"); got.State != "closed" || got.Base.Ref != "main" || got.Title != "Feat" || got.Milestone == nil || got.Milestone.ID != ms.ID {
		t.Fatalf("closed by the SDK %+v", got)
	}
	if got := sdkEdit("open"); got.State != "open" {
		t.Fatalf("reopened by the SDK %+v", got)
	}
	before := p.originMain(t)
	// The SDK's spelling of the merge title and message.
	p.e.Do("POST", path+"/merge", map[string]any{"Do": "squash", "MergeTitleField": "Squashed title", "MergeMessageField": "the body"}, admin).
		Expect(t, http.StatusOK)
	after := p.originMain(t)
	if msg := p.git.must(p.clone, "log", "-1", "--format=%B", after); !strings.HasPrefix(msg, "Squashed title\n\nthe body") {
		t.Fatalf("merge message %q", msg)
	}
	got := p.getPR(t, pr.Index)
	if got.MergedCommitID == nil || *got.MergedCommitID != after || got.Base.Sha != after || before == after {
		t.Fatalf("merged pull request %+v (main %s)", got, after)
	}
}

// TestUserOrgsAndOldOrgRepoPath: GET /users/{username}/orgs shows public
// memberships to others and every one to the user; POST /org/{org}/repos
// creates like /orgs/{org}/repos.
func TestUserOrgsAndOldOrgRepoPath(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	alice := e.CreateUser("alice", false)
	bob := e.CreateUser("bob", false)
	roCreateOrg(t, e, apitest.Basic(alice), map[string]any{"username": "pubs"})
	roCreateOrg(t, e, apitest.Basic(alice), map[string]any{"username": "hidden", "visibility": "private"})
	list := func(cred apitest.Cred) []string {
		var orgs []*models.Organization
		e.Do("GET", "users/alice/orgs", nil, cred).Expect(t, http.StatusOK).JSON(t, &orgs)
		var names []string
		for _, o := range orgs {
			names = append(names, o.Name)
		}
		return names
	}
	if got := list(apitest.Basic(alice)); strings.Join(got, ",") != "hidden,pubs" {
		t.Fatalf("alice's own orgs %v", got)
	}
	if got := list(apitest.Basic(bob)); len(got) != 0 {
		t.Fatalf("bob sees alice's concealed memberships %v", got)
	}
	e.Do("PUT", "orgs/pubs/public_members/alice", nil, apitest.Basic(alice)).Expect(t, http.StatusNoContent)
	e.Do("PUT", "orgs/hidden/public_members/alice", nil, apitest.Basic(alice)).Expect(t, http.StatusNoContent)
	var members []*models.User
	e.Do("GET", "orgs/pubs/public_members", nil, apitest.Basic(bob)).Expect(t, http.StatusOK).JSON(t, &members)
	if len(members) != 1 || members[0].UserName != "alice" {
		t.Fatalf("public members %+v", members)
	}
	if got := list(apitest.Basic(bob)); strings.Join(got, ",") != "pubs" {
		t.Fatalf("bob sees %v", got)
	}
	if got := list(nil); strings.Join(got, ",") != "pubs" {
		t.Fatalf("anonymous sees %v", got)
	}
	e.Do("GET", "users/nobody/orgs", nil, nil).Expect(t, http.StatusNotFound)

	var r models.Repository
	e.Do("POST", "org/pubs/repos", map[string]any{"name": "tool"}, apitest.Basic(alice)).Expect(t, http.StatusCreated).JSON(t, &r)
	if r.FullName != "pubs/tool" {
		t.Fatalf("created %+v", r)
	}
	e.Do("POST", "org/pubs/repos", map[string]any{"name": "tool"}, apitest.Basic(alice)).Expect(t, http.StatusConflict)
	e.Do("POST", "org/pubs/repos", map[string]any{"name": "x"}, apitest.Basic(bob)).Expect(t, http.StatusForbidden)
	e.Do("POST", "org/hidden/repos", map[string]any{"name": "x"}, apitest.Basic(bob)).Expect(t, http.StatusNotFound)
}
