package store

import (
	"context"
	"time"
)

// RepoWatch is a user watching a repository: the user hears of its issues,
// pull requests and releases. At most one per user and repository; the
// repository's NumWatches counts them.
type RepoWatch struct {
	UserID    int64 `gorm:"primaryKey;autoIncrement:false"`
	RepoID    int64 `gorm:"primaryKey;autoIncrement:false"`
	CreatedAt time.Time
}

// TableName keeps the table's name independent of the type's.
func (RepoWatch) TableName() string { return "watches" }

// IssueWatch is a user's explicit choice about one issue or pull request:
// subscribed (IsWatching) or unsubscribed. Without one, the issue's
// participants (its poster, commenters, assignees and mentioned users) are
// subscribed.
type IssueWatch struct {
	UserID     int64 `gorm:"primaryKey;autoIncrement:false"`
	IssueID    int64 `gorm:"primaryKey;autoIncrement:false"`
	IsWatching bool
	CreatedAt  time.Time
	UpdatedAt  time.Time
}

// TableName keeps the table's name independent of the type's.
func (IssueWatch) TableName() string { return "issue_watches" }

// WatchStore keeps who watches which repository and who chose to
// (un)subscribe from which issue.
type WatchStore interface {
	// Watch makes userID watch repoID; false when it did already. The
	// repository's counter moves in the same transaction.
	Watch(ctx context.Context, userID, repoID int64) (bool, error)
	// Unwatch ends it; false when there was none.
	Unwatch(ctx context.Context, userID, repoID int64) (bool, error)
	// UnwatchOwnedBy ends userID's watches of the repositories ownerID
	// owns (a block), reporting how many went.
	UnwatchOwnedBy(ctx context.Context, userID, ownerID int64) (int64, error)
	// WatchNew makes the users in userIDs and, for an organization's
	// repository (orgID > 0), the members of its teams that include all
	// its repositories watch the new repository repoID; it returns the
	// repository's watcher count.
	WatchNew(ctx context.Context, repoID, orgID int64, userIDs ...int64) (int64, error)
	// FindWatch is userID's watch of repoID, or ErrNotFound.
	FindWatch(ctx context.Context, userID, repoID int64) (*RepoWatch, error)
	// ListWatchers is a page of the users watching repoID, by id, with
	// their total.
	ListWatchers(ctx context.Context, repoID int64, p Page) ([]*User, int64, error)
	// WatcherIDs are the ids of every user watching repoID.
	WatcherIDs(ctx context.Context, repoID int64) ([]int64, error)

	// SetIssueWatch records userID's choice about issueID.
	SetIssueWatch(ctx context.Context, userID, issueID int64, watching bool) error
	// FindIssueWatch is userID's choice about issueID, or ErrNotFound.
	FindIssueWatch(ctx context.Context, userID, issueID int64) (*IssueWatch, error)
	// IsParticipant tells whether userID posted, commented on, is
	// assigned to or is mentioned in issue.
	IsParticipant(ctx context.Context, userID int64, issue *Issue) (bool, error)
	// ListIssueSubscribers is a page of the users subscribed to issue
	// (those who chose to, and the participants who did not choose
	// otherwise), by id, with their total.
	ListIssueSubscribers(ctx context.Context, issue *Issue, p Page) ([]*User, int64, error)
	// IssueAudience reads, in one statement, who is told of activity on
	// issue issueID, with what a notification of it names; ErrNotFound
	// when the issue is gone.
	IssueAudience(ctx context.Context, issueID int64) (*IssueAudience, error)
}

// IssueAudience is who is told of activity on an issue: the users
// subscribed to it (as ListIssueSubscribers counts them) and those
// watching its repository who did not unsubscribe from it.
type IssueAudience struct {
	RepoID int64
	IsPull bool
	// UserIDs are the users' ids, ascending.
	UserIDs []int64
}
