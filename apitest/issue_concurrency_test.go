package apitest_test

import (
	"fmt"
	"net/http"
	"sort"
	"sync"
	"testing"

	"repohost/apitest"
	"repohost/models"
)

// isParallel runs fn(i) for i in [0, n) at once and waits for all.
func isParallel(n int, fn func(i int)) {
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			<-start
			fn(i)
		}(i)
	}
	close(start)
	wg.Wait()
}

// TestIssueConcurrentCreates: 60 parallel creates in one repository, and
// 10 in each of three others, all answer 201 with numbers that are dense
// and unique per repository; the counters match the rows.
func TestIssueConcurrentCreates(t *testing.T) {
	t.Parallel()
	w := isSetup(t)
	e, a := w.e, apitest.Basic(w.alice)
	var ms models.Milestone
	e.Do("POST", "repos/alice/pub/milestones", map[string]any{"title": "m"}, a).Expect(t, http.StatusCreated).JSON(t, &ms)
	isCreate(t, e, "alice/pub", a, map[string]any{"title": "before"}) // number 1
	const n = 60
	repos := []string{"alice/priv", "acme/tool"}
	type result struct {
		repo   string
		status int
		number int64
	}
	results := make([]result, n+10*len(repos))
	isParallel(len(results), func(i int) {
		repo, body := "alice/pub", map[string]any{"title": fmt.Sprintf("parallel %d", i), "milestone": ms.ID, "closed": i%3 == 0}
		if i >= n {
			repo, body = repos[(i-n)%len(repos)], map[string]any{"title": "other"}
		}
		r := e.DoFor(t, "POST", "repos/"+repo+"/issues", body, a)
		res := result{repo: repo, status: r.Status}
		if r.Status == http.StatusCreated {
			var is models.Issue
			r.JSON(t, &is)
			res.number = is.Index
		}
		results[i] = res
	})
	numbers := map[string][]int64{}
	for _, r := range results {
		if r.status != http.StatusCreated {
			t.Fatalf("a parallel create answered %d", r.status)
		}
		numbers[r.repo] = append(numbers[r.repo], r.number)
	}
	dense := func(repo string, from int64, count int) {
		got := numbers[repo]
		sort.Slice(got, func(i, j int) bool { return got[i] < got[j] })
		if len(got) != count {
			t.Fatalf("%s: %d numbers, want %d", repo, len(got), count)
		}
		for i, num := range got {
			if num != from+int64(i) {
				t.Fatalf("%s: numbers %v are not dense and unique from %d", repo, got, from)
			}
		}
	}
	dense("alice/pub", 2, n)
	for _, repo := range repos {
		dense(repo, 1, 10)
	}
	closed := 0
	for i := 0; i < n; i++ {
		if i%3 == 0 {
			closed++
		}
	}
	if r := isRepo(t, e, "alice/pub"); r.OpenIssues != int64(n+1-closed) {
		t.Errorf("open_issues_count %d, want %d", r.OpenIssues, n+1-closed)
	}
	var m models.Milestone
	e.Do("GET", fmt.Sprintf("repos/alice/pub/milestones/%d", ms.ID), nil, a).Expect(t, http.StatusOK).JSON(t, &m)
	if m.OpenIssues != int64(n-closed) || m.ClosedIssues != int64(closed) {
		t.Errorf("milestone counts %d open, %d closed; want %d, %d", m.OpenIssues, m.ClosedIssues, n-closed, closed)
	}
	isCheckCounters(t, e)
}

