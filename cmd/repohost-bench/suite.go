package main

// The suite command measures every hot path of a server seeded by the seed
// command, each beside the floor server answering the same bytes, and prints
// one table: requests per second, p50 and p99 for repohost, the floor's
// requests per second, and repohost as a share of its floor.

import (
	"bufio"
	"encoding/base64"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"time"
)

// scenario is one row of the table.
type scenario struct {
	name   string
	method string
	paths  []string
	body   string
	auth   string // "token", "basic", "admin" (the administrator's token) or "" (anonymous)
	// background, when set, is sent to repohost from backgroundConc
	// connections while the scenario is measured there (not on the floor).
	background *scenario
	// perSecond paces a background to that many requests per second
	// (0: as fast as it is answered).
	perSecond float64
}

// backgroundConc is how many connections send a scenario's background.
const backgroundConc = 2

// backgroundRounds is how many times a scenario with a background is
// measured without it and then with it.
const backgroundRounds = 3

// createsPerSecond is the pace of the issues created beside the list of
// another repository: a busy repository's.
const createsPerSecond = 100

// keywordPaths is prefix followed by each search word of the seed.
func keywordPaths(prefix string) []string {
	out := make([]string, SearchWords)
	for i := range out {
		out[i] = prefix + SearchWord(i)
	}
	return out
}

// namePaths is format filled with each number from lo up to hi (at least
// one path).
func namePaths(format string, lo, hi int) []string {
	var out []string
	for k := lo; k < max(hi, lo+1); k++ {
		out = append(out, fmt.Sprintf(format, k))
	}
	return out
}

