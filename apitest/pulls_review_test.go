package apitest_test

import (
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"code.gitea.io/sdk/gitea"

	"repohost/apitest"
	"repohost/impl/events"
	"repohost/models"
)

func TestForks(t *testing.T) {
	t.Parallel()
	p := newPREnv(t, map[string]any{"private": true})
	bob := p.e.CreateUser("bob", false)
	carol := p.e.CreateUser("carol", false)
	bobCred := apitest.Basic(bob)
	p.branch(t, "dev", "main", "dev.txt", "dev\n")

	// A private parent forks only for callers who can read it.
	p.e.Do("POST", "repos/alice/proj/forks", map[string]any{}, bobCred).Expect(t, http.StatusNotFound)
	// Anonymous: the private parent is not there (404 before any 401, as the reference).
	p.e.Do("POST", "repos/alice/proj/forks", map[string]any{}, nil).Expect(t, http.StatusNotFound)
	p.e.Do("PUT", "repos/alice/proj/collaborators/bob", map[string]any{"permission": "read"}, apitest.Basic(p.alice)).Expect(t, http.StatusNoContent)
	var fork models.Repository
	p.e.Do("POST", "repos/alice/proj/forks", map[string]any{"name": "proj-fork"}, bobCred).Expect(t, http.StatusAccepted).JSON(t, &fork)
	if !fork.Fork || fork.Parent == nil || fork.Parent.FullName != "alice/proj" || fork.FullName != "bob/proj-fork" || !fork.Private ||
		fork.DefaultBranch != "main" || fork.Empty {
		t.Fatalf("fork %+v parent %+v", fork, fork.Parent)
	}
	// A second fork by the same owner: 409.
	p.e.Do("POST", "repos/alice/proj/forks", map[string]any{"name": "again"}, bobCred).Expect(t, http.StatusConflict)
	// The fork has the parent's branches at the same commits, in a
	// repository of its own.
	for _, b := range []string{"main", "dev"} {
		if got, want := ghBranch(t, p.e, bobCred, "bob", "proj-fork", b).Commit.ID, ghBranch(t, p.e, p.cred, "alice", "proj", b).Commit.ID; got != want {
			t.Fatalf("fork branch %s at %s, parent at %s", b, got, want)
		}
	}
	var parent models.Repository
	p.e.Do("GET", "repos/alice/proj", nil, p.cred).Expect(t, http.StatusOK).JSON(t, &parent)
	if parent.Forks != 1 {
		t.Fatalf("forks_count %d", parent.Forks)
	}
	// The fork of a private repository is private: listed to its owner,
	// not to the parent's owner, who has no access to it.
	var forks []*models.Repository
	r := p.e.Do("GET", "repos/alice/proj/forks", nil, bobCred).Expect(t, http.StatusOK)
	r.JSON(t, &forks)
	if len(forks) != 1 || forks[0].FullName != "bob/proj-fork" || forks[0].Parent == nil || r.Header.Get("X-Total-Count") != "1" {
		t.Fatalf("forks %+v", forks)
	}
	p.e.Do("GET", "repos/alice/proj/forks", nil, p.cred).Expect(t, http.StatusOK).JSON(t, &forks)
	if len(forks) != 0 {
		t.Fatalf("alice sees bob's private fork: %+v", forks)
	}
	// Carol sees neither the parent nor the fork.
	p.e.Do("GET", "repos/alice/proj/forks", nil, apitest.Basic(carol)).Expect(t, http.StatusNotFound)
	p.e.Do("GET", "repos/bob/proj-fork", nil, apitest.Basic(carol)).Expect(t, http.StatusNotFound)

	// Bob pushes a branch to his fork and proposes it to alice's
	// repository as bob:topic; alice merges it.
	bobToken := p.e.Token(bob, "write:repository")
	work := filepath.Join(p.work, "bobclone")
	p.git.must(p.work, "clone", "-q", gitURL(p.e, "bob", bobToken, "bob", "proj-fork"), work)
	p.git.must(work, "checkout", "-q", "-b", "topic")
	head := p.git.commitFile(work, "topic.txt", "from bob\n", "topic by bob")
	p.git.must(work, "push", "-q", "origin", "topic")
	var pr models.PullRequest
	p.e.Do("POST", "repos/alice/proj/pulls", map[string]any{"head": "bob:topic", "base": "main", "title": "From the fork"}, bobCred).
		Expect(t, http.StatusCreated).JSON(t, &pr)
	if pr.Head.Sha != head || pr.Head.Repo == nil || pr.Head.Repo.FullName != "bob/proj-fork" || !pr.Mergeable {
		t.Fatalf("fork pull request head %+v", pr.Head)
	}
	p.git.must(p.clone, "fetch", "-q", "origin", fmt.Sprintf("pull/%d/head", pr.Index))
	if got := strings.TrimSpace(p.git.must(p.clone, "rev-parse", "FETCH_HEAD")); got != head {
		t.Fatalf("pull head in the base repository %s, want %s", got, head)
	}
	// A push to the fork moves the pull request.
	next := p.git.commitFile(work, "topic2.txt", "more\n", "more by bob")
	p.git.must(work, "push", "-q", "origin", "topic")
	if got := p.getPR(t, pr.Index); got.Head.Sha != next {
		t.Fatalf("fork pull request head after push %s, want %s", got.Head.Sha, next)
	}
	// Bob (read access) may not merge: 405, as the reference answers.
	p.e.Do("POST", fmt.Sprintf("repos/alice/proj/pulls/%d/merge", pr.Index), map[string]any{"Do": "merge"}, bobCred).Expect(t, http.StatusMethodNotAllowed)
	p.e.Do("POST", fmt.Sprintf("repos/alice/proj/pulls/%d/merge", pr.Index), map[string]any{"Do": "merge"}, p.cred).Expect(t, http.StatusOK)
	if main := p.originMain(t); strings.TrimSpace(p.git.must(p.clone, "log", "-1", "--format=%P", main)) == "" ||
		!strings.Contains(p.git.must(p.clone, "ls-tree", "--name-only", main), "topic2.txt") {
		t.Fatalf("main after merging the fork's pull request lacks its files")
	}
	// Deleting the fork counts it off the parent.
	p.e.Do("DELETE", "repos/bob/proj-fork", nil, bobCred).Expect(t, http.StatusNoContent)
	p.e.Do("GET", "repos/alice/proj", nil, p.cred).Expect(t, http.StatusOK).JSON(t, &parent)
	if parent.Forks != 0 {
		t.Fatalf("forks_count after delete %d", parent.Forks)
	}
}

