// Command repohost-bench is the small HTTP load generator behind
// `make bench` (scripts/bench.sh). It sends GET requests from a fixed number
// of workers for a fixed time, cycling through the paths it is given, and
// prints the request rate and the p50/p99 latency of the 2xx answers.
// Anything else is counted as an error and reported.
//
// It is a measurement, not a test: it only talks to loopback addresses and
// stops by itself when the duration is over.
//
//	repohost-bench -base http://127.0.0.1:3000 -token T -c 8 -d 10s \
//	    -name "GET /repos/{owner}/{repo}" /api/v1/repos/u/r1 /api/v1/repos/u/r2
package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"math/bits"
	"net"
	"net/http"
	"net/url"
	"os"
	"sync"
	"time"
)

func main() {
	var err error
	args := os.Args[1:]
	switch {
	case len(args) > 0 && args[0] == "seed":
		err = seedCmd(args[1:])
	case len(args) > 0 && args[0] == "suite":
		err = suiteCmd(args[1:])
	case len(args) > 0 && args[0] == "webhooks":
		err = webhooksCmd(args[1:])
	case len(args) > 0 && args[0] == "git":
		err = gitCmd(args[1:])
	case len(args) > 0 && args[0] == "git-large":
		err = gitProtoCmd(args[1:])
	case len(args) > 0 && args[0] == "git-http-backend":
		err = gitHTTPBackendCmd(args[1:])
	case len(args) > 0 && args[0] == "merges":
		err = mergesCmd(args[1:])
	case len(args) > 0 && args[0] == "pushes":
		err = pushesCmd(args[1:])
	case len(args) > 0 && args[0] == "abuse":
		err = abuseCmd(args[1:])
	case len(args) > 0 && args[0] == "storage":
		err = storageCmd(args[1:])
	case len(args) > 0 && args[0] == "floor":
		err = floorCmd(args[1:])
	default:
		err = run(args)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "repohost-bench:", err)
		os.Exit(1)
	}
}

// run is the single-endpoint mode: GET the paths it is given.
func run(args []string) error {
	fs := flag.NewFlagSet("repohost-bench", flag.ContinueOnError)
	base := fs.String("base", "http://127.0.0.1:3000", "server base URL (loopback only)")
	token := fs.String("token", "", "access token sent as 'Authorization: token …' (empty: anonymous)")
	conc := fs.Int("c", 8, "concurrent workers")
	dur := fs.Duration("d", 10*time.Second, "how long to send requests")
	warm := fs.Duration("warmup", time.Second, "requests sent before measuring (not counted)")
	name := fs.String("name", "", "label for the report (default: the first path)")
	maxErrors := fs.Float64("max-error-ratio", 0, "exit 1 when errors/requests exceeds this")
	if err := fs.Parse(args); err != nil {
		return err
	}
	paths := fs.Args()
	if len(paths) == 0 {
		return errors.New("no paths given")
	}
	if err := checkLoad(*base, *conc, *dur); err != nil {
		return err
	}
	if *name == "" {
		*name = paths[0]
	}
	gen := &generator{client: newClient(*conc), base: *base, target: target{method: http.MethodGet, paths: paths}}
	if *token != "" {
		gen.target.auth = "token " + *token
	}
	if *warm > 0 {
		gen.run(*conc, *warm)
	}
	res := gen.run(*conc, *dur)
	res.print(os.Stdout, *name, *conc)
	if res.requests == 0 {
		return errors.New("no request completed")
	}
	if ratio := float64(res.errors) / float64(res.requests); ratio > *maxErrors {
		return fmt.Errorf("%s: %d of %d requests failed (first: %s)", *name, res.errors, res.requests, res.firstError)
	}
	return nil
}

// checkLoad refuses settings that are not a short measurement of this
// machine.
func checkLoad(base string, conc int, dur time.Duration) error {
	if conc < 1 || conc > 256 {
		return errors.New("-c must be between 1 and 256")
	}
	if dur <= 0 || dur > 10*time.Minute {
		return errors.New("-d must be positive and at most 10m")
	}
	u, err := url.Parse(base)
	if err != nil {
		return err
	}
	return loopbackOnly(u.Hostname())
}

func newClient(conc int) *http.Client {
	return &http.Client{
		Timeout: 30 * time.Second,
		Transport: &http.Transport{
			MaxIdleConns:        conc,
			MaxIdleConnsPerHost: conc,
			MaxConnsPerHost:     conc,
			IdleConnTimeout:     30 * time.Second,
		},
	}
}

// loopbackOnly refuses any target that is not this machine.
func loopbackOnly(host string) error {
	if host == "localhost" {
		return nil
	}
	ip := net.ParseIP(host)
	if ip == nil || !ip.IsLoopback() {
		return fmt.Errorf("refusing to load %q: only loopback addresses are allowed", host)
	}
	return nil
}

// target is what the workers send: one method, with an optional body and
// Authorization header, to paths taken in turn.
type target struct {
	method string
	paths  []string
	body   []byte
	auth   string // the Authorization header, "" for none
}

type generator struct {
	client *http.Client
	base   string
	target target
	// perSecond, when above 0, paces the workers together to that many
	// requests per second (a steady load) instead of as fast as answers
	// come back.
	perSecond float64
}

type result struct {
	requests   int64 // every completed request, errors included
	errors     int64
	firstError string
	elapsed    time.Duration
	hist       histogram // latencies of the successful requests
}