func scenarios(ds *Dataset) []scenario {
	u := ds.User
	small, big := "/api/v1/repos/"+u+"/"+ds.Small, "/api/v1/repos/"+u+"/"+ds.Big
	rng := rand.New(rand.NewPCG(1, 2))
	var smallIssues, bigIssues, commentPaths []string
	for i := 1; i <= ds.SmallIssues; i++ {
		smallIssues = append(smallIssues, fmt.Sprintf("%s/issues/%d", small, i))
	}
	for i := 0; i < 200 && ds.BigIssues > 0; i++ {
		bigIssues = append(bigIssues, fmt.Sprintf("%s/issues/%d", big, 1+rng.IntN(ds.BigIssues)))
	}
	for i := 0; i < 500 && ds.BigIssues > 0; i++ {
		commentPaths = append(commentPaths, fmt.Sprintf("%s/issues/%d/comments", big, 201+rng.IntN(max(1, ds.BigIssues-200))))
	}
	lastIssuePage := max(1, (ds.BigIssues+49)/50)
	lastRepoPage := max(1, (ds.UserRepos+29)/30)
	nIssues := func(n int) string { return fmt.Sprintf("%d issues", n) }
	return []scenario{
		{name: "GET repository", method: "GET", paths: []string{small}, auth: "token"},
		{name: "GET repository (" + nIssues(ds.BigIssues) + ")", method: "GET", paths: []string{big}, auth: "token"},
		{name: "GET issue (" + nIssues(ds.SmallIssues) + ")", method: "GET", paths: smallIssues, auth: "token"},
		{name: "GET issue (" + nIssues(ds.BigIssues) + ")", method: "GET", paths: bigIssues, auth: "token"},
		{name: "50-issue list (" + nIssues(ds.SmallIssues) + ")", method: "GET", paths: []string{small + "/issues?limit=50"}, auth: "token"},
		{name: "50-issue list (" + nIssues(ds.BigIssues) + ")", method: "GET", paths: []string{big + "/issues?limit=50"}, auth: "token"},
		{name: fmt.Sprintf("50-issue list, page %d of all", lastIssuePage), method: "GET",
			paths: []string{fmt.Sprintf("%s/issues?state=all&limit=50&page=%d", big, lastIssuePage)}, auth: "token"},
		{name: "50-issue list, label filter", method: "GET", paths: []string{big + "/issues?limit=50&labels=label-3"}, auth: "token"},
		{name: "issue search (all repos)", method: "GET", paths: []string{"/api/v1/repos/issues/search?limit=50"}, auth: "token"},
		{name: "issue search (all repos), anonymous", method: "GET", paths: []string{"/api/v1/repos/issues/search?limit=50"}},
		{name: "issue search (all repos), admin", method: "GET", paths: []string{"/api/v1/repos/issues/search?limit=50"}, auth: "admin"},
		// A different keyword on each request, each found in as many
		// issues of either repository (see SearchWord).
		{name: "keyword search (" + nIssues(ds.BigIssues) + ")", method: "GET", paths: keywordPaths(big + "/issues?limit=50&q="), auth: "token"},
		{name: "keyword search (" + nIssues(ds.SmallIssues) + ")", method: "GET", paths: keywordPaths(small + "/issues?limit=50&q="), auth: "token"},
		{name: "keyword search (all repos)", method: "GET", paths: keywordPaths("/api/v1/repos/issues/search?limit=50&q="), auth: "token"},
		// The small repository's list while issues are created in the big
		// one: a write elsewhere should not cost this list its kept pages.
		// The creates come at a steady createsPerSecond, a busy
		// repository's pace: sent flat out from two connections they
		// would take most of a small machine's CPU, and the list would
		// measure the share of the CPU left to it, not whether the
		// writes retire its kept pages.
		{name: "50-issue list (" + nIssues(ds.SmallIssues) + "), creates in another", method: "GET",
			paths: []string{small + "/issues?limit=50"}, auth: "token",
			background: &scenario{method: "POST", paths: []string{big + "/issues"},
				body: `{"title":"benchmark issue","body":"created beside a list"}`, auth: "token", perSecond: createsPerSecond}},
		{name: "comment list (5 comments)", method: "GET", paths: []string{big + "/issues/7/comments"}, auth: "token"},
		{name: fmt.Sprintf("30-repository list (%d repos)", ds.UserRepos), method: "GET", paths: []string{"/api/v1/users/" + u + "/repos"}, auth: "token"},
		{name: fmt.Sprintf("30-repository list, page %d", lastRepoPage), method: "GET",
			paths: []string{fmt.Sprintf("/api/v1/users/%s/repos?page=%d", u, lastRepoPage)}, auth: "token"},
		{name: fmt.Sprintf("repository search (%d repos)", ds.Repos), method: "GET", paths: []string{"/api/v1/repos/search?limit=30"}, auth: "token"},
		// A different keyword on each request, each a substring of the
		// names of about ten repositories or users (a trigram index).
		{name: fmt.Sprintf("repository keyword search (%d repos)", ds.Repos), method: "GET",
			paths: namePaths("/api/v1/repos/search?limit=30&q=repo-%04d", 1, min(1000, ds.Repos/10)), auth: "token"},
		{name: fmt.Sprintf("user keyword search (%d users)", ds.Users), method: "GET",
			paths: namePaths("/api/v1/users/search?limit=30&q=user%03d", 1, min(500, ds.Users/10)), auth: "token"},
		{name: "GET /user (token)", method: "GET", paths: []string{"/api/v1/user"}, auth: "token"},
		{name: "GET /user (Basic, password)", method: "GET", paths: []string{"/api/v1/user"}, auth: "basic"},
		{name: "issue create", method: "POST", paths: []string{big + "/issues"},
			body: `{"title":"benchmark issue","body":"created by make bench"}`, auth: "token"},
		{name: "comment create", method: "POST", paths: commentPaths, body: `{"body":"benchmark comment"}`, auth: "token"},
	}
}

