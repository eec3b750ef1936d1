package apitest_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"repohost/apitest"
	"repohost/models"
)

// timelineOf is the entries of issue index's timeline of alice/proj of the
// given type.
func (p *prEnv) timelineOf(t *testing.T, index int64, typ string) []*models.TimelineComment {
	t.Helper()
	var list, out []*models.TimelineComment
	p.e.Do("GET", fmt.Sprintf("repos/alice/proj/issues/%d/timeline", index), nil, apitest.Basic(p.alice)).Expect(t, http.StatusOK).JSON(t, &list)
	for _, c := range list {
		if c.Type == typ {
			out = append(out, c)
		}
	}
	return out
}

// TestTimelinePullPush: each push to a pull request's head adds one
// pull_push entry listing the commits it brought, or on a force push the
// old and the new head.
func TestTimelinePullPush(t *testing.T) {
	t.Parallel()
	p := newPREnv(t, nil)
	first := p.branch(t, "feature", "main", "f.txt", "feature\n")
	p.openPR(t, p.cred, "feature", "main", "Add f")
	if got := p.timelineOf(t, 1, "pull_push"); len(got) != 0 {
		t.Fatalf("pull_push before any push: %+v", got)
	}
	second := p.push(t, "feature", "g.txt", "more\n")
	third := p.push(t, "feature", "h.txt", "more\n")
	waitFor(t, func() bool { return len(p.timelineOf(t, 1, "pull_push")) == 2 })

	// A force push: feature rewritten from main.
	p.git.must(p.clone, "checkout", "-q", "-B", "feature", "origin/main")
	forced := p.git.commitFile(p.clone, "x.txt", "other\n", "rewrite feature")
	p.git.must(p.clone, "push", "-q", "--force", "origin", "feature")
	waitFor(t, func() bool { return len(p.timelineOf(t, 1, "pull_push")) == 3 })

	got := p.timelineOf(t, 1, "pull_push")
	want := []string{
		fmt.Sprintf(`{"is_force_push":false,"commit_ids":[%q]}`, second),
		fmt.Sprintf(`{"is_force_push":false,"commit_ids":[%q]}`, third),
		fmt.Sprintf(`{"is_force_push":true,"commit_ids":[%q,%q]}`, third, forced),
	}
	for i, c := range got {
		if c.Body != want[i] || c.User == nil || c.User.UserName != "alice" || !strings.HasSuffix(c.PullRequestURL, "/pulls/1") {
			t.Fatalf("pull_push %d: body %s user %+v, want %s", i, c.Body, c.User, want[i])
		}
	}
	_ = first
	if pr := p.getPR(t, 1); pr.Head.Sha != forced {
		t.Fatalf("head %s, want %s", pr.Head.Sha, forced)
	}
}

// TestTimelineCommitRef: a pushed commit whose message names an issue
// gives that issue one commit_ref entry with the commit, however many
// branches bring it; a mention of an issue the pusher cannot read records
// nothing.
func TestTimelineCommitRef(t *testing.T) {
	t.Parallel()
	p := newPREnv(t, nil)
	ac := apitest.Basic(p.alice)
	p.e.Do("POST", "repos/alice/proj/issues", map[string]any{"title": "bug"}, ac).Expect(t, http.StatusCreated)
	bob := p.e.CreateUser("bob", false)
	bc := apitest.Basic(bob)
	p.e.Do("POST", "user/repos", map[string]any{"name": "secret", "private": true}, bc).Expect(t, http.StatusCreated)
	p.e.Do("POST", "repos/bob/secret/issues", map[string]any{"title": "hidden"}, bc).Expect(t, http.StatusCreated)

	p.git.must(p.clone, "checkout", "-q", "-B", "one", "origin/main")
	sha := p.git.commitFile(p.clone, "fix.txt", "fixed\n", "Fixes #1, see bob/secret#1 and #99")
	p.git.must(p.clone, "push", "-q", "origin", "one")
	waitFor(t, func() bool { return len(p.timelineOf(t, 1, "commit_ref")) == 1 })
	// The same commit on a second branch, then a later commit on it.
	p.git.must(p.clone, "push", "-q", "origin", "one:two")
	p.git.commitFile(p.clone, "more.txt", "more\n", "Nothing to see")
	p.git.must(p.clone, "push", "-q", "origin", "one")
	// A marker commit after both: once it is in, the earlier pushes were
	// handled too (the consumer takes the repository's changes in order).
	p.e.Do("POST", "repos/alice/proj/issues", map[string]any{"title": "marker"}, ac).Expect(t, http.StatusCreated)
	p.git.commitFile(p.clone, "mark.txt", "m\n", "for #2")
	p.git.must(p.clone, "push", "-q", "origin", "one:two")
	waitFor(t, func() bool { return len(p.timelineOf(t, 2, "commit_ref")) == 1 })

	got := p.timelineOf(t, 1, "commit_ref")
	if len(got) != 1 {
		t.Fatalf("commit_ref entries %d, want 1", len(got))
	}
	c := got[0]
	if c.RefCommitSha != sha || c.User == nil || c.User.UserName != "alice" ||
		c.Body != fmt.Sprintf(`<a href="/alice/proj/commit/%s">Fixes #1, see bob/secret#1 and #99</a>`, sha) {
		t.Fatalf("commit_ref %+v", c)
	}
	var hidden []*models.TimelineComment
	p.e.Do("GET", "repos/bob/secret/issues/1/timeline", nil, bc).Expect(t, http.StatusOK).JSON(t, &hidden)
	for _, h := range hidden {
		if h.Type == "commit_ref" {
			t.Fatalf("a commit of a user who cannot read bob/secret referred to its issue: %+v", h)
		}
	}
}

