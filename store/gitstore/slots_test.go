package gitstore

import (
	"context"
	"testing"
	"time"
)

// A push that must wait for a receive slot says so before and after the
// wait (the HTTP transport rests its stall deadline meanwhile); one that
// finds a free slot says nothing.
func TestTakeSlotReportsTheWait(t *testing.T) {
	slots := make(chan struct{}, 1)
	var calls []bool
	ctx := WithSlotWait(context.Background(), func(waiting bool) { calls = append(calls, waiting) })
	if err := takeSlot(ctx, slots); err != nil || len(calls) != 0 {
		t.Fatalf("free slot: %v, calls %v", err, calls)
	}
	go func() { time.Sleep(50 * time.Millisecond); <-slots }()
	if err := takeSlot(ctx, slots); err != nil || len(calls) != 2 || !calls[0] || calls[1] {
		t.Fatalf("after a wait: %v, calls %v", err, calls)
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if err := takeSlot(cancelled, slots); err == nil || len(calls) != 4 || calls[3] {
		t.Fatalf("cancelled while full: %v, calls %v", err, calls)
	}
}