func TestPullConflicts(t *testing.T) {
	t.Parallel()
	p := newPREnv(t, nil)
	p.branch(t, "left", "main", "README.md", "left side\n")
	pr := p.openPR(t, p.cred, "left", "main", "Left")
	if !pr.Mergeable {
		t.Fatal("clean pull request not mergeable")
	}
	// main changes the same lines: the stored state turns to a conflict.
	p.push(t, "main", "README.md", "main side\n")
	got := p.getPR(t, pr.Index)
	if got.Mergeable {
		t.Fatal("conflicting pull request still mergeable")
	}
	r := p.e.Do("POST", fmt.Sprintf("repos/alice/proj/pulls/%d/merge", pr.Index), map[string]any{"Do": "merge"}, p.cred).Expect(t, http.StatusConflict)
	if !strings.Contains(string(r.Body), "README.md") {
		t.Fatalf("conflict answer %s", r.Body)
	}
	// Resolving on the head makes it mergeable again.
	p.git.must(p.clone, "fetch", "-q", "origin")
	p.git.must(p.clone, "checkout", "-q", "-B", "left", "origin/left")
	p.git.run(p.clone, "merge", "-q", "origin/main")
	p.git.commitFile(p.clone, "README.md", "resolved\n", "resolve")
	p.git.must(p.clone, "push", "-q", "origin", "left")
	if got := p.getPR(t, pr.Index); !got.Mergeable {
		t.Fatal("resolved pull request not mergeable")
	}
	// head_commit_id that is not the head: 409.
	p.e.Do("POST", fmt.Sprintf("repos/alice/proj/pulls/%d/merge", pr.Index), map[string]any{"Do": "merge", "head_commit_id": pr.Head.Sha}, p.cred).Expect(t, http.StatusConflict)
	p.e.Do("POST", fmt.Sprintf("repos/alice/proj/pulls/%d/merge", pr.Index), map[string]any{"Do": "squash", "delete_branch_after_merge": true}, p.cred).Expect(t, http.StatusOK)
	p.e.Do("GET", "repos/alice/proj/branches/left", nil, p.cred).Expect(t, http.StatusNotFound)
}

