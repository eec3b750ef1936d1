package webhook

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"repohost/impl/app"
)

func TestAllowList(t *testing.T) {
	t.Parallel()
	cases := []struct {
		list, host, ip string
		want           bool
	}{
		{"", "example.com", "93.184.216.34", true},
		{"", "localhost", "127.0.0.1", false},
		{"", "x", "::1", false},
		{"", "x", "10.1.2.3", false},
		{"", "x", "192.168.0.1", false},
		{"", "x", "172.16.5.4", false},
		{"", "x", "100.64.0.1", false},
		{"", "x", "169.254.169.254", false},
		{"", "x", "fe80::1", false},
		{"", "x", "fd00::1", false},
		{"", "x", "0.0.0.0", false},
		{"", "x", "::ffff:127.0.0.1", false},
		{"external", "x", "2606:4700::1", true},
		{"loopback", "x", "127.0.0.1", true},
		{"loopback", "x", "93.184.216.34", false},
		{"private", "x", "10.0.0.1", true},
		{"private", "x", "127.0.0.1", false},
		{"*", "x", "169.254.169.254", true},
		{"10.0.0.0/8", "x", "10.9.9.9", true},
		{"10.0.0.0/8", "x", "11.0.0.1", false},
		{"*.corp.example, loopback", "ci.corp.example", "10.0.0.5", true},
		{"*.corp.example", "corp.example", "10.0.0.5", false},
		{"CI.Corp.Example", "ci.corp.example.", "10.0.0.5", true},
	}
	for _, c := range cases {
		a, err := ParseAllowList(c.list)
		if err != nil {
			t.Fatal(err)
		}
		if got := a.allows(c.host, netip.MustParseAddr(c.ip)); got != c.want {
			t.Errorf("%q allows %s (%s): %v, want %v", c.list, c.host, c.ip, got, c.want)
		}
	}
	if _, err := ParseAllowList("[bad"); err == nil {
		t.Error("a malformed glob was accepted")
	}
}

func TestBackoffDoublesUpToTheCap(t *testing.T) {
	t.Parallel()
	cfg := app.WebhookConfig{RetryBase: 10 * time.Second, RetryMax: time.Minute}
	want := []time.Duration{10 * time.Second, 20 * time.Second, 40 * time.Second, time.Minute, time.Minute}
	for i, w := range want {
		if got := backoff(cfg, i+1); got != w {
			t.Errorf("after attempt %d: %v, want %v", i+1, got, w)
		}
	}
}

func TestExpandEvents(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		in   []string
		want []string
	}{
		{nil, []string{"push"}},
		{[]string{"bogus"}, []string{"push"}},
		{[]string{"issues"}, []string{"issues", "issue_assign", "issue_label", "issue_milestone", "issue_comment"}},
		{[]string{"release", "issues_only", "push"}, []string{"push", "issues", "release"}},
		{[]string{"pull_request_only"}, []string{"pull_request"}},
	} {
		got := expandEvents(c.in)
		if len(got) != len(c.want) {
			t.Errorf("%v → %v, want %v", c.in, got, c.want)
			continue
		}
		for i := range got {
			if got[i] != c.want[i] {
				t.Errorf("%v → %v, want %v", c.in, got, c.want)
				break
			}
		}
	}
	for typ, want := range map[string]string{"issue_label": "issues", "issue_comment": "issue_comment", "pull_request_sync": "pull_request",
		"pull_request_review_approved": "pull_request_approved", "pull_request_comment": "issue_comment", "push": "push"} {
		if got := headerEvent(typ); got != want {
			t.Errorf("X-Gitea-Event of %s: %s, want %s", typ, got, want)
		}
	}
	if !branchMatches("{main,release/*}", "release/1") || branchMatches("{main,release/*}", "dev") || !branchMatches("", "dev") {
		t.Error("branch filter globs")
	}
}

func TestMigrationGuard(t *testing.T) {
	t.Parallel()
	cases := []struct {
		allowed, blocked string
		local            bool
		host, ip         string
		want             bool
	}{
		{"", "", false, "example.com", "93.184.216.34", true},
		{"", "", false, "localhost", "127.0.0.1", false},
		{"", "", false, "x", "10.0.0.1", false},
		{"", "", true, "localhost", "127.0.0.1", true},
		{"", "", true, "x", "192.168.1.1", true},
		{"", "", true, "x", "169.254.169.254", false},
		{"", "*.evil.example", false, "a.evil.example", "93.184.216.34", false},
		{"", "93.184.0.0/16", true, "x", "93.184.216.34", false},
		{"", "localhost", true, "localhost", "127.0.0.1", false},
		{"github.com", "", false, "github.com", "140.82.112.3", true},
		{"github.com", "", false, "gitlab.com", "172.65.251.78", false},
	}
	for _, c := range cases {
		a, err := ParseMigrationGuard(c.allowed, c.blocked, c.local)
		if err != nil {
			t.Fatal(err)
		}
		if got := a.allows(c.host, netip.MustParseAddr(c.ip)); got != c.want {
			t.Errorf("allowed %q blocked %q local %v: %s (%s): %v, want %v", c.allowed, c.blocked, c.local, c.host, c.ip, got, c.want)
		}
	}
	if _, err := ParseMigrationGuard("", "[bad", false); err == nil {
		t.Error("a malformed blocked glob was accepted")
	}
}

