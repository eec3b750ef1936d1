package main

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"repohost/store/sqlstore/sqltest"
)

// crashReceiver is a webhook receiver on 127.0.0.1 that records every
// request it gets; while blocking, it holds each request open until the
// sender goes away.
type crashReceiver struct {
	*httptest.Server
	blocking atomic.Bool
	mu       sync.Mutex
	calls    []crashCall
}

type crashCall struct {
	delivery string
	number   int64
	action   string
	before   bool // arrived while the first process was alive
	answered bool // answered 200
	auth     string
	signed   bool
}

const crashSecret = "crash-secret"

func newCrashReceiver(t *testing.T) *crashReceiver {
	rc := &crashReceiver{}
	rc.blocking.Store(true)
	rc.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var p struct {
			Action string `json:"action"`
			Number int64  `json:"number"`
		}
		json.Unmarshal(body, &p)
		mac := hmac.New(sha256.New, []byte(crashSecret))
		mac.Write(body)
		c := crashCall{delivery: r.Header.Get("X-Gitea-Delivery"), number: p.Number, action: p.Action,
			auth: r.Header.Get("Authorization"), signed: r.Header.Get("X-Gitea-Signature") == hex.EncodeToString(mac.Sum(nil))}
		if rc.blocking.Load() {
			c.before = true
			rc.record(c)
			// Held until the server that sent it dies.
			<-r.Context().Done()
			return
		}
		c.answered = true
		rc.record(c)
		w.WriteHeader(http.StatusOK)
	}))
	t.Cleanup(rc.Server.Close)
	return rc
}

func (rc *crashReceiver) record(c crashCall) {
	rc.mu.Lock()
	rc.calls = append(rc.calls, c)
	rc.mu.Unlock()
}

func (rc *crashReceiver) all() []crashCall {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]crashCall(nil), rc.calls...)
}

// call sends an authenticated JSON request to p as the first admin.
func (s *proc) call(method, path string, body any) (int, []byte) {
	s.t.Helper()
	raw, _ := json.Marshal(body)
	req, _ := http.NewRequest(method, "http://"+s.addr+path, bytes.NewReader(raw))
	req.SetBasicAuth("admin", "first-admin-pw")
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		s.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, out
}

