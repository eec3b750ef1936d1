package main

// The abuse measurements: loads an attacker or an unlucky operator can
// put on the server, each run once while the server's resident memory is
// sampled; the goal is that none takes it past a few hundred MiB. Each
// prints its time, the answers' status codes and the server's RSS before,
// at its highest during and after the load:
//
//   - parallel pushes of large incompressible files with the real git
//     client over smart HTTP (each pack streams into git on the server);
//   - parallel anonymous bodies of many MiB to the runner protocol
//     (refused from the headers, or past a per-message limit);
//   - parallel npm publishes of large tarballs (decoded to disk as they
//     arrive);
//   - parallel archive downloads of a pushed repository;
//   - parallel JSON bodies of nearly the API's largest size, half of them
//     anonymous, that the generated binding must decode before a handler
//     can refuse them.

import (
	"encoding/base64"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"
)

func abuseCmd(args []string) error {
	fs := flag.NewFlagSet("abuse", flag.ContinueOnError)
	base := fs.String("base", "", "repohost base URL (loopback only)")
	dsFile := fs.String("dataset", "", "dataset file written by seed")
	pid := fs.Int("server-pid", 0, "the server's process id, for its resident memory")
	tmp := fs.String("tmp", "", "directory for the pushed repositories (default: the system's)")
	pushes := fs.Int("pushes", 8, "parallel pushes (0: none)")
	pushMiB := fs.Int("push-mib", 200, "size of each push's file, MiB")
	runners := fs.Int("runner-bodies", 4, "parallel anonymous runner-protocol bodies (0: none)")
	runnerMiB := fs.Int("runner-mib", 150, "size of each runner-protocol body, MiB")
	npms := fs.Int("npm", 4, "parallel npm publishes (0: none)")
	npmMiB := fs.Int("npm-mib", 40, "size of each npm tarball, MiB")
	archives := fs.Int("archives", 20, "parallel archive downloads (0: none; needs a push)")
	jsons := fs.Int("json-bodies", 32, "parallel large JSON bodies to the API (0: none)")
	jsonMiB := fs.Int("json-mib", 7, "size of each JSON body, MiB")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if err := checkLoad(*base, max(1, *pushes, *runners, *npms, *archives, *jsons), time.Second); err != nil {
		return err
	}
	ds, err := readDataset(*dsFile)
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp(*tmp, "bench-abuse")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	run := time.Now().UnixNano()
	fmt.Println()

	var pushed []string
	if *pushes > 0 {
		if _, err := exec.LookPath("git"); err != nil {
			fmt.Println("abuse: pushes skipped, the git binary is not installed")
		} else if pushed, err = abusePushes(*base, ds, dir, run, *pushes, int64(*pushMiB)<<20, *pid); err != nil {
			return err
		}
	}
	if *runners > 0 {
		abuseRunnerBodies(*base, *runners, int64(*runnerMiB)<<20, *pid)
	}
	if *npms > 0 {
		abuseNpm(*base, ds, run, *npms, int64(*npmMiB)<<20, *pid)
	}
	if *archives > 0 && len(pushed) > 0 {
		abuseArchives(*base, ds, pushed[0], *archives, *pid)
	}
	if *jsons > 0 {
		abuseJSONBodies(*base, ds, *jsons, int64(*jsonMiB)<<20, *pid)
	}
	for _, name := range pushed {
		_ = apiCall(newClient(1), ds.Token, http.MethodDelete, *base+"/api/v1/repos/"+ds.User+"/"+name, nil, nil)
	}
	return nil
}

// rssSampler records a process's resident memory every 50 ms between
// start and stop.
type rssSampler struct {
	pid    int
	before int64
	peak   int64
	mu     sync.Mutex
	stop   chan struct{}
	done   chan struct{}
}

func sampleRSS(pid int) *rssSampler { return sampleWith(pid, rssKiB) }

// sampleTreeRSS samples the resident memory of pid and all its
// descendants together (a server with the git processes it runs).
func sampleTreeRSS(pid int) *rssSampler { return sampleWith(pid, treeRSSKiB) }

func sampleWith(pid int, rssKiB func(int) int64) *rssSampler {
	s := &rssSampler{pid: pid, before: rssKiB(pid), stop: make(chan struct{}), done: make(chan struct{})}
	if pid <= 0 {
		close(s.done)
		return s
	}
	go func() {
		defer close(s.done)
		t := time.NewTicker(50 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-s.stop:
				return
			case <-t.C:
				if r := rssKiB(pid); r > 0 {
					s.mu.Lock()
					s.peak = max(s.peak, r)
					s.mu.Unlock()
				}
			}
		}
	}()
	return s
}

