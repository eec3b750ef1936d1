package apitest_test

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"repohost/apitest"
	"repohost/impl/app"
	"repohost/impl/webhook"
	"repohost/models"
	"repohost/store"
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
		// Far above any answer time on a loaded machine: a timed-out
		// attempt would be retried, and arrive twice.
		c.Webhooks.Timeout = 20 * time.Second
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

// stepper runs actions and checks that exactly the named deliveries
// ("event_type/action", "push/" for events without an action) follow each.
type stepper struct {
	t    *testing.T
	rc   *receiver
	seen int
}

func (s *stepper) expect(label string, want ...string) []hookCall {
	s.t.Helper()
	calls := s.rc.waitFor(s.t, s.seen+len(want), 15*time.Second)
	// Give a stray extra delivery a moment to show up.
	time.Sleep(150 * time.Millisecond)
	calls = s.rc.all()
	got := calls[s.seen:]
	s.seen = len(calls)
	var names []string
	for _, c := range got {
		names = append(names, c.typ()+"/"+c.payloadAction())
	}
	sort.Strings(names)
	sort.Strings(want)
	if !slices.Equal(names, want) {
		s.t.Errorf("%s: deliveries %v, want %v", label, names, want)
	}
	return got
}

func byType(calls []hookCall, typ string) hookCall {
	for _, c := range calls {
		if c.typ() == typ {
			return c
		}
	}
	return hookCall{}
}

