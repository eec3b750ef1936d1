package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"
)

// webhooksCmd measures webhook delivery end to end: a receiver on
// 127.0.0.1 gets a hook on the dataset's small repository, n issues are
// created through the API by c clients, and each issue's delay is taken
// from the start of its API call to its delivery's arrival. The server
// must allow loopback receivers (--webhook-allowed-hosts loopback).
func webhooksCmd(args []string) error {
	fs := flag.NewFlagSet("webhooks", flag.ContinueOnError)
	base := fs.String("base", "", "repohost base URL (loopback only)")
	dsFile := fs.String("dataset", "", "dataset file written by seed")
	n := fs.Int("n", 1000, "issues to create, one event each")
	conc := fs.Int("c", 16, "concurrent API clients")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if err := checkLoad(*base, *conc, time.Second); err != nil {
		return err
	}
	ds, err := readDataset(*dsFile)
	if err != nil {
		return err
	}

	var mu sync.Mutex
	arrived := map[int64]time.Time{}
	done := make(chan struct{})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	receiver := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		at := time.Now()
		var p struct {
			Number int64 `json:"number"`
		}
		_ = json.NewDecoder(r.Body).Decode(&p)
		mu.Lock()
		arrived[p.Number] = at
		if len(arrived) == *n {
			close(done)
		}
		mu.Unlock()
	})}
	go receiver.Serve(ln)
	defer receiver.Close()

	client := newClient(*conc)
	repo := *base + "/api/v1/repos/" + ds.User + "/" + ds.Small
	call := func(method, url string, body any, out any) error {
		return apiCall(client, ds.Token, method, url, body, out)
	}
	var hook struct {
		ID int64 `json:"id"`
	}
	err = call("POST", repo+"/hooks", map[string]any{"type": "gitea", "active": true, "events": []string{"issues_only"},
		"config": map[string]string{"url": "http://" + ln.Addr().String() + "/", "content_type": "json", "secret": "bench"}}, &hook)
	if err != nil {
		return err
	}
	defer call("DELETE", fmt.Sprintf("%s/hooks/%d", repo, hook.ID), nil, nil)

	sent := map[int64]time.Time{}
	var sendErr error
	var wg sync.WaitGroup
	next := make(chan int)
	start := time.Now()
	for range *conc {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				began := time.Now()
				var is struct {
					Number int64 `json:"number"`
				}
				if err := call("POST", repo+"/issues", map[string]string{"title": fmt.Sprint("webhook bench ", i)}, &is); err != nil {
					mu.Lock()
					sendErr = err
					mu.Unlock()
					continue
				}
				mu.Lock()
				sent[is.Number] = began
				mu.Unlock()
			}
		}()
	}
	for i := range *n {
		next <- i
	}
	close(next)
	wg.Wait()
	if sendErr != nil {
		return sendErr
	}
	apiDone := time.Since(start)
	select {
	case <-done:
	case <-time.After(2 * time.Minute):
		return fmt.Errorf("only %d of %d deliveries arrived within 2 minutes (is --webhook-allowed-hosts loopback set?)", len(arrived), *n)
	}
	mu.Lock()
	defer mu.Unlock()
	var h histogram
	var last time.Time
	for num, at := range arrived {
		began, ok := sent[num]
		if !ok {
			return errors.New("a delivery named an issue this run did not create")
		}
		h.record(at.Sub(began))
		if at.After(last) {
			last = at
		}
	}
	total := last.Sub(start)
	fmt.Printf("\nwebhook delivery (%d issue events, %d API clients, receiver on 127.0.0.1)\n", *n, *conc)
	fmt.Printf("  API call to receiver: p50 %s  p99 %s\n", fmtDur(h.quantile(0.50)), fmtDur(h.quantile(0.99)))
	fmt.Printf("  %d issues created in %s; all delivered %s after the first call: %.0f deliveries/s\n",
		*n, fmtDur(apiDone), fmtDur(total), float64(*n)/total.Seconds())
	return nil
}
