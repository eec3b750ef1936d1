package main

import (
	"archive/zip"
	"bufio"
	"bytes"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// repohostBinary builds the server binary for t.
func repohostBinary(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "repohost")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	return bin
}

// server is the real binary serving a fresh data directory on SQLite.
type server struct {
	t    *testing.T
	cmd  *exec.Cmd
	base string // http://ADDR
	data string
	tmp  string // the server's TMPDIR
}

const serverAdminPassword = "first-admin-pw"

func startServer(t *testing.T) *server {
	t.Helper()
	bin := repohostBinary(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	s := &server{t: t, base: "http://" + addr, data: t.TempDir()}
	s.cmd = exec.Command(bin, "serve", "--data", s.data, "--listen", addr)
	s.tmp = t.TempDir()
	s.cmd.Env = append(os.Environ(), "REPOHOST_ADMIN_PASSWORD="+serverAdminPassword, "REPOHOST_DB=", "TMPDIR="+s.tmp)
	s.cmd.Stderr = io.Discard
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = s.cmd.Process.Kill()
		_ = s.cmd.Wait()
	})
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := http.Get(s.base + "/api/v1/version")
		if err == nil {
			resp.Body.Close()
			return s
		}
		if time.Now().After(deadline) {
			t.Fatalf("server did not answer: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// api sends a JSON request as the site admin and decodes the answer into out.
func (s *server) api(method, path string, body any, want int, out any) {
	s.t.Helper()
	raw, _ := json.Marshal(body)
	req, _ := http.NewRequest(method, s.base+"/api/v1/"+path, bytes.NewReader(raw))
	req.Header.Set("Content-Type", "application/json")
	req.SetBasicAuth("admin", serverAdminPassword)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		s.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != want {
		s.t.Fatalf("%s %s: %d %s", method, path, resp.StatusCode, b)
	}
	if out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			s.t.Fatal(err)
		}
	}
}

// status reads a field of /proc/PID/status in bytes (VmRSS, VmHWM).
func procStatus(t *testing.T, pid int, field string) int64 {
	t.Helper()
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Skipf("no /proc: %v", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), field+":"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return kb << 10
		}
	}
	t.Fatalf("%s not in /proc/%d/status", field, pid)
	return 0
}

func git(t *testing.T, dir string, stdin io.Reader, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Stdin = stdin
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+dir,
		"GIT_AUTHOR_NAME=T", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=T", "GIT_COMMITTER_EMAIL=t@example.com")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("git %v: %v", args, err)
	}
	return strings.TrimSpace(string(out))
}

const mib = 1 << 20

// TestArchiveDownloadsStreamInBoundedMemory (regression): eight parallel
// anonymous zip downloads of a repository holding a 50 MB file raised the
// server's RSS from 47 MB to 913 MB, each download holding the file (and
// go-git's copy of it) in memory. Archives now stream blob by blob from
// disk, and at most Config.MaxHeavyRequests run at once. The server is the
// real binary, so its RSS is its own, whatever else this test binary runs.
func TestArchiveDownloadsStreamInBoundedMemory(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds the binary and moves 400 MB")
	}
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	s := startServer(t)
	s.api("POST", "user/repos", map[string]any{"name": "big", "auto_init": true}, http.StatusCreated, nil)

	// A 50 MB random file, written into the repository's objects by git
	// itself and packed, as a push would leave it; the branch that holds
	// it is made through the API.
	repo := filepath.Join(s.data, "repositories", "admin", "big.git")
	blob := git(t, repo, io.LimitReader(rand.Reader, 50*mib), "hash-object", "-w", "--stdin")
	tree := git(t, repo, strings.NewReader("100644 blob "+blob+"\tbig.bin\n"), "mktree")
	commit := git(t, repo, nil, "commit-tree", tree, "-p", "main", "-m", "big file")
	s.api("POST", "repos/admin/big/branches", map[string]any{"new_branch_name": "big", "old_ref_name": commit}, http.StatusCreated, nil)
	git(t, repo, nil, "repack", "-a", "-d", "-q")

	pid := s.cmd.Process.Pid
	before := procStatus(t, pid, "VmRSS")
	stopSampling := rssSampler(t, pid)

	const n = 8
	type result struct {
		status     int
		size       int64
		retryAfter string
		err        error
	}
	results := make([]result, n)
	keep := filepath.Join(t.TempDir(), "big.zip")
	start := time.Now()
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			resp, err := http.Get(s.base + "/admin/big/archive/big.zip")
			if err != nil {
				results[i].err = err
				return
			}
			defer resp.Body.Close()
			results[i].status, results[i].retryAfter = resp.StatusCode, resp.Header.Get("Retry-After")
			var dst io.Writer = io.Discard
			if i == 0 {
				f, err := os.Create(keep)
				if err != nil {
					results[i].err = err
					return
				}
				defer f.Close()
				dst = f
			}
			results[i].size, results[i].err = io.Copy(dst, resp.Body)
		}(i)
	}
	wg.Wait()
	elapsed := time.Since(start)
	peak := stopSampling()
	hwm := procStatus(t, pid, "VmHWM")
	t.Logf("server RSS before %d MiB, peak during %d parallel zip downloads %d MiB (growth %d MiB), VmHWM %d MiB, %s",
		before/mib, n, peak/mib, (peak-before)/mib, hwm/mib, elapsed.Round(time.Millisecond))

	for i, r := range results {
		switch {
		case r.err != nil:
			t.Errorf("download %d: %v", i, r.err)
		case r.status == http.StatusServiceUnavailable && r.retryAfter != "":
			t.Logf("download %d: 503, Retry-After %s", i, r.retryAfter)
		case r.status != http.StatusOK:
			t.Errorf("download %d: status %d", i, r.status)
		case r.size < 50*mib:
			t.Errorf("download %d: %d bytes", i, r.size)
		}
	}
	if results[0].status == http.StatusOK {
		zr, err := zip.OpenReader(keep)
		if err != nil {
			t.Fatalf("the archive is not a zip file: %v", err)
		}
		defer zr.Close()
		if len(zr.File) != 1 || zr.File[0].Name != "big/big.bin" || zr.File[0].UncompressedSize64 != 50*mib {
			t.Fatalf("archive holds %v", zr.File)
		}
		rc, err := zr.File[0].Open()
		if err != nil {
			t.Fatal(err)
		}
		// Reading to the end checks the CRC.
		if _, err := io.Copy(io.Discard, rc); err != nil {
			t.Fatalf("big.bin in the archive: %v", err)
		}
		rc.Close()
	}
	if growth := peak - before; growth > 200*mib {
		t.Errorf("the server grew by %d MiB during %d parallel zip downloads of a 50 MiB file; want under 200 MiB", growth/mib, n)
	}
}