func TestPullProtectionAndReviews(t *testing.T) {
	t.Parallel()
	p := newPREnv(t, nil)
	admin := apitest.Basic(p.alice)
	bob := p.e.CreateUser("bob", false)
	reader := p.e.CreateUser("reader", false)
	p.e.Do("PUT", "repos/alice/proj/collaborators/bob", map[string]any{"permission": "write"}, admin).Expect(t, http.StatusNoContent)
	p.e.Do("PUT", "repos/alice/proj/collaborators/reader", map[string]any{"permission": "read"}, admin).Expect(t, http.StatusNoContent)
	p.e.Do("POST", "repos/alice/proj/branch_protections", map[string]any{"rule_name": "main", "required_approvals": 1,
		"block_on_rejected_reviews": true, "enable_push": true}, admin).Expect(t, http.StatusCreated)
	p.branch(t, "feat", "main", "feat.txt", "feat\n")
	pr := p.openPR(t, p.cred, "feat", "main", "Needs review")
	path := fmt.Sprintf("repos/alice/proj/pulls/%d", pr.Index)

	// Review requests: 201 with REQUEST_REVIEW, no duplicates, the
	// author refused, unknown users 404.
	var reqs []*models.PullReview
	p.e.Do("POST", path+"/requested_reviewers", map[string]any{"reviewers": []string{"bob"}}, admin).Expect(t, http.StatusCreated).JSON(t, &reqs)
	if len(reqs) != 1 || reqs[0].State != "REQUEST_REVIEW" || reqs[0].User.UserName != "bob" || !reqs[0].Official {
		t.Fatalf("review requests %+v", reqs)
	}
	p.e.Do("POST", path+"/requested_reviewers", map[string]any{"reviewers": []string{"bob"}}, admin).Expect(t, http.StatusCreated).JSON(t, &reqs)
	if len(reqs) != 0 {
		t.Fatalf("duplicate request made %d", len(reqs))
	}
	p.e.Do("POST", path+"/requested_reviewers", map[string]any{"reviewers": []string{"alice"}}, admin).Expect(t, http.StatusUnprocessableEntity)
	p.e.Do("POST", path+"/requested_reviewers", map[string]any{"reviewers": []string{"nobody"}}, admin).Expect(t, http.StatusNotFound)
	if got := p.getPR(t, pr.Index); len(got.RequestedReviewers) != 1 || got.RequestedReviewers[0].UserName != "bob" {
		t.Fatalf("requested_reviewers %+v", got.RequestedReviewers)
	}
	var found []*models.Issue
	p.e.Do("GET", "repos/issues/search?review_requested=true", nil, apitest.Basic(bob)).Expect(t, http.StatusOK).JSON(t, &found)
	if len(found) != 1 || found[0].Index != pr.Index || found[0].PullRequest == nil {
		t.Fatalf("review_requested search %+v", found)
	}
	p.e.Do("GET", "repos/issues/search?reviewed=true", nil, apitest.Basic(bob)).Expect(t, http.StatusOK).JSON(t, &found)
	if len(found) != 0 {
		t.Fatalf("reviewed search before a review %+v", found)
	}

	// No approval yet: 405.
	p.e.Do("POST", path+"/merge", map[string]any{"Do": "merge"}, admin).Expect(t, http.StatusMethodNotAllowed)
	// The author may not approve their own pull request.
	p.e.Do("POST", path+"/reviews", map[string]any{"event": "APPROVED"}, admin).Expect(t, http.StatusUnprocessableEntity)
	// A reader's approval is not official and does not count.
	var rv models.PullReview
	p.e.Do("POST", path+"/reviews", map[string]any{"event": "APPROVED", "body": "lgtm"}, apitest.Basic(reader)).Expect(t, http.StatusOK).JSON(t, &rv)
	if rv.Official || rv.State != "APPROVED" {
		t.Fatalf("reader's review %+v", rv)
	}
	p.e.Do("POST", path+"/merge", map[string]any{"Do": "merge"}, admin).Expect(t, http.StatusMethodNotAllowed)
	// Bob requests changes (with a line comment): blocked even when approved later by others.
	var rej models.PullReview
	p.e.Do("POST", path+"/reviews", map[string]any{"event": "REQUEST_CHANGES", "body": "fix",
		"comments": []map[string]any{{"path": "feat.txt", "body": "typo", "new_position": 1}}}, apitest.Basic(bob)).Expect(t, http.StatusOK).JSON(t, &rej)
	if !rej.Official || rej.CodeCommentsCount != 1 {
		t.Fatalf("bob's rejection %+v", rej)
	}
	var comments []*models.PullReviewComment
	p.e.Do("GET", fmt.Sprintf("%s/reviews/%d/comments", path, rej.ID), nil, p.cred).Expect(t, http.StatusOK).JSON(t, &comments)
	if len(comments) != 1 || comments[0].Path != "feat.txt" || comments[0].LineNum != 1 {
		t.Fatalf("review comments %+v", comments)
	}
	if got := p.getPR(t, pr.Index); len(got.RequestedReviewers) != 0 {
		t.Fatalf("the review did not answer the request: %+v", got.RequestedReviewers)
	}
	p.e.Do("GET", "repos/issues/search?reviewed=true", nil, apitest.Basic(bob)).Expect(t, http.StatusOK).JSON(t, &found)
	if len(found) != 1 {
		t.Fatalf("reviewed search after a review %+v", found)
	}
	// Only repository admins dismiss; bob's dismissal of his own: 403.
	p.e.Do("POST", fmt.Sprintf("%s/reviews/%d/dismissals", path, rej.ID), map[string]any{"message": "x"}, apitest.Basic(bob)).Expect(t, http.StatusForbidden)
	// A pending review, then submitted as an approval.
	var pending models.PullReview
	p.e.Do("POST", path+"/reviews", map[string]any{"body": "draft"}, apitest.Basic(bob)).Expect(t, http.StatusOK).JSON(t, &pending)
	if pending.State != "PENDING" || pending.Submitted != nil {
		t.Fatalf("pending review %+v", pending)
	}
	p.e.Do("GET", fmt.Sprintf("%s/reviews/%d", path, pending.ID), nil, admin).Expect(t, http.StatusNotFound)
	var approved models.PullReview
	p.e.Do("POST", fmt.Sprintf("%s/reviews/%d", path, pending.ID), map[string]any{"event": "APPROVED"}, apitest.Basic(bob)).Expect(t, http.StatusOK).JSON(t, &approved)
	if approved.State != "APPROVED" || !approved.Official {
		t.Fatalf("submitted review %+v", approved)
	}
	// Bob's newest review is now an approval: the rejection no longer
	// blocks, and the approval counts.
	var reviews []*models.PullReview
	p.e.Do("GET", path+"/reviews", nil, p.cred).Expect(t, http.StatusOK).JSON(t, &reviews)
	if len(reviews) != 3 {
		t.Fatalf("reviews %d", len(reviews))
	}
	// The reader may not merge: 405.
	p.e.Do("POST", path+"/merge", map[string]any{"Do": "merge"}, apitest.Basic(reader)).Expect(t, http.StatusMethodNotAllowed)
	// Dismissing the approval blocks again; undismissing unblocks.
	p.e.Do("POST", fmt.Sprintf("%s/reviews/%d/dismissals", path, approved.ID), map[string]any{"message": "stale"}, admin).Expect(t, http.StatusOK)
	p.e.Do("POST", path+"/merge", map[string]any{"Do": "merge"}, admin).Expect(t, http.StatusMethodNotAllowed)
	p.e.Do("POST", fmt.Sprintf("%s/reviews/%d/undismissals", path, approved.ID), nil, admin).Expect(t, http.StatusOK)
	p.e.Do("POST", path+"/merge", map[string]any{"Do": "merge"}, admin).Expect(t, http.StatusOK)
	if got := p.getPR(t, pr.Index); !got.HasMerged {
		t.Fatal("not merged")
	}
}

