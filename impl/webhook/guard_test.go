package webhook

import (
	"net/netip"
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
