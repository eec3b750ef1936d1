package apitest_test

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"repohost/apitest"
	"repohost/impl/app"
	"repohost/models"
)

// hookCall is one request a test receiver got.
type hookCall struct {
	Header http.Header
	Body   []byte
	Path   string
	Method string
	At     time.Time
}

func (c hookCall) event() string    { return c.Header.Get("X-Gitea-Event") }
func (c hookCall) typ() string      { return c.Header.Get("X-Gitea-Event-Type") }
func (c hookCall) delivery() string { return c.Header.Get("X-Gitea-Delivery") }

func (c hookCall) payload(t *testing.T) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(c.Body, &m); err != nil {
		t.Fatalf("payload of %s is not JSON: %v\n%s", c.typ(), err, c.Body)
	}
	return m
}

// receiver is a real HTTP server on 127.0.0.1 recording every delivery;
// respond, when set, picks each answer's status (and may hang).
type receiver struct {
	*httptest.Server
	mu      sync.Mutex
	calls   []hookCall
	notify  chan struct{}
	respond func(n int, r *http.Request) int
}

func newReceiver(t *testing.T) *receiver {
	t.Helper()
	rc := &receiver{notify: make(chan struct{}, 1)}
	rc.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		rc.mu.Lock()
		n := len(rc.calls)
		respond := rc.respond
		rc.mu.Unlock()
		status := http.StatusOK
		if respond != nil {
			status = respond(n, r)
		}
		if status == 0 {
			return // the handler hung until the request was cut off
		}
		rc.mu.Lock()
		rc.calls = append(rc.calls, hookCall{Header: r.Header.Clone(), Body: body, Path: r.URL.Path, Method: r.Method, At: time.Now()})
		rc.mu.Unlock()
		select {
		case rc.notify <- struct{}{}:
		default:
		}
		w.WriteHeader(status)
		fmt.Fprintf(w, "answer %d", status)
	}))
	t.Cleanup(rc.Server.Close)
	return rc
}

func (rc *receiver) all() []hookCall {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return slices.Clone(rc.calls)
}

// waitFor waits until at least n requests arrived (failing after
// timeout) and returns them all.
func (rc *receiver) waitFor(t *testing.T, n int, timeout time.Duration) []hookCall {
	t.Helper()
	deadline := time.After(timeout)
	for {
		if calls := rc.all(); len(calls) >= n {
			return calls
		}
		select {
		case <-rc.notify:
		case <-time.After(50 * time.Millisecond):
		case <-deadline:
			calls := rc.all()
			var types []string
			for _, c := range calls {
				types = append(types, c.typ())
			}
			t.Fatalf("receiver got %d requests %v, want %d", len(calls), types, n)
		}
	}
}

// quiet checks that nothing more than n requests arrive within d.
func (rc *receiver) quiet(t *testing.T, n int, d time.Duration) {
	t.Helper()
	time.Sleep(d)
	if calls := rc.all(); len(calls) != n {
		var types []string
		for _, c := range calls {
			types = append(types, c.typ()+"/"+c.payloadAction())
		}
		t.Fatalf("receiver got %d requests %v, want %d", len(calls), types, n)
	}
}

func (c hookCall) payloadAction() string {
	var m struct {
		Action string `json:"action"`
	}
	_ = json.Unmarshal(c.Body, &m)
	return m.Action
}

// hookEnv is a server whose webhooks may deliver to loopback receivers,
// with retries and polling fast enough for tests.
func hookEnv(t *testing.T, tune ...func(*app.WebhookConfig)) *apitest.Env {
	t.Helper()
	return apitest.NewWithConfig(t, func(c *app.Config) {
		c.Webhooks.AllowedHosts = "loopback"
		c.Webhooks.PollInterval = 100 * time.Millisecond
		c.Webhooks.RetryBase = 200 * time.Millisecond
		c.Webhooks.RetryMax = time.Second
		c.Webhooks.Timeout = 2 * time.Second
		for _, f := range tune {
			f(&c.Webhooks)
		}
	})
}

// mkHook creates a hook at path (".../hooks") and returns it.
func mkHook(t *testing.T, e *apitest.Env, cred apitest.Cred, path string, body map[string]any) *models.Hook {
	t.Helper()
	var h models.Hook
	e.Do("POST", path, body, cred).Expect(t, http.StatusCreated).JSON(t, &h)
	return &h
}

