package apitest_test

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"repohost/apitest"
	"repohost/impl/app"
)

// writeRandomFile writes size bytes of deterministic, incompressible data
// (ChaCha8 keyed by seed) to path.
func writeRandomFile(t *testing.T, path string, size int64, seed byte) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	var key [32]byte
	key[0] = seed
	rng := rand.NewChaCha8(key)
	w := bufio.NewWriterSize(f, 1<<20)
	buf := make([]byte, 1<<20)
	for left := size; left > 0; {
		n := min(left, int64(len(buf)))
		_, _ = rng.Read(buf[:n])
		if _, err := w.Write(buf[:n]); err != nil {
			t.Fatal(err)
		}
		left -= n
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestGitPushLarge pushes one commit of random (incompressible) data with
// the stock git client and its default settings. Past http.postBuffer
// (1 MiB) git first probes with a flush-only request, then streams the
// pack chunked; a push of any size must work.
func TestGitPushLarge(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name  string
		size  int64
		clone bool // also clone it back (slow for the largest)
	}{
		{"1.1MB", 1_100_000, true},
		{"30MB", 30_000_000, true},
		{"200MB", 200_000_000, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			e := apitest.New(t)
			r := newClonedRepo(t, e, "big", nil)
			git, token, cred, work, clone := r.git, r.token, r.cred, r.work, r.clone
			writeRandomFile(t, filepath.Join(clone, "blob.bin"), c.size, byte(c.size))
			// Only the local object store skips compression (it would
			// take longer than the push); the push runs on defaults.
			git.must(clone, "-c", "core.looseCompression=0", "add", "blob.bin")
			git.must(clone, "commit", "-q", "-m", "big blob")
			sha := strings.TrimSpace(git.must(clone, "rev-parse", "HEAD"))
			blob := strings.TrimSpace(git.must(clone, "rev-parse", "HEAD:blob.bin"))

			start := time.Now()
			git.must(clone, "push", "-q", "origin", "main")
			t.Logf("git push of %s (%d bytes of random data) took %v", c.name, c.size, time.Since(start).Round(time.Millisecond))

			if b := ghBranch(t, e, cred, "alice", "big", "main"); b.Commit == nil || b.Commit.ID != sha {
				t.Fatalf("main after the push: %+v, want %s", b.Commit, sha)
			}
			// The server's repository holds the blob whole and sound.
			dir, err := e.Deps.Git.Path("alice", "big")
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.TrimSpace(git.must(dir, "--git-dir=.", "rev-parse", "main:blob.bin")); got != blob {
				t.Fatalf("server's main:blob.bin is %s, want %s", got, blob)
			}
			git.must(dir, "--git-dir=.", "fsck", "--no-progress", "--no-dangling")
			if c.clone {
				back := filepath.Join(work, "back")
				git.must(work, "clone", "-q", gitURL(e, "alice", token, "alice", "big"), back)
				if got := strings.TrimSpace(git.must(back, "rev-parse", "HEAD:blob.bin")); got != blob {
					t.Fatalf("cloned blob %s, want %s", got, blob)
				}
			}
		})
	}
}

// receivePack posts body to alice/proj's git-receive-pack with headers.
func receivePack(t *testing.T, e *apitest.Env, token string, body io.Reader, header map[string]string) (int, string) {
	t.Helper()
	req, err := http.NewRequest("POST", e.Server.URL+"/alice/proj.git/git-receive-pack", body)
	if err != nil {
		t.Fatal(err)
	}
	req.SetBasicAuth("alice", token)
	req.Header.Set("Content-Type", "application/x-git-receive-pack-request")
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := e.HTTPClient().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(out)
}