// TestWebhookEveryEvent drives every event the service announces today and
// checks that each arrives once, signed, in the reference's shape.
func TestWebhookEveryEvent(t *testing.T) {
	t.Parallel()
	e := hookEnv(t)
	alice, bob := e.CreateUser("alice", false), e.CreateUser("bob", false)
	a := apitest.Basic(alice)
	rc := newReceiver(t)
	s := &stepper{t: t, rc: rc}

	// Repository events reach the owner's hook (the repository's own
	// hooks cannot exist before it).
	mkHook(t, e, a, "user/hooks", giteaHook(rc.URL, "repository"))
	repo := roCreateRepo(t, e, a, map[string]any{"name": "pub", "auto_init": true})
	created := s.expect("create repository", "repository/created")
	p := checkShape(t, created[0])
	if p["repository"].(map[string]any)["full_name"] != "alice/pub" || p["sender"].(map[string]any)["login"] != "alice" {
		t.Errorf("repository payload %s", created[0].Body)
	}
	checkSigned(t, created[0], "s3cret")

	if err := e.Deps.Events.Settle(t.Context()); err != nil {
		t.Fatal(err)
	}
	mkHook(t, e, a, "repos/alice/pub/hooks", giteaHook(rc.URL, "create", "delete", "push", "issues", "issue_comment", "release"))

	// Refs: a branch made through the API is a create and a push; a
	// commit a push; a removed branch a delete.
	e.Do("POST", "repos/alice/pub/branches", map[string]any{"new_branch_name": "dev", "old_branch_name": "main"}, a).Expect(t, http.StatusCreated)
	got := s.expect("create branch", "create/", "push/")
	cp := checkShape(t, byType(got, "create"))
	if cp["ref"] != "dev" || cp["ref_type"] != "branch" || len(cp["sha"].(string)) != 40 {
		t.Errorf("create payload %s", byType(got, "create").Body)
	}
	checkShape(t, byType(got, "push"))
	e.Do("POST", "repos/alice/pub/contents/hello.txt", map[string]any{"content": "aGVsbG8K", "branch": "dev", "message": "add hello\n\nwith a body"}, a).Expect(t, http.StatusCreated)
	got = s.expect("commit", "push/")
	pp := checkShape(t, got[0])
	commits := pp["commits"].([]any)
	head := pp["head_commit"].(map[string]any)
	if pp["ref"] != "refs/heads/dev" || len(commits) != 1 || pp["total_commits"].(float64) != 1 ||
		head["message"] != "add hello\n\nwith a body\n" || pp["before"] == pp["after"] || head["id"] != pp["after"] ||
		!strings.Contains(pp["compare_url"].(string), "/alice/pub/compare/") ||
		!slices.Equal(toStrings(head["added"]), []string{"hello.txt"}) || pp["pusher"].(map[string]any)["login"] != "alice" {
		t.Errorf("push payload %s", got[0].Body)
	}
	e.Do("DELETE", "repos/alice/pub/branches/dev", nil, a).Expect(t, http.StatusNoContent)
	got = s.expect("delete branch", "delete/")
	if dp := checkShape(t, got[0]); dp["ref"] != "dev" || dp["ref_type"] != "branch" || dp["pusher_type"] != "user" {
		t.Errorf("delete payload %s", got[0].Body)
	}

	// Issues.
	is := isCreate(t, e, "alice/pub", a, map[string]any{"title": "first", "body": "text"})
	got = s.expect("open issue", "issues/opened")
	ip := checkShape(t, got[0])
	if ip["number"].(float64) != float64(is.Index) || ip["issue"].(map[string]any)["title"] != "first" {
		t.Errorf("issue payload %s", got[0].Body)
	}
	issuePath := fmt.Sprintf("repos/alice/pub/issues/%d", is.Index)
	e.Do("PATCH", issuePath, map[string]any{"title": "renamed"}, a).Expect(t, http.StatusCreated)
	got = s.expect("edit issue", "issues/edited")
	// An edit names what it replaced: the reference's ChangesPayload.
	ep := got[0].payload(t)
	if keys := keysOf(ep); !slices.Equal(keys, []string{"action", "changes", "commit_id", "issue", "number", "repository", "sender"}) {
		t.Errorf("edited issue payload fields %v", keys)
	}
	if jsonField(ep, "changes", "title", "from") != "first" || !slices.Equal(keysOf(ep["changes"]), []string{"title"}) ||
		jsonField(ep, "issue", "title") != "renamed" {
		t.Errorf("edited issue changes %v issue title %q", ep["changes"], jsonField(ep, "issue", "title"))
	}
	e.Do("PATCH", issuePath, map[string]any{"state": "closed"}, a).Expect(t, http.StatusCreated)
	s.expect("close issue", "issues/closed")
	e.Do("PATCH", issuePath, map[string]any{"state": "open"}, a).Expect(t, http.StatusCreated)
	s.expect("reopen issue", "issues/reopened")
	label := isLabel(t, e, "alice/pub", a, map[string]any{"name": "bug", "color": "#ff0000"})
	e.Do("POST", issuePath+"/labels", map[string]any{"labels": []int64{label.ID}}, a).Expect(t, http.StatusOK)
	got = s.expect("label issue", "issue_label/label_updated")
	if c := got[0]; c.event() != "issues" {
		t.Errorf("issue_label travels as X-Gitea-Event %q, want issues", c.event())
	}
	ms := isMilestone(t, e, "alice/pub", a, map[string]any{"title": "v1"})
	e.Do("PATCH", issuePath, map[string]any{"milestone": ms.ID}, a).Expect(t, http.StatusCreated)
	s.expect("milestone issue", "issue_milestone/milestoned")
	e.Do("PATCH", issuePath, map[string]any{"assignees": []string{"alice"}}, a).Expect(t, http.StatusCreated)
	got = s.expect("assign issue", "issue_assign/assigned")
	if ap := checkShape(t, got[0]); len(ap["issue"].(map[string]any)["assignees"].([]any)) != 1 {
		t.Errorf("assign payload %s", got[0].Body)
	}
	e.Do("PATCH", issuePath, map[string]any{"assignees": []string{}}, a).Expect(t, http.StatusCreated)
	got = s.expect("unassign issue", "issue_assign/unassigned")
	if as, _ := jsonAt(checkShape(t, got[0]), "issue", "assignees").([]any); len(as) != 0 {
		t.Errorf("unassign payload %s", got[0].Body)
	}
	// Created with an assignee: opened, then assigned, as in the reference.
	second := isCreate(t, e, "alice/pub", a, map[string]any{"title": "second", "assignees": []string{"alice"}})
	got = s.expect("open assigned issue", "issues/opened", "issue_assign/assigned")
	if ap := checkShape(t, byType(got, "issue_assign")); ap["number"].(float64) != float64(second.Index) {
		t.Errorf("assigned on creation payload %s", byType(got, "issue_assign").Body)
	}

	// Comments.
	var cm models.Comment
	e.Do("POST", issuePath+"/comments", map[string]any{"body": "a comment"}, a).Expect(t, http.StatusCreated).JSON(t, &cm)
	got = s.expect("comment", "issue_comment/created")
	cp = checkShape(t, got[0])
	if cp["comment"].(map[string]any)["body"] != "a comment" || cp["is_pull"] != false {
		t.Errorf("comment payload %s", got[0].Body)
	}
	commentPath := fmt.Sprintf("repos/alice/pub/issues/comments/%d", cm.ID)
	e.Do("PATCH", commentPath, map[string]any{"body": "changed"}, a).Expect(t, http.StatusOK)
	got = s.expect("edit comment", "issue_comment/edited")
	ecp := got[0].payload(t)
	if keys := keysOf(ecp); !slices.Equal(keys, []string{"action", "changes", "comment", "is_pull", "issue", "repository", "sender"}) {
		t.Errorf("edited comment payload fields %v", keys)
	}
	if jsonField(ecp, "changes", "body", "from") != "a comment" || jsonField(ecp, "comment", "body") != "changed" {
		t.Errorf("edited comment changes %v comment %v", ecp["changes"], ecp["comment"])
	}
	e.Do("DELETE", commentPath, nil, a).Expect(t, http.StatusNoContent)
	got = s.expect("delete comment", "issue_comment/deleted")
	checkShape(t, got[0])

	// Releases: publishing tags the commit (create and push of the tag).
	rel := rlCreate(t, e, a, "alice/pub", map[string]any{"tag_name": "v1.0", "name": "one"})
	got = s.expect("publish release", "release/published", "create/", "push/")
	rp := checkShape(t, byType(got, "release"))
	if rp["release"].(map[string]any)["tag_name"] != "v1.0" {
		t.Errorf("release payload %s", byType(got, "release").Body)
	}
	if cp := checkShape(t, byType(got, "create")); cp["ref_type"] != "tag" {
		t.Errorf("tag create payload %s", byType(got, "create").Body)
	}
	relPath := fmt.Sprintf("repos/alice/pub/releases/%d", rel.ID)
	e.Do("PATCH", relPath, map[string]any{"name": "uno"}, a).Expect(t, http.StatusOK)
	s.expect("edit release", "release/updated")
	e.Do("DELETE", relPath, nil, a).Expect(t, http.StatusNoContent)
	s.expect("delete release", "release/deleted")
	// A draft is announced only when published.
	rlCreate(t, e, a, "alice/pub", map[string]any{"tag_name": "v2.0", "draft": true})
	rc.quiet(t, s.seen, 300*time.Millisecond)

	// Someone without access causes nothing; the repository's deletion
	// reaches the owner's hook.
	e.Do("PATCH", issuePath, map[string]any{"title": "x"}, apitest.Basic(bob)).Expect(t, http.StatusForbidden)
	rc.quiet(t, s.seen, 300*time.Millisecond)
	e.Do("DELETE", "repos/alice/pub", nil, a).Expect(t, http.StatusNoContent)
	got = s.expect("delete repository", "repository/deleted")
	if dp := checkShape(t, got[0]); dp["repository"].(map[string]any)["id"].(float64) != float64(repo.ID) {
		t.Errorf("repository deleted payload %s", got[0].Body)
	}
	for _, c := range rc.all() {
		checkSigned(t, c, "s3cret")
	}
}

func toStrings(v any) []string {
	var out []string
	for _, x := range v.([]any) {
		out = append(out, x.(string))
	}
	return out
}

