package main

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"repohost/store/sqlstore"
	"repohost/store/sqlstore/sqltest"
)

const crashWorkflow = `on:
  push:
    branches: [main]
jobs:
  build:
    runs-on: ubuntu-latest
    steps:
      - run: echo build
`

// createFile commits path with content to branch (from base when base is
// set: a new branch) through the contents API.
func (s *proc) createFile(repo, path, content, branch, base string) {
	s.t.Helper()
	body := map[string]any{"content": base64.StdEncoding.EncodeToString([]byte(content)), "message": "add " + path}
	if base != "" {
		body["branch"], body["new_branch"] = base, branch
	} else {
		body["branch"] = branch
	}
	if st, out := s.call("POST", "/api/v1/repos/admin/"+repo+"/contents/"+path, body); st != http.StatusCreated {
		s.t.Fatalf("create %s on %s: %d %s", path, branch, st, out)
	}
}

// TestPullRefreshAndTriggersSurviveSIGKILL opens 20 pull requests, commits
// to their base branch, and kills the server with SIGKILL as soon as the
// commit is answered: the refresh of every pull request and the workflow
// run the commit triggers were only jobs in the database by then. Started
// again on the same data, the server brings every pull request to the new
// state (a conflict with the base, and its refs/pull/N/head in place) and
// creates the push's run exactly once. SQLite by default; PostgreSQL under
// scripts/with-postgres.sh.
func TestPullRefreshAndTriggersSurviveSIGKILL(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := buildServer(t)
	data := t.TempDir()
	dsn := sqltest.DSN(t, data)
	args := []string{"--db", dsn, "--event-lease", "2s"}
	a := startProc(t, "first", bin, data, nil, args...)
	if st, body := a.call("POST", "/api/v1/user/repos", map[string]any{"name": "prs", "auto_init": true, "default_branch": "main"}); st != http.StatusCreated {
		t.Fatalf("create repository: %d %s", st, body)
	}
	a.createFile("prs", ".gitea/workflows/ci.yml", crashWorkflow, "main", "")
	const n = 20
	for i := 1; i <= n; i++ {
		branch := fmt.Sprintf("topic-%d", i)
		a.createFile("prs", "shared.txt", "from "+branch+"\n", branch, "main")
		if st, body := a.call("POST", "/api/v1/repos/admin/prs/pulls", map[string]any{"title": branch, "head": branch, "base": "main"}); st != http.StatusCreated {
			t.Fatalf("open pull request: %d %s", st, body)
		}
	}
	waitFor(t, "every pull request mergeable before the commit", func() (bool, string) {
		ok, state := pullStates(t, a, n)
		return ok(func(p pullState) bool { return p.Mergeable }), state
	})

	// The base branch gets the same file: every pull request conflicts.
	a.createFile("prs", "shared.txt", "from main\n", "main", "")
	if err := a.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	a.cmd.Wait()
	killed := time.Now()

	b := startProc(t, "restarted", bin, data, nil, args...)
	var tip struct {
		Commit struct {
			ID string `json:"id"`
		} `json:"commit"`
	}
	if st := b.get("/api/v1/repos/admin/prs/branches/main", &tip); st != http.StatusOK || tip.Commit.ID == "" {
		t.Fatalf("main: %d %+v", st, tip)
	}
	waitFor(t, "every pull request in conflict with the new base", func() (bool, string) {
		ok, state := pullStates(t, b, n)
		return ok(func(p pullState) bool { return !p.Mergeable }), state
	})
	t.Logf("all %d pull requests refreshed %s after the kill", n, time.Since(killed).Round(time.Millisecond))

	// Each pull request's head ref is in the base repository.
	out, err := exec.Command("git", "ls-remote", "http://"+b.addr+"/admin/prs.git", "refs/pull/*/head").CombinedOutput()
	if err != nil {
		t.Fatalf("ls-remote: %v: %s", err, out)
	}
	if got := strings.Count(string(out), "refs/pull/"); got != n {
		t.Errorf("%d refs/pull/N/head, want %d:\n%s", got, n, out)
	}

	// The commit's workflow run, once.
	waitFor(t, "the run of the commit", func() (bool, string) {
		runs := commitRuns(t, b, tip.Commit.ID)
		return runs >= 1, fmt.Sprintf("%d runs", runs)
	})
	// Nothing is left to do: no second run appears.
	waitFor(t, "no job left", func() (bool, string) {
		var queues []struct {
			Name    string `json:"name"`
			Pending int64  `json:"pending"`
			Dead    int64  `json:"dead"`
		}
		b.get("/api/v1/admin/events/consumers", &queues)
		for _, q := range queues {
			if q.Pending != 0 || q.Dead != 0 {
				return false, fmt.Sprintf("%+v", queues)
			}
		}
		return true, ""
	})
	if runs := commitRuns(t, b, tip.Commit.ID); runs != 1 {
		t.Errorf("the commit triggered %d runs, want 1", runs)
	}
}

type pullState struct {
	Number    int64 `json:"number"`
	Mergeable bool  `json:"mergeable"`
}

