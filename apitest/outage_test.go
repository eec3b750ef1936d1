package apitest_test

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"repohost/apitest"
	"repohost/models"
	"repohost/store"
)

// pgCluster is a PostgreSQL cluster of a test's own, made with
// scripts/pg-cluster.sh.
type pgCluster struct {
	script, dir, DSN string
}

// startPGCluster starts a cluster private to t, stopped and deleted when t
// ends. It skips t unless the suite runs on PostgreSQL with the binaries at
// hand.
func startPGCluster(t *testing.T) *pgCluster {
	t.Helper()
	if os.Getenv(apitest.PostgresEnv) == "" {
		t.Skip("a database outage is a PostgreSQL scenario: this test runs in the PostgreSQL pass (make test-postgres, scripts/with-postgres.sh)")
	}
	pgbin := os.Getenv("PGBIN")
	if pgbin == "" {
		pgbin = "/usr/lib/postgresql/15/bin"
	}
	for _, bin := range []string{"initdb", "pg_ctl", "postgres"} {
		if _, err := os.Stat(filepath.Join(pgbin, bin)); err != nil {
			t.Skipf("PostgreSQL binaries not found (%v); set PGBIN or install Debian's postgresql package", err)
		}
	}
	script, err := filepath.Abs("../scripts/pg-cluster.sh")
	if err != nil {
		t.Fatal(err)
	}
	// Under the directory scripts/with-postgres.sh stops everything in at
	// the end, so a test killed before its cleanup leaves no server
	// behind; under /tmp otherwise (the postgres user must reach it).
	parent := os.Getenv("REPOHOST_TEST_PG_DIR")
	if parent == "" {
		parent = "/tmp"
	}
	dir, err := os.MkdirTemp(parent, "outage.")
	if err != nil {
		t.Fatal(err)
	}
	c := &pgCluster{script: script, dir: dir}
	t.Cleanup(func() {
		if _, err := c.run("stop"); err != nil {
			t.Error(err)
		}
		_ = os.RemoveAll(dir)
	})
	out, err := c.run("start")
	if err != nil {
		t.Fatal(err)
	}
	c.DSN = strings.TrimSpace(out)
	return c
}

func (c *pgCluster) run(cmd string) (string, error) {
	var stdout, stderr bytes.Buffer
	x := exec.Command(c.script, cmd, c.dir)
	x.Stdout, x.Stderr = &stdout, &stderr
	if err := x.Run(); err != nil {
		return "", fmt.Errorf("pg-cluster.sh %s: %v\n%s", cmd, err, stderr.String())
	}
	return stdout.String(), nil
}

// workerTB lets a load goroutine use Env.DoFor: a fatal error is reported
// to the test and ends that goroutine only (FailNow belongs to the test's
// own goroutine).
type workerTB struct{ testing.TB }

func (w workerTB) Fatal(args ...any) { w.TB.Error(args...); runtime.Goexit() }
func (w workerTB) Fatalf(format string, args ...any) {
	w.TB.Errorf(format, args...)
	runtime.Goexit()
}

// outcome is what one create request got.
type outcome struct {
	title      string
	start, end time.Time
	status     int
	retryAfter string
	number     int64
	latency    time.Duration
	body       string
}