func TestPullForceMerge(t *testing.T) {
	t.Parallel()
	p := newPREnv(t, nil)
	admin := apitest.Basic(p.alice)
	bob := p.e.CreateUser("bob", false)
	p.e.Do("PUT", "repos/alice/proj/collaborators/bob", map[string]any{"permission": "write"}, admin).Expect(t, http.StatusNoContent)
	p.e.Do("POST", "repos/alice/proj/branch_protections", map[string]any{"rule_name": "main", "required_approvals": 2}, admin).Expect(t, http.StatusCreated)
	p.branch(t, "feat", "main", "feat.txt", "feat\n")
	var is models.Issue
	p.e.Do("POST", "repos/alice/proj/issues", map[string]any{"title": "bug"}, admin).Expect(t, http.StatusCreated).JSON(t, &is)
	var pr models.PullRequest
	p.e.Do("POST", "repos/alice/proj/pulls", map[string]any{"head": "feat", "base": "main", "title": "Fix",
		"body": fmt.Sprintf("This fixes #%d.", is.Index)}, p.cred).Expect(t, http.StatusCreated).JSON(t, &pr)
	path := fmt.Sprintf("repos/alice/proj/pulls/%d", pr.Index)
	// A writer may not force; the admin may.
	p.e.Do("POST", path+"/merge", map[string]any{"Do": "merge", "force_merge": true}, apitest.Basic(bob)).Expect(t, http.StatusMethodNotAllowed)
	// With no statuses the checks are not green: the merge is scheduled
	// (201), and the forced merge below takes its place.
	p.e.Do("POST", path+"/merge", map[string]any{"Do": "merge", "merge_when_checks_succeed": true}, admin).Expect(t, http.StatusCreated)
	p.e.Do("POST", path+"/merge", map[string]any{"Do": "merge", "force_merge": true, "merge_title_field": "Custom title",
		"merge_message_field": "Custom body"}, admin).Expect(t, http.StatusOK)
	msg := p.git.must(p.clone, "log", "-1", "--format=%B", p.originMain(t))
	if !strings.HasPrefix(msg, "Custom title\n\nCustom body") {
		t.Fatalf("merge message %q", msg)
	}
	// The issue it fixes is closed.
	var closed models.Issue
	p.e.Do("GET", fmt.Sprintf("repos/alice/proj/issues/%d", is.Index), nil, admin).Expect(t, http.StatusOK).JSON(t, &closed)
	if closed.State != "closed" {
		t.Fatalf("referenced issue %s", closed.State)
	}
	// Editing the merged pull request's state: 412.
	p.e.Do("PATCH", path, map[string]any{"state": "open"}, admin).Expect(t, http.StatusPreconditionFailed)
}

