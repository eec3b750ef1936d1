package apitest

import (
	"context"
	"slices"
	"sync"
	"testing"

	"repohost/impl/events"
)

// EventLog records the committed events of one server, for tests that
// check a service announced exactly what it did.
type EventLog struct {
	mu     sync.Mutex
	events []events.Event
}

// RecordEvents subscribes to e's event bus until the test ends.
func (e *Env) RecordEvents() *EventLog {
	l := &EventLog{}
	stop := e.Deps.Events.Subscribe(func(_ context.Context, ev events.Event) {
		l.mu.Lock()
		defer l.mu.Unlock()
		l.events = append(l.events, ev)
	})
	e.T.Cleanup(stop)
	return l
}

// Take returns the events recorded since the last Take and forgets them.
func (l *EventLog) Take() []events.Event {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := l.events
	l.events = nil
	return out
}

// ExpectKinds takes the recorded events and fails t unless their kinds are
// exactly want, in order.
func (l *EventLog) ExpectKinds(t testing.TB, action string, want ...events.Kind) []events.Event {
	t.Helper()
	got := l.Take()
	kinds := make([]events.Kind, len(got))
	for i, ev := range got {
		kinds[i] = ev.Kind
	}
	if !slices.Equal(kinds, want) {
		t.Errorf("%s: events %v, want %v", action, kinds, want)
	}
	return got
}