// TestOutageRestartUnderWriteLoad restarts PostgreSQL (pg_ctl restart -m
// fast, twice) while several clients create issues, and checks what clients
// were told against what the database holds afterwards:
//
//   - no request hangs: each answers within the retry budget and a margin;
//   - during the outage requests answer 503 with Retry-After, never 500;
//   - a write is reported failed only if it did not happen: every issue that
//     exists was answered 201 with its number, and every 201 exists;
//   - the counters are exact: num_issues is the number of issues, numbers
//     are dense from 1, the counter doctor finds no drift;
//   - the full-text issue index agrees with every issue's text.
//
// It runs on a cluster of its own, never the shared one the other
// packages' tests use at the same time.
func TestOutageRestartUnderWriteLoad(t *testing.T) {
	cluster := startPGCluster(t)
	// The harness takes its database from the environment. Setenv is safe
	// here: this test is not parallel, so no other test of this binary sets
	// itself up while it runs; the variable is restored when it ends.
	t.Setenv(apitest.PostgresEnv, cluster.DSN)
	e := apitest.New(t)
	admin := apitest.Basic(e.Admin)
	var repo models.Repository
	e.Do("POST", "user/repos", map[string]any{"name": "outage"}, admin).Expect(t, http.StatusCreated).JSON(t, &repo)
	path := "repos/" + e.Admin.User.Name + "/outage/issues"

	const (
		workers = 6
		// Load before the first restart, between restarts and after the
		// last. Two restarts: whether a request is between its commit and
		// its answer when the connections are cut is a matter of chance.
		before   = 1500 * time.Millisecond
		between  = time.Second
		after    = 2 * time.Second
		restarts = 2
		// Every request must answer within the store's retry budget
		// (sqlstore.DefaultCommittedRetry) and a margin.
		bound = 30 * time.Second
	)
	var (
		mu       sync.Mutex
		outcomes []outcome
		wg       sync.WaitGroup
		stop     = make(chan struct{})
	)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			tb := workerTB{t}
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				o := outcome{title: fmt.Sprintf("w%d-%d", w, i), start: time.Now()}
				r := e.DoFor(tb, "POST", path, map[string]any{"title": o.title}, admin)
				o.end = time.Now()
				o.latency, o.status, o.retryAfter = o.end.Sub(o.start), r.Status, r.Header.Get("Retry-After")
				switch r.Status {
				case http.StatusCreated:
					var is models.Issue
					r.JSON(tb, &is)
					o.number = is.Index
				default:
					o.body = string(r.Body)
				}
				mu.Lock()
				outcomes = append(outcomes, o)
				mu.Unlock()
				if r.Status != http.StatusCreated {
					// A pause, as a client would make (shorter than
					// Retry-After, to keep the load up).
					time.Sleep(50 * time.Millisecond)
				}
			}
		}()
	}
	time.Sleep(before)
	type window struct{ from, to time.Time }
	var outages []window
	for i := range restarts {
		if i > 0 {
			time.Sleep(between)
		}
		from := time.Now()
		if _, err := cluster.run("restart"); err != nil {
			close(stop)
			wg.Wait()
			t.Fatal(err)
		}
		outages = append(outages, window{from, time.Now()})
	}
	time.Sleep(after)
	close(stop)
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(bound + 10*time.Second):
		t.Fatalf("create requests still unanswered %s after the load stopped: a request hangs", bound+10*time.Second)
	}

	// Tally.
	var created, unavailable, createdAcross int
	var maxLatency time.Duration
	byTitle := map[string]outcome{}
	var others []string
	for _, o := range outcomes {
		byTitle[o.title] = o
		maxLatency = max(maxLatency, o.latency)
		if o.latency > bound {
			t.Errorf("%s answered %d after %s, over the %s bound", o.title, o.status, o.latency, bound)
		}
		switch o.status {
		case http.StatusCreated:
			created++
			// In flight while PostgreSQL restarted, and yet a success.
			for _, w := range outages {
				if o.start.Before(w.to) && o.end.After(w.from) {
					createdAcross++
					break
				}
			}
		case http.StatusServiceUnavailable:
			unavailable++
			if o.retryAfter == "" {
				t.Errorf("%s: 503 without Retry-After", o.title)
			}
		default:
			others = append(others, fmt.Sprintf("%s: %d %s", o.title, o.status, o.body))
		}
	}
	var took []string
	for _, w := range outages {
		took = append(took, w.to.Sub(w.from).Round(time.Millisecond).String())
	}
	t.Logf("%d restarts (%s); %d requests: %d answered 201 (%d of them in flight during a restart), %d answered 503; max latency %s",
		restarts, strings.Join(took, ", "), len(outcomes), created, createdAcross, unavailable, maxLatency.Round(time.Millisecond))
	if len(others) > 0 {
		t.Errorf("%d requests answered neither 201 nor 503, e.g. %s", len(others), others[:min(5, len(others))])
	}
	if unavailable == 0 {
		t.Errorf("no request answered 503: the outage went unseen")
	}
	if created == 0 {
		t.Fatalf("no request answered 201")
	}

	// What the database holds, compared with what clients were told.
	ctx := context.Background()
	var issues []*store.Issue
	for page := 0; ; page++ {
		got, total, err := e.DB.Issues().List(ctx, store.IssueFilter{RepoID: repo.ID}, store.Page{Offset: page * 500, Limit: 500})
		if err != nil {
			t.Fatal(err)
		}
		issues = append(issues, got...)
		if len(got) == 0 || int64(len(issues)) >= total {
			break
		}
	}
	var numbers []int64
	for _, is := range issues {
		numbers = append(numbers, is.Index)
		o, ok := byTitle[is.Title]
		switch {
		case !ok:
			t.Errorf("issue #%d %q exists, but no request asked for it", is.Index, is.Title)
		case o.status != http.StatusCreated:
			t.Errorf("issue #%d %q exists, but its request answered %d: a committed write reported as failed", is.Index, is.Title, o.status)
		case o.number != is.Index:
			t.Errorf("issue %q is #%d, but its request answered #%d", is.Title, is.Index, o.number)
		}
		delete(byTitle, is.Title)
	}
	for title, o := range byTitle {
		if o.status == http.StatusCreated {
			t.Errorf("%q answered 201 #%d, but no such issue exists", title, o.number)
		}
	}
	slices.Sort(numbers)
	for i, n := range numbers {
		if n != int64(i+1) {
			t.Errorf("issue numbers are not dense from 1: position %d holds #%d", i+1, n)
			break
		}
	}
	r, err := e.DB.Repos().FindByName(ctx, e.Admin.User.ID, "outage")
	if err != nil {
		t.Fatal(err)
	}
	if r.NumIssues != int64(len(issues)) || r.NumIssues != int64(created) {
		t.Errorf("num_issues %d, %d issues exist, %d creates answered 201", r.NumIssues, len(issues), created)
	}
	drift, err := e.DB.Issues().CheckCounters(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for name, bad := range drift {
		if bad != 0 {
			t.Errorf("%s: %d rows disagree with COUNT(*)", name, bad)
		}
	}
	// The full-text index was written in the creates' transactions: it
	// agrees with every issue's text, and each issue is found by its
	// title.
	if bad, err := e.DB.Issues().CheckSearchIndex(ctx); err != nil || bad != 0 {
		t.Errorf("issue index after the restarts: %d entries disagree (%v)", bad, err)
	}
	for _, is := range issues {
		found, _, err := e.DB.Issues().List(ctx, store.IssueFilter{RepoID: repo.ID, Keyword: is.Title}, store.Page{Limit: 50})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.ContainsFunc(found, func(f *store.Issue) bool { return f.ID == is.ID }) {
			t.Errorf("issue #%d %q not found by its title after the restarts", is.Index, is.Title)
		}
	}
}
