package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// pgCluster is a private PostgreSQL cluster (scripts/pg-cluster.sh) a test
// may stop and resume.
type pgCluster struct {
	dir, dsn string
}

func startPG(t *testing.T) *pgCluster {
	t.Helper()
	// Under /tmp and short: the postgres OS user must reach it, and the
	// socket path is bounded.
	dir, err := os.MkdirTemp("/tmp", "rh-pg.")
	if err != nil {
		t.Fatal(err)
	}
	os.Chmod(dir, 0o755)
	c := &pgCluster{dir: dir}
	t.Cleanup(func() {
		c.run("stop")
		os.RemoveAll(dir)
	})
	out, err := c.run("start")
	if err != nil {
		t.Fatalf("start PostgreSQL: %v", err)
	}
	c.dsn = strings.TrimSpace(out)
	return c
}

func (c *pgCluster) run(cmd string) (string, error) {
	script, _ := filepath.Abs("../../scripts/pg-cluster.sh")
	out, err := exec.Command(script, cmd, c.dir).Output()
	if ee, ok := err.(*exec.ExitError); ok {
		return "", fmt.Errorf("pg-cluster.sh %s: %v: %s", cmd, err, ee.Stderr)
	}
	return string(out), err
}

// testBinary is the server built with the crontest tag, once for every
// test that runs it (a build takes seconds).
var testBinary = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "repohost-bin.")
	if err != nil {
		return "", err
	}
	testBinaryDir = dir
	bin := filepath.Join(dir, "repohost")
	if out, err := exec.Command("go", "build", "-tags", "crontest", "-o", bin, ".").CombinedOutput(); err != nil {
		return "", fmt.Errorf("build: %v\n%s", err, out)
	}
	return bin, nil
})

var testBinaryDir string

func TestMain(m *testing.M) {
	code := m.Run()
	if testBinaryDir != "" {
		os.RemoveAll(testBinaryDir)
	}
	os.Exit(code)
}

func buildServer(t *testing.T) string {
	t.Helper()
	bin, err := testBinary()
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

// proc is one running `repohost serve` process and the lines it logged.
type proc struct {
	t    *testing.T
	name string
	cmd  *exec.Cmd
	addr string
	mu   sync.Mutex
	log  []map[string]any
}

func startProc(t *testing.T, name, bin, data string, env []string, args ...string) *proc {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &proc{t: t, name: name, addr: ln.Addr().String()}
	ln.Close()
	s.cmd = exec.Command(bin, append([]string{"serve", "--data", data, "--listen", s.addr, "--access-log", "off"}, args...)...)
	s.cmd.Env = append(append(os.Environ(), "REPOHOST_ADMIN_PASSWORD=first-admin-pw"), env...)
	stderr, _ := s.cmd.StderrPipe()
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		s.cmd.Process.Kill()
		s.cmd.Wait()
	})
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			var line map[string]any
			if json.Unmarshal(sc.Bytes(), &line) == nil {
				s.mu.Lock()
				s.log = append(s.log, line)
				s.mu.Unlock()
			}
		}
	}()
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := http.Get("http://" + s.addr + "/api/v1/version")
		if err == nil {
			resp.Body.Close()
			return s
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s did not answer: %v", name, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// count is how many of the lines logged so far match msg and task.
func (s *proc) count(msg, task string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, l := range s.log {
		if l["msg"] == msg && l["task"] == task {
			n++
		}
	}
	return n
}

func (s *proc) get(path string, out any) int {
	s.t.Helper()
	req, _ := http.NewRequest("GET", "http://"+s.addr+path, nil)
	req.SetBasicAuth("admin", "first-admin-pw")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		s.t.Fatalf("GET %s: %v", path, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if out != nil {
		if err := json.Unmarshal(body, out); err != nil {
			s.t.Fatalf("GET %s: %v: %s", path, err, body)
		}
	}
	return resp.StatusCode
}

func (s *proc) execTimes(task string) int64 {
	s.t.Helper()
	var list []struct {
		Name      string `json:"name"`
		ExecTimes int64  `json:"exec_times"`
	}
	if st := s.get("/api/v1/admin/cron?limit=50", &list); st != 200 {
		s.t.Fatalf("GET /admin/cron: %d", st)
	}
	for _, c := range list {
		if c.Name == task {
			return c.ExecTimes
		}
	}
	s.t.Fatalf("no task %s", task)
	return 0
}

// TestCronTwoProcesses runs two server processes on one PostgreSQL and one
// data directory: a task on a one-second schedule runs once a second in
// all, not once per process, and a task whose holder is killed passes to
// the other process once the lease has run out.
func TestCronTwoProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and starts PostgreSQL")
	}
	pg := startPG(t)
	bin := buildServer(t)
	data := t.TempDir()
	const lease = 3 * time.Second
	env := []string{"REPOHOST_DB=" + pg.dsn, "REPOHOST_CRON=delete_old_system_notices=@every 1s;crontest_block=@every 1s",
		"REPOHOST_CRON_LEASE=" + lease.String()}
	// One after the other: the first creates the site admin.
	a := startProc(t, "a", bin, data, env)
	b := startProc(t, "b", bin, data, env)

	// Ten seconds of a one-second schedule, on both processes.
	time.Sleep(1500 * time.Millisecond)
	before := a.execTimes("delete_old_system_notices")
	time.Sleep(10 * time.Second)
	after := b.execTimes("delete_old_system_notices")
	if runs := after - before; runs < 9 || runs > 11 {
		t.Errorf("delete_old_system_notices ran %d times in 10 s on @every 1s with two processes, want 10", runs)
	}
	if a.count("cron: task finished", "delete_old_system_notices") == 0 && b.count("cron: task finished", "delete_old_system_notices") == 0 {
		t.Error("no process logged a run")
	}

	// crontest_block never ends: exactly one process holds it.
	holder, other := a, b
	if b.count("cron: task started", "crontest_block") > 0 {
		holder, other = b, a
	}
	if holder.count("cron: task started", "crontest_block") != 1 || other.count("cron: task started", "crontest_block") != 0 {
		t.Fatalf("crontest_block started %d times in a and %d in b, want once in all",
			a.count("cron: task started", "crontest_block"), b.count("cron: task started", "crontest_block"))
	}
	if err := holder.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	killed := time.Now()
	for other.count("cron: task started", "crontest_block") == 0 {
		if time.Since(killed) > lease+time.Second {
			t.Fatalf("%s did not take crontest_block within the lease (%s) after %s was killed", other.name, lease, holder.name)
		}
		time.Sleep(50 * time.Millisecond)
	}
	took := time.Since(killed)
	t.Logf("%s took crontest_block %s after %s was killed (lease %s)", other.name, took.Round(time.Millisecond), holder.name, lease)
	// Not before the dead holder's lease ran out: it had renewed it at
	// most a third of a lease before it died.
	if took < lease*2/3-100*time.Millisecond {
		t.Errorf("taken after %s, before the lease (%s) could have run out", took, lease)
	}
}