// TestWebhookAPI covers the hook operations of every scope: who may use
// them, the reference's defaults and validation, edits, and that a hook is
// reachable only through its own scope.
func TestWebhookAPI(t *testing.T) {
	t.Parallel()
	e := hookEnv(t)
	alice, bob, carol := e.CreateUser("alice", false), e.CreateUser("bob", false), e.CreateUser("carol", false)
	a, b, c, adm := apitest.Basic(alice), apitest.Basic(bob), apitest.Basic(carol), apitest.Basic(e.Admin)
	roCreateRepo(t, e, a, map[string]any{"name": "pub"})
	roCreateRepo(t, e, a, map[string]any{"name": "priv", "private": true})
	org := roCreateOrg(t, e, a, map[string]any{"username": "acme"})
	roAddMember(t, e, org.ID, carol, false, false)
	body := map[string]any{"type": "gitea", "config": map[string]string{"url": "http://example.com/hook", "content_type": "json", "secret": "hush"},
		"authorization_header": "Bearer top-secret"}

	// Who may create where.
	for _, tc := range []struct {
		name   string
		path   string
		cred   apitest.Cred
		status int
	}{
		{"anonymous repo", "repos/alice/pub/hooks", nil, http.StatusUnauthorized},
		{"outsider public repo", "repos/alice/pub/hooks", b, http.StatusForbidden},
		{"outsider private repo", "repos/alice/priv/hooks", b, http.StatusNotFound},
		{"owner repo", "repos/alice/pub/hooks", a, http.StatusCreated},
		{"site admin repo", "repos/alice/priv/hooks", adm, http.StatusCreated},
		{"anonymous org", "orgs/acme/hooks", nil, http.StatusUnauthorized},
		{"outsider org", "orgs/acme/hooks", b, http.StatusForbidden},
		{"member org", "orgs/acme/hooks", c, http.StatusForbidden},
		{"owner org", "orgs/acme/hooks", a, http.StatusCreated},
		{"unknown org", "orgs/nope/hooks", a, http.StatusNotFound},
		{"anonymous user", "user/hooks", nil, http.StatusUnauthorized},
		{"user", "user/hooks", b, http.StatusCreated},
		{"anonymous admin", "admin/hooks", nil, http.StatusUnauthorized},
		{"non-admin admin", "admin/hooks", a, http.StatusForbidden},
		{"admin", "admin/hooks", adm, http.StatusCreated},
	} {
		e.Do("POST", tc.path, body, tc.cred).Expect(t, tc.status)
		listStatus := tc.status
		if listStatus == http.StatusCreated {
			listStatus = http.StatusOK
		}
		e.Do("GET", tc.path, nil, tc.cred).Expect(t, listStatus)
	}

	// The reference's defaults: inactive, push only; the secret never read
	// back and the authorization header masked.
	var hooks []*models.Hook
	r := e.Do("GET", "repos/alice/pub/hooks", nil, a).Expect(t, http.StatusOK)
	r.JSON(t, &hooks)
	if len(hooks) != 1 || r.Header.Get("X-Total-Count") != "1" {
		t.Fatalf("repository hooks %s", r.Body)
	}
	h := hooks[0]
	if h.Active || !slices.Equal(h.Events, []string{"push"}) || h.Type != "gitea" || h.Config["url"] != "http://example.com/hook" ||
		h.Config["content_type"] != "json" || h.AuthorizationHeader != "Bearer ********" || strings.Contains(string(r.Body), "hush") ||
		strings.Contains(string(r.Body), "top-secret") {
		t.Errorf("created hook %s", r.Body)
	}

	// Edit: events replaced ("issues" switches on its family), active set,
	// branch filter and authorization header always replaced.
	path := fmt.Sprintf("repos/alice/pub/hooks/%d", h.ID)
	var edited models.Hook
	e.Do("PATCH", path, map[string]any{"events": []string{"issues", "create"}, "active": true, "branch_filter": "main",
		"config": map[string]string{"url": "https://example.org/x"}}, a).Expect(t, http.StatusOK).JSON(t, &edited)
	if !edited.Active || !slices.Equal(edited.Events, []string{"create", "issues", "issue_assign", "issue_label", "issue_milestone", "issue_comment"}) ||
		edited.BranchFilter != "main" || edited.AuthorizationHeader != "" || edited.Config["url"] != "https://example.org/x" || edited.Config["content_type"] != "json" {
		t.Errorf("edited hook %+v", edited)
	}
	e.Do("PATCH", path, map[string]any{}, a).Expect(t, http.StatusOK).JSON(t, &edited)
	if !edited.Active || !slices.Equal(edited.Events, []string{"push"}) || edited.BranchFilter != "" {
		t.Errorf("hook after empty edit %+v", edited)
	}
	e.Do("GET", path, nil, b).Expect(t, http.StatusForbidden)
	// A hook is found only through its own scope.
	var orgHooks []*models.Hook
	e.Do("GET", "orgs/acme/hooks", nil, a).Expect(t, http.StatusOK).JSON(t, &orgHooks)
	e.Do("GET", fmt.Sprintf("repos/alice/pub/hooks/%d", orgHooks[0].ID), nil, a).Expect(t, http.StatusNotFound)
	e.Do("GET", fmt.Sprintf("user/hooks/%d", orgHooks[0].ID), nil, a).Expect(t, http.StatusNotFound)
	e.Do("GET", fmt.Sprintf("admin/hooks/%d", orgHooks[0].ID), nil, adm).Expect(t, http.StatusNotFound)
	e.Do("GET", fmt.Sprintf("orgs/acme/hooks/%d", orgHooks[0].ID), nil, a).Expect(t, http.StatusOK)
	e.Do("DELETE", path, nil, a).Expect(t, http.StatusNoContent)
	e.Do("GET", path, nil, a).Expect(t, http.StatusNotFound)
	e.Do("DELETE", path, nil, a).Expect(t, http.StatusNotFound)

	// Validation, in the reference's words.
	for _, tc := range []struct {
		body   map[string]any
		status int
		msg    string
	}{
		{map[string]any{"type": "nope", "config": map[string]string{"url": "http://x", "content_type": "json"}}, 422, ""},
		{map[string]any{"type": "gitea", "config": map[string]string{"content_type": "json"}}, 422, "Missing config option: url"},
		{map[string]any{"type": "gitea", "config": map[string]string{"url": "http://x"}}, 422, "Missing config option: content_type"},
		{map[string]any{"type": "gitea", "config": map[string]string{"url": "http://x", "content_type": "xml"}}, 422, "Invalid content type"},
		{map[string]any{"type": "gitea", "config": map[string]string{"url": "ftp://x", "content_type": "json"}}, 422, "Invalid url"},
		{map[string]any{"type": "slack", "config": map[string]string{"url": "http://x", "content_type": "json"}}, 422, "Missing config option: channel"},
		{map[string]any{"type": "slack", "config": map[string]string{"url": "http://x", "content_type": "json", "channel": "#"}}, 400, "Invalid slack channel name"},
		{map[string]any{"type": "gitea", "branch_filter": "[", "config": map[string]string{"url": "http://x", "content_type": "json"}}, 422, ""},
		{map[string]any{"type": "gitea"}, 422, ""},
	} {
		r := e.Do("POST", "repos/alice/pub/hooks", tc.body, a).Expect(t, tc.status)
		if tc.msg != "" && !strings.Contains(string(r.Body), tc.msg) {
			t.Errorf("%v: body %s, want %q", tc.body, r.Body, tc.msg)
		}
	}
	for _, typ := range []string{"gogs", "discord", "msteams", "matrix", "telegram", "dingtalk", "feishu", "wechatwork", "packagist"} {
		e.Do("POST", "repos/alice/pub/hooks", map[string]any{"type": typ, "config": map[string]string{"url": "http://x", "content_type": "json"}}, a).Expect(t, http.StatusCreated)
	}

	// Site-wide hooks: system or default, and the list's type filter.
	sys := mkHook(t, e, adm, "admin/hooks", map[string]any{"type": "gitea", "config": map[string]string{"url": "http://x", "content_type": "json", "is_system_webhook": "true"}})
	old := mkHook(t, e, adm, "admin/hooks", map[string]any{"type": "gitea", "is_system_webhook": true, "config": map[string]string{"url": "http://x", "content_type": "json"}})
	e.Do("POST", "admin/hooks", map[string]any{"type": "gitea", "config": map[string]string{"url": "http://x", "content_type": "json", "is_system_webhook": "maybe"}}, adm).Expect(t, 422)
	ids := func(q string) []int64 {
		var hs []*models.Hook
		e.Do("GET", "admin/hooks"+q, nil, adm).Expect(t, http.StatusOK).JSON(t, &hs)
		var out []int64
		for _, h := range hs {
			out = append(out, h.ID)
		}
		return out
	}
	dflt := ids("?type=default")
	if len(dflt) != 1 || !slices.Equal(ids(""), []int64{sys.ID, old.ID}) || !slices.Equal(ids("?type=system"), []int64{sys.ID, old.ID}) ||
		!slices.Equal(ids("?type=bogus"), []int64{sys.ID, old.ID}) || len(ids("?type=all")) != 3 {
		t.Errorf("admin lists: default %v, system %v, all %v", dflt, ids("?type=system"), ids("?type=all"))
	}
	if sys.Config["is_system_webhook"] != "true" {
		t.Errorf("system hook config %v", sys.Config)
	}
	e.Do("PATCH", "admin/hooks/999999", map[string]any{"active": true}, adm).Expect(t, http.StatusNotFound)
	e.Do("DELETE", "admin/hooks/999999", nil, adm).Expect(t, http.StatusNotFound)
	e.Do("GET", "admin/hooks/999999", nil, adm).Expect(t, http.StatusNotFound)
	e.Do("PATCH", fmt.Sprintf("admin/hooks/%d", sys.ID), map[string]any{"active": true, "events": []string{"push", "issues_only"}}, adm).Expect(t, http.StatusOK).JSON(t, &edited)
	if !edited.Active || !slices.Equal(edited.Events, []string{"push", "issues"}) {
		t.Errorf("edited system hook %+v", edited)
	}
	e.Do("DELETE", fmt.Sprintf("admin/hooks/%d", sys.ID), nil, adm).Expect(t, http.StatusNoContent)
	if !slices.Equal(ids(""), []int64{old.ID}) {
		t.Errorf("system hooks after delete %v", ids(""))
	}

	// A deleted account's hooks go with it.
	e.Do("DELETE", "admin/users/bob", nil, adm).Expect(t, http.StatusNoContent)
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		_, n, err := e.DB.Hooks().List(t.Context(), store.HookFilter{OwnerID: bob.User.ID}, store.Page{Limit: 10})
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d hooks of a deleted user remain", n)
		}
	}
}

