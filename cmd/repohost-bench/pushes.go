package main

// The push measurement: how long a commit to a branch takes with no open
// pull request on it and with n of them, and how long after the commit all
// n pull requests show the new base. Commits go through the contents API
// (the same ref-change path as a git push), so no git client is needed.
// A commit must not wait for the pull requests: their refresh is work of
// the outbox's pull_refresh consumer, off the request.

import (
	"encoding/base64"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"sync"
	"time"
)

func pushesCmd(args []string) error {
	fs := flag.NewFlagSet("pushes", flag.ContinueOnError)
	base := fs.String("base", "", "repohost base URL (loopback only)")
	dsFile := fs.String("dataset", "", "dataset file written by seed")
	pulls := fs.Int("pulls", 500, "open pull requests on the branch")
	commits := fs.Int("commits", 10, "commits timed with and without them")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if err := checkLoad(*base, 1, time.Second); err != nil {
		return err
	}
	if *pulls < 1 || *commits < 1 {
		return errors.New("-pulls and -commits must be at least 1")
	}
	ds, err := readDataset(*dsFile)
	if err != nil {
		return err
	}
	client := newClient(8)
	name := fmt.Sprintf("bench-push-%d", time.Now().UnixNano())
	if err := apiCall(client, ds.Token, http.MethodPost, *base+"/api/v1/user/repos",
		map[string]any{"name": name, "auto_init": true, "default_branch": "main"}, nil); err != nil {
		return err
	}
	repo := *base + "/api/v1/repos/" + ds.User + "/" + name
	defer apiCall(client, ds.Token, http.MethodDelete, repo, nil, nil)
	seq := 0
	commit := func() (string, time.Duration, error) {
		seq++
		content := base64.StdEncoding.EncodeToString(fmt.Appendf(nil, "commit %d\n", seq))
		var out struct {
			Commit struct {
				SHA string `json:"sha"`
			} `json:"commit"`
		}
		start := time.Now()
		err := apiCall(client, ds.Token, http.MethodPost, fmt.Sprintf("%s/contents/main-%d.txt", repo, seq),
			map[string]any{"content": content, "branch": "main", "message": fmt.Sprintf("Commit %d", seq)}, &out)
		return out.Commit.SHA, time.Since(start), err
	}
	timeCommits := func() (histogram, error) {
		var h histogram
		for range *commits {
			_, d, err := commit()
			if err != nil {
				return h, err
			}
			h.record(d)
		}
		return h, nil
	}
	// Warm up, then the commits with no pull request open.
	if _, _, err := commit(); err != nil {
		return err
	}
	idle, err := timeCommits()
	if err != nil {
		return err
	}

	// n pull requests into main, each from its own branch with one file.
	opened := time.Now()
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < *pulls; i += 8 {
				branch := fmt.Sprintf("topic-%d", i)
				content := base64.StdEncoding.EncodeToString(fmt.Appendf(nil, "file of %s\n", branch))
				if err := apiCall(client, ds.Token, http.MethodPost, fmt.Sprintf("%s/contents/%s.txt", repo, branch),
					map[string]any{"content": content, "branch": "main", "new_branch": branch, "message": "Add " + branch}, nil); err != nil {
					errs <- err
					return
				}
				if err := apiCall(client, ds.Token, http.MethodPost, repo+"/pulls",
					map[string]any{"head": branch, "base": "main", "title": "Bench " + branch}, nil); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		return err
	}
	fmt.Printf("\npushes: %d pull requests opened in %s\n", *pulls, fmtDur(time.Since(opened)))

	// Each commit with them open, then the wait until every one shows the
	// new base: the next commit is not timed while they refresh.
	var busy, converge histogram
	for range *commits {
		sha, d, err := commit()
		if err != nil {
			return err
		}
		busy.record(d)
		start := time.Now()
		if err := awaitBase(client, ds.Token, repo, *pulls, sha); err != nil {
			return err
		}
		converge.record(time.Since(start) + d)
	}
	ratio := float64(busy.quantile(0.5)) / float64(max(idle.quantile(0.5), 1))
	fmt.Printf("pushes (contents API commit to main, %d each)\n", *commits)
	fmt.Printf("  no open pull request:      median %s  p90 %s\n", fmtDur(idle.quantile(0.5)), fmtDur(idle.quantile(0.9)))
	fmt.Printf("  %d open pull requests:    median %s  p90 %s  (%.2fx)\n", *pulls, fmtDur(busy.quantile(0.5)), fmtDur(busy.quantile(0.9)), ratio)
	fmt.Printf("  all %d refreshed after:   median %s  max %s  (from the commit's request)\n", *pulls, fmtDur(converge.quantile(0.5)), fmtDur(converge.max))
	return nil
}

// awaitBase reads the open pull requests of repo until all n have base
// sha (at most two minutes).
func awaitBase(client *http.Client, token, repo string, n int, sha string) error {
	deadline := time.Now().Add(2 * time.Minute)
	for {
		done := 0
		for page := 1; ; page++ {
			var list []struct {
				Base struct {
					SHA string `json:"sha"`
				} `json:"base"`
			}
			if err := apiCall(client, token, http.MethodGet, fmt.Sprintf("%s/pulls?state=open&limit=50&page=%d", repo, page), nil, &list); err != nil {
				return err
			}
			for _, p := range list {
				if p.Base.SHA == sha {
					done++
				}
			}
			if len(list) < 50 {
				break
			}
		}
		if done == n {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%d of %d pull requests show the new base after 2 minutes", done, n)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