func suiteCmd(args []string) error {
	fs := flag.NewFlagSet("suite", flag.ContinueOnError)
	base := fs.String("base", "", "repohost base URL (loopback only)")
	dsFile := fs.String("dataset", "", "dataset file written by seed")
	conc := fs.Int("c", 16, "concurrent connections")
	dur := fs.Duration("d", 5*time.Second, "measured time per scenario and server")
	warm := fs.Duration("warmup", time.Second, "unmeasured requests before each measurement")
	pid := fs.Int("server-pid", 0, "repohost's process id, to report its memory")
	label := fs.String("label", "", "name of the database, for the title")
	only := fs.String("only", "", "run only scenarios whose name matches this regular expression")
	upload := fs.Int64("upload-bytes", 1<<30, "size of the generic package file uploaded once after the table (0: none)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if err := checkLoad(*base, *conc, *dur); err != nil {
		return err
	}
	raw, err := os.ReadFile(*dsFile)
	if err != nil {
		return err
	}
	var ds Dataset
	if err := json.Unmarshal(raw, &ds); err != nil {
		return err
	}
	list := scenarios(&ds)
	if *only != "" {
		re, err := regexp.Compile(*only)
		if err != nil {
			return err
		}
		var kept []scenario
		for _, s := range list {
			if re.MatchString(s.name) {
				kept = append(kept, s)
			}
		}
		list = kept
	}
	basic := "Basic " + base64.StdEncoding.EncodeToString([]byte(ds.User+":"+ds.Password))
	authOf := func(s scenario) string {
		switch s.auth {
		case "token":
			return "token " + ds.Token
		case "basic":
			return basic
		case "admin":
			return "token " + ds.AdminToken
		}
		return ""
	}
	client := newClient(*conc)

	// Record what repohost answers, for the floor to answer the same.
	canned := map[string]*cannedResponse{}
	for _, s := range list {
		var first *cannedResponse
		for _, p := range s.paths {
			if first != nil && s.method != http.MethodGet {
				canned[cannedKey(s.method, p)] = first
				continue
			}
			c, err := record(client, *base, s.method, p, s.body, authOf(s))
			if err != nil {
				return fmt.Errorf("%s: %w", s.name, err)
			}
			first = c
			canned[cannedKey(s.method, p)] = c
		}
	}
	dir, err := os.MkdirTemp("", "repohost-floor")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	cannedFile := filepath.Join(dir, "responses.json")
	if raw, err = json.Marshal(canned); err != nil {
		return err
	}
	if err := os.WriteFile(cannedFile, raw, 0o600); err != nil {
		return err
	}
	floorBase, stopFloor, err := startFloor(cannedFile)
	if err != nil {
		return err
	}
	defer stopFloor()

	title := "repohost benchmark"
	if *label != "" {
		title += " on " + *label
	}
	fmt.Printf("\n%s: %d users, %d repositories (%d of %s), issues %d + %d; seeded in %.1fs\n",
		title, ds.Users, ds.Repos, ds.UserRepos, ds.User, ds.BigIssues, ds.SmallIssues, ds.Seconds)
	fmt.Printf("%d connections, %s per measurement after %s of warm-up; floor = bare net/http answering the same bytes, same run\n\n",
		*conc, *dur, *warm)
	fmt.Printf("%-40s %9s %9s %9s %9s %8s %s\n", "scenario", "req/s", "p50", "p99", "floor/s", "of floor", "errors")
	fmt.Println(strings.Repeat("-", 100))
	failed := 0
	for _, s := range list {
		t := target{method: s.method, paths: s.paths, auth: authOf(s)}
		if s.body != "" {
			t.body = []byte(s.body)
		}
		measure := func(base string) *result {
			g := &generator{client: client, base: base, target: t}
			if *warm > 0 {
				g.run(*conc, *warm)
			}
			return g.run(*conc, *dur)
		}
		var got *result
		note := ""
		if b := s.background; b != nil {
			// The same list without the background, just before: the
			// ratio of the two holds however busy the machine is. The
			// two alternate backgroundRounds times, each pair summed, so
			// that a machine whose speed drifts during the scenario
			// favours neither.
			alone, bg := &result{}, &result{}
			got = &result{}
			for range backgroundRounds {
				alone.add(measure(*base))
				g := &generator{client: client, base: *base, target: target{method: b.method, paths: b.paths, body: []byte(b.body), auth: authOf(*b)},
					perSecond: b.perSecond}
				bgDone := make(chan struct{})
				var round *result
				go func() { defer close(bgDone); round = g.run(backgroundConc, *warm+*dur) }()
				got.add(measure(*base))
				<-bgDone
				bg.add(round)
			}
			if bg.errors > 0 {
				got.errors += bg.errors
				got.firstError = "background: " + bg.firstError
			}
			pace := "as fast as answered"
			if b := s.background; b.perSecond > 0 {
				pace = fmt.Sprintf("paced to %.0f/s", b.perSecond)
			}
			note = fmt.Sprintf("  (with %.0f background requests/s, %s: %s %s; without them, measured in turn: %.0f req/s, p99 %s; with/without %.2f)\n",
				bg.rate(), pace, s.background.method, s.background.paths[0], alone.rate(), fmtDur(alone.hist.quantile(0.99)),
				got.rate()/max(alone.rate(), 1e-9))
		}
		if got == nil {
			got = measure(*base)
		}
		floor := measure(floorBase)
		rate, floorRate := got.rate(), floor.rate()
		share := "-"
		if floorRate > 0 {
			share = fmt.Sprintf("%.1f%%", 100*rate/floorRate)
		}
		errs := ""
		if got.errors > 0 {
			failed++
			errs = fmt.Sprintf("%d (%s)", got.errors, got.firstError)
		}
		fmt.Printf("%-40s %9.0f %9s %9s %9.0f %8s %s\n", s.name, rate, fmtDur(got.hist.quantile(0.5)),
			fmtDur(got.hist.quantile(0.99)), floorRate, share, errs)
		fmt.Print(note)
	}
	if *pid > 0 {
		fmt.Printf("\nrepohost memory after the load: %s\n", memoryOf(*pid))
	}
	if *upload > 0 {
		if err := measureUpload(*base, ds.User, ds.Token, *upload, *pid); err != nil {
			return fmt.Errorf("large upload: %w", err)
		}
	}
	if failed > 0 {
		return fmt.Errorf("%d scenarios had errors", failed)
	}
	return nil
}

