package main

// The git measurement: a private repository of the bench user gets a
// history of many commits (written locally by git fast-import and pushed
// over smart HTTP), and the real git client then clones it (bare) several
// times one after another, fetches into an up-to-date clone (nothing to
// transfer), and clones it from several clients at once; beside the
// clones, the floor: the same clones from git's own upload-pack over a pipe.
// The token goes in an Authorization header, so no request is answered 401
// first.

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
)

func gitCmd(args []string) error {
	fs := flag.NewFlagSet("git", flag.ContinueOnError)
	base := fs.String("base", "", "repohost base URL (loopback only)")
	dsFile := fs.String("dataset", "", "dataset file written by seed")
	commits := fs.Int("commits", 300, "commits in the repository, each adding one file and changing another")
	fileBytes := fs.Int("file-bytes", 4096, "size of each file added")
	clones := fs.Int("clones", 5, "bare clones, one after another")
	fetches := fs.Int("fetches", 10, "fetches into an up-to-date clone, one after another")
	conc := fs.Int("c", 8, "clones at once for the concurrent figure (0: none)")
	tmp := fs.String("tmp", "", "directory for the clones (default: the system's)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if err := checkLoad(*base, max(1, *conc), time.Second); err != nil {
		return err
	}
	if *commits < 1 || *clones < 1 || *fetches < 1 {
		return errors.New("-commits, -clones and -fetches must be at least 1")
	}
	if _, err := exec.LookPath("git"); err != nil {
		fmt.Println("\ngit clone/fetch: skipped, the git binary (the client measured) is not installed")
		return nil
	}
	ds, err := readDataset(*dsFile)
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp(*tmp, "bench-git")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)

	client := newClient(1)
	name := fmt.Sprintf("bench-git-%d", time.Now().UnixNano())
	if err := apiCall(client, ds.Token, http.MethodPost, *base+"/api/v1/user/repos",
		map[string]any{"name": name, "private": true, "default_branch": "main"}, nil); err != nil {
		return err
	}
	defer apiCall(client, ds.Token, http.MethodDelete, *base+"/api/v1/repos/"+ds.User+"/"+name, nil, nil)
	u, _ := url.Parse(*base)
	u.Path = "/" + ds.User + "/" + name + ".git"
	g := gitRunner{home: dir, token: ds.Token}

	// The history, written locally and pushed.
	src := filepath.Join(dir, "src.git")
	if _, err := g.run(dir, nil, "init", "-q", "--bare", src); err != nil {
		return err
	}
	pr, pw := io.Pipe()
	go func() { pw.CloseWithError(writeHistory(pw, *commits, *fileBytes)) }()
	if _, err := g.run(src, pr, "fast-import", "--quiet"); err != nil {
		return err
	}
	start := time.Now()
	if _, err := g.run(src, nil, "push", "-q", u.String(), "main"); err != nil {
		return err
	}
	pushed := time.Since(start)

	cloneFrom := func(from, dst string) (time.Duration, error) {
		start := time.Now()
		_, err := g.run(dir, nil, "clone", "-q", "--bare", from, dst)
		return time.Since(start), err
	}
	cloneInto := func(dst string) (time.Duration, error) { return cloneFrom(u.String(), dst) }
	var cloneH histogram
	for i := range *clones {
		took, err := cloneInto(filepath.Join(dir, fmt.Sprint("clone", i)))
		if err != nil {
			return err
		}
		cloneH.record(took)
		if i > 0 {
			os.RemoveAll(filepath.Join(dir, fmt.Sprint("clone", i)))
		}
	}
	// The floor: the same clones from git's own upload-pack on the pushed
	// repository, over a pipe (file://) instead of HTTP.
	var floorH histogram
	for i := range *clones {
		dst := filepath.Join(dir, fmt.Sprint("floor", i))
		took, err := cloneFrom("file://"+src, dst)
		if err != nil {
			return err
		}
		floorH.record(took)
		os.RemoveAll(dst)
	}
	first := filepath.Join(dir, "clone0")
	out, err := g.run(first, nil, "count-objects", "-v")
	if err != nil {
		return err
	}
	objects, packKiB := countObjects(out)

	var fetchH histogram
	for range *fetches {
		start := time.Now()
		if _, err := g.run(first, nil, "fetch", "-q", "origin", "+refs/heads/*:refs/heads/*"); err != nil {
			return err
		}
		fetchH.record(time.Since(start))
	}

	var all time.Duration
	if *conc > 0 {
		errs := make([]error, *conc)
		var wg sync.WaitGroup
		start := time.Now()
		for i := range *conc {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, errs[i] = cloneInto(filepath.Join(dir, fmt.Sprint("concurrent", i)))
			}()
		}
		wg.Wait()
		all = time.Since(start)
		if err := errors.Join(errs...); err != nil {
			return err
		}
	}

	median := cloneH.quantile(0.5)
	mib := float64(packKiB) / 1024
	fmt.Printf("\ngit over smart HTTP (%s, private repository of %d commits and %d files; pushed in %s)\n",
		strings.TrimSpace(strings.TrimPrefix(gitVersion(g, dir), "git version")), *commits, *commits, fmtDur(pushed))
	fmt.Printf("  clone --bare: median %s  p90 %s  over %d clones (%d objects, %.1f MiB pack: %.1f MiB/s at the median)\n",
		fmtDur(median), fmtDur(cloneH.quantile(0.9)), *clones, objects, mib, mib/median.Seconds())
	fmt.Printf("  floor, git's own upload-pack over file://: median %s  p90 %s\n", fmtDur(floorH.quantile(0.5)), fmtDur(floorH.quantile(0.9)))
	fmt.Printf("  no-op fetch:  median %s  p90 %s  over %d fetches\n", fmtDur(fetchH.quantile(0.5)), fmtDur(fetchH.quantile(0.9)), *fetches)
	if *conc > 0 {
		fmt.Printf("  %d clones at once: %s in all, %.1f clones/s\n", *conc, fmtDur(all), float64(*conc)/all.Seconds())
	}
	return nil
}

