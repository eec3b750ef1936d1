package store

import (
	"context"
	"time"
)

// CronTask is the shared state of one scheduled task: every server process
// on the database reads and moves the same row, so a task runs once per
// schedule however many processes serve, and its counters are the same
// whichever process answers GET /admin/cron.
type CronTask struct {
	Name string `gorm:"primaryKey"`
	// Schedule is the spec NextRun was computed from; a process configured
	// with another one recomputes NextRun (see CronStore.Ensure).
	Schedule string
	// NextRun is when the task is next due (nil: not scheduled).
	NextRun *time.Time
	// PrevRun is when its last run, scheduled or manual, started.
	PrevRun   *time.Time
	ExecTimes int64
	// LeaseHolder names the process running the task until LeaseUntil
	// ("" when nobody is); a holder that dies stops renewing and its lease
	// runs out.
	LeaseHolder string
	// LeaseUntil is the lease's end in Unix milliseconds: an integer
	// compares exactly on both databases, where SQLite's text times
	// compare rightly only at one precision.
	LeaseUntil int64
	// LastError is the failure of the last run ("" when it succeeded).
	LastError string
}

// CronStore keeps the tasks' rows. Every claim is one conditional UPDATE,
// so of several processes asking at once exactly one gets the task.
type CronStore interface {
	// Ensure creates the row of a task that has none, due at next, and
	// moves NextRun to next when the row was scheduled with another spec
	// (nil next: the task is not scheduled here).
	Ensure(ctx context.Context, name, schedule string, next *time.Time) error
	// List returns every row, by name.
	List(ctx context.Context) ([]*CronTask, error)
	// ClaimDue takes the lease of a task that is due (NextRun <= now) and
	// not leased (or whose lease ran out), moving NextRun to next; false
	// when another process has it or it is not due.
	ClaimDue(ctx context.Context, name, holder string, now, next, leaseUntil time.Time) (bool, error)
	// ClaimNow takes the lease for a run on demand, whatever NextRun says;
	// false when the task is running somewhere.
	ClaimNow(ctx context.Context, name, holder string, now, leaseUntil time.Time) (bool, error)
	// Renew extends holder's lease; false when holder no longer has it.
	Renew(ctx context.Context, name, holder string, leaseUntil time.Time) (bool, error)
	// Finish records a run of holder's that started at started (counting
	// it and keeping its error, "" for none) and gives the lease back.
	Finish(ctx context.Context, name, holder string, started time.Time, runErr string) error
}

// Notice is something the server found that a site admin should look at
// (the reference's system notices): a repository that failed its health
// check, a maintenance task that failed.
type Notice struct {
	ID          int64 `gorm:"primaryKey"`
	Type        string
	Description string
	CreatedAt   time.Time
}

// NoticeStore keeps the notices.
type NoticeStore interface {
	Create(ctx context.Context, n *Notice) error
	// List returns a page, newest first, and how many there are.
	List(ctx context.Context, p Page) ([]*Notice, int64, error)
	// DeleteBefore deletes the notices created before t and returns how
	// many it deleted.
	DeleteBefore(ctx context.Context, t time.Time) (int64, error)
}