func TestPullEditAndUpdate(t *testing.T) {
	t.Parallel()
	p := newPREnv(t, nil)
	admin := apitest.Basic(p.alice)
	p.branch(t, "feat", "main", "feat.txt", "feat\n")
	p.branch(t, "other", "main", "other.txt", "o\n")
	pr := p.openPR(t, p.cred, "feat", "main", "Title")
	var edited models.PullRequest
	p.e.Do("PATCH", fmt.Sprintf("repos/alice/proj/pulls/%d", pr.Index), map[string]any{"title": "New title", "body": "b",
		"base": "other", "allow_maintainer_edit": true}, admin).Expect(t, http.StatusCreated).JSON(t, &edited)
	if edited.Title != "New title" || edited.Base.Ref != "other" || !edited.AllowMaintainerEdit || edited.ChangedFiles != 1 {
		t.Fatalf("edited %+v base %+v", edited, edited.Base)
	}
	p.e.Do("PATCH", fmt.Sprintf("repos/alice/proj/pulls/%d", pr.Index), map[string]any{"base": "main"}, admin).Expect(t, http.StatusCreated)
	// main moves on; updating the head merges main into it.
	p.push(t, "main", "later.txt", "later\n")
	p.e.Do("POST", fmt.Sprintf("repos/alice/proj/pulls/%d/update", pr.Index), nil, p.cred).Expect(t, http.StatusOK)
	p.git.must(p.clone, "fetch", "-q", "origin")
	parents := strings.Fields(p.git.must(p.clone, "log", "-1", "--format=%P", "origin/feat"))
	if len(parents) != 2 || parents[1] != strings.TrimSpace(p.git.must(p.clone, "rev-parse", "origin/main")) {
		t.Fatalf("feat after update has parents %v", parents)
	}
	if got := p.getPR(t, pr.Index); got.Head.Sha != strings.TrimSpace(p.git.must(p.clone, "rev-parse", "origin/feat")) {
		t.Fatalf("pull request head after update %s", got.Head.Sha)
	}
	// Closing and reopening through the edit; the list filters.
	p.e.Do("PATCH", fmt.Sprintf("repos/alice/proj/pulls/%d", pr.Index), map[string]any{"state": "closed"}, admin).Expect(t, http.StatusCreated)
	var list []*models.PullRequest
	r := p.e.Do("GET", "repos/alice/proj/pulls?state=open", nil, p.cred).Expect(t, http.StatusOK)
	r.JSON(t, &list)
	if len(list) != 0 || r.Header.Get("X-Total-Count") != "0" {
		t.Fatalf("open list %d", len(list))
	}
	p.e.Do("GET", "repos/alice/proj/pulls?state=all&poster=alice&base_branch=main", nil, p.cred).Expect(t, http.StatusOK).JSON(t, &list)
	if len(list) != 1 {
		t.Fatalf("filtered list %d", len(list))
	}
	var byBranch models.PullRequest
	p.e.Do("GET", "repos/alice/proj/pulls/main/feat", nil, p.cred).Expect(t, http.StatusOK).JSON(t, &byBranch)
	if byBranch.Index != pr.Index {
		t.Fatalf("by base and head: %d", byBranch.Index)
	}
	var issues []*models.Issue
	p.e.Do("GET", "repos/alice/proj/issues?type=pulls&state=all", nil, admin).Expect(t, http.StatusOK).JSON(t, &issues)
	if len(issues) != 1 || issues[0].PullRequest == nil {
		t.Fatalf("issues of type pulls %+v", issues)
	}
}

