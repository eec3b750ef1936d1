package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"syscall"
	"testing"

	"repohost/store/sqlstore/sqltest"
)

// callAs sends a request as the admin acting for user (Sudo).
func (s *proc) callAs(user, method, path string, body any) (int, []byte) {
	s.t.Helper()
	var rd io.Reader
	if body != nil {
		raw, _ := json.Marshal(body)
		rd = bytes.NewReader(raw)
	}
	req, _ := http.NewRequest(method, "http://"+s.addr+path, rd)
	req.SetBasicAuth("admin", "first-admin-pw")
	req.Header.Set("Sudo", user)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		s.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, out
}

type crashThread struct {
	ID      int64 `json:"id"`
	Unread  bool  `json:"unread"`
	Subject struct {
		LatestCommentURL string `json:"latest_comment_url"`
	} `json:"subject"`
}

func (s *proc) threadsOf(user string) []crashThread {
	s.t.Helper()
	st, body := s.callAs(user, "GET", "/api/v1/notifications?all=true", nil)
	if st != http.StatusOK {
		s.t.Fatalf("notifications of %s: %d %s", user, st, body)
	}
	var out []crashThread
	if err := json.Unmarshal(body, &out); err != nil {
		s.t.Fatal(err)
	}
	return out
}

// TestNotificationSurvivesSIGKILL comments on an issue a user watches and
// kills the server with SIGKILL as soon as the comment is answered: the
// notification was only a job in the database by then. Started again on
// the same data, the server brings the user's read thread back to unread,
// pointing at the comment. SQLite by default; PostgreSQL under
// scripts/with-postgres.sh.
func TestNotificationSurvivesSIGKILL(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := buildServer(t)
	data := t.TempDir()
	dsn := sqltest.DSN(t, data)
	args := []string{"--db", dsn, "--event-lease", "2s"}
	a := startProc(t, "first", bin, data, nil, args...)
	if st, body := a.call("POST", "/api/v1/admin/users", map[string]any{"username": "bob", "email": "bob@example.com",
		"password": "bob-pass-123456", "must_change_password": false}); st != http.StatusCreated {
		t.Fatalf("create bob: %d %s", st, body)
	}
	if st, body := a.call("POST", "/api/v1/user/repos", map[string]any{"name": "talk"}); st != http.StatusCreated {
		t.Fatalf("create repository: %d %s", st, body)
	}
	if st, body := a.callAs("bob", "PUT", "/api/v1/repos/admin/talk/subscription", nil); st != http.StatusOK {
		t.Fatalf("watch: %d %s", st, body)
	}
	if st, body := a.call("POST", "/api/v1/repos/admin/talk/issues", map[string]any{"title": "crash"}); st != http.StatusCreated {
		t.Fatalf("open issue: %d %s", st, body)
	}
	var thread crashThread
	waitFor(t, "bob's thread of the new issue", func() (bool, string) {
		ts := a.threadsOf("bob")
		if len(ts) == 1 {
			thread = ts[0]
		}
		return len(ts) == 1, fmt.Sprintf("%+v", ts)
	})
	if st, body := a.callAs("bob", "PATCH", fmt.Sprintf("/api/v1/notifications/threads/%d", thread.ID), nil); st != http.StatusResetContent {
		t.Fatalf("read thread: %d %s", st, body)
	}

	st, body := a.call("POST", "/api/v1/repos/admin/talk/issues/1/comments", map[string]any{"body": "after the kill"})
	if err := a.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	a.cmd.Wait()
	if st != http.StatusCreated {
		t.Fatalf("comment: %d %s", st, body)
	}
	var c struct {
		ID int64 `json:"id"`
	}
	if err := json.Unmarshal(body, &c); err != nil {
		t.Fatal(err)
	}

	b := startProc(t, "restarted", bin, data, nil, args...)
	want := fmt.Sprintf("/issues/comments/%d", c.ID)
	waitFor(t, "bob's thread unread again at the comment", func() (bool, string) {
		ts := b.threadsOf("bob")
		return len(ts) == 1 && ts[0].ID == thread.ID && ts[0].Unread && strings.HasSuffix(ts[0].Subject.LatestCommentURL, want),
			fmt.Sprintf("%+v", ts)
	})
	if ts := b.threadsOf("admin"); len(ts) != 0 {
		t.Errorf("the actor has threads: %+v", ts)
	}
}
