package main

// The large-repository git measurement: a repository of many commits and
// a couple of hundred MB (written by git fast-import once and kept in a
// cache directory, so later runs reuse it) is served by repohost (pushed
// to a private repository over smart HTTP) and by git's own
// http-backend run as CGI behind a small net/http/cgi server (this
// binary's `git-http-backend` command, a child process on 127.0.0.1).
// Against each, the real git client in protocol version 2 makes full bare
// clones and incremental fetches (the last commits, into a clone of the
// rest); the wall time and the serving side's peak resident memory (the
// server process and the git processes under it together) are printed
// side by side.

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/cgi"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

func gitProtoCmd(args []string) error {
	fs := flag.NewFlagSet("git-large", flag.ContinueOnError)
	base := fs.String("base", "", "repohost base URL (loopback only)")
	dsFile := fs.String("dataset", "", "dataset file written by seed")
	commits := fs.Int("commits", 20000, "commits in the repository")
	mib := fs.Int("mib", 200, "approximate size of the repository's objects on disk, MiB")
	newCommits := fs.Int("new", 100, "commits the incremental fetch brings")
	runs := fs.Int("runs", 3, "clones and fetches measured against each server")
	cacheDir := fs.String("cache", "", "directory keeping the generated repository between runs (default: the user cache directory)")
	tmp := fs.String("tmp", "", "directory for the clones (default: the system's)")
	pid := fs.Int("server-pid", 0, "repohost's process id, for its resident memory")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if err := checkLoad(*base, 1, time.Second); err != nil {
		return err
	}
	if *commits < 2 || *mib < 1 || *runs < 1 || *newCommits < 1 || *newCommits >= *commits {
		return errors.New("-commits must be at least 2, -new between 1 and -commits, -mib and -runs at least 1")
	}
	if _, err := exec.LookPath("git"); err != nil {
		fmt.Println("\ngit on a large repository: skipped, the git binary is not installed")
		return nil
	}
	ds, err := readDataset(*dsFile)
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp(*tmp, "bench-git-large")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	g := gitRunner{home: dir, token: ds.Token}

	// The repository, built once per size.
	if *cacheDir == "" {
		c, err := os.UserCacheDir()
		if err != nil {
			return err
		}
		*cacheDir = filepath.Join(c, "repohost-bench")
	}
	built := time.Now()
	src, fresh, err := largeRepo(g, *cacheDir, *commits, *mib, *newCommits)
	if err != nil {
		return err
	}
	how := "cached"
	if fresh {
		how = "built in " + fmtDur(time.Since(built))
	}
	out, err := g.run(src, nil, "count-objects", "-v")
	if err != nil {
		return err
	}
	objects, packKiB := countObjects(out)

	// repohost's copy.
	client := newClient(1)
	name := fmt.Sprintf("bench-git-large-%d", time.Now().UnixNano())
	if err := apiCall(client, ds.Token, http.MethodPost, *base+"/api/v1/user/repos",
		map[string]any{"name": name, "private": true, "default_branch": "main"}, nil); err != nil {
		return err
	}
	defer apiCall(client, ds.Token, http.MethodDelete, *base+"/api/v1/repos/"+ds.User+"/"+name, nil, nil)
	u, _ := url.Parse(*base)
	u.Path = "/" + ds.User + "/" + name + ".git"
	start := time.Now()
	if _, err := g.run(src, nil, "push", "-q", u.String(), "main"); err != nil {
		return err
	}
	pushed := time.Since(start)

	// git http-backend's, serving the cached repository itself.
	backend, err := startHTTPBackend(filepath.Dir(src))
	if err != nil {
		return err
	}
	defer backend.stop()
	backendURL := backend.base + "/" + filepath.Base(src)

	// The clone an incremental fetch starts from: everything but the
	// last commits, copied for every fetch.
	seed := filepath.Join(dir, "seed.git")
	if _, err := g.run(dir, nil, "clone", "-q", "--bare", "--no-local", "--single-branch", "--branch", "base", "file://"+src, seed); err != nil {
		return err
	}

	type figures struct {
		clone, fetch         histogram
		clonePeak, fetchPeak int64
		idle                 int64 // the resident memory before the first clone
	}
	measure := func(from string, serverPid int) (*figures, error) {
		f := &figures{}
		for i := range *runs {
			dst := filepath.Join(dir, fmt.Sprint("clone", i))
			s := sampleTreeRSS(serverPid)
			start := time.Now()
			_, err := g.run(dir, nil, "clone", "-q", "--bare", from, dst)
			took := time.Since(start)
			before, peak := s.finish()
			if err != nil {
				return nil, err
			}
			if i == 0 {
				f.idle = before
			}
			f.clone.record(took)
			f.clonePeak = max(f.clonePeak, peak)
			os.RemoveAll(dst)

			into := filepath.Join(dir, fmt.Sprint("fetch", i))
			if err := exec.Command("cp", "-a", seed, into).Run(); err != nil {
				return nil, err
			}
			s = sampleTreeRSS(serverPid)
			start = time.Now()
			_, err = g.run(into, nil, "fetch", "-q", from, "+refs/heads/main:refs/heads/main")
			took = time.Since(start)
			_, peak = s.finish()
			if err != nil {
				return nil, err
			}
			f.fetch.record(took)
			f.fetchPeak = max(f.fetchPeak, peak)
			os.RemoveAll(into)
		}
		return f, nil
	}
	ours, err := measure(u.String(), *pid)
	if err != nil {
		return err
	}
	theirs, err := measure(backendURL, backend.cmd.Process.Pid)
	if err != nil {
		return err
	}

	fmt.Printf("\ngit protocol v2 on a large repository (%d commits, %d objects, %.1f MiB on disk, %s; pushed to repohost in %s)\n",
		*commits, objects, float64(packKiB)/1024, how, fmtDur(pushed))
	fmt.Printf("  %-34s %-30s %s\n", "median of "+strconv.Itoa(*runs)+" (peak RSS, server + git)", "repohost", "git http-backend (CGI)")
	row := func(what string, a, b histogram, pa, pb int64) {
		fmt.Printf("  %-34s %-30s %s\n", what,
			fmt.Sprintf("%s  %d MiB", fmtDur(a.quantile(0.5)), pa>>10),
			fmt.Sprintf("%s  %d MiB", fmtDur(b.quantile(0.5)), pb>>10))
	}
	fmt.Printf("  %-34s %-30s %s\n", "idle RSS before the clones", fmt.Sprintf("%d MiB", ours.idle>>10), fmt.Sprintf("%d MiB", theirs.idle>>10))
	row("full clone --bare", ours.clone, theirs.clone, ours.clonePeak, theirs.clonePeak)
	row(fmt.Sprintf("fetch of the last %d commits", *newCommits), ours.fetch, theirs.fetch, ours.fetchPeak, theirs.fetchPeak)
	return nil
}

