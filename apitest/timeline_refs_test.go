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