// TestHealthzAndMetrics serves one process on a private PostgreSQL with
// metrics on: requests are counted by route template, never by raw path,
// and GET /api/healthz fails while PostgreSQL is stopped and passes again
// once it is back.
func TestHealthzAndMetrics(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and starts PostgreSQL")
	}
	pg := startPG(t)
	bin := buildServer(t)
	s := startProc(t, "a", bin, t.TempDir(), []string{"REPOHOST_DB=" + pg.dsn, "REPOHOST_METRICS=true", "REPOHOST_METRICS_TOKEN=scrape-secret"})

	// A small load over several repositories: one route template.
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range 5 {
				s.get(fmt.Sprintf("/api/v1/repos/admin/repo-%d-%d", i, j), nil)
			}
		}()
	}
	wg.Wait()
	scrape := func(token string) (int, string) {
		req, _ := http.NewRequest("GET", "http://"+s.addr+"/metrics", nil)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}
	if st, _ := scrape(""); st != http.StatusUnauthorized {
		t.Errorf("scrape without the token: %d", st)
	}
	if st, _ := scrape("wrong"); st != http.StatusUnauthorized {
		t.Errorf("scrape with a wrong token: %d", st)
	}
	st, body := scrape("scrape-secret")
	if st != 200 {
		t.Fatalf("scrape: %d", st)
	}
	want := `repohost_http_requests_total{method="GET",route="GET /api/v1/repos/{owner}/{repo}",status="404"} 40`
	if !strings.Contains(body, want) {
		t.Errorf("metrics lack %s", want)
	}
	for _, w := range []string{"repohost_http_request_duration_seconds_bucket", "repohost_go_sql_open_connections", "go_goroutines"} {
		if !strings.Contains(body, w) {
			t.Errorf("metrics lack %s", w)
		}
	}
	if testing.Verbose() {
		for _, l := range strings.Split(body, "\n") {
			if strings.Contains(l, "http_requests_total") || strings.Contains(l, "sql") {
				t.Log(l)
			}
		}
	}
	if strings.Contains(body, "repo-3-4") {
		t.Error("a raw path is a label")
	}

	health := func() (int, string) {
		resp, err := http.Get("http://" + s.addr + "/api/healthz")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var h struct {
			Status string `json:"status"`
		}
		if ct := resp.Header.Get("Content-Type"); ct != "application/health+json" {
			t.Errorf("Content-Type %q", ct)
		}
		json.NewDecoder(resp.Body).Decode(&h)
		return resp.StatusCode, h.Status
	}
	if st, status := health(); st != 200 || status != "pass" {
		t.Fatalf("healthz with PostgreSQL up: %d %s", st, status)
	}
	if _, err := pg.run("stop"); err != nil {
		t.Fatal(err)
	}
	if st, status := health(); st != http.StatusFailedDependency || status != "fail" {
		t.Errorf("healthz with PostgreSQL stopped: %d %s", st, status)
	}
	if _, err := pg.run("resume"); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		st, status := health()
		if st == 200 && status == "pass" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("healthz after PostgreSQL came back: %d %s", st, status)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