// TestWebhookScopes checks which hooks an event reaches: the repository's,
// its owner's (organization or user), the system hooks for every
// repository, and the default hooks copied into each new repository;
// inactive hooks, unsubscribed events and branch filters hold others back.
func TestWebhookScopes(t *testing.T) {
	t.Parallel()
	e := hookEnv(t)
	alice, bob := e.CreateUser("alice", false), e.CreateUser("bob", false)
	a, b, adm := apitest.Basic(alice), apitest.Basic(bob), apitest.Basic(e.Admin)
	roCreateOrg(t, e, a, map[string]any{"username": "acme"})
	e.Do("POST", "orgs/acme/repos", map[string]any{"name": "tool", "auto_init": true}, a).Expect(t, http.StatusCreated)
	roCreateRepo(t, e, b, map[string]any{"name": "own", "auto_init": true})
	// Hooks receive what happens after they exist: let the setup's events
	// pass first.
	if err := e.Deps.Events.Settle(t.Context()); err != nil {
		t.Fatal(err)
	}

	repoRC, orgRC, userRC, sysRC, dfltRC, offRC, mainRC := newReceiver(t), newReceiver(t), newReceiver(t), newReceiver(t), newReceiver(t), newReceiver(t), newReceiver(t)
	mkHook(t, e, a, "repos/acme/tool/hooks", giteaHook(repoRC.URL, "issues"))
	mkHook(t, e, a, "orgs/acme/hooks", giteaHook(orgRC.URL, "issues"))
	mkHook(t, e, b, "user/hooks", giteaHook(userRC.URL, "issues"))
	sys := giteaHook(sysRC.URL, "issues", "push")
	sys["config"].(map[string]string)["is_system_webhook"] = "true"
	mkHook(t, e, adm, "admin/hooks", sys)
	dflt := mkHook(t, e, adm, "admin/hooks", giteaHook(dfltRC.URL, "issues"))
	off := giteaHook(offRC.URL, "issues")
	off["active"] = false
	mkHook(t, e, a, "repos/acme/tool/hooks", off)
	filtered := giteaHook(mainRC.URL, "push", "create")
	filtered["branch_filter"] = "{main,release/*}"
	mkHook(t, e, a, "repos/acme/tool/hooks", filtered)
	// Not subscribed to issues: gets nothing below but pushes.
	mkHook(t, e, a, "repos/acme/tool/hooks", giteaHook(offRC.URL, "release"))

	isCreate(t, e, "acme/tool", a, map[string]any{"title": "in org"})
	repoRC.waitFor(t, 1, 10*time.Second)
	orgRC.waitFor(t, 1, 10*time.Second)
	sysRC.waitFor(t, 1, 10*time.Second)
	isCreate(t, e, "bob/own", b, map[string]any{"title": "in bob's"})
	userRC.waitFor(t, 1, 10*time.Second)
	sysRC.waitFor(t, 2, 10*time.Second)

	// Branch filter: dev is held back, main and release/1 pass.
	for _, br := range []string{"dev", "release/1"} {
		e.Do("POST", "repos/acme/tool/branches", map[string]any{"new_branch_name": br, "old_branch_name": "main"}, a).Expect(t, http.StatusCreated)
	}
	e.Do("POST", "repos/acme/tool/contents/a.txt", map[string]any{"content": "YQo=", "branch": "main"}, a).Expect(t, http.StatusCreated)
	calls := mainRC.waitFor(t, 3, 10*time.Second)
	for _, c := range calls {
		p := c.payload(t)
		if ref, _ := p["ref"].(string); strings.Contains(ref, "dev") {
			t.Errorf("branch filter let %s of %s through", c.typ(), ref)
		}
	}
	// The system hook hears every push, of every branch.
	sysRC.waitFor(t, 5, 10*time.Second)

	// A default hook is copied into each new repository (active, same
	// settings) and is not itself a system hook.
	repo := roCreateRepo(t, e, b, map[string]any{"name": "fresh"})
	var copies []*models.Hook
	deadline := time.Now().Add(10 * time.Second)
	for len(copies) == 0 && time.Now().Before(deadline) {
		e.Do("GET", "repos/bob/fresh/hooks", nil, b).Expect(t, http.StatusOK).JSON(t, &copies)
		time.Sleep(50 * time.Millisecond)
	}
	if len(copies) != 1 || copies[0].Config["url"] != dfltRC.URL || !copies[0].Active || copies[0].ID == dflt.ID {
		t.Fatalf("hooks of a new repository %+v", copies)
	}
	isCreate(t, e, "bob/fresh", b, map[string]any{"title": "in fresh"})
	got := dfltRC.waitFor(t, 1, 10*time.Second)
	if p := got[0].payload(t); p["repository"].(map[string]any)["id"].(float64) != float64(repo.ID) {
		t.Errorf("default hook copy delivered %s", got[0].Body)
	}

	time.Sleep(300 * time.Millisecond)
	for name, want := range map[string]struct {
		rc *receiver
		n  int
	}{"repository": {repoRC, 1}, "organization": {orgRC, 1}, "user": {userRC, 2}, "system": {sysRC, 6}, "default": {dfltRC, 1}, "inactive": {offRC, 0}, "filtered": {mainRC, 3}} {
		if got := len(want.rc.all()); got != want.n {
			var types []string
			for _, c := range want.rc.all() {
				types = append(types, c.typ())
			}
			t.Errorf("%s hook got %d deliveries %v, want %d", name, got, types, want.n)
		}
	}
}

