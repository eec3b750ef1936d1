package apitest_test

import (
	"fmt"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"repohost/apitest"
	"repohost/models"
)

// TestPullMergeConcurrency: two merges of one pull request at once give one
// merge; a merge racing a push to the base gives a correct result or a
// 409, never a lost commit.
func TestPullMergeConcurrency(t *testing.T) {
	t.Parallel()
	p := newPREnv(t, nil)
	p.branch(t, "twice", "main", "twice.txt", "x\n")
	pr := p.openPR(t, p.cred, "twice", "main", "Twice")
	before := p.originMain(t)
	codes := make([]int, 4)
	var wg sync.WaitGroup
	for i := range codes {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			r := p.e.DoFor(t, "POST", fmt.Sprintf("repos/alice/proj/pulls/%d/merge", pr.Index), map[string]any{"Do": "merge"}, p.cred)
			codes[i] = r.Status
		}(i)
	}
	wg.Wait()
	ok := 0
	for _, c := range codes {
		switch c {
		case http.StatusOK:
			ok++
		case http.StatusMethodNotAllowed, http.StatusConflict:
		default:
			t.Fatalf("concurrent merge answered %d (%v)", c, codes)
		}
	}
	after := p.originMain(t)
	if n := strings.TrimSpace(p.git.must(p.clone, "rev-list", "--count", "--merges", before+".."+after)); ok != 1 || n != "1" {
		t.Fatalf("concurrent merges: %d succeeded (%v), %q merges on main: %s", ok, codes, n,
			p.git.must(p.clone, "log", "--graph", "--format=%H %s", before+".."+after))
	}

	// A merge racing a push to main.
	for round := 0; round < 3; round++ {
		branch := fmt.Sprintf("race-%d", round)
		p.branch(t, branch, "main", branch+".txt", "r\n")
		pr := p.openPR(t, p.cred, branch, "main", "Race "+branch)
		p.git.must(p.clone, "fetch", "-q", "origin")
		p.git.must(p.clone, "checkout", "-q", "-B", "main", "origin/main")
		pushed := p.git.commitFile(p.clone, fmt.Sprintf("push-%d.txt", round), "p\n", "racing push")
		var mergeCode int
		var pushErr error
		var wg sync.WaitGroup
		wg.Add(2)
		go func() {
			defer wg.Done()
			mergeCode = p.e.DoFor(t, "POST", fmt.Sprintf("repos/alice/proj/pulls/%d/merge", pr.Index), map[string]any{"Do": "merge"}, p.cred).Status
		}()
		go func() {
			defer wg.Done()
			_, pushErr = p.git.run(p.clone, "push", "-q", "origin", "main")
		}()
		wg.Wait()
		main := p.originMain(t)
		if pushErr == nil && !isAncestor(p, pushed, main) {
			t.Fatalf("round %d: the pushed commit %s was lost from main %s (merge %d)", round, pushed, main, mergeCode)
		}
		switch mergeCode {
		case http.StatusOK:
			if !isAncestor(p, pr.Head.Sha, main) {
				t.Fatalf("round %d: merged, but main %s lacks the head", round, main)
			}
		case http.StatusConflict:
		default:
			t.Fatalf("round %d: merge answered %d", round, mergeCode)
		}
	}
	isCheckCounters(t, p.e)
}

func isAncestor(p *prEnv, a, b string) bool {
	_, err := p.git.run(p.clone, "merge-base", "--is-ancestor", a, b)
	return err == nil
}

// TestPullListStatementCountIsFixed: the pull request list runs as many
// statements for one pull request as for a page of ten, each with labels,
// assignees, requested reviewers and a review.
func TestPullListStatementCountIsFixed(t *testing.T) {
	t.Parallel()
	p := newPREnv(t, nil)
	admin := apitest.Basic(p.alice)
	bob := p.e.CreateUser("bob", false)
	p.e.Do("PUT", "repos/alice/proj/collaborators/bob", map[string]any{"permission": "write"}, admin).Expect(t, http.StatusNoContent)
	var label models.Label
	p.e.Do("POST", "repos/alice/proj/labels", map[string]any{"name": "bug", "color": "#ff0000"}, admin).Expect(t, http.StatusCreated).JSON(t, &label)
	for i := 0; i < 10; i++ {
		branch := fmt.Sprintf("f%d", i)
		p.branch(t, branch, "main", branch+".txt", "x\n")
		var pr models.PullRequest
		p.e.Do("POST", "repos/alice/proj/pulls", map[string]any{"head": branch, "base": "main", "title": "PR " + branch,
			"labels": []int64{label.ID}, "assignees": []string{"bob"}, "reviewers": []string{"bob"}}, admin).
			Expect(t, http.StatusCreated).JSON(t, &pr)
		if len(pr.RequestedReviewers) != 1 || len(pr.Labels) != 1 || len(pr.Assignees) != 1 {
			t.Fatalf("created %+v", pr)
		}
		p.e.Do("POST", fmt.Sprintf("repos/alice/proj/pulls/%d/reviews", pr.Index), map[string]any{"event": "COMMENT", "body": "hm"},
			apitest.Basic(bob)).Expect(t, http.StatusOK)
	}
	counts := map[int]int64{}
	for _, limit := range []int{1, 10} {
		before := p.e.Statements()
		var page []*models.PullRequest
		p.e.Do("GET", fmt.Sprintf("repos/alice/proj/pulls?limit=%d", limit), nil, admin).Expect(t, http.StatusOK).JSON(t, &page)
		counts[limit] = p.e.Statements() - before
		if len(page) != limit || len(page[0].Labels) != 1 || page[0].Head == nil || page[0].Head.Repo == nil {
			t.Fatalf("limit %d: %d pull requests", limit, len(page))
		}
	}
	if counts[1] != counts[10] {
		t.Fatalf("statements for a page of 1: %d, of 10: %d", counts[1], counts[10])
	}
	t.Logf("pull request list: %d statements per page", counts[10])
	isCheckCounters(t, p.e)
}

// TestPullMergeTiming measures (never asserts) the time to merge a pull
// request: 20 pull requests, each merged with Do=merge, median printed.
// Run: REPOHOST_MEASURE=1 go test ./apitest -run TestPullMergeTiming -v
func TestPullMergeTiming(t *testing.T) {
	if os.Getenv("REPOHOST_MEASURE") == "" {
		t.Skip("a measurement: set REPOHOST_MEASURE=1")
	}
	p := newPREnv(t, nil)
	var took []time.Duration
	for i := 0; i < 20; i++ {
		branch := fmt.Sprintf("t%d", i)
		p.branch(t, branch, "main", branch+".txt", "t\n")
		pr := p.openPR(t, p.cred, branch, "main", "Timing "+branch)
		start := time.Now()
		p.e.Do("POST", fmt.Sprintf("repos/alice/proj/pulls/%d/merge", pr.Index), map[string]any{"Do": "merge"}, p.cred).Expect(t, http.StatusOK)
		took = append(took, time.Since(start))
	}
	slices.Sort(took)
	t.Logf("merge of a pull request (%s): median %s, min %s, max %s over %d", apitest.Database(), (took[9]+took[10])/2, took[0], took[19], len(took))
}