func (r *result) rate() float64 {
	if r.elapsed <= 0 {
		return 0
	}
	return float64(r.requests-r.errors) / r.elapsed.Seconds()
}

// record sends one request and keeps the answer; anything but a 2xx is an
// error (the dataset or the server is wrong, and the figure would lie).
func record(client *http.Client, base, method, path, body, auth string) (*cannedResponse, error) {
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, base+path, rd)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return nil, fmt.Errorf("%s %s answered %d: %.300s", method, path, resp.StatusCode, b)
	}
	c := &cannedResponse{Status: resp.StatusCode, Header: map[string]string{}, Body: b}
	for _, h := range []string{"Content-Type", "X-Total-Count", "Link"} {
		if v := resp.Header.Get(h); v != "" {
			c.Header[h] = v
		}
	}
	return c, nil
}

// startFloor runs this program's floor command as a child process and
// returns its base URL and a function that stops it.
func startFloor(cannedFile string) (string, func(), error) {
	self, err := os.Executable()
	if err != nil {
		return "", nil, err
	}
	cmd := exec.Command(self, "floor", "-responses", cannedFile)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return "", nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return "", nil, err
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		return "", nil, err
	}
	stop := func() {
		// Closing stdin ends the floor; Kill (of this child, by its
		// handle) only if it does not.
		stdin.Close()
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(3 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	}
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		stop()
		return "", nil, errors.New("the floor server did not start")
	}
	return "http://" + strings.TrimSpace(line), stop, nil
}

// memoryOf reads a process's resident set (now and at its peak) from /proc.
func memoryOf(pid int) string {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return "unknown (" + err.Error() + ")"
	}
	var rss, hwm string
	for _, line := range strings.Split(string(raw), "\n") {
		k, v, _ := strings.Cut(line, ":")
		switch k {
		case "VmRSS":
			rss = strings.TrimSpace(v)
		case "VmHWM":
			hwm = strings.TrimSpace(v)
		}
	}
	return fmt.Sprintf("RSS %s (peak %s)", rss, hwm)
}