// TestWebhookSIGKILL runs the real server, queues issue events for a
// receiver that holds every delivery open, kills the server with SIGKILL
// and starts it again on the same data directory and database: every
// event arrives, each under one X-Gitea-Delivery whether it was attempted
// before the kill or not, with its signature and the authorization header
// the restarted server opened with the key it kept in the data directory.
// SQLite by default; PostgreSQL under scripts/with-postgres.sh.
func TestWebhookSIGKILL(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and waits out a delivery lease")
	}
	bin := buildServer(t)
	data := t.TempDir()
	dsn := sqltest.DSN(t, data)
	t.Logf("database: %s", sqltest.Database())
	rc := newCrashReceiver(t)
	args := []string{"--db", dsn, "--webhook-allowed-hosts", "loopback"}

	a := startProc(t, "first", bin, data, nil, args...)
	if st, body := a.call("POST", "/api/v1/user/repos", map[string]any{"name": "crash"}); st != http.StatusCreated {
		t.Fatalf("create repository: %d %s", st, body)
	}
	st, body := a.call("POST", "/api/v1/repos/admin/crash/hooks", map[string]any{
		"type": "gitea", "active": true, "events": []string{"issues"}, "authorization_header": "Bearer crash-token",
		"config": map[string]string{"url": rc.URL + "/hook", "content_type": "json", "secret": crashSecret}})
	if st != http.StatusCreated {
		t.Fatalf("create hook: %d %s", st, body)
	}

	// Enough events that most wait in the queue behind the held ones (8
	// workers).
	const queued, late = 60, 20
	for i := range queued {
		if st, body := a.call("POST", "/api/v1/repos/admin/crash/issues", map[string]any{"title": fmt.Sprintf("queued %d", i)}); st != http.StatusCreated {
			t.Fatalf("create issue: %d %s", st, body)
		}
	}
	deadline := time.Now().Add(30 * time.Second)
	for len(rc.all()) < 8 {
		if time.Now().After(deadline) {
			t.Fatalf("the receiver holds %d deliveries, want 8 (one per worker)", len(rc.all()))
		}
		time.Sleep(20 * time.Millisecond)
	}
	// The last ones are committed and answered, and the kill follows at
	// once: some may not even be queued as deliveries yet.
	var wg sync.WaitGroup
	for i := range late {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if st, body := a.call("POST", "/api/v1/repos/admin/crash/issues", map[string]any{"title": fmt.Sprintf("late %d", i)}); st != http.StatusCreated {
				t.Errorf("create issue: %d %s", st, body)
			}
		}()
	}
	wg.Wait()
	if err := a.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	a.cmd.Wait()
	killed := time.Now()
	before := rc.all()
	rc.blocking.Store(false)
	t.Logf("killed the server with %d deliveries attempted", len(before))

	b := startProc(t, "restarted", bin, data, nil, args...)
	want := queued + late
	delivered := func() map[int64]bool {
		got := map[int64]bool{}
		for _, c := range rc.all() {
			if c.answered {
				got[c.number] = true
			}
		}
		return got
	}
	// The attempts cut off by the kill stay leased for the lease (twice
	// the 5 s timeout and 30 s) before the restarted server takes them.
	deadline = time.Now().Add(90 * time.Second)
	for len(delivered()) < want {
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d events delivered after the restart", len(delivered()), want)
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Logf("all %d events delivered %s after the kill", want, time.Since(killed).Round(time.Second))
	// Nothing more comes once the queue is empty: no event twice.
	time.Sleep(time.Second)

	all := rc.all()
	ids := map[int64]string{}
	perDelivery := map[string]int64{}
	answers := map[int64]int{}
	for _, c := range all {
		if c.action != "opened" || c.number < 1 || c.number > int64(want) {
			t.Errorf("unexpected delivery: %+v", c)
			continue
		}
		if !c.signed || c.auth != "Bearer crash-token" {
			t.Errorf("issue #%d: signature valid %v, Authorization %q", c.number, c.signed, c.auth)
		}
		if id, ok := ids[c.number]; ok && id != c.delivery {
			t.Errorf("issue #%d arrived as %s and as %s", c.number, id, c.delivery)
		}
		ids[c.number] = c.delivery
		if n, ok := perDelivery[c.delivery]; ok && n != c.number {
			t.Errorf("delivery %s carried issues #%d and #%d", c.delivery, n, c.number)
		}
		perDelivery[c.delivery] = c.number
		if c.answered {
			answers[c.number]++
		}
	}
	for n := int64(1); n <= int64(want); n++ {
		if answers[n] != 1 {
			t.Errorf("issue #%d answered %d times, want once", n, answers[n])
		}
	}
	// Every attempt cut off by the kill was made again, under its id.
	for _, c := range before {
		again := false
		for _, d := range all {
			if d.answered && d.delivery == c.delivery {
				again = true
			}
		}
		if !again {
			t.Errorf("issue #%d (delivery %s), attempted before the kill, not delivered under the same id after it", c.number, c.delivery)
		}
	}
	if len(before) < 8 {
		t.Errorf("only %d deliveries attempted before the kill", len(before))
	}

	// The restarted server's record agrees: every delivery delivered.
	var hooks []struct {
		ID int64 `json:"id"`
	}
	if st := b.get("/api/v1/repos/admin/crash/hooks", &hooks); st != 200 || len(hooks) != 1 {
		t.Fatalf("hooks: %d %v", st, hooks)
	}
	var list []struct {
		GUID   string `json:"guid"`
		Status string `json:"status"`
	}
	seen := 0
	for page := 1; ; page++ {
		list = nil
		if st := b.get(fmt.Sprintf("/api/v1/repos/admin/crash/hooks/%d/deliveries?limit=50&page=%d", hooks[0].ID, page), &list); st != 200 {
			t.Fatalf("deliveries: %d", st)
		}
		for _, d := range list {
			seen++
			if d.Status != "delivered" || perDelivery[d.GUID] == 0 {
				t.Errorf("delivery record %+v", d)
			}
		}
		if len(list) < 50 {
			break
		}
	}
	if seen != want {
		t.Errorf("%d delivery records, want %d", seen, want)
	}
}
