package app

import (
	"context"
	"sync"
	"testing"
	"time"
)

func TestKeyedMutexSerialisesOneKeyOnly(t *testing.T) {
	t.Parallel()
	var k KeyedMutex
	ctx := context.Background()
	unlockA, err := k.Lock(ctx, "a")
	if err != nil {
		t.Fatal(err)
	}
	// Another key is free.
	unlockB, err := k.Lock(ctx, "b")
	if err != nil {
		t.Fatal(err)
	}
	unlockB()
	// The same key waits, until its context ends.
	short, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
	defer cancel()
	if _, err := k.Lock(short, "a"); err == nil {
		t.Fatal("a held key was taken twice")
	}
	got := make(chan struct{})
	go func() {
		unlock, err := k.Lock(ctx, "a")
		if err == nil {
			unlock()
		}
		close(got)
	}()
	unlockA()
	unlockA() // a second call does nothing
	<-got
	// Many holders in turn leave no key behind.
	var wg sync.WaitGroup
	for i := 0; i < 50; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			unlock, err := k.Lock(ctx, "c")
			if err == nil {
				unlock()
			}
		}()
	}
	wg.Wait()
	k.mu.Lock()
	defer k.mu.Unlock()
	if len(k.locks) != 0 {
		t.Fatalf("%d keys left", len(k.locks))
	}
}