// pullStates reads the open pull requests; ok checks all n against a
// condition.
func pullStates(t *testing.T, s *proc, n int) (func(func(pullState) bool) bool, string) {
	var prs []pullState
	if st := s.get("/api/v1/repos/admin/prs/pulls?state=open&limit=50", &prs); st != http.StatusOK {
		t.Fatalf("list pull requests: %d", st)
	}
	return func(cond func(pullState) bool) bool {
		if len(prs) != n {
			return false
		}
		for _, p := range prs {
			if !cond(p) {
				return false
			}
		}
		return true
	}, fmt.Sprintf("%+v", prs)
}

func commitRuns(t *testing.T, s *proc, sha string) int {
	var runs struct {
		WorkflowRuns []struct {
			HeadSHA string `json:"head_sha"`
			Event   string `json:"event"`
		} `json:"workflow_runs"`
	}
	if st := s.get("/api/v1/repos/admin/prs/actions/runs?limit=50", &runs); st != http.StatusOK {
		t.Fatalf("list runs: %d", st)
	}
	n := 0
	for _, r := range runs.WorkflowRuns {
		if r.HeadSHA == sha && r.Event == "push" {
			n++
		}
	}
	return n
}

// post sends an authenticated JSON POST and tells whether it was
// answered 201 (a process that died answers nothing).
func (s *proc) post(path string, body any) bool {
	raw, _ := json.Marshal(body)
	req, _ := http.NewRequest("POST", "http://"+s.addr+path, bytes.NewReader(raw))
	req.SetBasicAuth("admin", "first-admin-pw")
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusCreated
}

// waitFor polls cond for up to a minute.
func waitFor(t *testing.T, what string, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		ok, state := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("waiting for %s: %s", what, state)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestEventsTwoProcesses runs two server processes on one PostgreSQL:
// 1,000 issue events, created through both, are each turned into exactly
// one webhook delivery across them, though one process is killed with
// SIGKILL half way (its jobs go to the other once their lease ends).
func TestEventsTwoProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	if sqltest.Database() != "postgres" {
		t.Skip("several processes share one database on PostgreSQL only")
	}
	bin := buildServer(t)
	data := t.TempDir()
	dsn := sqltest.DSN(t, data)
	rc := newCrashReceiver(t)
	rc.blocking.Store(false)
	args := []string{"--db", dsn, "--webhook-allowed-hosts", "loopback", "--event-lease", "2s"}
	a := startProc(t, "a", bin, data, nil, args...)
	b := startProc(t, "b", bin, data, nil, args...)
	if st, body := a.call("POST", "/api/v1/user/repos", map[string]any{"name": "busy"}); st != http.StatusCreated {
		t.Fatalf("create repository: %d %s", st, body)
	}
	if st, body := a.call("POST", "/api/v1/repos/admin/busy/hooks", map[string]any{
		"type": "gitea", "active": true, "events": []string{"issues"},
		"config": map[string]string{"url": rc.URL + "/hook", "content_type": "json"}}); st != http.StatusCreated {
		t.Fatalf("create hook: %d %s", st, body)
	}
	const total = 1000
	var created atomic.Int64
	create := func(from, to int, pick func(i int) *proc) {
		var wg sync.WaitGroup
		for w := range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := from + w; i < to; i += 8 {
					if pick(i).post("/api/v1/repos/admin/busy/issues", map[string]any{"title": fmt.Sprintf("issue %d", i)}) {
						created.Add(1)
					}
				}
			}()
		}
		wg.Wait()
	}
	// Half through both processes, then one dies with its jobs and the
	// other takes the rest.
	create(0, total/2, func(i int) *proc {
		if i%2 == 0 {
			return a
		}
		return b
	})
	if err := a.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	create(total/2, total, func(int) *proc { return b })
	db, err := sqlstore.Open(dsn, sqlstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	pool, err := db.SQL()
	if err != nil {
		t.Fatal(err)
	}
	count := func(query string) int64 {
		var n int64
		if err := pool.QueryRow(query).Scan(&n); err != nil {
			t.Fatalf("%s: %v", query, err)
		}
		return n
	}
	var opened int64
	waitFor(t, "every event turned into deliveries", func() (bool, string) {
		pending := count(`SELECT COUNT(*) FROM event_jobs WHERE consumer = 'webhooks'`)
		opened = count(`SELECT COUNT(*) FROM events WHERE kind = 'issue.opened'`)
		return pending == 0, fmt.Sprintf("%d webhook jobs pending", pending)
	})
	deliveries := count(`SELECT COUNT(*) FROM hook_deliveries`)
	distinct := count(`SELECT COUNT(DISTINCT event_id) FROM hook_deliveries`)
	if opened != created.Load() || opened != deliveries || distinct != opened {
		t.Errorf("%d issues created, %d issue events, %d deliveries of %d events; want one delivery per event",
			created.Load(), opened, deliveries, distinct)
	}
	t.Logf("%d issues created, each event delivered once", opened)
}
