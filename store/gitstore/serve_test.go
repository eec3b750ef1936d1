package gitstore_test

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"repohost/store/gitstore"
)

// TestAdvertiseReceivePackFormat: receive-pack's advertisement names the
// repository's object format (a git client refuses to push a SHA-256
// repository without it), and an empty repository's zero id has the
// format's length.
func TestAdvertiseReceivePackFormat(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	for _, format := range []string{"sha1", "sha256"} {
		for _, files := range []map[string]string{nil, {"a": "b"}} {
			name := format + map[bool]string{true: "-empty", false: "-full"}[files == nil]
			if _, err := s.Create("alice", name, gitstore.InitOptions{DefaultBranch: "main", ObjectFormat: format, Files: files}); err != nil {
				t.Fatal(err)
			}
			g, err := s.OpenGit("alice", name)
			if err != nil || g.ObjectFormat() != format {
				t.Fatalf("%s: open %v", name, err)
			}
			var b bytes.Buffer
			if err := g.AdvertiseReceivePack(context.Background(), &b); err != nil {
				t.Fatal(err)
			}
			adv := b.String()
			if !strings.HasPrefix(adv, "001f# service=git-receive-pack\n0000") || !strings.Contains(adv, "object-format="+format) ||
				!strings.Contains(adv, "report-status") || !strings.Contains(adv, "no-thin") || !strings.HasSuffix(adv, "0000") {
				t.Errorf("%s: advertisement %q", name, adv)
			}
			if files == nil && !strings.Contains(adv, gitstore.ZeroID(format)+" capabilities^{}\x00") {
				t.Errorf("%s: empty advertisement %q", name, adv)
			}
		}
	}
}