// finish stops the sampling and returns the resident memory (KiB) before
// and at its highest.
func (s *rssSampler) finish() (before, peak int64) {
	close(s.stop)
	<-s.done
	s.mu.Lock()
	defer s.mu.Unlock()
	// A transfer shorter than one sampling interval has no sample of its
	// own: its peak is what was there before it.
	return s.before, max(s.peak, s.before)
}

// report stops the sampling and prints the figures of load.
func (s *rssSampler) report(load string, took time.Duration, codes map[string]int) {
	before, peak := s.finish()
	keys := make([]string, 0, len(codes))
	for k := range codes {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s×%d", k, codes[k])
	}
	fmt.Printf("abuse: %-44s %6.1fs  [%s]", load, took.Seconds(), strings.Join(parts, " "))
	if s.pid > 0 {
		// Let the collector return what the load left before reading "after".
		time.Sleep(2 * time.Second)
		fmt.Printf("  repohost RSS %d MiB before, at most %d MiB during, %d MiB after", before>>10, peak>>10, rssKiB(s.pid)>>10)
	}
	fmt.Println()
}

// parallel runs n jobs at once and counts their outcomes.
func parallel(n int, job func(i int) string) (time.Duration, map[string]int) {
	codes := map[string]int{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	start := time.Now()
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := job(i)
			mu.Lock()
			codes[c]++
			mu.Unlock()
		}()
	}
	wg.Wait()
	return time.Since(start), codes
}

