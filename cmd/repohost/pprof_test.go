package main

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

// TestProfilesOnLoopbackOnly: --pprof refuses an address other processes
// could reach, and serves the profile index on a loopback one.
func TestProfilesOnLoopbackOnly(t *testing.T) {
	log := quietLog()
	for _, addr := range []string{"0.0.0.0:0", ":0", "192.0.2.1:0", "nonsense"} {
		if _, stop, err := serveProfiles(addr, log); err == nil {
			stop()
			t.Errorf("--pprof %s: served, want refused", addr)
		}
	}
	addr, stop, err := serveProfiles("127.0.0.1:0", log)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	resp, err := http.Get("http://" + addr.String() + "/debug/pprof/")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), "goroutine") {
		t.Errorf("GET /debug/pprof/: %d %.200s", resp.StatusCode, body)
	}
}
