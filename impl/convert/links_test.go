package convert

import "testing"

func TestLinksSSHURL(t *testing.T) {
	for _, c := range []struct {
		links Links
		want  string
	}{
		{Links{Root: "http://h/"}, ""},
		{Links{SSHHost: "git.example.com", SSHPort: 22}, "git@git.example.com:o/r.git"},
		{Links{SSHHost: "git.example.com", SSHPort: 2222}, "ssh://git@git.example.com:2222/o/r.git"},
		{Links{SSHHost: "::1", SSHPort: 2222}, "ssh://git@[::1]:2222/o/r.git"},
		{Links{SSHHost: "::1", SSHPort: 22}, "git@[::1]:o/r.git"},
	} {
		if got := c.links.SSHURL("o/r"); got != c.want {
			t.Errorf("%+v: %q, want %q", c.links, got, c.want)
		}
	}
}