// hookDeliveries lists a hook's deliveries, newest first.
func hookDeliveries(t *testing.T, e *apitest.Env, cred apitest.Cred, hookPath string) []*models.HookDelivery {
	t.Helper()
	var ds []*models.HookDelivery
	e.Do("GET", hookPath+"/deliveries", nil, cred).Expect(t, http.StatusOK).JSON(t, &ds)
	return ds
}

// waitDelivery polls one delivery until cond holds.
func waitDelivery(t *testing.T, e *apitest.Env, cred apitest.Cred, path string, cond func(*models.HookDelivery) bool) *models.HookDelivery {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		var d models.HookDelivery
		e.Do("GET", path, nil, cred).Expect(t, http.StatusOK).JSON(t, &d)
		if cond(&d) {
			return &d
		}
		if time.Now().After(deadline) {
			t.Fatalf("delivery %s stayed %+v", path, d)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestWebhookRetryAndRecords: a receiver failing once gets the delivery
// again, with the same X-Gitea-Delivery; the record shows the request and
// the answer; a redelivery and the test operation send again.
func TestWebhookRetryAndRecords(t *testing.T) {
	t.Parallel()
	e := hookEnv(t)
	alice := e.CreateUser("alice", false)
	a := apitest.Basic(alice)
	roCreateRepo(t, e, a, map[string]any{"name": "pub", "auto_init": true})
	rc := newReceiver(t)
	rc.respond = func(n int, _ *http.Request) int {
		if n == 0 {
			return http.StatusInternalServerError
		}
		return http.StatusOK
	}
	body := giteaHook(rc.URL, "issues")
	body["authorization_header"] = "Bearer abc"
	h := mkHook(t, e, a, "repos/alice/pub/hooks", body)
	hookPath := fmt.Sprintf("repos/alice/pub/hooks/%d", h.ID)
	isCreate(t, e, "alice/pub", a, map[string]any{"title": "retry me"})
	calls := rc.waitFor(t, 2, 15*time.Second)
	if calls[0].delivery() != calls[1].delivery() || !slices.Equal(calls[0].Body, calls[1].Body) {
		t.Errorf("retry changed the delivery: %q vs %q", calls[0].delivery(), calls[1].delivery())
	}
	if calls[0].Header.Get("Authorization") != "Bearer abc" {
		t.Errorf("Authorization %q", calls[0].Header.Get("Authorization"))
	}
	ds := hookDeliveries(t, e, a, hookPath)
	if len(ds) != 1 {
		t.Fatalf("deliveries %+v", ds)
	}
	d := waitDelivery(t, e, a, fmt.Sprintf("%s/deliveries/%d", hookPath, ds[0].ID), func(d *models.HookDelivery) bool { return d.Status == "delivered" })
	if d.Attempts != 2 || d.StatusCode != 200 || d.GUID != calls[0].delivery() || d.Event != "issues" || d.EventType != "issues" ||
		d.Action != "opened" || d.Request == nil || d.Request.Body != string(calls[1].Body) || d.Request.Headers["X-Gitea-Signature"] != calls[1].Header.Get("X-Gitea-Signature") ||
		d.Request.Headers["Authorization"] != "Bearer ********" || d.Response.Status != 200 || d.Response.Body != "answer 200" || d.DeliveredAt == nil || d.Error != "" {
		t.Errorf("delivery record %+v request %+v response %+v", d, d.Request, d.Response)
	}

	// Redelivery: the same payload and X-Gitea-Delivery once more.
	var again models.HookDelivery
	e.Do("POST", fmt.Sprintf("%s/deliveries/%d/redeliver", hookPath, d.ID), nil, a).Expect(t, http.StatusAccepted).JSON(t, &again)
	calls = rc.waitFor(t, 3, 10*time.Second)
	if !again.Redelivery || again.GUID != d.GUID || calls[2].delivery() != d.GUID || !slices.Equal(calls[2].Body, calls[1].Body) {
		t.Errorf("redelivery %+v sent %q", again, calls[2].delivery())
	}
	e.Do("POST", fmt.Sprintf("%s/deliveries/%d/redeliver", hookPath, 99999), nil, a).Expect(t, http.StatusNotFound)
	e.Do("GET", fmt.Sprintf("%s/deliveries/%d", hookPath, d.ID), nil, apitest.Basic(e.CreateUser("bob", false))).Expect(t, http.StatusForbidden)

	// The test operation sends a sample push of the default branch now,
	// although the hook only listens to issues.
	e.Do("POST", hookPath+"/tests", nil, a).Expect(t, http.StatusNoContent)
	calls = rc.waitFor(t, 4, 10*time.Second)
	test := calls[3]
	p := checkShape(t, test)
	checkSigned(t, test, "s3cret")
	if test.typ() != "push" || p["ref"] != "refs/heads/main" || len(p["commits"].([]any)) != 1 || p["head_commit"] == nil {
		t.Errorf("test delivery %s", test.Body)
	}
	e.Do("POST", fmt.Sprintf("repos/alice/pub/hooks/%d/tests", 99999), nil, a).Expect(t, http.StatusNotFound)
}

// TestWebhookSlowReceiverDoesNotSlowAPI: while a receiver hangs, the
// requests that cause events answer at once; the hung attempt times out
// and is recorded.
func TestWebhookSlowReceiverDoesNotSlowAPI(t *testing.T) {
	t.Parallel()
	e := hookEnv(t, func(c *app.WebhookConfig) { c.Timeout = 6 * time.Second; c.MaxAttempts = 1 })
	alice := e.CreateUser("alice", false)
	a := apitest.Basic(alice)
	roCreateRepo(t, e, a, map[string]any{"name": "pub"})
	release := make(chan struct{})
	rc := newReceiver(t)
	rc.respond = func(_ int, r *http.Request) int {
		select {
		case <-release:
		case <-r.Context().Done():
		}
		return 0
	}
	defer close(release)
	h := mkHook(t, e, a, "repos/alice/pub/hooks", giteaHook(rc.URL, "issues"))
	// Were the requests waiting for the receiver, five of them would take
	// at least five timeouts; they take a fraction of one.
	start := time.Now()
	for i := range 5 {
		isCreate(t, e, "alice/pub", a, map[string]any{"title": fmt.Sprint("slow ", i)})
	}
	if d := time.Since(start); d > 6*time.Second {
		t.Errorf("creating 5 issues took %v while the receiver hangs", d)
	}
	hookPath := fmt.Sprintf("repos/alice/pub/hooks/%d", h.ID)
	var ds []*models.HookDelivery
	for deadline := time.Now().Add(10 * time.Second); len(ds) < 5 && time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		ds = hookDeliveries(t, e, a, hookPath)
	}
	if len(ds) != 5 {
		t.Fatalf("deliveries %d, want 5", len(ds))
	}
	d := waitDelivery(t, e, a, fmt.Sprintf("%s/deliveries/%d", hookPath, ds[0].ID), func(d *models.HookDelivery) bool { return d.Status == "failed" })
	if !strings.Contains(d.Error, "Timeout") && !strings.Contains(d.Error, "deadline") {
		t.Errorf("hung delivery recorded error %q", d.Error)
	}
}

// TestWebhookAllowList: with the default allow-list (external addresses
// only), deliveries to loopback, private, link-local (cloud metadata) and
// to a name that resolves to loopback are refused when dialling, and the
// record says why; nothing reaches the loopback receiver.
func TestWebhookAllowList(t *testing.T) {
	t.Parallel()
	e := apitest.NewWithConfig(t, func(c *app.Config) {
		c.Webhooks.PollInterval = 100 * time.Millisecond
		c.Webhooks.Timeout = 2 * time.Second
	})
	alice := e.CreateUser("alice", false)
	a := apitest.Basic(alice)
	roCreateRepo(t, e, a, map[string]any{"name": "pub"})
	rc := newReceiver(t)
	port := rc.URL[strings.LastIndex(rc.URL, ":")+1:]
	targets := []string{rc.URL, "http://localhost:" + port + "/", "http://10.1.2.3/hook", "http://169.254.169.254/latest/meta-data/", "http://[::1]:" + port + "/"}
	var paths []string
	for _, u := range targets {
		h := mkHook(t, e, a, "repos/alice/pub/hooks", giteaHook(u, "issues"))
		paths = append(paths, fmt.Sprintf("repos/alice/pub/hooks/%d", h.ID))
	}
	isCreate(t, e, "alice/pub", a, map[string]any{"title": "ssrf"})
	for i, hp := range paths {
		var ds []*models.HookDelivery
		deadline := time.Now().Add(10 * time.Second)
		for len(ds) == 0 && time.Now().Before(deadline) {
			ds = hookDeliveries(t, e, a, hp)
			time.Sleep(50 * time.Millisecond)
		}
		if len(ds) != 1 {
			t.Fatalf("%s: deliveries %+v", targets[i], ds)
		}
		d := waitDelivery(t, e, a, fmt.Sprintf("%s/deliveries/%d", hp, ds[0].ID), func(d *models.HookDelivery) bool { return d.Status != "pending" })
		if d.Status != "failed" || d.Attempts != 1 || !strings.Contains(d.Error, "allow-list") || d.StatusCode != 0 {
			t.Errorf("%s: delivery %+v", targets[i], d)
		}
	}
	if n := len(rc.all()); n != 0 {
		t.Errorf("the loopback receiver got %d requests", n)
	}
}

// TestWebhookAllowListRedirect: an allowed receiver redirecting to a
// forbidden address does not get the delivery through.
func TestWebhookAllowListRedirect(t *testing.T) {
	t.Parallel()
	e := hookEnv(t, func(c *app.WebhookConfig) { c.AllowedHosts = "127.0.0.2" })
	alice := e.CreateUser("alice", false)
	a := apitest.Basic(alice)
	roCreateRepo(t, e, a, map[string]any{"name": "pub"})
	rc := newReceiver(t)
	// The redirector listens on 127.0.0.2 (allowed), the target on
	// 127.0.0.1 (not).
	ln, err := net.Listen("tcp", "127.0.0.2:0")
	if err != nil {
		t.Skipf("no 127.0.0.2 here: %v", err)
	}
	redirector := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, rc.URL, http.StatusTemporaryRedirect)
	})}
	go redirector.Serve(ln)
	t.Cleanup(func() { redirector.Close() })
	h := mkHook(t, e, a, "repos/alice/pub/hooks", giteaHook("http://"+ln.Addr().String()+"/", "issues"))
	isCreate(t, e, "alice/pub", a, map[string]any{"title": "redirect"})
	hp := fmt.Sprintf("repos/alice/pub/hooks/%d", h.ID)
	var ds []*models.HookDelivery
	for deadline := time.Now().Add(10 * time.Second); len(ds) == 0 && time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		ds = hookDeliveries(t, e, a, hp)
	}
	d := waitDelivery(t, e, a, fmt.Sprintf("%s/deliveries/%d", hp, ds[0].ID), func(d *models.HookDelivery) bool { return d.Status != "pending" })
	if d.Status != "failed" || !strings.Contains(d.Error, "allow-list") || len(rc.all()) != 0 {
		t.Errorf("redirected delivery %+v, receiver got %d", d, len(rc.all()))
	}
}