func outcome(resp *http.Response, err error) string {
	if err != nil {
		return "error"
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return fmt.Sprint(resp.StatusCode)
}

// abusePushes pushes n repositories at once, each one commit with one
// file of size incompressible bytes, into new repositories of the bench
// user; it returns their names.
func abusePushes(base string, ds *Dataset, dir string, run int64, n int, size int64, pid int) ([]string, error) {
	g := gitRunner{home: dir, token: ds.Token}
	client := newClient(1)
	names := make([]string, n)
	for i := range n {
		names[i] = fmt.Sprintf("bench-abuse-%d-%d", run, i)
		if err := apiCall(client, ds.Token, http.MethodPost, base+"/api/v1/user/repos",
			map[string]any{"name": names[i], "private": true, "default_branch": "main"}, nil); err != nil {
			return names[:i], err
		}
		src := filepath.Join(dir, names[i]+".git")
		if _, err := g.run(dir, nil, "init", "-q", "--bare", src); err != nil {
			return names[:i+1], err
		}
		pr, pw := io.Pipe()
		go func(seed byte) { pw.CloseWithError(writeBigCommit(pw, size, seed)) }(byte(i))
		if _, err := g.run(src, pr, "fast-import", "--quiet"); err != nil {
			return names[:i+1], err
		}
	}
	var firstErr error
	var mu sync.Mutex
	ok := make([]bool, n)
	s := sampleRSS(pid)
	took, codes := parallel(n, func(i int) string {
		u, _ := url.Parse(base)
		u.Path = "/" + ds.User + "/" + names[i] + ".git"
		if _, err := g.run(filepath.Join(dir, names[i]+".git"), nil, "push", "-q", u.String(), "main"); err != nil {
			mu.Lock()
			if firstErr == nil {
				firstErr = err
			}
			mu.Unlock()
			return "failed"
		}
		ok[i] = true
		return "pushed"
	})
	s.report(fmt.Sprintf("%d parallel pushes of %d MiB (git, HTTP)", n, size>>20), took, codes)
	if firstErr != nil {
		fmt.Printf("abuse: first push failure: %v\n", firstErr)
	}
	for i := range n {
		os.RemoveAll(filepath.Join(dir, names[i]+".git"))
	}
	// The pushed ones first: the archive load reads the first.
	var pushed, failed []string
	for i, name := range names {
		if ok[i] {
			pushed = append(pushed, name)
		} else {
			failed = append(failed, name)
		}
	}
	return append(pushed, failed...), nil
}

// writeBigCommit writes a fast-import stream of one commit on
// refs/heads/main adding big.bin of size pseudo-random bytes.
func writeBigCommit(w io.Writer, size int64, seed byte) error {
	if _, err := fmt.Fprintf(w, "commit refs/heads/main\ncommitter Bench <bench@example.com> 1700000000 +0000\ndata 3\nbig\nM 100644 inline big.bin\ndata %d\n", size); err != nil {
		return err
	}
	if _, err := io.Copy(w, &patternReader{left: size, rng: rand.NewChaCha8([32]byte{seed, 2})}); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n\n")
	return err
}

// abuseRunnerBodies POSTs n anonymous bodies of size bytes at once to the
// runner protocol's procedures, Register among them.
func abuseRunnerBodies(base string, n int, size int64, pid int) {
	procs := []string{"Register", "Declare", "FetchTask", "UpdateLog"}
	client := &http.Client{Timeout: 5 * time.Minute}
	s := sampleRSS(pid)
	took, codes := parallel(n, func(i int) string {
		req, err := http.NewRequest(http.MethodPost, base+"/api/actions/runner.v1.RunnerService/"+procs[i%len(procs)],
			&patternReader{left: size, rng: rand.NewChaCha8([32]byte{3, byte(i)})})
		if err != nil {
			return "error"
		}
		req.ContentLength = size
		req.Header.Set("Content-Type", "application/proto")
		return outcome(client.Do(req))
	})
	s.report(fmt.Sprintf("%d parallel anonymous runner bodies of %d MiB", n, size>>20), took, codes)
}

// abuseNpm publishes n npm packages at once, each with a tarball of size
// pseudo-random bytes, the document streamed as npm would send it.
func abuseNpm(base string, ds *Dataset, run int64, n int, size int64, pid int) {
	client := &http.Client{Timeout: 10 * time.Minute}
	s := sampleRSS(pid)
	took, codes := parallel(n, func(i int) string {
		name := fmt.Sprintf("bench-abuse-%d-%d", run, i)
		pr, pw := io.Pipe()
		go func() {
			_, err := fmt.Fprintf(pw, `{"name":%q,"dist-tags":{"latest":"1.0.0"},"versions":{"1.0.0":{"name":%q,"version":"1.0.0"}},"_attachments":{"%s-1.0.0.tgz":{"content_type":"application/octet-stream","data":"`, name, name, name)
			if err == nil {
				enc := base64.NewEncoder(base64.StdEncoding, pw)
				_, err = io.Copy(enc, &patternReader{left: size, rng: rand.NewChaCha8([32]byte{4, byte(i)})})
				if err == nil {
					err = enc.Close()
				}
			}
			if err == nil {
				_, err = io.WriteString(pw, `","length":`+fmt.Sprint(size)+`}}}`)
			}
			pw.CloseWithError(err)
		}()
		req, err := http.NewRequest(http.MethodPut, base+"/api/packages/"+ds.User+"/npm/"+name, pr)
		if err != nil {
			return "error"
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "token "+ds.Token)
		code := outcome(client.Do(req))
		if code == "201" {
			del, _ := http.NewRequest(http.MethodDelete, base+"/api/v1/packages/"+ds.User+"/npm/"+url.PathEscape(name)+"/1.0.0", nil)
			del.Header.Set("Authorization", "token "+ds.Token)
			_ = outcome(client.Do(del))
		}
		return code
	})
	s.report(fmt.Sprintf("%d parallel npm publishes of %d MiB", n, size>>20), took, codes)
}

// abuseArchives downloads the tar.gz archive of the bench user's
// repository name n times at once (the server streams a few and asks the
// rest to retry: 503).
func abuseArchives(base string, ds *Dataset, name string, n int, pid int) {
	client := &http.Client{Timeout: 10 * time.Minute}
	s := sampleRSS(pid)
	took, codes := parallel(n, func(int) string {
		req, err := http.NewRequest(http.MethodGet, base+"/api/v1/repos/"+ds.User+"/"+name+"/archive/main.tar.gz", nil)
		if err != nil {
			return "error"
		}
		req.Header.Set("Authorization", "token "+ds.Token)
		return outcome(client.Do(req))
	})
	s.report(fmt.Sprintf("%d parallel archive downloads", n), took, codes)
}

// abuseJSONBodies sends n issue-create bodies of size bytes at once, every
// other one anonymous: the title is far over its length limit, so each is
// refused (401 or 422), but only after it was decoded.
func abuseJSONBodies(base string, ds *Dataset, n int, size int64, pid int) {
	client := &http.Client{Timeout: 5 * time.Minute}
	body := `{"title":"` + strings.Repeat("t", int(size)) + `","body":"x"}`
	s := sampleRSS(pid)
	took, codes := parallel(n, func(i int) string {
		req, err := http.NewRequest(http.MethodPost, base+"/api/v1/repos/"+ds.User+"/"+ds.Small+"/issues", strings.NewReader(body))
		if err != nil {
			return "error"
		}
		req.Header.Set("Content-Type", "application/json")
		if i%2 == 1 {
			req.Header.Set("Authorization", "token "+ds.Token)
		}
		return outcome(client.Do(req))
	})
	s.report(fmt.Sprintf("%d parallel JSON bodies of %d MiB (half anonymous)", n, size>>20), took, codes)
}