// run sends requests from conc workers until d has passed. A request under
// way at the deadline is waited for (the client's timeout bounds it) rather
// than cut off: a slow endpoint then still gets a figure, and the server is
// not left working on abandoned requests while the next measurement runs.
// The rate divides by the time until the last answer.
func (g *generator) run(conc int, d time.Duration) *result {
	ctx := context.Background()
	deadline := time.Now().Add(d)
	parts := make([]*result, conc)
	var wg sync.WaitGroup
	start := time.Now()
	for w := 0; w < conc; w++ {
		r := &result{}
		parts[w] = r
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			// Workers start at different paths so that they do not all hit
			// the same row at the same moment.
			for i, k := w, 0; time.Now().Before(deadline); i, k = i+1, k+1 {
				if g.perSecond > 0 {
					// Request k of worker w is due at its turn among all
					// the workers' requests.
					due := start.Add(time.Duration(float64(k*conc+w) / g.perSecond * float64(time.Second)))
					if !due.Before(deadline) {
						break
					}
					time.Sleep(time.Until(due))
				}
				g.one(ctx, g.target.paths[i%len(g.target.paths)], r)
			}
		}(w)
	}
	wg.Wait()
	total := &result{}
	for _, r := range parts {
		total.add(r)
	}
	total.elapsed = time.Since(start)
	return total
}

// add counts o's requests, errors and latencies in r, and its time (for
// measurements made one after another).
func (r *result) add(o *result) {
	r.requests += o.requests
	r.errors += o.errors
	if r.firstError == "" {
		r.firstError = o.firstError
	}
	r.hist.merge(&o.hist)
	r.elapsed += o.elapsed
}

func (g *generator) one(ctx context.Context, path string, r *result) {
	var body io.Reader
	if g.target.body != nil {
		body = bytes.NewReader(g.target.body)
	}
	req, err := http.NewRequestWithContext(ctx, g.target.method, g.base+path, body)
	if err != nil {
		r.fail(err.Error())
		return
	}
	if g.target.auth != "" {
		req.Header.Set("Authorization", g.target.auth)
	}
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	t0 := time.Now()
	resp, err := g.client.Do(req)
	if err != nil {
		r.fail(err.Error())
		return
	}
	_, copyErr := io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	lat := time.Since(t0)
	r.requests++
	switch {
	case copyErr != nil:
		r.errors++
		r.note(fmt.Sprintf("%s %s: reading body: %v", g.target.method, path, copyErr))
	case resp.StatusCode < 200 || resp.StatusCode > 299:
		r.errors++
		r.note(fmt.Sprintf("%s %s: status %d", g.target.method, path, resp.StatusCode))
	default:
		r.hist.record(lat)
	}
}

func (r *result) fail(msg string) {
	r.requests++
	r.errors++
	r.note(msg)
}

func (r *result) note(msg string) {
	if r.firstError == "" {
		r.firstError = msg
	}
}

func (r *result) print(w io.Writer, name string, conc int) {
	secs := r.elapsed.Seconds()
	ok := r.requests - r.errors
	fmt.Fprintf(w, "%-32s %6.0f req/s  p50 %8s  p99 %8s  max %8s  (%d requests, %d errors, %d workers, %.1fs)\n",
		name, float64(ok)/secs, fmtDur(r.hist.quantile(0.50)), fmtDur(r.hist.quantile(0.99)), fmtDur(r.hist.max),
		r.requests, r.errors, conc, secs)
	if r.errors > 0 {
		fmt.Fprintf(w, "%-32s first error: %s\n", "", r.firstError)
	}
}

func fmtDur(d time.Duration) string {
	switch {
	case d >= time.Second:
		return fmt.Sprintf("%.2fs", d.Seconds())
	case d >= time.Millisecond:
		return fmt.Sprintf("%.2fms", float64(d)/float64(time.Millisecond))
	default:
		return fmt.Sprintf("%dµs", d.Microseconds())
	}
}

// histogram counts latencies in log-linear buckets: each power of two of
// nanoseconds is split into subBuckets equal parts, so a reported quantile is
// within 1/subBuckets (about 1.6%) of the true value, in fixed memory.
type histogram struct {
	counts [64 * subBuckets]int64
	n      int64
	max    time.Duration
}

const (
	subBits    = 6
	subBuckets = 1 << subBits
)

func bucketOf(ns uint64) int {
	if ns < subBuckets {
		return int(ns)
	}
	exp := bits.Len64(ns) - 1 // ns is in [2^exp, 2^(exp+1))
	shift := exp - subBits
	sub := int(ns>>shift) - subBuckets // 0 .. subBuckets-1
	return (shift+1)*subBuckets + sub
}

// lowerBound is the smallest latency that falls into bucket b.
func lowerBound(b int) uint64 {
	if b < subBuckets {
		return uint64(b)
	}
	shift := b/subBuckets - 1
	sub := b % subBuckets
	return uint64(subBuckets+sub) << shift
}

func (h *histogram) record(d time.Duration) {
	if d < 0 {
		d = 0
	}
	h.counts[bucketOf(uint64(d))]++
	h.n++
	if d > h.max {
		h.max = d
	}
}

func (h *histogram) merge(o *histogram) {
	for i, c := range o.counts {
		h.counts[i] += c
	}
	h.n += o.n
	if o.max > h.max {
		h.max = o.max
	}
}

// quantile returns the lower bound of the bucket holding the q-th latency.
func (h *histogram) quantile(q float64) time.Duration {
	if h.n == 0 {
		return 0
	}
	rank := int64(math.Ceil(q * float64(h.n)))
	if rank < 1 {
		rank = 1
	}
	var seen int64
	for b, c := range h.counts {
		seen += c
		if seen >= rank {
			return time.Duration(lowerBound(b))
		}
	}
	return h.max
}
