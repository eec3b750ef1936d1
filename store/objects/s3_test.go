package objects_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"repohost/store/objects"
	"repohost/store/objects/objectstest"
)

// s3Store opens a store on the service REPOHOST_TEST_S3 names
// (scripts/with-s3.sh), under a base path of its own; the test is
// skipped without one.
func s3Store(t *testing.T) *objects.S3 {
	t.Helper()
	addr := os.Getenv("REPOHOST_TEST_S3")
	if addr == "" {
		t.Skip("REPOHOST_TEST_S3 is not set (scripts/with-s3.sh starts a service)")
	}
	u, err := url.Parse(addr)
	if err != nil {
		t.Fatal(err)
	}
	secret, _ := u.User.Password()
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := objects.NewS3(ctx, objects.S3Config{Endpoint: u.Host, AccessKey: u.User.Username(), SecretKey: secret,
		Bucket: strings.Trim(u.Path, "/"), BasePath: "objects-test/" + hex.EncodeToString(b), UseSSL: u.Scheme == "https"})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestS3(t *testing.T) {
	objectstest.Run(t, s3Store(t))
}

// TestS3LargePut puts an object of several parts from a reader that is
// neither a file nor seekable, and reads a range from its middle.
func TestS3LargePut(t *testing.T) {
	s := s3Store(t)
	ctx := context.Background()
	const size = objects.S3PartSize*2 + 12345
	src := io.LimitReader(&pattern{}, size)
	if err := s.Put(ctx, "big/one", src, size); err != nil {
		t.Fatal(err)
	}
	o, err := s.Open(ctx, "big/one")
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	if o.Size() != size {
		t.Fatalf("size %d", o.Size())
	}
	off := int64(objects.S3PartSize + 7)
	if _, err := o.Seek(off, io.SeekStart); err != nil {
		t.Fatal(err)
	}
	got := make([]byte, 64)
	if _, err := io.ReadFull(o, got); err != nil {
		t.Fatal(err)
	}
	want := make([]byte, 64)
	for i := range want {
		want[i] = byte((off + int64(i)) % 251)
	}
	if !bytes.Equal(got, want) {
		t.Fatal("range read differs")
	}
	// A multipart put cut short leaves nothing.
	if err := s.Put(ctx, "big/two", io.LimitReader(&pattern{}, size-1), size); !errors.Is(err, objects.ErrShort) {
		t.Fatalf("short multipart put: %v", err)
	}
	if _, err := s.Stat(ctx, "big/two"); !objects.IsNotExist(err) {
		t.Fatalf("short multipart put left an object: %v", err)
	}
}

// TestS3URL: the presigned address serves the object under its download
// name.
func TestS3URL(t *testing.T) {
	s := s3Store(t)
	ctx := context.Background()
	if err := s.Put(ctx, "a/b", strings.NewReader("hello"), 5); err != nil {
		t.Fatal(err)
	}
	u, err := s.URL(ctx, "a/b", "hello world.txt", time.Minute)
	if err != nil || u == "" {
		t.Fatalf("url %q, %v", u, err)
	}
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK || string(body) != "hello" {
		t.Fatalf("GET presigned: %d %q", resp.StatusCode, body)
	}
	if cd := resp.Header.Get("Content-Disposition"); !strings.Contains(cd, "hello world.txt") {
		t.Fatalf("Content-Disposition %q", cd)
	}
}

// pattern yields byte i%251 at offset i, endlessly.
type pattern struct{ off int64 }

func (p *pattern) Read(b []byte) (int, error) {
	for i := range b {
		b[i] = byte(p.off % 251)
		p.off++
	}
	return len(b), nil
}
