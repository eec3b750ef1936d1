package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"repohost/store/sqlstore/sqltest"
)

// TestIssueIndexSurvivesSIGKILL creates issues and comments from four
// clients and kills the server with SIGKILL while they are being written.
// Started again on the same data, every issue and comment whose create
// was answered is found by its own word, and the index agrees with the
// text row for row (`repohost admin reindex-issues --check`): the index is
// written in the writes' transactions, so a crash can lose neither one
// without the other. SQLite by default; PostgreSQL under
// scripts/with-postgres.sh.
func TestIssueIndexSurvivesSIGKILL(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := buildServer(t)
	data := t.TempDir()
	dsn := sqltest.DSN(t, data)
	a := startProc(t, "first", bin, data, nil, "--db", dsn)
	if st, body := a.call("POST", "/api/v1/user/repos", map[string]any{"name": "idx"}); st != http.StatusCreated {
		t.Fatalf("create repository: %d %s", st, body)
	}
	// Each client writes issues with a word of their own, and a comment
	// with another, until the server dies.
	var answered sync.Map // word -> true, for writes answered 201
	var n atomic.Int64
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for c := 0; c < 4; c++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				word := fmt.Sprintf("zq%dx%dissue", c, i)
				if !a.post("/api/v1/repos/admin/idx/issues", map[string]any{"title": "crash " + word, "body": "body text"}) {
					return
				}
				answered.Store(word, true)
				n.Add(1)
				num := a.lastIssue(word)
				if num == 0 {
					return
				}
				cword := fmt.Sprintf("zq%dx%dcomment", c, i)
				if !a.post(fmt.Sprintf("/api/v1/repos/admin/idx/issues/%d/comments", num), map[string]any{"body": "said " + cword}) {
					return
				}
				answered.Store(cword, true)
			}
		}()
	}
	for n.Load() < 40 {
		time.Sleep(10 * time.Millisecond)
	}
	if err := a.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	a.cmd.Wait()
	close(stop)
	wg.Wait()

	b := startProc(t, "restarted", bin, data, nil, "--db", dsn)
	words := 0
	answered.Range(func(k, _ any) bool {
		words++
		var found []struct {
			Number int64 `json:"number"`
		}
		if st := b.get("/api/v1/repos/admin/idx/issues?state=all&q="+k.(string), &found); st != http.StatusOK || len(found) != 1 {
			t.Errorf("q=%s: %d, %d issues, want 1", k, st, len(found))
		}
		return true
	})
	t.Logf("%d answered writes found after the kill", words)
	if err := run([]string{"admin", "reindex-issues", "--check", "--data", data, "--db", dsn}, quietLog()); err != nil {
		t.Errorf("index after the kill: %v", err)
	}
	if err := run([]string{"admin", "reindex-issues", "--data", data, "--db", dsn}, quietLog()); err != nil {
		t.Errorf("reindex: %v", err)
	}
}

// lastIssue is the number of the issue whose title has word (0 when the
// server does not answer: it may have been killed).
func (s *proc) lastIssue(word string) int64 {
	req, _ := http.NewRequest("GET", "http://"+s.addr+"/api/v1/repos/admin/idx/issues?q="+word, nil)
	req.SetBasicAuth("admin", "first-admin-pw")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0
	}
	defer resp.Body.Close()
	var found []struct {
		Number int64 `json:"number"`
	}
	if resp.StatusCode != http.StatusOK || json.NewDecoder(resp.Body).Decode(&found) != nil || len(found) != 1 {
		return 0
	}
	return found[0].Number
}
