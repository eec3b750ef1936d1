package store

import (
	"context"
	"time"
)

// The types of timeline events, as the reference names them.
const (
	EventLabel            = "label"
	EventMilestone        = "milestone"
	EventAssignees        = "assignees"
	EventClose            = "close"
	EventReopen           = "reopen"
	EventChangeTitle      = "change_title"
	EventLock             = "lock"
	EventUnlock           = "unlock"
	EventPin              = "pin"
	EventUnpin            = "unpin"
	EventAddDependency    = "add_dependency"
	EventRemoveDependency = "remove_dependency"
	EventReview           = "review"
	EventReviewRequest    = "review_request"
	EventPullPush         = "pull_push"
	EventCommitRef        = "commit_ref"
	EventIssueRef         = "issue_ref"
	EventCommentRef       = "comment_ref"
	EventPullRef          = "pull_ref"
)

// The actions of a reference event, numbered as the reference numbers
// them.
const (
	RefNone = iota
	RefCloses
	RefReopens
	RefNeutered
)

// RefActionNames are the actions' names in the API's ref_action.
var RefActionNames = []string{"none", "closes", "reopens", "neutered"}

// IssueEvent is one event of an issue's timeline (a change recorded in the
// transaction that made it). Plain comments are Comment rows; the two are
// listed together by TimelineStore.List.
type IssueEvent struct {
	ID      int64 `gorm:"primaryKey"`
	IssueID int64
	RepoID  int64
	Type    string
	// PosterID is who made the change.
	PosterID int64
	// LabelID is the label added or (Removed) removed.
	LabelID int64
	// MilestoneID and OldMilestoneID are the milestone set and the one it
	// replaced (0: none).
	MilestoneID    int64
	OldMilestoneID int64
	// AssigneeID is the user assigned or (Removed) unassigned, or asked
	// (or no longer asked) for a review; AssigneeTeamID the team asked.
	AssigneeID     int64
	AssigneeTeamID int64
	// ReviewID is the review submitted.
	ReviewID int64
	// DependentIssueID is the other issue of a dependency event.
	DependentIssueID int64
	// AfterCommentID is the issue's newest comment when the event was
	// recorded (0: none); TimelineStore.Add sets it. It places the event
	// among the comments, which the clock (seconds) cannot.
	AfterCommentID int64
	// CommitSHA is the commit of a commit_ref event; an issue has one
	// event per commit.
	CommitSHA string
	// RefIssueID and RefCommentID are the issue (and its comment, if the
	// reference is in one) that refers to this issue (issue_ref,
	// pull_ref, comment_ref); an issue has one event per referring text.
	RefIssueID   int64
	RefCommentID int64
	// RefAction is what a reference asks of the issue it names: RefNone,
	// RefCloses, RefReopens, or RefNeutered once the referring text no
	// longer names it.
	RefAction int
	Removed   bool
	OldTitle  string
	NewTitle  string
	// Body is the event's detail: the lock reason, the JSON of a push's
	// commits.
	Body      string
	CreatedAt time.Time
	UpdatedAt time.Time
}

// TimelineEntry is one entry of a timeline: a comment or an event.
type TimelineEntry struct {
	Comment *Comment
	Event   *IssueEvent
}

// TimelineStore records issue events and lists an issue's timeline.
type TimelineStore interface {
	// Add records events (in the caller's transaction).
	Add(ctx context.Context, evs ...*IssueEvent) error
	// AddOnce records ev unless its issue has an event of the same commit
	// (CommitSHA), or of the same referring issue and comment, already; it
	// reports whether it recorded it.
	AddOnce(ctx context.Context, ev *IssueEvent) (bool, error)
	// Reference records ev, a reference event (RefIssueID set), or when
	// its issue already has one from the same referring issue and comment
	// gives that one ev's RefAction.
	Reference(ctx context.Context, ev *IssueEvent) error
	// NeuterRefs marks the reference events made by issue refIssueID (its
	// comment refCommentID, or 0 for its title and body) neutered, except
	// those on the issues in keep; it reports the ids of the issues whose
	// event it neutered.
	NeuterRefs(ctx context.Context, refIssueID, refCommentID int64, keep []int64, at time.Time) error
	// ResolvingRefs are the reference events made by issue refIssueID (its
	// body or any of its comments) that close or reopen an issue, the
	// newest of each issue only.
	ResolvingRefs(ctx context.Context, refIssueID int64) ([]*IssueEvent, error)
	// List returns a page of the issue's comments and events together,
	// oldest first, updated within the optional bounds, and the size of
	// the whole set.
	List(ctx context.Context, issueID int64, since, before *time.Time, p Page) ([]TimelineEntry, int64, error)
}

// DependencyStore reads and writes the dependencies between issues: an
// issue depends on another (its dependency), which blocks it.
type DependencyStore interface {
	// Add records that issueID depends on dependencyID; it reports false
	// when it already did.
	Add(ctx context.Context, issueID, dependencyID int64, now time.Time) (bool, error)
	// Remove forgets it; it reports false when there was nothing to forget.
	Remove(ctx context.Context, issueID, dependencyID int64) (bool, error)
	// Dependencies returns the issues issueID depends on, by id.
	Dependencies(ctx context.Context, issueID int64) ([]*Issue, error)
	// Blocks returns the issues that depend on issueID, by id.
	Blocks(ctx context.Context, issueID int64) ([]*Issue, error)
	// OpenDependencies counts the open issues issueID depends on.
	OpenDependencies(ctx context.Context, issueID int64) (int64, error)
}

// PinStore is the pinning of issues (and pull requests) of a repository.
// Issues and pull requests each have their own order, from 1 without gaps.
type PinStore interface {
	// Pinned returns the repository's pinned issues (isPull false) or
	// pull requests, in pin order.
	Pinned(ctx context.Context, repoID int64, isPull bool) ([]*Issue, error)
	// CountPinned counts the repository's pinned issues and pull requests.
	CountPinned(ctx context.Context, repoID int64) (int64, error)
	// Pin puts the issue last among the pinned ones of its kind.
	Pin(ctx context.Context, is *Issue) error
	// Unpin takes a pinned issue out and closes the gap it leaves.
	Unpin(ctx context.Context, is *Issue) error
	// Move puts a pinned issue at position pos (1 first; past the last
	// position it goes last), shifting the others.
	Move(ctx context.Context, is *Issue, pos int64) error
}
