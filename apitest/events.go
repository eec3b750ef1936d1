package apitest

import (
	"context"
	"slices"
	"testing"
	"time"

	"repohost/impl/events"
)

// EventLog reads the events one server commits to the outbox, for tests
// that check a service announced exactly what it did.
type EventLog struct {
	e   *Env
	pos int64 // the newest event read so far
}

// RecordEvents starts reading e's outbox after its newest event.
func (e *Env) RecordEvents() *EventLog {
	e.T.Helper()
	l := &EventLog{e: e}
	l.fetch(e.T)
	return l
}

// fetch waits for the consumers (whose work emits events too), then reads
// the events after the log's position and moves it past them.
func (l *EventLog) fetch(t testing.TB) []events.Event {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := l.e.Deps.Events.Settle(ctx); err != nil {
		t.Fatalf("settle consumers: %v", err)
	}
	var out []events.Event
	for {
		rows, err := l.e.DB.Events().ListAfter(ctx, l.pos, 1000)
		if err != nil {
			t.Fatalf("read outbox: %v", err)
		}
		if len(rows) == 0 {
			return out
		}
		for _, r := range rows {
			ev, err := events.Decode(r)
			if err != nil {
				t.Fatalf("decode event: %v", err)
			}
			out = append(out, ev)
		}
		l.pos = rows[len(rows)-1].ID
	}
}

// Take returns the events committed since the last Take.
func (l *EventLog) Take() []events.Event {
	l.e.T.Helper()
	return l.fetch(l.e.T)
}

// ExpectKinds takes the recorded events and fails t unless their kinds are
// exactly want, in order.
func (l *EventLog) ExpectKinds(t testing.TB, action string, want ...events.Kind) []events.Event {
	t.Helper()
	got := l.fetch(t)
	kinds := make([]events.Kind, len(got))
	for i, ev := range got {
		kinds[i] = ev.Kind
	}
	if !slices.Equal(kinds, want) {
		t.Errorf("%s: events %v, want %v", action, kinds, want)
	}
	return got
}
