package main

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"repohost/store/sqlstore/sqltest"
)

// roundRobin is the test's load balancer: each request goes to the next
// live process in turn, and says which one answered (X-Test-Backend).
type roundRobin struct {
	mu    sync.Mutex
	procs []*proc
	next  int
}

func (rr *roundRobin) pick() *proc {
	rr.mu.Lock()
	defer rr.mu.Unlock()
	p := rr.procs[rr.next%len(rr.procs)]
	rr.next++
	return p
}

// drop takes p out of the rotation (before it is killed).
func (rr *roundRobin) drop(p *proc) {
	rr.mu.Lock()
	defer rr.mu.Unlock()
	for i, q := range rr.procs {
		if q == p {
			rr.procs = append(rr.procs[:i:i], rr.procs[i+1:]...)
			return
		}
	}
}

func (rr *roundRobin) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p := rr.pick()
	target, _ := url.Parse("http://" + p.addr)
	proxy := httputil.NewSingleHostReverseProxy(target)
	proxy.ModifyResponse = func(resp *http.Response) error {
		resp.Header.Set("X-Test-Backend", p.name)
		return nil
	}
	proxy.ServeHTTP(w, r)
}

// lbClient calls the balancer.
type lbClient struct {
	t    *testing.T
	base string
}

// do sends a request with cred ("user:password" for basic, "token T" for
// a token, "" for none) and returns the status, the body and the process
// that answered.
func (c lbClient) do(method, path, cred string, body any) (int, []byte, string) {
	c.t.Helper()
	var rd io.Reader
	if b, ok := body.([]byte); ok {
		rd = bytes.NewReader(b)
	} else if body != nil {
		raw, _ := json.Marshal(body)
		rd = bytes.NewReader(raw)
	}
	req, _ := http.NewRequest(method, c.base+path, rd)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if tok, ok := strings.CutPrefix(cred, "token "); ok {
		req.Header.Set("Authorization", "token "+tok)
	} else if user, pw, ok := strings.Cut(cred, ":"); ok {
		req.SetBasicAuth(user, pw)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, out, resp.Header.Get("X-Test-Backend")
}

const adminCred = "admin:first-admin-pw"

// TestDeployment runs the service as a cluster: three server processes on
// one PostgreSQL and one shared data directory behind a round-robin
// balancer. What one process acknowledges the next request to any other
// sees (an issue, a repository made private, a token revoked); two pushes
// to one branch through two processes at once both land or one is refused,
// never lost; a package uploaded through one downloads through another;
// and a process killed with SIGKILL under load loses nothing it
// acknowledged. PostgreSQL only (scripts/with-postgres.sh).
func TestDeployment(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	if sqltest.Database() != "postgres" {
		t.Skip("several processes share one database on PostgreSQL only")
	}
	bin := buildServer(t)
	data := t.TempDir()
	dsn := sqltest.DSN(t, data)
	args := []string{"--db", dsn, "--event-lease", "2s", "--cluster", "on"}
	// Large files on the S3 service when there is one (make test's
	// PostgreSQL pass runs beside one), else on the shared data directory.
	if s3 := os.Getenv("REPOHOST_TEST_S3"); s3 != "" {
		suffix := make([]byte, 4)
		rand.Read(suffix)
		args = append(args, "--storage", fmt.Sprintf("%s/deploy-%x", s3, suffix))
		t.Log("large files on S3")
	}
	// One after the other: the first creates the site admin.
	a := startProc(t, "a", bin, data, nil, args...)
	b := startProc(t, "b", bin, data, nil, args...)
	c := startProc(t, "c", bin, data, nil, args...)
	rr := &roundRobin{procs: []*proc{a, b, c}}
	lb := httptest.NewServer(rr)
	defer lb.Close()
	api := lbClient{t: t, base: lb.URL + "/api/v1"}

	if st, body, _ := api.do("POST", "/admin/users", adminCred, map[string]any{"username": "bob", "email": "bob@example.com",
		"password": "bob-pass-123456", "must_change_password": false}); st != http.StatusCreated {
		t.Fatalf("create bob: %d %s", st, body)
	}
	if st, body, _ := api.do("POST", "/user/repos", adminCred, map[string]any{"name": "shared", "auto_init": true}); st != http.StatusCreated {
		t.Fatalf("create repository: %d %s", st, body)
	}

	t.Run("issues", func(t *testing.T) {
		// Each issue is created through one process and read at once
		// through the next two, by number and in the (cached) list.
		for i := range 9 {
			st, body, by := api.do("POST", "/repos/admin/shared/issues", adminCred, map[string]any{"title": fmt.Sprint("issue ", i)})
			if st != http.StatusCreated {
				t.Fatalf("create issue: %d %s", st, body)
			}
			var is struct{ Number int64 }
			json.Unmarshal(body, &is)
			seenBy := map[string]bool{by: true}
			for range 2 {
				st, list, from := api.do("GET", "/repos/admin/shared/issues?state=all&type=issues", "", nil)
				if st != http.StatusOK || !bytes.Contains(list, []byte(fmt.Sprintf(`"number":%d,`, is.Number))) {
					t.Fatalf("issue %d created through %s is not in the list %s serves: %d", is.Number, by, from, st)
				}
				seenBy[from] = true
			}
			if len(seenBy) != 3 {
				t.Fatalf("the balancer did not go round: %v", seenBy)
			}
		}
	})

	t.Run("private", func(t *testing.T) {
		// Every process has the public repository in its caches.
		for range 6 {
			if st, _, from := api.do("GET", "/repos/admin/shared", "", nil); st != http.StatusOK {
				t.Fatalf("public repository through %s: %d", from, st)
			}
			if st, _, from := api.do("GET", "/repos/search?q=shared", "", nil); st != http.StatusOK {
				t.Fatalf("search through %s: %d", from, st)
			}
		}
		if st, body, _ := api.do("PATCH", "/repos/admin/shared", adminCred, map[string]any{"private": true}); st != http.StatusOK {
			t.Fatalf("make private: %d %s", st, body)
		}
		for range 6 {
			if st, _, from := api.do("GET", "/repos/admin/shared", "", nil); st != http.StatusNotFound {
				t.Fatalf("a private repository served anonymously by %s: %d", from, st)
			}
			if st, body, from := api.do("GET", "/repos/search?q=shared", "", nil); st != http.StatusOK || bytes.Contains(body, []byte(`"shared"`)) {
				t.Fatalf("a private repository listed anonymously by %s: %d %s", from, st, body)
			}
		}
	})

	t.Run("token", func(t *testing.T) {
		st, body, _ := api.do("POST", "/users/bob/tokens", "bob:bob-pass-123456", map[string]any{"name": "ci", "scopes": []string{"all"}})
		if st != http.StatusCreated {
			t.Fatalf("create token: %d %s", st, body)
		}
		var tok struct {
			ID   int64
			Sha1 string `json:"sha1"`
		}
		json.Unmarshal(body, &tok)
		for range 6 {
			if st, _, from := api.do("GET", "/user", "token "+tok.Sha1, nil); st != http.StatusOK {
				t.Fatalf("token refused by %s: %d", from, st)
			}
		}
		if st, body, _ := api.do("DELETE", fmt.Sprintf("/users/bob/tokens/%d", tok.ID), "bob:bob-pass-123456", nil); st != http.StatusNoContent {
			t.Fatalf("revoke: %d %s", st, body)
		}
		for range 6 {
			if st, _, from := api.do("GET", "/user", "token "+tok.Sha1, nil); st != http.StatusUnauthorized {
				t.Fatalf("a revoked token served by %s: %d", from, st)
			}
		}
	})

	t.Run("pushes", func(t *testing.T) {
		// Two clones push to one branch through two processes at once,
		// round after round: what a push was told landed is on the
		// branch, whichever process is asked.
		urlOf := func(p *proc) string { return "http://admin:first-admin-pw@" + p.addr + "/admin/shared.git" }
		dirs := [2]string{t.TempDir(), t.TempDir()}
		for _, d := range dirs {
			git(t, d, nil, "clone", "-q", urlOf(c), ".")
		}
		var landed []string
		for round := range 4 {
			var wg sync.WaitGroup
			shas, ok := [2]string{}, [2]bool{}
			for i, d := range dirs {
				git(t, d, nil, "fetch", "-q", "origin")
				git(t, d, nil, "reset", "-q", "--hard", "origin/main")
				os.WriteFile(filepath.Join(d, fmt.Sprintf("f%d-%d", round, i)), []byte(fmt.Sprint(round, i)), 0o644)
				git(t, d, nil, "add", ".")
				git(t, d, nil, "commit", "-q", "-m", fmt.Sprintf("round %d clone %d", round, i))
				shas[i] = git(t, d, nil, "rev-parse", "HEAD")
			}
			for i, d := range dirs {
				wg.Add(1)
				go func() {
					defer wg.Done()
					cmd := exec.Command("git", "push", "-q", []string{urlOf(a), urlOf(b)}[i], "HEAD:main")
					cmd.Dir = d
					cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+d)
					out, err := cmd.CombinedOutput()
					ok[i] = err == nil
					if err != nil && !strings.Contains(string(out), "rejected") && !strings.Contains(string(out), "failed to push") {
						t.Errorf("push %d: %v: %s", i, err, out)
					}
				}()
			}
			wg.Wait()
			if !ok[0] && !ok[1] {
				t.Fatalf("round %d: both pushes refused", round)
			}
			for i := range 2 {
				if ok[i] {
					landed = append(landed, shas[i])
				}
			}
		}
		check := t.TempDir()
		git(t, check, nil, "clone", "-q", urlOf(c), ".")
		for _, sha := range landed {
			cmd := exec.Command("git", "merge-base", "--is-ancestor", sha, "origin/main")
			cmd.Dir = check
			if err := cmd.Run(); err != nil {
				t.Errorf("acknowledged push %s is not on main", sha)
			}
		}
		t.Logf("%d of 8 pushes landed, none lost", len(landed))
	})

	t.Run("package", func(t *testing.T) {
		blob := make([]byte, 3<<20)
		rand.Read(blob)
		pkgs := lbClient{t: t, base: lb.URL + "/api/packages/admin/generic/tool/1.0"}
		st, body, up := pkgs.do("PUT", "/tool.bin", adminCred, blob)
		if st != http.StatusCreated {
			t.Fatalf("upload: %d %s", st, body)
		}
		for range 3 {
			st, got, from := pkgs.do("GET", "/tool.bin", adminCred, nil)
			if st != http.StatusOK || sha256.Sum256(got) != sha256.Sum256(blob) {
				t.Fatalf("uploaded through %s, downloaded through %s: %d, %d bytes", up, from, st, len(got))
			}
		}
		// The same file again, through two processes at once: one is
		// refused as a duplicate, the blob is kept once.
		var wg sync.WaitGroup
		var created atomic.Int32
		for range 2 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				req, _ := http.NewRequest("PUT", lb.URL+"/api/packages/admin/generic/tool/2.0/tool.bin", bytes.NewReader(blob))
				req.SetBasicAuth("admin", "first-admin-pw")
				resp, err := http.DefaultClient.Do(req)
				if err == nil {
					if resp.StatusCode == http.StatusCreated {
						created.Add(1)
					}
					resp.Body.Close()
				}
			}()
		}
		wg.Wait()
		if created.Load() != 1 {
			t.Errorf("the same file uploaded twice at once was created %d times", created.Load())
		}
	})

	t.Run("lfs", func(t *testing.T) {
		// An LFS object uploaded through one process downloads whole
		// through each of the others.
		blob := make([]byte, 2<<20)
		rand.Read(blob)
		oid := fmt.Sprintf("%x", sha256.Sum256(blob))
		lfs := func(p *proc, method, path string, body []byte) (int, []byte) {
			t.Helper()
			req, _ := http.NewRequest(method, "http://"+p.addr+"/admin/shared.git/info/lfs/objects/"+path, bytes.NewReader(body))
			req.SetBasicAuth("admin", "first-admin-pw")
			req.Header.Set("Accept", "application/vnd.git-lfs")
			if body != nil {
				req.Header.Set("Content-Type", "application/octet-stream")
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatalf("%s %s through %s: %v", method, path, p.name, err)
			}
			defer resp.Body.Close()
			out, _ := io.ReadAll(resp.Body)
			return resp.StatusCode, out
		}
		if st, body := lfs(a, "PUT", fmt.Sprintf("%s/%d", oid, len(blob)), blob); st != http.StatusOK {
			t.Fatalf("LFS upload through a: %d %s", st, body)
		}
		for _, p := range []*proc{b, c} {
			st, got := lfs(p, "GET", oid, nil)
			if st != http.StatusOK || !bytes.Equal(got, blob) {
				t.Fatalf("LFS object uploaded through a, downloaded through %s: %d, %d bytes", p.name, st, len(got))
			}
		}
	})

	t.Run("kill", func(t *testing.T) {
		// Eight clients create issues through the balancer; one process
		// dies with SIGKILL half way. Every issue acknowledged (201)
		// is there afterwards, through each survivor.
		if st, body, _ := api.do("POST", "/user/repos", adminCred, map[string]any{"name": "load"}); st != http.StatusCreated {
			t.Fatalf("create repository: %d %s", st, body)
		}
		const total = 240
		var mu sync.Mutex
		acked := map[int64]string{}
		var n atomic.Int64
		var wg sync.WaitGroup
		for range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					i := n.Add(1)
					if i > total {
						return
					}
					title := fmt.Sprint("load ", i)
					raw, _ := json.Marshal(map[string]any{"title": title})
					req, _ := http.NewRequest("POST", lb.URL+"/api/v1/repos/admin/load/issues", bytes.NewReader(raw))
					req.SetBasicAuth("admin", "first-admin-pw")
					req.Header.Set("Content-Type", "application/json")
					resp, err := http.DefaultClient.Do(req)
					if err != nil {
						continue
					}
					body, _ := io.ReadAll(resp.Body)
					resp.Body.Close()
					if resp.StatusCode == http.StatusCreated {
						var is struct{ Number int64 }
						json.Unmarshal(body, &is)
						mu.Lock()
						acked[is.Number] = title
						mu.Unlock()
					}
				}
			}()
		}
		for n.Load() < total/2 {
			time.Sleep(5 * time.Millisecond)
		}
		// Killed while requests are under way through it; those it
		// never answered count as not acknowledged.
		go func() {
			time.Sleep(20 * time.Millisecond)
			rr.drop(c)
		}()
		if err := c.cmd.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		wg.Wait()
		if len(acked) < total/2 {
			t.Fatalf("only %d of %d issues acknowledged", len(acked), total)
		}
		for _, p := range []*proc{a, b} {
			for num, title := range acked {
				st, body := p.call("GET", fmt.Sprintf("/api/v1/repos/admin/load/issues/%d", num), nil)
				if st != http.StatusOK || !bytes.Contains(body, []byte(`"title":"`+title+`"`)) {
					t.Fatalf("acknowledged issue %d (%s) through %s: %d %s", num, title, p.name, st, body)
				}
			}
		}
		t.Logf("%d of %d issues acknowledged, all there after the kill", len(acked), total)
	})
}
