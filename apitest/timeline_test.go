package apitest_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"repohost/apitest"
	"repohost/models"
)

// timelineTypes lists the entries' types, with the detail each carries.
func timelineTypes(list []*models.TimelineComment) string {
	var parts []string
	for _, c := range list {
		s := c.Type
		switch c.Type {
		case "comment":
			s += ":" + c.Body
		case "label":
			s += fmt.Sprintf(":%s:%v", c.Label.Name, c.RemovedAssignee)
		case "milestone":
			old, now := "", ""
			if c.OldMilestone != nil {
				old = c.OldMilestone.Title
			}
			if c.Milestone != nil {
				now = c.Milestone.Title
			}
			s += ":" + old + ">" + now
		case "assignees", "review_request":
			s += fmt.Sprintf(":%s:%v", c.Assignee.UserName, c.RemovedAssignee)
		case "review":
			s += ":" + c.Body
		case "change_title":
			s += ":" + c.OldTitle + ">" + c.NewTitle
		case "lock":
			s += ":" + c.Body
		case "add_dependency", "remove_dependency":
			if c.DependentIssue != nil {
				s += fmt.Sprintf(":#%d", c.DependentIssue.Index)
			} else {
				s += ":hidden"
			}
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, ",")
}

// TestIssueTimelineEvents: a scripted sequence of changes shows up in the
// timeline in order, between the comments, while the comment lists and
// the comment count see only comments.
func TestIssueTimelineEvents(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	alice := e.CreateUser("alice", false)
	e.CreateUser("bob", false)
	ac := apitest.Basic(alice)
	e.Do("POST", "user/repos", map[string]any{"name": "proj"}, ac).Expect(t, http.StatusCreated)
	e.Do("PUT", "repos/alice/proj/collaborators/bob", map[string]any{"permission": "write"}, ac).Expect(t, http.StatusNoContent)
	const base = "repos/alice/proj/issues"
	var bug, feat models.Label
	e.Do("POST", "repos/alice/proj/labels", map[string]any{"name": "bug", "color": "#ff0000"}, ac).Expect(t, http.StatusCreated).JSON(t, &bug)
	e.Do("POST", "repos/alice/proj/labels", map[string]any{"name": "feat", "color": "#00ff00"}, ac).Expect(t, http.StatusCreated).JSON(t, &feat)
	var m1 models.Milestone
	e.Do("POST", "repos/alice/proj/milestones", map[string]any{"title": "v1"}, ac).Expect(t, http.StatusCreated).JSON(t, &m1)

	e.Do("POST", base, map[string]any{"title": "first", "labels": []int64{bug.ID}}, ac).Expect(t, http.StatusCreated)
	e.Do("POST", base+"/1/comments", map[string]any{"body": "hello"}, ac).Expect(t, http.StatusCreated)
	e.Do("POST", base+"/1/labels", map[string]any{"labels": []int64{feat.ID}}, ac).Expect(t, http.StatusOK)
	e.Do("DELETE", fmt.Sprintf("%s/1/labels/%d", base, bug.ID), nil, ac).Expect(t, http.StatusNoContent)
	e.Do("PATCH", base+"/1", map[string]any{"title": "second", "milestone": m1.ID, "assignees": []string{"bob"}}, ac).Expect(t, http.StatusCreated)
	e.Do("POST", base+"/1/comments", map[string]any{"body": "again"}, ac).Expect(t, http.StatusCreated)
	e.Do("PATCH", base+"/1", map[string]any{"state": "closed", "milestone": 0, "assignees": []string{}}, ac).Expect(t, http.StatusCreated)
	e.Do("PATCH", base+"/1", map[string]any{"state": "open"}, ac).Expect(t, http.StatusCreated)
	e.Do("PUT", base+"/1/lock", map[string]any{"lock_reason": "Too heated"}, ac).Expect(t, http.StatusNoContent)
	e.Do("DELETE", base+"/1/lock", nil, ac).Expect(t, http.StatusNoContent)
	e.Do("POST", base+"/1/pin", nil, ac).Expect(t, http.StatusNoContent)
	e.Do("DELETE", base+"/1/pin", nil, ac).Expect(t, http.StatusNoContent)

	var list []*models.TimelineComment
	r := e.Do("GET", base+"/1/timeline", nil, ac).Expect(t, http.StatusOK)
	r.JSON(t, &list)
	want := "label:bug:false,comment:hello,label:feat:false,label:bug:true,change_title:first>second,milestone:>v1,assignees:bob:false," +
		"comment:again,close,milestone:v1>,assignees:bob:true,reopen,lock:Too heated,unlock,pin,unpin"
	if got := timelineTypes(list); got != want {
		t.Fatalf("timeline\n got %s\nwant %s", got, want)
	}
	if r.Header.Get("X-Total-Count") != fmt.Sprint(len(list)) {
		t.Fatalf("X-Total-Count %q for %d entries", r.Header.Get("X-Total-Count"), len(list))
	}
	for _, c := range list {
		if c.User == nil || c.User.UserName != "alice" || c.ID == 0 || !strings.HasSuffix(c.IssueURL, "/issues/1") {
			t.Fatalf("entry %+v", c)
		}
	}
	// Pages of the timeline are windows of the whole, in the same order.
	var joined []*models.TimelineComment
	for page := 1; page <= 4; page++ {
		var part []*models.TimelineComment
		pr := e.Do("GET", fmt.Sprintf("%s/1/timeline?limit=5&page=%d", base, page), nil, ac).Expect(t, http.StatusOK)
		pr.JSON(t, &part)
		if page == 1 && !strings.Contains(pr.Header.Get("Link"), `rel="next"`) {
			t.Fatalf("Link %q", pr.Header.Get("Link"))
		}
		joined = append(joined, part...)
	}
	if got := timelineTypes(joined); got != want {
		t.Fatalf("paged timeline\n got %s\nwant %s", got, want)
	}
	// since and before bound the entries' update times.
	var none []*models.TimelineComment
	first := time.Time(list[0].CreatedAt)
	e.Do("GET", base+"/1/timeline?since="+first.Add(time.Hour).Format(time.RFC3339), nil, ac).Expect(t, http.StatusOK).JSON(t, &none)
	if len(none) != 0 {
		t.Fatalf("since an hour later: %s", timelineTypes(none))
	}
	e.Do("GET", base+"/1/timeline?before="+first.Add(-time.Hour).Format(time.RFC3339), nil, ac).Expect(t, http.StatusOK).JSON(t, &none)
	if len(none) != 0 {
		t.Fatalf("before an hour earlier: %s", timelineTypes(none))
	}
	var all []*models.TimelineComment
	e.Do("GET", base+"/1/timeline?since="+first.Format(time.RFC3339), nil, ac).Expect(t, http.StatusOK).JSON(t, &all)
	if timelineTypes(all) != want {
		t.Fatalf("since the first: %s", timelineTypes(all))
	}

	// The comment lists and the count see only the two comments.
	var comments []*models.Comment
	cr := e.Do("GET", base+"/1/comments", nil, ac).Expect(t, http.StatusOK)
	cr.JSON(t, &comments)
	if len(comments) != 2 || comments[0].Body != "hello" || comments[1].Body != "again" || cr.Header.Get("X-Total-Count") != "2" {
		t.Fatalf("comments %d, total %s", len(comments), cr.Header.Get("X-Total-Count"))
	}
	e.Do("GET", base+"/comments", nil, ac).Expect(t, http.StatusOK).JSON(t, &comments)
	if len(comments) != 2 {
		t.Fatalf("repository comments %d", len(comments))
	}
	var is models.Issue
	e.Do("GET", base+"/1", nil, ac).Expect(t, http.StatusOK).JSON(t, &is)
	if is.Comments != 2 || is.Title != "second" || is.State != "open" || is.IsLocked || is.PinOrder != 0 {
		t.Fatalf("issue %+v", is)
	}

	// An issue created closed with an assignee shows both.
	e.Do("POST", base, map[string]any{"title": "done", "closed": true, "assignees": []string{"bob"}}, ac).Expect(t, http.StatusCreated)
	e.Do("GET", base+"/2/timeline", nil, ac).Expect(t, http.StatusOK).JSON(t, &list)
	if got := timelineTypes(list); got != "assignees:bob:false,close" {
		t.Fatalf("created closed: %s", got)
	}
	e.Do("GET", base+"/99/timeline", nil, ac).Expect(t, http.StatusNotFound)
}

// TestIssuePinning: pin, unpin and move, the pinned lists of issues and of
// pull requests, the limit and who may pin.
func TestIssuePinning(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	alice, bob := e.CreateUser("alice", false), e.CreateUser("bob", false)
	ac, bc := apitest.Basic(alice), apitest.Basic(bob)
	e.Do("POST", "user/repos", map[string]any{"name": "proj", "auto_init": true}, ac).Expect(t, http.StatusCreated)
	e.Do("PUT", "repos/alice/proj/collaborators/bob", map[string]any{"permission": "write"}, ac).Expect(t, http.StatusNoContent)
	const base = "repos/alice/proj/issues"
	for i := 1; i <= 4; i++ {
		e.Do("POST", base, map[string]any{"title": fmt.Sprintf("issue %d", i)}, ac).Expect(t, http.StatusCreated)
	}
	pinned := func() string {
		var list []*models.Issue
		e.Do("GET", base+"/pinned", nil, nil).Expect(t, http.StatusOK).JSON(t, &list)
		var parts []string
		for _, is := range list {
			parts = append(parts, fmt.Sprintf("%d@%d", is.Index, is.PinOrder))
		}
		return strings.Join(parts, ",")
	}
	if got := pinned(); got != "" {
		t.Fatalf("pinned %q", got)
	}
	e.Do("POST", base+"/2/pin", nil, bc).Expect(t, http.StatusForbidden) // a writer, not an admin
	e.Do("POST", base+"/2/pin", nil, nil).Expect(t, http.StatusUnauthorized)
	e.Do("POST", base+"/9/pin", nil, ac).Expect(t, http.StatusNotFound)
	for _, n := range []int{2, 3, 1} {
		e.Do("POST", fmt.Sprintf("%s/%d/pin", base, n), nil, ac).Expect(t, http.StatusNoContent)
	}
	e.Do("POST", base+"/2/pin", nil, ac).Expect(t, http.StatusNoContent) // already pinned
	if got := pinned(); got != "2@1,3@2,1@3" {
		t.Fatalf("pinned %q", got)
	}
	e.Do("POST", base+"/4/pin", nil, ac).Expect(t, http.StatusBadRequest) // the limit
	e.Do("PATCH", base+"/1/pin/1", nil, ac).Expect(t, http.StatusNoContent)
	if got := pinned(); got != "1@1,2@2,3@3" {
		t.Fatalf("after move to 1: %q", got)
	}
	e.Do("PATCH", base+"/1/pin/9", nil, ac).Expect(t, http.StatusNoContent)
	if got := pinned(); got != "2@1,3@2,1@3" {
		t.Fatalf("after move past the end: %q", got)
	}
	e.Do("PATCH", base+"/1/pin/0", nil, ac).Expect(t, http.StatusUnprocessableEntity)
	e.Do("DELETE", base+"/3/pin", nil, ac).Expect(t, http.StatusNoContent)
	e.Do("DELETE", base+"/3/pin", nil, ac).Expect(t, http.StatusNoContent)
	if got := pinned(); got != "2@1,1@2" {
		t.Fatalf("after unpin: %q", got)
	}
	var is models.Issue
	e.Do("GET", base+"/1", nil, nil).Expect(t, http.StatusOK).JSON(t, &is)
	if is.PinOrder != 2 {
		t.Fatalf("pin_order %d", is.PinOrder)
	}

	// A pull request is pinned in its own list.
	e.Do("POST", "repos/alice/proj/branches", map[string]any{"new_branch_name": "topic"}, ac).Expect(t, http.StatusCreated)
	e.Do("POST", "repos/alice/proj/contents/x.txt", map[string]any{"content": "eA==", "branch": "topic"}, ac).Expect(t, http.StatusCreated)
	var pr models.PullRequest
	e.Do("POST", "repos/alice/proj/pulls", map[string]any{"title": "pr", "head": "topic", "base": "main"}, ac).Expect(t, http.StatusCreated).JSON(t, &pr)
	e.Do("POST", fmt.Sprintf("%s/%d/pin", base, pr.Index), nil, ac).Expect(t, http.StatusNoContent)
	var pulls []*models.PullRequest
	e.Do("GET", "repos/alice/proj/pulls/pinned", nil, nil).Expect(t, http.StatusOK).JSON(t, &pulls)
	if len(pulls) != 1 || pulls[0].Index != pr.Index || pulls[0].PinOrder != 1 {
		t.Fatalf("pinned pulls %+v", pulls)
	}
	if got := pinned(); got != "2@1,1@2" {
		t.Fatalf("pinned issues with a pinned pull: %q", got)
	}
	e.Do("GET", "repos/alice/nope/issues/pinned", nil, nil).Expect(t, http.StatusNotFound)

	// Review requests and reviews show in the pull request's timeline.
	pulls2 := fmt.Sprintf("repos/alice/proj/pulls/%d", pr.Index)
	e.Do("POST", pulls2+"/requested_reviewers", map[string]any{"reviewers": []string{"bob"}}, ac).Expect(t, http.StatusCreated)
	e.Do("DELETE", pulls2+"/requested_reviewers", map[string]any{"reviewers": []string{"bob"}}, ac).Expect(t, http.StatusNoContent)
	e.Do("POST", pulls2+"/requested_reviewers", map[string]any{"reviewers": []string{"bob"}}, ac).Expect(t, http.StatusCreated)
	var rv models.PullReview
	e.Do("POST", pulls2+"/reviews", map[string]any{"event": "COMMENT", "body": "looks fine"}, bc).Expect(t, http.StatusOK).JSON(t, &rv)
	var tl []*models.TimelineComment
	e.Do("GET", fmt.Sprintf("%s/%d/timeline", base, pr.Index), nil, nil).Expect(t, http.StatusOK).JSON(t, &tl)
	if got := timelineTypes(tl); got != "pin,review_request:bob:false,review_request:bob:true,review_request:bob:false,review:looks fine" {
		t.Fatalf("pull request timeline %s", got)
	}
	if tl[len(tl)-1].ReviewID != rv.ID || tl[len(tl)-1].User.UserName != "bob" || !strings.HasSuffix(tl[0].PullRequestURL, fmt.Sprintf("/pulls/%d", pr.Index)) {
		t.Fatalf("review entry %+v", tl[len(tl)-1])
	}

	// A pull request that depends on an open issue is not merged until
	// the issue closes.
	e.Do("POST", fmt.Sprintf("%s/%d/dependencies", base, pr.Index), map[string]any{"index": 4}, ac).Expect(t, http.StatusCreated)
	e.Do("POST", pulls2+"/merge", map[string]any{"Do": "merge"}, ac).Expect(t, http.StatusUnprocessableEntity)
	e.Do("PATCH", base+"/4", map[string]any{"state": "closed"}, ac).Expect(t, http.StatusCreated)
	e.Do("POST", pulls2+"/merge", map[string]any{"Do": "merge"}, ac).Expect(t, http.StatusOK)
}

// TestIssueLocking: a locked issue refuses a reader's comment but not a
// writer's; only writers lock and unlock.
func TestIssueLocking(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	alice, bob, carol := e.CreateUser("alice", false), e.CreateUser("bob", false), e.CreateUser("carol", false)
	ac, bc, cc := apitest.Basic(alice), apitest.Basic(bob), apitest.Basic(carol)
	e.Do("POST", "user/repos", map[string]any{"name": "proj"}, ac).Expect(t, http.StatusCreated)
	e.Do("PUT", "repos/alice/proj/collaborators/bob", map[string]any{"permission": "write"}, ac).Expect(t, http.StatusNoContent)
	const base = "repos/alice/proj/issues"
	e.Do("POST", base, map[string]any{"title": "talk"}, cc).Expect(t, http.StatusCreated)
	e.Do("PUT", base+"/1/lock", map[string]any{"lock_reason": "Spam"}, cc).Expect(t, http.StatusForbidden) // the poster, a reader
	e.Do("PUT", base+"/1/lock", nil, nil).Expect(t, http.StatusUnauthorized)
	e.Do("PUT", base+"/9/lock", nil, bc).Expect(t, http.StatusNotFound)
	e.Do("PUT", base+"/1/lock", map[string]any{"lock_reason": "Spam"}, bc).Expect(t, http.StatusNoContent)
	e.Do("PUT", base+"/1/lock", map[string]any{"lock_reason": "Spam"}, bc).Expect(t, http.StatusNoContent) // already locked
	var is models.Issue
	e.Do("GET", base+"/1", nil, nil).Expect(t, http.StatusOK).JSON(t, &is)
	if !is.IsLocked {
		t.Fatal("issue not locked")
	}
	e.Do("POST", base+"/1/comments", map[string]any{"body": "me too"}, cc).Expect(t, http.StatusForbidden)
	e.Do("POST", base+"/1/comments", map[string]any{"body": "calm down"}, bc).Expect(t, http.StatusCreated)
	e.Do("DELETE", base+"/1/lock", nil, cc).Expect(t, http.StatusForbidden)
	e.Do("DELETE", base+"/1/lock", nil, ac).Expect(t, http.StatusNoContent)
	e.Do("POST", base+"/1/comments", map[string]any{"body": "thanks"}, cc).Expect(t, http.StatusCreated)
	var list []*models.TimelineComment
	e.Do("GET", base+"/1/timeline", nil, nil).Expect(t, http.StatusOK).JSON(t, &list)
	if got := timelineTypes(list); got != "lock:Spam,comment:calm down,unlock,comment:thanks" {
		t.Fatalf("timeline %s", got)
	}
}

// TestIssueDependencies: dependencies block closing (and merging) until
// they close, across repositories, and a private repository's issue stays
// invisible to those who cannot see it.
func TestIssueDependencies(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	alice, bob := e.CreateUser("alice", false), e.CreateUser("bob", false)
	ac, bc := apitest.Basic(alice), apitest.Basic(bob)
	e.Do("POST", "user/repos", map[string]any{"name": "proj"}, ac).Expect(t, http.StatusCreated)
	e.Do("POST", "user/repos", map[string]any{"name": "secret", "private": true}, ac).Expect(t, http.StatusCreated)
	const base = "repos/alice/proj/issues"
	for _, title := range []string{"app", "lib", "docs"} {
		e.Do("POST", base, map[string]any{"title": title}, ac).Expect(t, http.StatusCreated)
	}
	e.Do("POST", "repos/alice/secret/issues", map[string]any{"title": "hidden"}, ac).Expect(t, http.StatusCreated)

	// #1 depends on #2; #3 is made to depend on #1 through blocks.
	var got models.Issue
	e.Do("POST", base+"/1/dependencies", map[string]any{"owner": "alice", "repo": "proj", "index": 2}, ac).Expect(t, http.StatusCreated).JSON(t, &got)
	if got.Index != 1 {
		t.Fatalf("answered #%d", got.Index)
	}
	e.Do("POST", base+"/1/dependencies", map[string]any{"owner": "alice", "repo": "proj", "index": 2}, ac).Expect(t, http.StatusCreated)
	e.Do("POST", base+"/1/blocks", map[string]any{"owner": "alice", "repo": "proj", "index": 3}, ac).Expect(t, http.StatusCreated).JSON(t, &got)
	if got.Index != 1 {
		t.Fatalf("answered #%d", got.Index)
	}
	e.Do("POST", base+"/2/dependencies", map[string]any{"owner": "alice", "repo": "proj", "index": 1}, ac).Expect(t, http.StatusUnprocessableEntity) // a cycle
	e.Do("POST", base+"/1/dependencies", map[string]any{"owner": "alice", "repo": "proj", "index": 1}, ac).Expect(t, http.StatusUnprocessableEntity)
	e.Do("POST", base+"/1/dependencies", map[string]any{"owner": "alice", "repo": "proj", "index": 42}, ac).Expect(t, http.StatusNotFound)
	e.Do("POST", base+"/1/dependencies", map[string]any{"owner": "alice", "repo": "proj", "index": 2}, bc).Expect(t, http.StatusNotFound) // bob cannot write
	e.Do("POST", base+"/x/dependencies", map[string]any{"owner": "alice", "repo": "proj", "index": 2}, ac).Expect(t, http.StatusNotFound)
	// A dependency in alice's private repository.
	e.Do("POST", base+"/1/dependencies", map[string]any{"owner": "alice", "repo": "secret", "index": 1}, ac).Expect(t, http.StatusCreated)

	indexes := func(cred apitest.Cred, path string) string {
		var list []*models.Issue
		r := e.Do("GET", path, nil, cred).Expect(t, http.StatusOK)
		r.JSON(t, &list)
		var parts []string
		for _, is := range list {
			parts = append(parts, fmt.Sprintf("%s#%d", is.Repository.Name, is.Index))
		}
		if r.Header.Get("X-Total-Count") != fmt.Sprint(len(list)) {
			t.Fatalf("%s: X-Total-Count %q for %d", path, r.Header.Get("X-Total-Count"), len(list))
		}
		return strings.Join(parts, ",")
	}
	if s := indexes(ac, base+"/1/dependencies"); s != "proj#2,secret#1" {
		t.Fatalf("alice sees dependencies %s", s)
	}
	if s := indexes(bc, base+"/1/dependencies"); s != "proj#2" {
		t.Fatalf("bob sees dependencies %s", s)
	}
	if s := indexes(nil, base+"/1/blocks"); s != "proj#3" {
		t.Fatalf("blocks %s", s)
	}
	if s := indexes(nil, base+"/2/blocks"); s != "proj#1" {
		t.Fatalf("blocks of #2 %s", s)
	}
	// Bob cannot name the private issue, as if it did not exist.
	e.Do("GET", "repos/alice/secret/issues/1/blocks", nil, bc).Expect(t, http.StatusNotFound)
	var tl []*models.TimelineComment
	e.Do("GET", base+"/1/timeline", nil, bc).Expect(t, http.StatusOK).JSON(t, &tl)
	if s := timelineTypes(tl); s != "add_dependency:#2,add_dependency:#3,add_dependency:hidden" {
		t.Fatalf("bob's timeline %s", s)
	}

	// Closing #1 is refused while #2 or the secret issue is open.
	e.Do("PATCH", base+"/1", map[string]any{"state": "closed"}, ac).Expect(t, http.StatusPreconditionFailed)
	e.Do("PATCH", base+"/2", map[string]any{"state": "closed"}, ac).Expect(t, http.StatusCreated)
	e.Do("PATCH", base+"/1", map[string]any{"state": "closed"}, ac).Expect(t, http.StatusPreconditionFailed)
	e.Do("DELETE", base+"/1/dependencies", map[string]any{"owner": "alice", "repo": "secret", "index": 1}, ac).Expect(t, http.StatusOK)
	e.Do("PATCH", base+"/1", map[string]any{"state": "closed"}, ac).Expect(t, http.StatusCreated)
	var is models.Issue
	e.Do("GET", base+"/1", nil, ac).Expect(t, http.StatusOK).JSON(t, &is)
	if is.State != "closed" {
		t.Fatalf("state %s", is.State)
	}
	// Removing through blocks.
	e.Do("DELETE", base+"/1/blocks", map[string]any{"owner": "alice", "repo": "proj", "index": 3}, ac).Expect(t, http.StatusOK)
	if s := indexes(nil, base+"/1/blocks"); s != "" {
		t.Fatalf("blocks after removal %s", s)
	}
	e.Do("GET", "repos/alice/secret/issues/1/timeline", nil, ac).Expect(t, http.StatusOK).JSON(t, &tl)
	if s := timelineTypes(tl); s != "add_dependency:#1,remove_dependency:#1" {
		t.Fatalf("secret timeline %s", s)
	}

	// A repository without dependencies has none to list or add.
	e.Do("PATCH", "repos/alice/proj", map[string]any{"internal_tracker": map[string]any{"enable_issue_dependencies": false, "enable_time_tracker": true}}, ac).Expect(t, http.StatusOK)
	e.Do("GET", base+"/1/dependencies", nil, ac).Expect(t, http.StatusNotFound)
	e.Do("POST", base+"/3/dependencies", map[string]any{"owner": "alice", "repo": "proj", "index": 2}, ac).Expect(t, http.StatusNotFound)
}
