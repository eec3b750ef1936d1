package main

// The merge measurement: a repository of the bench user gets n+2 head
// branches, each adding its own file to main (made through the contents
// API, so no git client is needed), and a pull request for each; then the
// pull requests are merged one after another through
// POST /repos/{owner}/{repo}/pulls/{index}/merge, each call timed: n with
// "merge", one "squash" and one "rebase". As main moves with every merge,
// each later one is a real three-way merge, free of conflicts.

import (
	"encoding/base64"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"time"
)

func mergesCmd(args []string) error {
	fs := flag.NewFlagSet("merges", flag.ContinueOnError)
	base := fs.String("base", "", "repohost base URL (loopback only)")
	dsFile := fs.String("dataset", "", "dataset file written by seed")
	n := fs.Int("n", 20, "pull requests merged with \"merge\" (one squash and one rebase come on top)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if err := checkLoad(*base, 1, time.Second); err != nil {
		return err
	}
	if *n < 1 {
		return errors.New("-n must be at least 1")
	}
	ds, err := readDataset(*dsFile)
	if err != nil {
		return err
	}
	client := newClient(1)
	name := fmt.Sprintf("bench-merge-%d", time.Now().UnixNano())
	if err := apiCall(client, ds.Token, http.MethodPost, *base+"/api/v1/user/repos",
		map[string]any{"name": name, "auto_init": true, "default_branch": "main"}, nil); err != nil {
		return err
	}
	repo := *base + "/api/v1/repos/" + ds.User + "/" + name
	defer apiCall(client, ds.Token, http.MethodDelete, repo, nil, nil)

	styles := make([]string, 0, *n+2)
	for range *n {
		styles = append(styles, "merge")
	}
	styles = append(styles, "squash", "rebase")
	indexes := make([]int64, len(styles))
	for i := range styles {
		branch := fmt.Sprintf("head-%d", i)
		content := base64.StdEncoding.EncodeToString(fmt.Appendf(nil, "file of %s\n", branch))
		if err := apiCall(client, ds.Token, http.MethodPost, fmt.Sprintf("%s/contents/%s.txt", repo, branch),
			map[string]any{"content": content, "branch": "main", "new_branch": branch, "message": "Add " + branch + ".txt"}, nil); err != nil {
			return err
		}
		var pr struct {
			Number int64 `json:"number"`
		}
		if err := apiCall(client, ds.Token, http.MethodPost, repo+"/pulls",
			map[string]any{"head": branch, "base": "main", "title": "Bench " + branch}, &pr); err != nil {
			return err
		}
		indexes[i] = pr.Number
	}

	var h histogram
	took := map[string]time.Duration{}
	for i, style := range styles {
		pull := fmt.Sprintf("%s/pulls/%d", repo, indexes[i])
		if err := awaitMergeable(client, ds.Token, pull); err != nil {
			return err
		}
		start := time.Now()
		if err := apiCall(client, ds.Token, http.MethodPost, pull+"/merge", map[string]any{"do": style}, nil); err != nil {
			return err
		}
		d := time.Since(start)
		if style == "merge" {
			h.record(d)
		} else {
			took[style] = d
		}
	}
	fmt.Printf("\npull request merge (API call; %d pull requests opened first, each adding its own file, merged one after another)\n", len(styles))
	fmt.Printf("  merge:  median %s  p90 %s  max %s  over %d\n", fmtDur(h.quantile(0.5)), fmtDur(h.quantile(0.9)), fmtDur(h.max), *n)
	fmt.Printf("  squash: %s  rebase: %s  (one each)\n", fmtDur(took["squash"]), fmtDur(took["rebase"]))
	return nil
}

// awaitMergeable reads the pull request until the server has found it
// mergeable (at most 10s), so that no merge call waits for that check.
func awaitMergeable(client *http.Client, token, pull string) error {
	deadline := time.Now().Add(10 * time.Second)
	for {
		var pr struct {
			Mergeable bool `json:"mergeable"`
		}
		if err := apiCall(client, token, http.MethodGet, pull, nil, &pr); err != nil {
			return err
		}
		if pr.Mergeable {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s is still not mergeable after 10s", pull)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