func TestGitConfigRefusesNonHTTP(t *testing.T) {
	t.Parallel()
	a, _ := ParseMigrationGuard("", "", true)
	for _, u := range []string{"/srv/git/x.git", "file:///etc", "ssh://host/x", "git://host/x", "ext::sh -c x",
		"host:x.git", "http://", "../x"} {
		if _, err := a.GitConfig(context.Background(), u); !errors.Is(err, ErrNotRemote) {
			t.Errorf("%q: %v, want ErrNotRemote", u, err)
		}
	}
	strict, _ := ParseMigrationGuard("", "", false)
	for _, u := range []string{"http://127.0.0.1:3000/x.git", "http://localhost/x.git", "https://[::1]/x", "http://10.1.1.1/x"} {
		if _, err := strict.GitConfig(context.Background(), u); !errors.Is(err, ErrForbiddenAddress) {
			t.Errorf("%q: %v, want ErrForbiddenAddress", u, err)
		}
	}
	args, err := a.GitConfig(context.Background(), "http://localhost:8080/x.git")
	if err != nil {
		t.Fatal(err)
	}
	joined := strings.Join(args, " ")
	for _, want := range []string{"http.curloptResolve=localhost:8080:", "http.followRedirects=false", "protocol.allow=never"} {
		if !strings.Contains(joined, want) {
			t.Errorf("%q lacks %q", joined, want)
		}
	}
}

// TestGitThroughGuard runs the real git client through the guard: an
// allowed server that redirects to a forbidden address gets git no
// further, and a name pinned to an allowed address is used as pinned.
func TestGitThroughGuard(t *testing.T) {
	t.Parallel()
	var reached atomic.Int32
	forbidden := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reached.Add(1)
		http.NotFound(w, r)
	}))
	ln, err := net.Listen("tcp", "127.0.0.2:0")
	if err != nil {
		t.Skip("no 127.0.0.2 on this machine:", err)
	}
	forbidden.Listener = ln
	forbidden.Start()
	defer forbidden.Close()
	redirector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, forbidden.URL+r.URL.Path+"?"+r.URL.RawQuery, http.StatusFound)
	}))
	defer redirector.Close()
	a, err := ParseMigrationGuard("127.0.0.1/32", "", false)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	// Straight to the forbidden address: refused before git runs.
	if _, err := a.GitConfig(ctx, forbidden.URL+"/x.git"); !errors.Is(err, ErrForbiddenAddress) {
		t.Fatalf("forbidden address: %v", err)
	}
	// Through a redirect: git does not follow it.
	args, err := a.GitConfig(ctx, redirector.URL+"/x.git")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("git", append(args, "ls-remote", redirector.URL+"/x.git")...)
	cmd.Env = append(os.Environ(), "GIT_TERMINAL_PROMPT=0", "GIT_CONFIG_NOSYSTEM=1")
	if out, err := cmd.CombinedOutput(); err == nil {
		t.Fatalf("git followed the redirect: %s", out)
	}
	if n := reached.Load(); n != 0 {
		t.Fatalf("the forbidden server was reached %d times", n)
	}
	// The control: git without the guard's settings follows it.
	plain := exec.Command("git", "ls-remote", redirector.URL+"/x.git")
	plain.Env = cmd.Env
	_ = plain.Run()
	if reached.Load() == 0 {
		t.Fatal("the control run did not follow the redirect: the test proves nothing")
	}
	reached.Store(0)
	// And the Go client with the guarded dialer refuses the redirect's
	// dial as well.
	c := &http.Client{Transport: &http.Transport{Proxy: nil, DialContext: a.DialContext(&net.Dialer{})}}
	if _, err := c.Get(redirector.URL + "/x"); !errors.Is(err, ErrForbiddenAddress) {
		t.Fatalf("redirect to a forbidden address: %v", err)
	}
	if n := reached.Load(); n != 0 {
		t.Fatalf("the forbidden server was reached %d times", n)
	}
}