// largeRepo returns the cached bare repository of commits commits and
// about mib MiB (refs/heads/main, and refs/heads/base newCommits commits
// behind it), writing it first when the cache has none: git fast-import of
// writeHistory's stream, then one repack, so it is served from a single
// pack (and no bitmap index) as a pushed repository is.
func largeRepo(g gitRunner, cache string, commits, mib, newCommits int) (path string, fresh bool, err error) {
	path = filepath.Join(cache, fmt.Sprintf("large-v2-%d-%dmib-%d.git", commits, mib, newCommits))
	if _, err := os.Stat(filepath.Join(path, "refs", "heads", "base")); err == nil {
		return path, false, nil
	}
	if err := os.MkdirAll(cache, 0o755); err != nil {
		return "", false, err
	}
	work, err := os.MkdirTemp(cache, "building-")
	if err != nil {
		return "", false, err
	}
	defer os.RemoveAll(work)
	if _, err := g.run(work, nil, "init", "-q", "--bare", work); err != nil {
		return "", false, err
	}
	// Two blobs of random hexadecimal text a commit, which zlib stores in
	// about 60% of their size.
	fileBytes := max(64, int(int64(mib)<<20*4/5/int64(commits)))
	pr, pw := io.Pipe()
	go func() { pw.CloseWithError(writeHistory(pw, commits, fileBytes)) }()
	if _, err := g.run(work, pr, "fast-import", "--quiet"); err != nil {
		return "", false, err
	}
	if _, err := g.run(work, nil, "update-ref", "refs/heads/base", fmt.Sprintf("main~%d", newCommits)); err != nil {
		return "", false, err
	}
	// Without a bitmap index, as the pack a push leaves in repohost: the
	// two servers serve the same layout.
	if _, err := g.run(work, nil, "repack", "-adq", "--no-write-bitmap-index"); err != nil {
		return "", false, err
	}
	_ = os.RemoveAll(path)
	if err := os.Rename(work, path); err != nil {
		return "", false, err
	}
	return path, true, nil
}

// httpBackend is a child process of this binary serving git http-backend
// over CGI (see gitHTTPBackendCmd).
type httpBackend struct {
	cmd  *exec.Cmd
	base string
}

func startHTTPBackend(root string) (*httpBackend, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(self, "git-http-backend", "-root", root)
	cmd.Stderr = os.Stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		return nil, fmt.Errorf("git http-backend server: %w", err)
	}
	return &httpBackend{cmd: cmd, base: "http://" + strings.TrimSpace(line)}, nil
}

func (b *httpBackend) stop() {
	_ = b.cmd.Process.Signal(os.Interrupt)
	done := make(chan struct{})
	go func() { _ = b.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		_ = b.cmd.Process.Kill()
		<-done
	}
}

// gitHTTPBackendCmd serves every repository under -root read-only with
// git's own http-backend as CGI on a free 127.0.0.1 port, and prints the
// address on its first line of output.
func gitHTTPBackendCmd(args []string) error {
	fs := flag.NewFlagSet("git-http-backend", flag.ContinueOnError)
	root := fs.String("root", "", "directory holding the repositories")
	if err := fs.Parse(args); err != nil {
		return err
	}
	execPath, err := exec.Command("git", "--exec-path").Output()
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	h := &cgi.Handler{
		Path: filepath.Join(strings.TrimSpace(string(execPath)), "git-http-backend"),
		Env: []string{"GIT_PROJECT_ROOT=" + *root, "GIT_HTTP_EXPORT_ALL=1", "GIT_CONFIG_NOSYSTEM=1",
			"HOME=" + *root},
		InheritEnv: []string{"PATH"},
	}
	fmt.Println(ln.Addr().String())
	return http.Serve(ln, h)
}

// treeRSSKiB is the resident memory (KiB) of pid and every process
// descending from it, read from /proc (0 if pid is gone).
func treeRSSKiB(pid int) int64 {
	if pid <= 0 {
		return 0
	}
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return rssKiB(pid)
	}
	parent := map[int]int{}
	for _, e := range entries {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		raw, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...: comm may hold spaces; cut after ')'.
		s := string(raw)
		if i := strings.LastIndexByte(s, ')'); i >= 0 {
			if f := strings.Fields(s[i+1:]); len(f) >= 2 {
				parent[p], _ = strconv.Atoi(f[1])
			}
		}
	}
	in := func(p int) bool {
		for range 64 {
			if p == pid {
				return true
			}
			if p <= 1 {
				return false
			}
			p = parent[p]
		}
		return false
	}
	var total int64
	for p := range parent {
		if in(p) {
			total += rssKiB(p)
		}
	}
	return total
}
