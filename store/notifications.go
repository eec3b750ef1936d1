package store

import (
	"context"
	"time"
)

// The statuses of a notification thread.
const (
	NotificationUnread = 1
	NotificationRead   = 2
	NotificationPinned = 3
)

// The subjects a notification thread is about.
const (
	NotificationSourceIssue      = "issue"
	NotificationSourcePull       = "pull"
	NotificationSourceRepository = "repository"
)

// Notification is one thread of a user's notifications: about one issue or
// pull request (IssueID), or, with IssueID 0, about the repository itself
// (its releases; ReleaseID names the latest). One per user, repository and
// issue, updated in place as activity goes on.
type Notification struct {
	ID      int64 `gorm:"primaryKey"`
	UserID  int64
	RepoID  int64
	IssueID int64
	Source  string
	Status  int
	// CommentID is the comment the thread points at: the first one the
	// user has not read (0 when none).
	CommentID int64
	ReleaseID int64
	UpdatedBy int64
	CreatedAt time.Time
	UpdatedAt time.Time
}

// NotificationFilter selects a user's threads; the repositories the user
// may no longer see are always left out (Viewer).
type NotificationFilter struct {
	UserID   int64
	Viewer   RepoViewer
	RepoID   int64    // 0: every repository
	Statuses []int    // empty: every status
	Sources  []string // empty: every subject
	Since    *time.Time
	Before   *time.Time
	// Hidden leaves out, per repository id, the threads of the sources
	// named: those of a unit (issues, pull requests, releases) the user
	// may no longer read there.
	Hidden map[int64][]string
}

// NotificationStore keeps notification threads.
type NotificationStore interface {
	// Notify records activity on n's thread (user, repository, issue):
	// a new thread, or the existing one updated in place, unread again
	// unless pinned. Recording the same activity twice changes nothing
	// more.
	Notify(ctx context.Context, n *Notification) error
	// List is a page of the threads f selects, most recently updated
	// first, with their total.
	List(ctx context.Context, f NotificationFilter, p Page) ([]*Notification, int64, error)
	// Count counts the threads f selects.
	Count(ctx context.Context, f NotificationFilter) (int64, error)
	// Find is thread id, or ErrNotFound.
	Find(ctx context.Context, id int64) (*Notification, error)
	// SetStatus gives thread id the status, updated at at.
	SetStatus(ctx context.Context, id int64, status int, at time.Time) error
	// RepoIDs are the repositories userID has threads of (or repoID's
	// alone, when it is not 0 and has some).
	RepoIDs(ctx context.Context, userID, repoID int64) ([]int64, error)
	// SetStatuses gives the threads f selects that were updated at or
	// before upTo the status, and returns them changed.
	SetStatuses(ctx context.Context, f NotificationFilter, upTo time.Time, status int, at time.Time) ([]*Notification, error)
}
