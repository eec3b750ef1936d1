package store

import (
	"context"
	"time"
)

// Hook is a webhook. Its scope follows from the ids: RepoID set for a
// repository's hook; OwnerID set (RepoID zero) for the hook of a user or an
// organization, firing for every repository it owns; both zero for a
// site-wide hook, which is a system hook (IsSystem, firing for every
// repository) or a default hook (copied into each new repository).
type Hook struct {
	ID          int64 `gorm:"primaryKey"`
	RepoID      int64
	OwnerID     int64
	IsSystem    bool
	Type        string
	URL         string
	HTTPMethod  string
	ContentType string
	Secret      string
	// Meta is a JSON object of the receiver type's own config keys (a
	// slack channel, a telegram chat id, ...).
	Meta string
	// Events is a JSON array of the event types the hook receives, with
	// "issues" and "pull_request" already expanded to their sub-events.
	Events              string
	BranchFilter        string
	AuthorizationHeader string
	// AuthorizationUnreadable marks a hook read back whose sealed
	// authorization header does not open with this server's secret key
	// (the key was lost or changed): the header then reads as empty and
	// deliveries fail with that reason rather than go out without it.
	// Reads of the hook, and its other hooks' deliveries, carry on.
	AuthorizationUnreadable bool `gorm:"-"`
	Name                    string
	Active                  bool
	CreatedAt               time.Time
	UpdatedAt               time.Time
}

// TableName keeps the reference's table name.
func (Hook) TableName() string { return "webhooks" }

// The states of a delivery.
const (
	DeliveryPending   = 0 // queued, being attempted or waiting for a retry
	DeliveryDelivered = 1 // the receiver answered 2xx
	DeliveryFailed    = 2 // no attempts left
)

// HookDelivery is one event for one hook: a row of the persistent delivery
// queue and, once done, the record of what was sent and answered.
type HookDelivery struct {
	ID     int64 `gorm:"primaryKey"`
	HookID int64
	// UUID is X-Gitea-Delivery: the same on every attempt and on a
	// redelivery.
	UUID      string
	EventID   int64 // the outbox event it came from; 0 for tests and redeliveries
	Event     string
	EventType string
	Action    string
	Payload   []byte
	// IsRedelivery marks a copy queued by the redeliver operation.
	IsRedelivery bool
	State        int
	Attempts     int
	// NextAttemptAt (unix milliseconds) is when a pending delivery may be
	// claimed; a claim pushes it past the attempt's lease, so a worker
	// that dies mid-attempt leaves it to be claimed again.
	NextAttemptAt int64
	// QueuedAt (unix milliseconds) is when the delivery was queued.
	QueuedAt        int64
	RequestURL      string
	RequestMethod   string
	RequestHeaders  string // JSON object, as last sent
	ResponseStatus  int
	ResponseHeaders string // JSON object
	ResponseBody    string // an excerpt
	DurationMicros  int64
	Error           string
	CreatedAt       time.Time
	DeliveredAt     *time.Time
}

// HookFilter selects the hooks of one scope for a list.
type HookFilter struct {
	RepoID  int64
	OwnerID int64
	// Site-wide hooks: System (true) or Default (false) or, nil, both.
	SiteWide bool
	System   *bool
}

// DeliveryCounts counts the queue by state.
type DeliveryCounts struct {
	Pending, Delivered, Failed int64
}

// HookStore keeps hooks, their delivery queue and the webhook consumer's
// position in the event outbox.
type HookStore interface {
	Create(ctx context.Context, h *Hook) error
	CreateMany(ctx context.Context, hs []*Hook) error
	Update(ctx context.Context, h *Hook) error
	Find(ctx context.Context, id int64) (*Hook, error)
	// Delete removes the hook and its deliveries; ErrNotFound if absent.
	Delete(ctx context.Context, id int64) error
	// DeleteByRepo removes a repository's hooks and their deliveries.
	DeleteByRepo(ctx context.Context, repoID int64) error
	// DeleteByOwner removes a user's or organization's own hooks (not
	// those of its repositories) and their deliveries.
	DeleteByOwner(ctx context.Context, ownerID int64) error
	List(ctx context.Context, f HookFilter, p Page) ([]*Hook, int64, error)
	// ForRepo returns the active hooks an event of a repository reaches:
	// its own, its owner's and the system hooks. With repoID 0 (an event
	// of an owner, such as a package's) the owner's and the system hooks.
	ForRepo(ctx context.Context, repoID, ownerID int64) ([]*Hook, error)
	// Defaults returns the default hooks, to copy into a new repository.
	Defaults(ctx context.Context) ([]*Hook, error)

	Enqueue(ctx context.Context, ds []*HookDelivery) error
	// Claim takes up to n deliveries due at now (unix ms) for one attempt,
	// counting the attempt and leasing each until leaseUntil; several
	// workers (and processes) never claim the same row.
	Claim(ctx context.Context, now, leaseUntil int64, n int) ([]*HookDelivery, error)
	// Finish writes the outcome of an attempt.
	Finish(ctx context.Context, d *HookDelivery) error
	// Release hands claimed, unattempted deliveries back to the queue.
	Release(ctx context.Context, ids []int64, now int64) error
	ListDeliveries(ctx context.Context, hookID int64, p Page) ([]*HookDelivery, int64, error)
	FindDelivery(ctx context.Context, hookID, id int64) (*HookDelivery, error)
	// PruneDeliveries deletes finished deliveries that ended before t.
	PruneDeliveries(ctx context.Context, t time.Time) (int64, error)
	CountDeliveries(ctx context.Context) (DeliveryCounts, error)
}
