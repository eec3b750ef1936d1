package store

import (
	"context"
	"time"
)

// Event is one domain event as the outbox keeps it: something that changed,
// written in the same transaction as the change itself, so an event exists
// if and only if its change was committed. Payload is the JSON of the kind's
// payload type (see impl/events).
type Event struct {
	ID        int64 `gorm:"primaryKey"`
	Kind      string
	RepoID    int64
	ActorID   int64
	Payload   []byte
	CreatedAt time.Time
}

// EventStore is the outbox.
type EventStore interface {
	// Append stores e (joining the transaction in ctx) and sets its ID.
	Append(ctx context.Context, e *Event) error
	// ListAfter returns up to limit events with ids above afterID, oldest
	// first, for consumers that catch up from a position of their own.
	ListAfter(ctx context.Context, afterID int64, limit int) ([]*Event, error)
}

// Clock tells the time. Services take it instead of calling time.Now, so
// tests can fix the time and every timestamp of one action agrees.
type Clock interface {
	Now() time.Time
}

// SystemClock is the real clock, at the second precision the API renders.
type SystemClock struct{}

// Now is the current UTC time truncated to the second.
func (SystemClock) Now() time.Time { return time.Now().UTC().Truncate(time.Second) }