// TestIssueConcurrentStateAndComments: parallel closes, reopens, comments,
// comment deletions, milestone moves and creates on the same issues leave
// every counter equal to COUNT(*).
func TestIssueConcurrentStateAndComments(t *testing.T) {
	t.Parallel()
	w := isSetup(t)
	e, a := w.e, apitest.Basic(w.alice)
	var m1, m2 models.Milestone
	e.Do("POST", "repos/alice/pub/milestones", map[string]any{"title": "m1"}, a).Expect(t, http.StatusCreated).JSON(t, &m1)
	e.Do("POST", "repos/alice/pub/milestones", map[string]any{"title": "m2"}, a).Expect(t, http.StatusCreated).JSON(t, &m2)
	const issues = 5
	for i := 0; i < issues; i++ {
		isCreate(t, e, "alice/pub", a, map[string]any{"title": fmt.Sprintf("target %d", i), "milestone": m1.ID})
	}
	// Comments to delete later, concurrently with everything else.
	var doomed []int64
	for i := 0; i < 10; i++ {
		var c models.Comment
		e.Do("POST", fmt.Sprintf("repos/alice/pub/issues/%d/comments", i%issues+1), map[string]any{"body": "doomed"}, a).
			Expect(t, http.StatusCreated).JSON(t, &c)
		doomed = append(doomed, c.ID)
	}
	const ops = 120
	failures := make([]string, ops)
	isParallel(ops, func(i int) {
		index := i%issues + 1
		path := fmt.Sprintf("repos/alice/pub/issues/%d", index)
		var r *apitest.Response
		switch i % 6 {
		case 0:
			r = e.DoFor(t, "PATCH", path, map[string]any{"state": "closed"}, a)
		case 1:
			r = e.DoFor(t, "PATCH", path, map[string]any{"state": "open"}, a)
		case 2, 3:
			r = e.DoFor(t, "POST", path+"/comments", map[string]any{"body": fmt.Sprintf("comment %d", i)}, a)
		case 4:
			ms := m1.ID
			if i%4 == 0 {
				ms = m2.ID
			}
			r = e.DoFor(t, "PATCH", path, map[string]any{"milestone": ms, "state": "closed"}, a)
		case 5:
			if j := i / 6; j < len(doomed) {
				r = e.DoFor(t, "DELETE", fmt.Sprintf("repos/alice/pub/issues/comments/%d", doomed[j]), nil, a)
			} else {
				r = e.DoFor(t, "POST", "repos/alice/pub/issues", map[string]any{"title": "late", "milestone": m2.ID}, a)
			}
		}
		if r.Status >= 300 {
			failures[i] = fmt.Sprintf("op %d: %d %s", i, r.Status, r.Body)
		}
	})
	for _, f := range failures {
		if f != "" {
			t.Error(f)
		}
	}
	isCheckCounters(t, e)
	// Every comment made is counted on its issue.
	var total int64
	for i := 1; i <= issues; i++ {
		total += isGet(t, e, "alice/pub", int64(i), a).Comments
	}
	// Two ops in six comment; the doomed comments were all deleted again.
	if want := int64(ops / 6 * 2); total != want {
		t.Errorf("comments %d, want %d", total, want)
	}
}

// TestIssueConcurrentReactions: 50 identical parallel reactions of one user
// make exactly one row; exactly one request answers 201.
func TestIssueConcurrentReactions(t *testing.T) {
	t.Parallel()
	w := isSetup(t)
	e, a := w.e, apitest.Basic(w.alice)
	isCreate(t, e, "alice/pub", a, map[string]any{"title": "react"})
	const n = 50
	statuses := make([]int, n)
	isParallel(n, func(i int) {
		statuses[i] = e.DoFor(t, "POST", "repos/alice/pub/issues/1/reactions", map[string]any{"content": "rocket"}, a).Status
	})
	created := 0
	for _, s := range statuses {
		switch s {
		case http.StatusCreated:
			created++
		case http.StatusOK:
		default:
			t.Fatalf("a parallel reaction answered %d", s)
		}
	}
	if created != 1 {
		t.Fatalf("%d reactions answered 201, want 1", created)
	}
	var list []*models.Reaction
	e.Do("GET", "repos/alice/pub/issues/1/reactions", nil, a).Expect(t, http.StatusOK).JSON(t, &list)
	if len(list) != 1 {
		t.Fatalf("%d reactions stored, want 1", len(list))
	}
}

// TestIssueRollbackSkipsNoNumberTwice: a create that fails inside its
// transaction may use up a number but never hands one out twice, and it
// leaves the counters alone.
func TestIssueRollbackSkipsNoNumberTwice(t *testing.T) {
	t.Parallel()
	w := isSetup(t)
	e, a := w.e, apitest.Basic(w.alice)
	var pr models.Project
	e.Do("POST", "repos/alice/pub/projects", map[string]any{"title": "p"}, a).Expect(t, http.StatusCreated).JSON(t, &pr)
	isCreate(t, e, "alice/pub", a, map[string]any{"title": "1"})
	// Deleting the project while creates that name it run makes some of
	// them fail at the link insert, inside their transaction.
	const n = 20
	statuses := make([]int, n)
	isParallel(n, func(i int) {
		if i == n/2 {
			e.DoFor(t, "DELETE", fmt.Sprintf("repos/alice/pub/projects/%d", pr.ID), nil, a)
			return
		}
		statuses[i] = e.DoFor(t, "POST", "repos/alice/pub/issues", map[string]any{"title": "x", "projects": []int64{pr.ID}}, a).Status
	})
	for i, s := range statuses {
		if i != n/2 && s != http.StatusCreated && s != http.StatusUnprocessableEntity {
			t.Fatalf("create answered %d", s)
		}
	}
	next := isCreate(t, e, "alice/pub", a, map[string]any{"title": "after"})
	var all []*models.Issue
	e.Do("GET", "repos/alice/pub/issues?state=all&limit=50", nil, a).Expect(t, http.StatusOK).JSON(t, &all)
	seen := map[int64]bool{}
	for _, is := range all {
		if seen[is.Index] {
			t.Fatalf("number %d handed out twice", is.Index)
		}
		seen[is.Index] = true
		if is.Index > next.Index {
			t.Fatalf("number %d above the latest %d", is.Index, next.Index)
		}
	}
	isCheckCounters(t, e)
}