// TestWebhookRestartResumes stops the delivery workers mid-queue (one
// delivery cut off at the receiver, others waiting, and more events
// committed while no worker runs), then starts a second server over the
// same database: every event arrives exactly once, and a delivery that
// was under way keeps its X-Gitea-Delivery.
func TestWebhookRestartResumes(t *testing.T) {
	t.Parallel()
	e := hookEnv(t, func(c *app.WebhookConfig) { c.Workers = 1 })
	alice := e.CreateUser("alice", false)
	a := apitest.Basic(alice)
	roCreateRepo(t, e, a, map[string]any{"name": "pub"})
	rc := newReceiver(t)
	var mu sync.Mutex
	blocked := true
	var cutOff []string
	rc.respond = func(_ int, r *http.Request) int {
		mu.Lock()
		b := blocked
		if b {
			cutOff = append(cutOff, r.Header.Get("X-Gitea-Delivery"))
		}
		mu.Unlock()
		if b {
			<-r.Context().Done()
			return 0
		}
		return http.StatusOK
	}
	mkHook(t, e, a, "repos/alice/pub/hooks", giteaHook(rc.URL, "issues"))
	for i := range 10 {
		isCreate(t, e, "alice/pub", a, map[string]any{"title": fmt.Sprint("before ", i)})
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		mu.Lock()
		n := len(cutOff)
		mu.Unlock()
		if n > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no delivery reached the receiver")
		}
	}
	e.Hooks.Stop()
	for i := range 5 {
		isCreate(t, e, "alice/pub", a, map[string]any{"title": fmt.Sprint("while stopped ", i)})
	}
	mu.Lock()
	blocked = false
	wasCutOff := slices.Clone(cutOff)
	mu.Unlock()

	e.Twin(t)
	calls := rc.waitFor(t, 15, 20*time.Second)
	rc.quiet(t, 15, 300*time.Millisecond)
	numbers := map[float64]int{}
	ids := map[string]bool{}
	for _, c := range calls {
		checkSigned(t, c, "s3cret")
		numbers[c.payload(t)["number"].(float64)]++
		ids[c.delivery()] = true
	}
	for n := 1; n <= 15; n++ {
		if numbers[float64(n)] != 1 {
			t.Errorf("issue #%d delivered %d times", n, numbers[float64(n)])
		}
	}
	for _, id := range wasCutOff {
		if !ids[id] {
			t.Errorf("delivery %s cut off by the stop arrived under another id", id)
		}
	}
}

