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
	// Consumers name the consumers that must handle the event: Append
	// writes one job for each, in the same transaction as the event.
	Consumers []string `gorm:"-"`
}

// EventStore is the outbox.
type EventStore interface {
	// Append stores e (joining the transaction in ctx), sets its ID, and
	// writes a pending job for each of e.Consumers.
	Append(ctx context.Context, e *Event) error
	// ListAfter returns up to limit events with ids above afterID, oldest
	// first.
	ListAfter(ctx context.Context, afterID int64, limit int) ([]*Event, error)
	// FindByIDs returns the events of ids that exist, by id.
	FindByIDs(ctx context.Context, ids []int64) (map[int64]*Event, error)
	// Prune deletes up to limit events created before cutoff that no job
	// refers to any more (every consumer is done with them), oldest
	// first; it returns how many.
	Prune(ctx context.Context, cutoff time.Time, limit int) (int64, error)
}

// The states of an event job.
const (
	// JobPending waits for its consumer: due once RunAt has passed, or
	// claimed by a worker (Token set) until RunAt, its lease, runs out.
	JobPending = "pending"
	// JobDead failed its last attempt; it waits for an operator's retry
	// (EventJobStore.Retry) and holds nothing up meanwhile.
	JobDead = "dead"
)

// EventJob is one consumer's work on one event. It is written with the
// event and deleted when the consumer is done with it, so the table holds
// only what is still to do (and the dead letters).
type EventJob struct {
	ID       int64 `gorm:"primaryKey"`
	Consumer string
	EventID  int64
	// RepoID is the event's repository: an ordered consumer takes a job
	// only when no earlier pending job of the same repository is left.
	RepoID int64
	State  string
	// Attempts counts the claims so far.
	Attempts int
	// RunAt is when the job is due (Unix milliseconds); while claimed it
	// is the end of the claim's lease.
	RunAt int64
	// Token identifies the claim holding the job (0: none): only the
	// holder may finish it, so a worker whose lease ran out cannot.
	Token     int64
	LastError string
	CreatedAt time.Time
	// UpdatedAt is when the job last failed or was claimed.
	UpdatedAt time.Time
}

// JobStats are the figures of one consumer's queue.
type JobStats struct {
	Consumer string
	// Pending counts the jobs waiting or being handled; Retrying those
	// of them that failed at least once; Dead the dead letters.
	Pending, Retrying, Dead int64
	// OldestPending is the creation time of the oldest pending job
	// (zero when none is).
	OldestPending time.Time
}

// EventJobStore is the consumers' queue over the outbox.
type EventJobStore interface {
	// Claim takes up to n due jobs of each of consumers, oldest first,
	// leasing them to token until leaseUntil (Unix ms); with ordered, a
	// job is taken only when no earlier pending job of its repository is
	// left. Several processes may claim at once: each job goes to one.
	// It returns the jobs in id order and, read with them, their events
	// by id (an event deleted since is missing).
	Claim(ctx context.Context, consumers []string, now, leaseUntil, token int64, n int, ordered bool) ([]*EventJob, map[int64]*Event, error)
	// Extend moves the lease of the jobs token holds to leaseUntil.
	Extend(ctx context.Context, ids []int64, token, leaseUntil int64) error
	// Finish deletes the jobs token still holds (joining the
	// transaction in ctx); it returns how many it deleted.
	Finish(ctx context.Context, ids []int64, token int64) (int64, error)
	// Fail records a failed attempt of the job token holds: it is due
	// again at runAt, or dead when dead is set.
	Fail(ctx context.Context, id, token int64, runAt int64, dead bool, reason string, now time.Time) error
	// Busy reports whether some job is due by now or claimed.
	Busy(ctx context.Context, now int64) (bool, error)
	// Stats are the queue figures of every consumer that has jobs.
	Stats(ctx context.Context) ([]JobStats, error)
	// Dead lists the dead letters of consumer ("" for all), newest
	// first, a page at a time, with their total.
	Dead(ctx context.Context, consumer string, offset, limit int) ([]*EventJob, int64, error)
	// Retry makes dead letters pending again, due at now: the one of id,
	// or every one of consumer when id is 0 ("" and 0: all). It returns
	// how many.
	Retry(ctx context.Context, consumer string, id int64, now int64) (int64, error)
	// Release hands back every claim (due at once): for a process that
	// knows no other one shares the queue (the embedded database).
	Release(ctx context.Context) (int64, error)
	// ReleaseToken hands back, due at once, whatever is claimed under
	// token: the claim of a worker that never read its claim's answer.
	ReleaseToken(ctx context.Context, token int64) error
}

// Clock tells the time. Services take it instead of calling time.Now, so
// tests can fix the time and every timestamp of one action agrees.
type Clock interface {
	// Now is the time of a change as stored and rendered (the API's
	// second precision).
	Now() time.Time
	// Precise is the same clock at full precision, for queues that
	// schedule work to the millisecond (webhook deliveries, event jobs).
	Precise() time.Time
}

// SystemClock is the real clock, at the second precision the API renders.
type SystemClock struct{}

// Now is the current UTC time truncated to the second.
func (SystemClock) Now() time.Time { return time.Now().UTC().Truncate(time.Second) }

// Precise is the current UTC time.
func (SystemClock) Precise() time.Time { return time.Now().UTC() }