// TestSDKPullRequests drives forks, pull requests, review requests,
// reviews and merges with the unchanged official SDK.
func TestSDKPullRequests(t *testing.T) {
	t.Parallel()
	p := newPREnv(t, nil)
	alice := sdkClient(t, p.e, gitea.SetBasicAuth("alice", p.alice.Password))
	bob := p.e.CreateUser("bob", false)
	bobc := sdkClient(t, p.e, gitea.SetBasicAuth("bob", bob.Password))
	write := gitea.AccessModeWrite
	if _, err := alice.AddCollaborator("alice", "proj", "bob", gitea.AddCollaboratorOption{Permission: &write}); err != nil {
		t.Fatalf("AddCollaborator: %v", err)
	}
	fork, _, err := bobc.CreateFork("alice", "proj", gitea.CreateForkOption{})
	if err != nil || !fork.Fork || fork.Parent == nil {
		t.Fatalf("CreateFork: %v %+v", err, fork)
	}
	forks, _, err := alice.ListForks("alice", "proj", gitea.ListForksOptions{})
	if err != nil || len(forks) != 1 {
		t.Fatalf("ListForks: %v %d", err, len(forks))
	}
	for i, style := range []gitea.MergeStyle{gitea.MergeStyleMerge, gitea.MergeStyleRebase, gitea.MergeStyleRebaseMerge, gitea.MergeStyleSquash} {
		branch := fmt.Sprintf("sdk-%d", i)
		p.branch(t, branch, "main", branch+".txt", "sdk\n")
		pr, _, err := alice.CreatePullRequest("alice", "proj", gitea.CreatePullRequestOption{Head: branch, Base: "main", Title: "SDK " + string(style)})
		if err != nil || pr.Index == 0 || pr.Head == nil || pr.Head.Ref != branch {
			t.Fatalf("CreatePullRequest: %v %+v", err, pr)
		}
		if _, err := alice.CreateReviewRequests("alice", "proj", pr.Index, gitea.PullReviewRequestOptions{Reviewers: []string{"bob"}}); err != nil {
			t.Fatalf("CreateReviewRequests: %v", err)
		}
		rv, _, err := bobc.CreatePullReview("alice", "proj", pr.Index, gitea.CreatePullReviewOptions{State: gitea.ReviewStateApproved, Body: "ok"})
		if err != nil || rv.State != gitea.ReviewStateApproved {
			t.Fatalf("CreatePullReview: %v %+v", err, rv)
		}
		reviews, _, err := alice.ListPullReviews("alice", "proj", pr.Index, gitea.ListPullReviewsOptions{})
		if err != nil || len(reviews) != 1 {
			t.Fatalf("ListPullReviews: %v %d", err, len(reviews))
		}
		ok, _, err := alice.MergePullRequest("alice", "proj", pr.Index, gitea.MergePullRequestOption{Style: style})
		if err != nil || !ok {
			t.Fatalf("MergePullRequest %s: %v", style, err)
		}
		merged, _, err := alice.IsPullRequestMerged("alice", "proj", pr.Index)
		if err != nil || !merged {
			t.Fatalf("IsPullRequestMerged: %v %v", merged, err)
		}
		got, _, err := alice.GetPullRequest("alice", "proj", pr.Index)
		if err != nil || !got.HasMerged || got.MergedCommitID == nil {
			t.Fatalf("GetPullRequest: %v %+v", err, got)
		}
	}
	list, _, err := alice.ListRepoPullRequests("alice", "proj", gitea.ListPullRequestsOptions{State: gitea.StateClosed})
	if err != nil || len(list) != 4 {
		t.Fatalf("ListRepoPullRequests: %v %d", err, len(list))
	}
	diff, _, err := alice.GetPullRequestDiff("alice", "proj", list[0].Index, gitea.PullRequestDiffOptions{})
	if err != nil || !strings.Contains(string(diff), "diff --git") {
		t.Fatalf("GetPullRequestDiff: %v %q", err, diff)
	}
}