// TestWebhookBurst: 1,000 issue events created in a burst all arrive,
// each once. The delay from the API call to the receiver is logged (the
// measurement proper is in make bench).
func TestWebhookBurst(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("slow")
	}
	e := hookEnv(t)
	alice := e.CreateUser("alice", false)
	a := apitest.Basic(alice)
	roCreateRepo(t, e, a, map[string]any{"name": "pub"})
	rc := newReceiver(t)
	mkHook(t, e, a, "repos/alice/pub/hooks", giteaHook(rc.URL, "issues"))
	const total, clients = 1000, 8
	var wg sync.WaitGroup
	sent := make([]time.Time, total+1)
	var sentMu sync.Mutex
	start := time.Now()
	for w := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < total; i += clients {
				began := time.Now()
				var is models.Issue
				e.Do("POST", "repos/alice/pub/issues", map[string]any{"title": fmt.Sprint("burst ", i)}, a).Expect(t, http.StatusCreated).JSON(t, &is)
				sentMu.Lock()
				sent[is.Index] = began
				sentMu.Unlock()
			}
		}()
	}
	wg.Wait()
	created := time.Since(start)
	// Delivery is at least once: an attempt that timed out on a loaded
	// machine may have reached the receiver, and is sent again with the
	// same X-Gitea-Delivery for it to recognise.
	seen := map[float64]string{}
	var delays []time.Duration
	for deadline := time.Now().Add(90 * time.Second); len(seen) < total; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d issue events arrived", len(seen), total)
		}
		for _, c := range rc.all() {
			n := c.payload(t)["number"].(float64)
			if id, ok := seen[n]; ok {
				if id != c.delivery() {
					t.Fatalf("issue #%v delivered twice under different ids", n)
				}
				continue
			}
			seen[n] = c.delivery()
			delays = append(delays, c.At.Sub(sent[int(n)]))
		}
	}
	sort.Slice(delays, func(i, j int) bool { return delays[i] < delays[j] })
	t.Logf("%d issues created in %v, all delivered after %v; API call to receiver p50 %v p99 %v",
		total, created, time.Since(start), delays[len(delays)/2], delays[len(delays)*99/100])
}