// rssSampler records the peak VmRSS of pid until stop.
func rssSampler(t *testing.T, pid int) (stop func() (peak int64)) {
	var peak int64
	done := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for {
			if rss := procStatus(t, pid, "VmRSS"); rss > peak {
				peak = rss
			}
			select {
			case <-done:
				return
			case <-tick.C:
			}
		}
	}()
	return func() int64 {
		close(done)
		<-sampled
		return peak
	}
}

// TestAssetUploadStreamsToDisk (regression): the generated binding read a
// release asset upload whole before the handler ran, 32 MiB of it into
// memory and the rest into a temporary file, with no size cap. A 100 MiB
// upload now streams into its attachment file: the server's RSS barely
// moves and its TMPDIR stays empty.
func TestAssetUploadStreamsToDisk(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds the binary and moves 100 MB")
	}
	s := startServer(t)
	s.api("POST", "user/repos", map[string]any{"name": "rel", "auto_init": true}, http.StatusCreated, nil)
	var rel struct{ ID int64 }
	s.api("POST", "repos/admin/rel/releases", map[string]any{"tag_name": "v1"}, http.StatusCreated, &rel)

	const size = 100 * mib
	pr, pw := io.Pipe()
	mw := multipart.NewWriter(pw)
	go func() {
		fw, err := mw.CreateFormFile("attachment", "big.bin")
		if err == nil {
			_, err = io.Copy(fw, io.LimitReader(rand.Reader, size))
		}
		if err == nil {
			err = mw.Close()
		}
		pw.CloseWithError(err)
	}()
	req, _ := http.NewRequest("POST", fmt.Sprintf("%s/api/v1/repos/admin/rel/releases/%d/assets", s.base, rel.ID), pr)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	req.SetBasicAuth("admin", serverAdminPassword)

	pid := s.cmd.Process.Pid
	before := procStatus(t, pid, "VmRSS")
	stop := rssSampler(t, pid)
	resp, err := http.DefaultClient.Do(req)
	peak := stop()
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	t.Logf("server RSS before %d MiB, peak during a %d MiB asset upload %d MiB (growth %d MiB)",
		before/mib, size/mib, peak/mib, (peak-before)/mib)
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("upload: %d %s", resp.StatusCode, body)
	}
	var a struct{ Size int64 }
	if err := json.Unmarshal(body, &a); err != nil || a.Size != size {
		t.Fatalf("asset %s (%v)", body, err)
	}
	if left, _ := os.ReadDir(s.tmp); len(left) != 0 {
		t.Errorf("the upload went through the server's TMPDIR: %v", left)
	}
	if growth := peak - before; growth > 32*mib {
		t.Errorf("the server grew by %d MiB during a %d MiB upload; want under 32 MiB", growth/mib, size/mib)
	}
}