// TestPullEvents: opening, synchronizing, reviewing, requesting reviews,
// editing and merging a pull request each announce their domain events.
func TestPullEvents(t *testing.T) {
	t.Parallel()
	p := newPREnv(t, nil)
	admin := apitest.Basic(p.alice)
	bob := p.e.CreateUser("bob", false)
	p.e.Do("PUT", "repos/alice/proj/collaborators/bob", map[string]any{"permission": "write"}, admin).Expect(t, http.StatusNoContent)
	p.branch(t, "ev", "main", "ev.txt", "ev\n")
	log := p.e.RecordEvents()
	expect := func(action string, want ...events.Kind) {
		t.Helper()
		got := map[events.Kind]int{}
		for _, ev := range log.Take() {
			got[ev.Kind]++
		}
		for _, k := range want {
			if got[k] == 0 {
				t.Errorf("%s: no %s among %v", action, k, got)
			}
		}
	}
	var pr models.PullRequest
	p.e.Do("POST", "repos/alice/proj/pulls", map[string]any{"head": "ev", "base": "main", "title": "Events",
		"reviewers": []string{"bob"}}, p.cred).Expect(t, http.StatusCreated).JSON(t, &pr)
	expect("open", events.PullOpened, events.PullReviewRequested, events.RefsChanged)
	p.push(t, "ev", "ev2.txt", "more\n")
	expect("push to the head", events.RefsChanged, events.PullSynchronized)
	path := fmt.Sprintf("repos/alice/proj/pulls/%d", pr.Index)
	p.e.Do("PATCH", path, map[string]any{"title": "Events!", "assignees": []string{"bob"}}, admin).Expect(t, http.StatusCreated)
	expect("edit", events.PullEdited, events.PullAssigned)
	p.e.Do("POST", path+"/reviews", map[string]any{"event": "APPROVED"}, apitest.Basic(bob)).Expect(t, http.StatusOK)
	expect("review", events.PullReviewed)
	p.e.Do("POST", path+"/merge", map[string]any{"Do": "merge"}, p.cred).Expect(t, http.StatusOK)
	expect("merge", events.PullMerged, events.PullClosed, events.RefsChanged)
}

