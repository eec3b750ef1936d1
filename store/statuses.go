package store

import (
	"context"
	"time"
)

// CommitStatus is one state a client (a CI system) reported for a commit
// of a repository under a context. Statuses are never edited: a new report
// under the same context supersedes the older ones, which stay listed.
type CommitStatus struct {
	ID     int64 `gorm:"primaryKey"`
	RepoID int64
	SHA    string `gorm:"column:sha"`
	// Index numbers the statuses of one commit from 1; the API shows it
	// as the status's id, as the reference does.
	Index       int64 `gorm:"column:seq"`
	State       string
	TargetURL   string
	Description string
	Context     string
	CreatorID   int64
	CreatedAt   time.Time
	UpdatedAt   time.Time
}

// TableName keeps the table's name independent of the type's.
func (CommitStatus) TableName() string { return "commit_statuses" }

// The sorts of a commit's status list (the reference's names, whose index
// sorts read backwards: "leastindex" lists the highest index first).
const (
	StatusSortNewest       = ""
	StatusSortOldest       = "oldest"
	StatusSortRecentUpdate = "recentupdate"
	StatusSortLeastUpdate  = "leastupdate"
	StatusSortLeastIndex   = "leastindex"
	StatusSortHighestIndex = "highestindex"
)

// StatusFilter selects a commit's statuses.
type StatusFilter struct {
	RepoID int64
	SHA    string
	State  string // empty: every state
	Sort   string // one of the StatusSort constants
}

// AutoMerge is a pull request's merge scheduled for when its required
// checks succeed ("merge when checks succeed"): who asked, and how to
// merge. At most one per pull request.
type AutoMerge struct {
	ID           int64 `gorm:"primaryKey"`
	IssueID      int64 // the pull request's issue
	RepoID       int64 // the base repository
	DoerID       int64
	Style        string
	Title        string
	Message      string
	DeleteBranch bool
	CreatedAt    time.Time
}

// TableName keeps the table's name independent of the type's.
func (AutoMerge) TableName() string { return "pull_auto_merges" }

// CommitStatusStore keeps commit statuses and scheduled merges.
type CommitStatusStore interface {
	// Create stores s with the next index of its commit.
	Create(ctx context.Context, s *CommitStatus) error
	// FindByID is status id of repository repoID (ErrNotFound).
	FindByID(ctx context.Context, repoID, id int64) (*CommitStatus, error)
	// List is a page of the statuses f selects, and how many there are.
	List(ctx context.Context, f StatusFilter, p Page) ([]*CommitStatus, int64, error)
	// Latest is a page of the newest status of each context of a commit
	// (newest first), and how many contexts there are.
	Latest(ctx context.Context, repoID int64, sha string, p Page) ([]*CommitStatus, int64, error)

	// ScheduleMerge stores m; ErrDuplicate when the pull request already
	// has one.
	ScheduleMerge(ctx context.Context, m *AutoMerge) error
	// FindScheduledMerge is the pull request's scheduled merge (ErrNotFound).
	FindScheduledMerge(ctx context.Context, issueID int64) (*AutoMerge, error)
	// ScheduledMerges are the scheduled merges into a repository.
	ScheduledMerges(ctx context.Context, repoID int64) ([]*AutoMerge, error)
	// DeleteScheduledMerge drops the pull request's scheduled merge and
	// tells whether there was one.
	DeleteScheduledMerge(ctx context.Context, issueID int64) (bool, error)
}