// gitRunner runs the git client with a private HOME and no system
// configuration, sending the token in an Authorization header (given in
// the environment, not on the command line).
type gitRunner struct {
	home, token string
}

func (g gitRunner) run(dir string, stdin io.Reader, args ...string) (string, error) {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Stdin = stdin
	cmd.Env = []string{
		"HOME=" + g.home, "PATH=" + os.Getenv("PATH"), "GIT_CONFIG_NOSYSTEM=1", "GIT_TERMINAL_PROMPT=0",
		"GIT_ASKPASS=/bin/false", "LANG=C", "LC_ALL=C",
		"GIT_CONFIG_COUNT=2",
		"GIT_CONFIG_KEY_0=protocol.version", "GIT_CONFIG_VALUE_0=2",
		"GIT_CONFIG_KEY_1=http.extraHeader", "GIT_CONFIG_VALUE_1=Authorization: token " + g.token,
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("git %s: %v: %.500s", strings.Join(args, " "), err, out)
	}
	return string(out), nil
}

func gitVersion(g gitRunner, dir string) string {
	out, _ := g.run(dir, nil, "version")
	return out
}

// countObjects reads the number of objects and their size on disk (KiB),
// loose and packed, from the output of git count-objects -v. (A clone
// holds one pack.)
func countObjects(out string) (objects, sizeKiB int64) {
	for _, line := range strings.Split(out, "\n") {
		k, v, _ := strings.Cut(line, ":")
		n, _ := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		switch k {
		case "count", "in-pack":
			objects += n
		case "size", "size-pack":
			sizeKiB += n
		}
	}
	return objects, sizeKiB
}

// writeHistory writes a git fast-import stream of commits on
// refs/heads/main: commit i (from 1) adds files/NNNNN.txt of fileBytes
// bytes of text and, from the second on, rewrites the file of an earlier
// commit, so the history has commits files and about 2×commits blobs. The
// stream is the same on every run.
func writeHistory(w io.Writer, commits, fileBytes int) error {
	bw := bufio.NewWriter(w)
	rng := rand.New(rand.NewPCG(7, 11))
	text := func(n int) []byte {
		b := make([]byte, 0, n+64)
		for len(b) < n {
			b = fmt.Appendf(b, "%08x %08x %08x %08x %08x %08x %08x\n",
				rng.Uint32(), rng.Uint32(), rng.Uint32(), rng.Uint32(), rng.Uint32(), rng.Uint32(), rng.Uint32())
		}
		return b[:n]
	}
	data := func(b []byte) {
		fmt.Fprintf(bw, "data %d\n", len(b))
		bw.Write(b)
		bw.WriteString("\n")
	}
	file := func(i int) string { return fmt.Sprintf("files/%05d.txt", i) }
	when := int64(1_700_000_000)
	for i := 1; i <= commits; i++ {
		fmt.Fprintf(bw, "commit refs/heads/main\ncommitter Bench <bench@example.com> %d +0000\n", when+int64(i)*60)
		data([]byte(fmt.Sprintf("Add %s", file(i))))
		fmt.Fprintf(bw, "M 100644 inline %s\n", file(i))
		data(text(fileBytes))
		if i > 1 {
			fmt.Fprintf(bw, "M 100644 inline %s\n", file(1+rng.IntN(i-1)))
			data(text(fileBytes))
		}
		bw.WriteString("\n")
	}
	return bw.Flush()
}
