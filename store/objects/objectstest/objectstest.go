// Package objectstest is the behaviour every objects.Store backend must
// show, run by each backend's own test against a real instance.
package objectstest

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"repohost/store/objects"
)

// Run checks s, which must be empty.
func Run(t *testing.T, s objects.Store) {
	t.Helper()
	ctx := context.Background()
	content := bytes.Repeat([]byte("0123456789abcdef"), 4096) // 64 KiB

	if _, err := s.Open(ctx, "ab/cd/missing"); !objects.IsNotExist(err) {
		t.Errorf("open of a missing object: %v, want not-exist", err)
	}
	if _, err := s.Stat(ctx, "ab/cd/missing"); !objects.IsNotExist(err) {
		t.Errorf("stat of a missing object: %v, want not-exist", err)
	}
	if err := s.Delete(ctx, "ab/cd/missing"); err != nil {
		t.Errorf("delete of a missing object: %v", err)
	}
	for _, bad := range []string{"", "/abs", "a/../b", "..", "a//b", "a/./b", "a\\b"} {
		if err := s.Put(ctx, bad, strings.NewReader("x"), 1); !errors.Is(err, objects.ErrBadKey) {
			t.Errorf("put %q: %v, want ErrBadKey", bad, err)
		}
	}

	if err := s.Put(ctx, "ab/cd/one", bytes.NewReader(content), int64(len(content))); err != nil {
		t.Fatalf("put: %v", err)
	}
	if n, err := s.Stat(ctx, "ab/cd/one"); err != nil || n != int64(len(content)) {
		t.Errorf("stat: %d, %v", n, err)
	}
	o, err := s.Open(ctx, "ab/cd/one")
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	if o.Size() != int64(len(content)) {
		t.Errorf("size %d, want %d", o.Size(), len(content))
	}
	if _, err := o.Seek(16, io.SeekStart); err != nil {
		t.Fatalf("seek: %v", err)
	}
	got, err := io.ReadAll(o)
	o.Close()
	if err != nil || !bytes.Equal(got, content[16:]) {
		t.Errorf("read after seek: %d bytes, %v", len(got), err)
	}

	// A short or long put leaves nothing, and keeps an earlier object.
	if err := s.Put(ctx, "ab/cd/two", bytes.NewReader(content[:10]), 11); !errors.Is(err, objects.ErrShort) {
		t.Errorf("short put: %v, want ErrShort", err)
	}
	if _, err := s.Stat(ctx, "ab/cd/two"); !objects.IsNotExist(err) {
		t.Errorf("a short put left an object: %v", err)
	}
	if err := s.Put(ctx, "ab/cd/one", bytes.NewReader(content), 10); !errors.Is(err, objects.ErrShort) {
		t.Errorf("long put: %v, want ErrShort", err)
	}
	if n, err := s.Stat(ctx, "ab/cd/one"); err != nil || n != int64(len(content)) {
		t.Errorf("a failed put replaced the object: %d, %v", n, err)
	}

	if err := s.Put(ctx, "ab/ef/three", strings.NewReader("three"), 5); err != nil {
		t.Fatal(err)
	}
	if err := s.Put(ctx, "zz/four", strings.NewReader(""), 0); err != nil {
		t.Fatalf("empty put: %v", err)
	}
	walk := func(prefix string) []string {
		var keys []string
		err := s.Walk(ctx, prefix, func(key string, size int64, modified time.Time) error {
			keys = append(keys, key)
			if modified.IsZero() {
				t.Errorf("walk: %s has no time", key)
			}
			return nil
		})
		if err != nil {
			t.Errorf("walk %q: %v", prefix, err)
		}
		slices.Sort(keys)
		return keys
	}
	if got := walk(""); !slices.Equal(got, []string{"ab/cd/one", "ab/ef/three", "zz/four"}) {
		t.Errorf("walk all: %v", got)
	}
	if got := walk("ab/"); !slices.Equal(got, []string{"ab/cd/one", "ab/ef/three"}) {
		t.Errorf("walk ab/: %v", got)
	}
	if got := walk("ab/cd/o"); !slices.Equal(got, []string{"ab/cd/one"}) {
		t.Errorf("walk ab/cd/o: %v", got)
	}
	if got := walk("nothing/"); len(got) != 0 {
		t.Errorf("walk nothing/: %v", got)
	}

	// A finished local file is taken whole (moved or copied).
	file := filepath.Join(t.TempDir(), "staged")
	if err := os.WriteFile(file, content[:100], 0o644); err != nil {
		t.Fatal(err)
	}
	if err := objects.PutFile(ctx, s, "ab/gh/five", file); err != nil {
		t.Fatalf("put file: %v", err)
	}
	if n, err := s.Stat(ctx, "ab/gh/five"); err != nil || n != 100 {
		t.Errorf("stat of a put file: %d, %v", n, err)
	}
	if err := s.Delete(ctx, "ab/gh/five"); err != nil {
		t.Fatal(err)
	}

	if err := s.Delete(ctx, "ab/cd/one"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Open(ctx, "ab/cd/one"); !objects.IsNotExist(err) {
		t.Errorf("open after delete: %v", err)
	}
	if _, err := s.URL(ctx, "ab/ef/three", "three.txt", time.Minute); err != nil {
		t.Errorf("url: %v", err)
	}
}