// giteaHook is the body of an active gitea hook to url with a secret.
func giteaHook(url string, events ...string) map[string]any {
	return map[string]any{"type": "gitea", "active": true, "events": events,
		"config": map[string]string{"url": url, "content_type": "json", "secret": "s3cret"}}
}

// checkSigned verifies a delivery's signatures with secret and its
// delivery headers.
func checkSigned(t *testing.T, c hookCall, secret string) {
	t.Helper()
	m := hmac.New(sha256.New, []byte(secret))
	m.Write(c.Body)
	want := hex.EncodeToString(m.Sum(nil))
	if got := c.Header.Get("X-Gitea-Signature"); got != want {
		t.Errorf("%s: X-Gitea-Signature %q, want %q", c.typ(), got, want)
	}
	if got := c.Header.Get("X-Gogs-Signature"); got != want {
		t.Errorf("%s: X-Gogs-Signature %q, want %q", c.typ(), got, want)
	}
	if got := c.Header.Get("X-Hub-Signature-256"); got != "sha256="+want {
		t.Errorf("%s: X-Hub-Signature-256 %q", c.typ(), got)
	}
	if !strings.HasPrefix(c.Header.Get("X-Hub-Signature"), "sha1=") {
		t.Errorf("%s: X-Hub-Signature %q", c.typ(), c.Header.Get("X-Hub-Signature"))
	}
	id := c.delivery()
	if len(id) != 36 || c.Header.Get("X-Gogs-Delivery") != id || c.Header.Get("X-GitHub-Delivery") != id {
		t.Errorf("%s: delivery ids %q %q %q", c.typ(), id, c.Header.Get("X-Gogs-Delivery"), c.Header.Get("X-GitHub-Delivery"))
	}
	if c.Header.Get("X-Gogs-Event") != c.event() || c.Header.Get("X-GitHub-Event") != c.event() || c.Header.Get("X-Gogs-Event-Type") != c.typ() {
		t.Errorf("%s: event headers %v", c.typ(), c.Header)
	}
	if c.Header.Get("Content-Type") != "application/json" {
		t.Errorf("%s: Content-Type %q", c.typ(), c.Header.Get("Content-Type"))
	}
}

// keysOf lists a JSON object's keys, sorted.
func keysOf(v any) []string {
	m, _ := v.(map[string]any)
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// The reference's payload structs (modules/structs/hook.go), field for
// field; "changes" is omitted when empty there too.
var payloadFields = map[string][]string{
	"create":        {"ref", "ref_type", "repository", "sender", "sha"},
	"delete":        {"pusher_type", "ref", "ref_type", "repository", "sender"},
	"push":          {"after", "before", "commits", "compare_url", "head_commit", "pusher", "ref", "repository", "sender", "total_commits"},
	"issues":        {"action", "commit_id", "issue", "number", "repository", "sender"},
	"issue_comment": {"action", "comment", "is_pull", "issue", "repository", "sender"},
	"release":       {"action", "release", "repository", "sender"},
	"repository":    {"action", "organization", "repository", "sender"},
}

var payloadCommitFields = []string{"added", "author", "committer", "id", "message", "modified", "removed", "timestamp", "url", "verification"}

func checkShape(t *testing.T, c hookCall) map[string]any {
	t.Helper()
	p := c.payload(t)
	want := payloadFields[c.event()]
	if got := keysOf(p); !slices.Equal(got, want) {
		t.Errorf("%s payload fields %v, want %v", c.typ(), got, want)
	}
	if c.event() == "push" {
		for _, cm := range p["commits"].([]any) {
			if got := keysOf(cm); !slices.Equal(got, payloadCommitFields) {
				t.Errorf("push commit fields %v, want %v", got, payloadCommitFields)
			}
		}
	}
	return p
}

func TestWebhookSmoke(t *testing.T) {
	t.Parallel()
	e := hookEnv(t)
	alice := e.CreateUser("alice", false)
	a := apitest.Basic(alice)
	roCreateRepo(t, e, a, map[string]any{"name": "pub", "auto_init": true})
	rc := newReceiver(t)
	mkHook(t, e, a, "repos/alice/pub/hooks", giteaHook(rc.URL, "issues"))
	isCreate(t, e, "alice/pub", a, map[string]any{"title": "first"})
	calls := rc.waitFor(t, 1, 10*time.Second)
	checkSigned(t, calls[0], "s3cret")
	checkShape(t, calls[0])
}