// TestWebhookReceiverFormats: chat receivers get their own message
// formats, form hooks the payload in a form field (signed as JSON), GET
// hooks the payload in the query, matrix a PUT with a transaction id.
func TestWebhookReceiverFormats(t *testing.T) {
	t.Parallel()
	e := hookEnv(t)
	alice := e.CreateUser("alice", false)
	a := apitest.Basic(alice)
	roCreateRepo(t, e, a, map[string]any{"name": "pub"})
	rcs := map[string]*receiver{}
	for _, typ := range []string{"slack", "discord", "msteams", "matrix", "telegram", "dingtalk", "feishu", "wechatwork", "packagist", "form", "get"} {
		rc := newReceiver(t)
		rcs[typ] = rc
		config := map[string]string{"url": rc.URL + "/" + typ, "content_type": "json", "secret": "s3cret"}
		hookType := typ
		switch typ {
		case "slack":
			config["channel"] = "#dev"
		case "form":
			hookType, config["content_type"] = "gitea", "form"
		case "get":
			hookType, config["http_method"] = "gitea", "GET"
		}
		mkHook(t, e, a, "repos/alice/pub/hooks", map[string]any{"type": hookType, "active": true, "events": []string{"issues"}, "config": config})
	}
	isCreate(t, e, "alice/pub", a, map[string]any{"title": "Printer on fire"})
	for typ, rc := range rcs {
		c := rc.waitFor(t, 1, 10*time.Second)[0]
		body := string(c.Body)
		ok := true
		switch typ {
		case "slack":
			p := c.payload(t)
			ok = p["channel"] == "#dev" && strings.Contains(body, "Printer on fire") && p["attachments"] != nil
		case "discord":
			ok = c.payload(t)["embeds"] != nil && strings.Contains(body, "Printer on fire")
		case "msteams":
			ok = c.payload(t)["@type"] == "MessageCard" && strings.Contains(body, "Printer on fire")
		case "matrix":
			ok = c.Method == http.MethodPut && len(strings.TrimPrefix(c.Path, "/matrix/")) == 40 && c.payload(t)["msgtype"] == "m.notice"
		case "telegram":
			ok = c.payload(t)["parse_mode"] == "HTML" && strings.Contains(body, "Printer on fire")
		case "dingtalk":
			ok = c.payload(t)["msgtype"] == "actionCard"
		case "feishu":
			ok = c.payload(t)["msg_type"] == "text"
		case "wechatwork":
			ok = c.payload(t)["msgtype"] == "markdown"
		case "packagist":
			ok = strings.Contains(body, `"url":"http`)
		case "form":
			form, err := url.ParseQuery(body)
			ok = err == nil && c.Header.Get("Content-Type") == "application/x-www-form-urlencoded"
			if ok {
				raw := []byte(form.Get("payload"))
				m := hmac.New(sha256.New, []byte("s3cret"))
				m.Write(raw)
				ok = c.Header.Get("X-Gitea-Signature") == hex.EncodeToString(m.Sum(nil)) && strings.Contains(string(raw), "Printer on fire")
			}
		case "get":
			ok = c.Method == http.MethodGet && len(c.Body) == 0
		}
		if !ok || c.event() != "issues" || c.delivery() == "" {
			t.Errorf("%s receiver got %s %s %v\n%s", typ, c.Method, c.Path, c.Header, body)
		}
	}
}

// TestWebhookQueueStatsAndPruning: the queue's counts and delays for
// metrics, and pruning of finished deliveries past the retention (the
// cleanup_hook_task_table task), which leaves pending ones alone.
func TestWebhookQueueStatsAndPruning(t *testing.T) {
	t.Parallel()
	e := hookEnv(t, func(c *app.WebhookConfig) { c.MaxAttempts = 1 })
	alice := e.CreateUser("alice", false)
	a := apitest.Basic(alice)
	roCreateRepo(t, e, a, map[string]any{"name": "pub"})
	ok, bad := newReceiver(t), newReceiver(t)
	bad.respond = func(int, *http.Request) int { return http.StatusBadGateway }
	good := mkHook(t, e, a, "repos/alice/pub/hooks", giteaHook(ok.URL, "issues"))
	mkHook(t, e, a, "repos/alice/pub/hooks", giteaHook(bad.URL, "issues"))
	for i := range 3 {
		isCreate(t, e, "alice/pub", a, map[string]any{"title": fmt.Sprint("stats ", i)})
	}
	ok.waitFor(t, 3, 10*time.Second)
	bad.waitFor(t, 3, 10*time.Second)
	ctx := t.Context()
	var st webhook.Stats
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		var err error
		if st, err = e.Hooks.Stats(ctx); err != nil {
			t.Fatal(err)
		}
		if st.Delivered == 3 && st.Failed == 3 || time.Now().After(deadline) {
			break
		}
	}
	if st.Pending != 0 || st.Delivered != 3 || st.Failed != 3 || st.DeliveredHere != 3 || st.FailedHere != 3 || st.LatencyP50 <= 0 || st.LatencyP99 < st.LatencyP50 {
		t.Errorf("stats %+v", st)
	}

	// Nothing is old enough yet.
	svc := webhook.Service{Deps: e.Deps}
	if err := svc.PruneDeliveries(ctx); err != nil {
		t.Fatal(err)
	}
	hookPath := fmt.Sprintf("repos/alice/pub/hooks/%d", good.ID)
	if n := len(hookDeliveries(t, e, a, hookPath)); n != 3 {
		t.Fatalf("deliveries after pruning nothing: %d", n)
	}
	// With no retention at all, finished deliveries go; a pending one stays.
	e.Hooks.Stop()
	first := hookDeliveries(t, e, a, hookPath)[0]
	e.Do("POST", fmt.Sprintf("%s/deliveries/%d/redeliver", hookPath, first.ID), nil, a).Expect(t, http.StatusAccepted)
	e.Deps.Config.Webhooks.Retention = -time.Second
	// The scheduled task is the same pruning.
	runCron(t, e, "cleanup_hook_task_table")
	if st, err := e.DB.Hooks().CountDeliveries(ctx); err != nil || st.Delivered != 0 || st.Failed != 0 || st.Pending != 1 {
		t.Errorf("after pruning: %+v %v", st, err)
	}
}

// TestWebhookTemplateCopy: a repository generated with webhooks gets
// copies of the template's hooks, which then fire for it; without the
// option it gets none.
func TestWebhookTemplateCopy(t *testing.T) {
	t.Parallel()
	e := hookEnv(t)
	alice := e.CreateUser("alice", false)
	a := apitest.Basic(alice)
	roCreateRepo(t, e, a, map[string]any{"name": "tpl", "auto_init": true, "template": true})
	rc := newReceiver(t)
	mkHook(t, e, a, "repos/alice/tpl/hooks", giteaHook(rc.URL, "issues"))
	genPost(t, e, a, "alice/tpl", map[string]any{"owner": "alice", "name": "with", "webhooks": true, "topics": true}, http.StatusCreated)
	genPost(t, e, a, "alice/tpl", map[string]any{"owner": "alice", "name": "without", "topics": true}, http.StatusCreated)
	var with, without []*models.Hook
	e.Do("GET", "repos/alice/with/hooks", nil, a).Expect(t, http.StatusOK).JSON(t, &with)
	e.Do("GET", "repos/alice/without/hooks", nil, a).Expect(t, http.StatusOK).JSON(t, &without)
	if len(with) != 1 || with[0].Config["url"] != rc.URL || !with[0].Active || len(without) != 0 {
		t.Fatalf("hooks of generated repositories: %+v / %+v", with, without)
	}
	isCreate(t, e, "alice/with", a, map[string]any{"title": "from a template"})
	got := rc.waitFor(t, 1, 10*time.Second)
	checkSigned(t, got[0], "s3cret")
	if p := got[0].payload(t); p["repository"].(map[string]any)["full_name"] != "alice/with" {
		t.Errorf("delivery %s", got[0].Body)
	}
}
