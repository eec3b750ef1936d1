package apitest_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"repohost/apitest"
	"repohost/models"
)

// refActions are "type:action" of the reference entries on issue index of
// alice/proj.
func (p *prEnv) refActions(t *testing.T, index int64) string {
	t.Helper()
	var out []string
	for _, c := range refEntries(t, p.e, fmt.Sprintf("repos/alice/proj/issues/%d", index), apitest.Basic(p.alice)) {
		out = append(out, c.Type+":"+c.RefAction)
	}
	return strings.Join(out, ",")
}

func (p *prEnv) issueState(t *testing.T, index int64) string {
	t.Helper()
	var is models.Issue
	p.e.Do("GET", fmt.Sprintf("repos/alice/proj/issues/%d", index), nil, apitest.Basic(p.alice)).Expect(t, http.StatusOK).JSON(t, &is)
	return is.State
}

// TestClosingKeywords: a pull request's keywords ("Fixes #1", "reopens
// #2") record closes/reopens on the reference entries (an issue's own
// keywords record none), an edit that drops a reference neuters its entry,
// the merge closes and reopens what the remaining references ask, and a
// commit pushed to the default branch with "Closes #N" closes that issue.
func TestClosingKeywords(t *testing.T) {
	t.Parallel()
	p := newPREnv(t, nil)
	ac := apitest.Basic(p.alice)
	const base = "repos/alice/proj/issues"
	p.e.Do("POST", base, map[string]any{"title": "bug"}, ac).Expect(t, http.StatusCreated)                              // #1
	p.e.Do("POST", base, map[string]any{"title": "old", "closed": true}, ac).Expect(t, http.StatusCreated)              // #2
	p.e.Do("POST", base, map[string]any{"title": "plain"}, ac).Expect(t, http.StatusCreated)                            // #3
	p.e.Do("POST", base, map[string]any{"title": "dropped"}, ac).Expect(t, http.StatusCreated)                          // #4
	p.e.Do("POST", base, map[string]any{"title": "by an issue", "body": "closes #3"}, ac).Expect(t, http.StatusCreated) // #5
	if got := p.refActions(t, 3); got != "issue_ref:none" {
		t.Fatalf("#3 named by an issue: %s", got)
	}

	p.branch(t, "feat", "main", "feat.txt", "x\n")
	var pr models.PullRequest
	p.e.Do("POST", "repos/alice/proj/pulls", map[string]any{"head": "feat", "base": "main", "title": "Feature",
		"body": "Fixes #1\nReopens: #2\nresolves #4\nsee #3"}, ac).Expect(t, http.StatusCreated).JSON(t, &pr) // #6
	for index, want := range map[int64]string{1: "pull_ref:closes", 2: "pull_ref:reopens", 3: "issue_ref:none,pull_ref:none", 4: "pull_ref:closes"} {
		if got := p.refActions(t, index); got != want {
			t.Fatalf("#%d after the pull request: %s, want %s", index, got, want)
		}
	}
	// The edit drops #4: its entry is neutered, and the merge leaves it open.
	p.e.Do("PATCH", fmt.Sprintf("repos/alice/proj/pulls/%d", pr.Index), map[string]any{"body": "Fixes #1\nReopens: #2\nsee #3"}, ac).
		Expect(t, http.StatusCreated)
	if got := p.refActions(t, 4); got != "pull_ref:neutered" {
		t.Fatalf("#4 after the edit: %s", got)
	}
	p.e.Do("POST", fmt.Sprintf("repos/alice/proj/pulls/%d/merge", pr.Index), map[string]any{"Do": "merge"}, ac).Expect(t, http.StatusOK)
	for index, want := range map[int64]string{1: "closed", 2: "open", 3: "open", 4: "open"} {
		if got := p.issueState(t, index); got != want {
			t.Fatalf("#%d after the merge: %s, want %s", index, got, want)
		}
	}

	// A commit on the default branch closes #3; one on another branch
	// does not close #4.
	p.git.must(p.clone, "fetch", "-q", "origin")
	p.git.must(p.clone, "checkout", "-q", "-B", "side", "origin/main")
	p.git.commitFile(p.clone, "side.txt", "s\n", "Closes #4")
	p.git.must(p.clone, "push", "-q", "origin", "side")
	p.git.must(p.clone, "checkout", "-q", "-B", "main", "origin/main")
	p.git.commitFile(p.clone, "fix.txt", "f\n", "Closes #3")
	p.git.must(p.clone, "push", "-q", "origin", "main")
	waitFor(t, func() bool { return p.issueState(t, 3) == "closed" })
	waitFor(t, func() bool { return len(p.timelineOf(t, 4, "commit_ref")) == 1 })
	if got := p.issueState(t, 4); got != "open" {
		t.Fatalf("#4 after a commit on another branch: %s", got)
	}
}