// TestTimelineIssueRef: an issue or comment naming another issue gives it
// one entry pointing back (issue_ref, comment_ref), also after an edit
// names it again; a reference the actor cannot read records nothing, and
// a reference from an issue the viewer cannot read is not shown.
func TestTimelineIssueRef(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	alice := e.CreateUser("alice", false)
	bob := e.CreateUser("bob", false)
	ac, bc := apitest.Basic(alice), apitest.Basic(bob)
	e.Do("POST", "user/repos", map[string]any{"name": "proj"}, ac).Expect(t, http.StatusCreated)
	e.Do("POST", "user/repos", map[string]any{"name": "secret", "private": true}, bc).Expect(t, http.StatusCreated)
	e.Do("POST", "repos/bob/secret/issues", map[string]any{"title": "hidden"}, bc).Expect(t, http.StatusCreated)
	const base = "repos/alice/proj/issues"
	e.Do("POST", base, map[string]any{"title": "target"}, ac).Expect(t, http.StatusCreated)
	// alice cannot read bob/secret: nothing is recorded there.
	e.Do("POST", base, map[string]any{"title": "second", "body": "relates to #1 and bob/secret#1 and #2"}, ac).Expect(t, http.StatusCreated)
	var c models.Comment
	e.Do("POST", base+"/2/comments", map[string]any{"body": "again #1"}, ac).Expect(t, http.StatusCreated).JSON(t, &c)
	e.Do("PATCH", fmt.Sprintf("%s/comments/%d", base, c.ID), map[string]any{"body": "still #1"}, ac).Expect(t, http.StatusOK)
	e.Do("PATCH", base+"/2", map[string]any{"body": "now only alice/proj#1"}, ac).Expect(t, http.StatusCreated)
	// bob refers to alice's issue from his private repository.
	e.Do("POST", "repos/bob/secret/issues/1/comments", map[string]any{"body": "see alice/proj#1"}, bc).Expect(t, http.StatusCreated)

	var list []*models.TimelineComment
	e.Do("GET", base+"/1/timeline", nil, ac).Expect(t, http.StatusOK).JSON(t, &list)
	var got []string
	for _, tc := range list {
		if tc.RefIssue == nil || tc.User == nil {
			t.Fatalf("entry %+v", tc)
		}
		s := fmt.Sprintf("%s:%s#%d", tc.Type, tc.RefIssue.Repository.FullName, tc.RefIssue.Index)
		if tc.RefComment != nil {
			s += fmt.Sprintf(":%d", tc.RefComment.ID)
		}
		got = append(got, s)
	}
	if want := fmt.Sprintf("issue_ref:alice/proj#2,comment_ref:alice/proj#2:%d", c.ID); strings.Join(got, ",") != want {
		t.Fatalf("timeline for alice\n got %s\nwant %s", strings.Join(got, ","), want)
	}
	// bob reads his own repository: he sees his comment's reference too.
	e.Do("GET", base+"/1/timeline", nil, bc).Expect(t, http.StatusOK).JSON(t, &list)
	if len(list) != 3 || list[2].Type != "comment_ref" || list[2].RefIssue.Repository.FullName != "bob/secret" {
		t.Fatalf("timeline for bob %d entries", len(list))
	}
	var hidden []*models.TimelineComment
	e.Do("GET", "repos/bob/secret/issues/1/timeline", nil, bc).Expect(t, http.StatusOK).JSON(t, &hidden)
	for _, h := range hidden {
		if h.Type != "comment" {
			t.Fatalf("bob/secret#1 got %s from a user who cannot read it", h.Type)
		}
	}
}
