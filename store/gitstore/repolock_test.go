package gitstore_test

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"repohost/store/gitstore"
)

// TestLockRepo: shared holders run together; an exclusive holder waits
// for them and keeps new ones waiting; waiting ends with the context.
func TestLockRepo(t *testing.T) {
	s, err := gitstore.New(filepath.Join(t.TempDir(), "repositories"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Create("o", "r", gitstore.InitOptions{DefaultBranch: "main"}); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	short := func() (context.Context, context.CancelFunc) { return context.WithTimeout(ctx, 150*time.Millisecond) }

	a, err := s.LockRepo(ctx, "o", "r", false)
	if err != nil {
		t.Fatal(err)
	}
	b, err := s.LockRepo(ctx, "o", "r", false)
	if err != nil {
		t.Fatalf("a second shared holder waits: %v", err)
	}
	c, cancel := short()
	if _, err := s.LockRepo(c, "o", "r", true); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("exclusive beside shared holders: %v", err)
	}
	cancel()
	a()
	got := make(chan func(), 1)
	go func() {
		x, err := s.LockRepo(ctx, "o", "r", true)
		if err != nil {
			t.Error(err)
		}
		got <- x
	}()
	select {
	case <-got:
		t.Fatal("exclusive taken while a shared holder remains")
	case <-time.After(100 * time.Millisecond):
	}
	b()
	x := <-got
	c, cancel = short()
	if _, err := s.LockRepo(c, "o", "r", false); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("shared beside an exclusive holder: %v", err)
	}
	cancel()
	x()
	y, err := s.LockRepo(ctx, "o", "r", false)
	if err != nil {
		t.Fatal(err)
	}
	y()
	if _, err := s.LockRepo(ctx, "o", "missing", false); err == nil {
		t.Fatal("a missing repository locked")
	}
}