func gzipped(t *testing.T, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if _, err := zw.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestGitReceivePackBodies: git's probe (a flush-only request) succeeds
// with an empty answer and moves nothing, in every transfer encoding;
// a gzip body is bounded by its decompressed size.
func TestGitReceivePackBodies(t *testing.T) {
	t.Parallel()
	e := apitest.NewWithConfig(t, func(c *app.Config) { c.MaxGitInflatedBody = 1 << 20 })
	alice := e.CreateUser("alice", false)
	token := e.Token(alice, "write:repository")
	cred := apitest.TokenCred(token)
	roCreateRepo(t, e, cred, map[string]any{"name": "proj", "auto_init": true})
	before := ghBranch(t, e, cred, "alice", "proj", "main").Commit.ID

	probe := []byte("0000")
	for _, c := range []struct {
		name   string
		body   func() io.Reader
		header map[string]string
	}{
		{"plain", func() io.Reader { return bytes.NewReader(probe) }, nil},
		// A reader of unknown length makes the client send it chunked.
		{"chunked", func() io.Reader { return io.MultiReader(bytes.NewReader(probe)) }, nil},
		{"gzip", func() io.Reader { return bytes.NewReader(gzipped(t, probe)) }, map[string]string{"Content-Encoding": "gzip"}},
		{"gzip chunked", func() io.Reader { return io.MultiReader(bytes.NewReader(gzipped(t, probe))) }, map[string]string{"Content-Encoding": "gzip"}},
	} {
		status, out := receivePack(t, e, token, c.body(), c.header)
		if status != http.StatusOK || out != "" {
			t.Errorf("probe %s: %d %q, want 200 and an empty answer", c.name, status, out)
		}
	}

	// A gzip bomb (a command, then a pack header and 64 MiB of zeros,
	// squeezed into about 64 KiB) stops at the bound: 413, nothing moves
	// and the partial pack is not left on disk.
	var raw bytes.Buffer
	cmd := before + " " + strings.Repeat("1", 40) + " refs/heads/main\x00report-status\n"
	raw.WriteString(pktLen(len(cmd)+4) + cmd + "0000PACK\x00\x00\x00\x02\x00\x00\x00\x05")
	raw.Write(make([]byte, 64<<20))
	status, out := receivePack(t, e, token, bytes.NewReader(gzipped(t, raw.Bytes())), map[string]string{"Content-Encoding": "gzip"})
	if status != http.StatusRequestEntityTooLarge {
		t.Fatalf("gzip bomb: %d %q, want 413", status, out)
	}
	if got := ghBranch(t, e, cred, "alice", "proj", "main").Commit.ID; got != before {
		t.Fatalf("main moved to %s after a refused push", got)
	}
	dir, err := e.Deps.Git.Path("alice", "proj")
	if err != nil {
		t.Fatal(err)
	}
	left, err := filepath.Glob(filepath.Join(dir, "objects", "pack", "tmp_*"))
	if err != nil || len(left) > 0 {
		t.Fatalf("temporary files left after a refused push: %v %v", left, err)
	}
	// An encoding git never sends is refused.
	if status, _ := receivePack(t, e, token, bytes.NewReader(probe), map[string]string{"Content-Encoding": "br"}); status != http.StatusBadRequest {
		t.Fatalf("Content-Encoding br: %d, want 400", status)
	}
}

// pktLen is the four hex digits of a pkt-line of n bytes, header included.
func pktLen(n int) string {
	const hex = "0123456789abcdef"
	return string([]byte{hex[n>>12&15], hex[n>>8&15], hex[n>>4&15], hex[n&15]})
}

// TestGitReceivePackStalledBody: a push whose pack stops arriving ends
// after the stall timeout with 408 (the client's fault, not a 500), and
// nothing moves.
func TestGitReceivePackStalledBody(t *testing.T) {
	t.Parallel()
	e := apitest.NewWithConfig(t, func(c *app.Config) { c.StallTimeout = 500 * time.Millisecond })
	alice := e.CreateUser("alice", false)
	token := e.Token(alice, "write:repository")
	cred := apitest.TokenCred(token)
	roCreateRepo(t, e, cred, map[string]any{"name": "proj", "auto_init": true})
	before := ghBranch(t, e, cred, "alice", "proj", "main").Commit.ID

	pr, pw := io.Pipe()
	defer pw.Close()
	go func() {
		cmd := before + " " + strings.Repeat("1", 40) + " refs/heads/main\x00report-status\n"
		_, _ = io.WriteString(pw, pktLen(len(cmd)+4)+cmd+"0000PACK\x00\x00\x00\x02\x00\x00\x10\x00")
		// ... and then nothing: the client stalls with the pack open.
	}()
	status, out := receivePack(t, e, token, pr, nil)
	if status != http.StatusRequestTimeout {
		t.Fatalf("stalled pack: %d %q, want 408", status, out)
	}
	if got := ghBranch(t, e, cred, "alice", "proj", "main").Commit.ID; got != before {
		t.Fatalf("main moved to %s after a stalled push", got)
	}
}