// TestPullOrgRules: a fork into an organization, team review requests, and
// the rules on official review requests, outdated heads, stale approvals
// and protected files.
func TestPullOrgRules(t *testing.T) {
	t.Parallel()
	p := newPREnv(t, nil)
	admin := apitest.Basic(p.alice)
	bob := p.e.CreateUser("bob", false)
	roCreateOrg(t, p.e, admin, map[string]any{"username": "acme"})
	// alice forks her repository into her organization.
	var fork models.Repository
	p.e.Do("POST", "repos/alice/proj/forks", map[string]any{"organization": "acme"}, admin).Expect(t, http.StatusAccepted).JSON(t, &fork)
	if fork.FullName != "acme/proj" || !fork.Fork {
		t.Fatalf("fork into an organization %+v", fork)
	}
	// bob, in no team of acme, may not fork into it.
	p.e.Do("POST", "repos/alice/proj/forks", map[string]any{"organization": "acme", "name": "x"}, apitest.Basic(bob)).Expect(t, http.StatusForbidden)

	// The organization's repository gets a team of reviewers.
	team := tmTeam(t, p.e, admin, "acme", map[string]any{"name": "reviewers", "units_map": tmAllUnits("write")}, "bob")
	p.e.Do("PUT", fmt.Sprintf("teams/%d/repos/acme/proj", team.ID), nil, admin).Expect(t, http.StatusNoContent)
	p.e.Do("POST", "repos/acme/proj/branch_protections", map[string]any{"rule_name": "main", "required_approvals": 1,
		"block_on_official_review_requests": true, "block_on_outdated_branch": true, "dismiss_stale_approvals": true,
		"protected_file_patterns": "secret.txt", "enable_push": true}, admin).Expect(t, http.StatusCreated)
	work := filepath.Join(p.work, "acme")
	p.git.must(p.work, "clone", "-q", gitURL(p.e, "alice", p.alice.Password, "acme", "proj"), work)
	p.git.must(work, "checkout", "-q", "-b", "feat")
	p.git.commitFile(work, "feat.txt", "feat\n", "feat")
	p.git.must(work, "push", "-q", "origin", "feat")
	var pr models.PullRequest
	p.e.Do("POST", "repos/acme/proj/pulls", map[string]any{"head": "feat", "base": "main", "title": "Org PR", "team_reviewers": []string{"reviewers"}}, admin).
		Expect(t, http.StatusCreated).JSON(t, &pr)
	if len(pr.RequestedReviewersTeams) != 1 || pr.RequestedReviewersTeams[0].Name != "reviewers" {
		t.Fatalf("team review requests %+v", pr.RequestedReviewersTeams)
	}
	path := fmt.Sprintf("repos/acme/proj/pulls/%d", pr.Index)
	p.e.Do("POST", path+"/requested_reviewers", map[string]any{"team_reviewers": []string{"nobody"}}, admin).Expect(t, http.StatusNotFound)
	// bob approves; the team's request is still open: refused.
	p.e.Do("POST", path+"/reviews", map[string]any{"event": "APPROVED"}, apitest.Basic(bob)).Expect(t, http.StatusOK)
	p.e.Do("POST", path+"/merge", map[string]any{"Do": "merge"}, admin).Expect(t, http.StatusMethodNotAllowed)
	p.e.Do("DELETE", path+"/requested_reviewers", map[string]any{"team_reviewers": []string{"reviewers"}}, admin).Expect(t, http.StatusNoContent)
	// main moves on: the head is outdated.
	p.git.must(work, "checkout", "-q", "main")
	p.git.commitFile(work, "other.txt", "o\n", "other")
	p.git.must(work, "push", "-q", "origin", "main")
	r := p.e.Do("POST", path+"/merge", map[string]any{"Do": "merge"}, admin).Expect(t, http.StatusMethodNotAllowed)
	if !strings.Contains(string(r.Body), "behind") {
		t.Fatalf("outdated head refusal %s", r.Body)
	}
	// Updating the head moves it: bob's approval goes stale and is dismissed.
	p.e.Do("POST", path+"/update", nil, admin).Expect(t, http.StatusOK)
	var reviews []*models.PullReview
	p.e.Do("GET", path+"/reviews", nil, admin).Expect(t, http.StatusOK).JSON(t, &reviews)
	if len(reviews) != 1 || !reviews[0].Dismissed || !reviews[0].Stale {
		t.Fatalf("reviews after the head moved %+v", reviews[0])
	}
	p.e.Do("POST", path+"/merge", map[string]any{"Do": "merge"}, admin).Expect(t, http.StatusMethodNotAllowed)
	p.e.Do("POST", path+"/reviews", map[string]any{"event": "APPROVED"}, apitest.Basic(bob)).Expect(t, http.StatusOK)
	p.e.Do("POST", path+"/merge", map[string]any{"Do": "merge"}, admin).Expect(t, http.StatusOK)

	// A pull request changing a protected file is refused even when approved.
	p.git.must(work, "fetch", "-q", "origin")
	p.git.must(work, "checkout", "-q", "-B", "sneaky", "origin/main")
	p.git.commitFile(work, "secret.txt", "s\n", "sneaky")
	p.git.must(work, "push", "-q", "origin", "sneaky")
	p.e.Do("POST", "repos/acme/proj/pulls", map[string]any{"head": "sneaky", "base": "main", "title": "Sneaky"}, admin).
		Expect(t, http.StatusCreated).JSON(t, &pr)
	path = fmt.Sprintf("repos/acme/proj/pulls/%d", pr.Index)
	p.e.Do("POST", path+"/reviews", map[string]any{"event": "APPROVED"}, apitest.Basic(bob)).Expect(t, http.StatusOK)
	r = p.e.Do("POST", path+"/merge", map[string]any{"Do": "merge"}, admin).Expect(t, http.StatusMethodNotAllowed)
	if !strings.Contains(string(r.Body), "secret.txt") {
		t.Fatalf("protected file refusal %s", r.Body)
	}
}
