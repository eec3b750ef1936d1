package gitstore_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v6/plumbing"
	"github.com/go-git/go-git/v6/plumbing/object"

	"repohost/store"
	"repohost/store/gitstore"
)

// pkt frames a pkt-line.
func pkt(s string) string { return fmt.Sprintf("%04x%s", len(s)+4, s) }

// newServedRepo makes alice/served with two commits on trunk and returns
// the tip.
func newServedRepo(t *testing.T, s *gitstore.Store) plumbing.Hash {
	t.Helper()
	when := time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)
	first, err := s.Create("alice", "served", gitstore.InitOptions{
		DefaultBranch: "trunk",
		Files:         map[string]string{"README.md": "# Hello\n"},
		CommitMessage: "Initial commit",
		Author:        object.Signature{Name: "Alice", Email: "alice@example.com", When: when},
	})
	if err != nil {
		t.Fatal(err)
	}
	g, err := s.OpenGit("alice", "served")
	if err != nil {
		t.Fatal(err)
	}
	up := &gitstore.RefUpdate{Name: plumbing.NewBranchReferenceName("trunk"), New: first}
	s.UpdateRefs(g, []*gitstore.RefUpdate{up}, nil)
	if up.Err != nil {
		t.Fatal(up.Err)
	}
	return first
}

func requireGit(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("needs the git binary")
	}
}

func TestUploadPackAdvertisesAndServesAShallowClone(t *testing.T) {
	requireGit(t)
	s := newStore(t)
	tip := newServedRepo(t, s)
	ctx := context.Background()

	var adv bytes.Buffer
	if err := s.UploadPack(ctx, "alice", "served", gitstore.UploadPackAdvertise, "", nil, &adv, nil); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(adv.String(), "001e# service=git-upload-pack\n0000") {
		t.Fatalf("advertisement starts %q", adv.String()[:min(40, adv.Len())])
	}
	if !strings.Contains(adv.String(), tip.String()+" refs/heads/trunk\n") || !strings.Contains(adv.String(), "shallow") {
		t.Fatalf("advertisement without trunk or shallow: %q", adv.String())
	}

	req := pkt("want "+tip.String()+" ofs-delta\n") + pkt("deepen 1\n") + "0000" + pkt("done\n")
	var out bytes.Buffer
	if err := s.UploadPack(ctx, "alice", "served", gitstore.UploadPackRequest, "", strings.NewReader(req), &out, nil); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	if !strings.Contains(got, "shallow "+tip.String()) || !strings.Contains(got, "NAK\n") || !strings.Contains(got, "PACK") {
		t.Fatalf("shallow answer %q", got[:min(200, len(got))])
	}
}

func TestUploadPackMissingRepositoryIsNotFound(t *testing.T) {
	requireGit(t)
	s := newStore(t)
	var out bytes.Buffer
	err := s.UploadPack(context.Background(), "alice", "nope", gitstore.UploadPackAdvertise, "", nil, &out, nil)
	if !errors.Is(err, store.ErrNotFound) || out.Len() != 0 {
		t.Fatalf("missing repository: %v, wrote %q", err, out.String())
	}
}

func TestUploadPackUnknownWantIsAnsweredByGit(t *testing.T) {
	requireGit(t)
	s := newStore(t)
	newServedRepo(t, s)
	req := pkt("want 0123456789012345678901234567890123456789\n") + "0000" + pkt("done\n")
	var out bytes.Buffer
	err := s.UploadPack(context.Background(), "alice", "served", gitstore.UploadPackRequest, "", strings.NewReader(req), &out, nil)
	// git answers the client itself, in an ERR line, and fails.
	if err == nil || !strings.Contains(out.String(), "ERR upload-pack: not our ref") {
		t.Fatalf("unknown want: %v (answer %q)", err, out.String())
	}
}

func TestUploadPackMalformedRequestIsAProtocolError(t *testing.T) {
	requireGit(t)
	s := newStore(t)
	newServedRepo(t, s)
	var out bytes.Buffer
	err := s.UploadPack(context.Background(), "alice", "served", gitstore.UploadPackRequest, "", strings.NewReader("garbage"), &out, nil)
	if !errors.Is(err, gitstore.ErrProtocol) || out.Len() != 0 || strings.Contains(err.Error(), s.Root()) {
		t.Fatalf("malformed request: %v (answer %q)", err, out.String())
	}
}

// A cancelled context kills the process: a session waiting for the
// client's wants ends at once, not when the client sends them.
func TestUploadPackCancelKillsTheProcess(t *testing.T) {
	requireGit(t)
	s := newStore(t)
	newServedRepo(t, s)
	in, client, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	defer client.Close() // never written: the client says nothing
	ctx, cancel := context.WithCancel(context.Background())
	out := &notifyWriter{first: make(chan struct{})}
	done := make(chan error, 1)
	go func() {
		done <- s.UploadPack(ctx, "alice", "served", gitstore.UploadPackStream, "", in, out, nil)
	}()
	select {
	case <-out.first:
	case err := <-done:
		t.Fatalf("upload-pack ended before its advertisement: %v", err)
	case <-time.After(30 * time.Second):
		t.Fatal("no advertisement")
	}
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("cancelled upload-pack: %v", err)
		}
	case <-time.After(3 * time.Second):
		t.Fatal("upload-pack still running after its context was cancelled")
	}
}

type notifyWriter struct {
	first chan struct{}
	once  bool
}

func (w *notifyWriter) Write(p []byte) (int, error) {
	if !w.once {
		w.once = true
		close(w.first)
	}
	return len(p), nil
}

// Only values of the shape git sends for GIT_PROTOCOL reach git.
func TestValidProtocol(t *testing.T) {
	for v, want := range map[string]bool{
		"version=2": true, "version=1": true, "version=2:object-format=sha1": true, "version=2:flag": true,
		"": false, "version=2;rm": false, "version=2 x": false, "=2": false, "version=2:": false,
		"version=2\nx": false, "version=$(id)": false, strings.Repeat("a", 300): false,
	} {
		if got := gitstore.ValidProtocol(v); got != want {
			t.Errorf("ValidProtocol(%q) = %v, want %v", v, got, want)
		}
	}
}
