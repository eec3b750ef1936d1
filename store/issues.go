package store

import (
	"context"
	"strings"
	"time"
)

// IssueTracker bundles the stores of the issue tracker: issues, comments,
// labels, milestones, reactions, tracked time and projects.
type IssueTracker interface {
	Issues() IssueStore
	Comments() CommentStore
	Labels() LabelStore
	Milestones() MilestoneStore
	Reactions() ReactionStore
	TrackedTimes() TrackedTimeStore
	Projects() ProjectStore
	Timeline() TimelineStore
	Dependencies() DependencyStore
	Pins() PinStore
}

// Issue is an issue (and, once they exist, the issue half of a pull
// request: both draw their numbers from one per-repository counter).
type Issue struct {
	ID     int64 `gorm:"primaryKey"`
	RepoID int64
	// Index is the number shown to users, unique per repository.
	Index    int64 `gorm:"column:number"`
	PosterID int64
	Title    string
	Body     string
	// ContentVersion counts body changes; edits that name a stale version
	// are refused (optimistic locking).
	ContentVersion int64
	Ref            string
	IsClosed       bool
	IsPull         bool
	IsLocked       bool
	// PinOrder is the issue's place among the repository's pinned issues
	// (or pull requests), from 1; 0 when it is not pinned.
	PinOrder    int64
	MilestoneID int64 // 0: none
	NumComments int64
	// OriginalAuthor and OriginalAuthorID name the author on the server
	// the issue was migrated from, when that author has no account here
	// (PosterID is then the user who ran the migration).
	OriginalAuthor   string
	OriginalAuthorID int64
	Deadline         *time.Time
	ClosedAt         *time.Time
	CreatedAt        time.Time
	UpdatedAt        time.Time
}

// Comment is a real comment on an issue; timeline events are not stored.
type Comment struct {
	ID      int64 `gorm:"primaryKey"`
	IssueID int64
	// RepoID is the issue's repository (a copy, so that a repository's
	// comments are listed through one index).
	RepoID   int64
	PosterID int64
	Body     string
	// OriginalAuthor and OriginalAuthorID: as Issue's.
	OriginalAuthor   string
	OriginalAuthorID int64
	CreatedAt        time.Time
	UpdatedAt        time.Time
}

// Label belongs to one repository (RepoID) or to one organization (OrgID;
// usable on each of its repositories); the other id is 0. Color is
// "#rrggbb".
type Label struct {
	ID          int64 `gorm:"primaryKey"`
	RepoID      int64 `gorm:"default:null"`
	OrgID       int64 `gorm:"default:null"`
	Name        string
	Color       string
	Description string
	Exclusive   bool
	ArchivedAt  *time.Time
	CreatedAt   time.Time
	UpdatedAt   time.Time
}

// ExclusiveScope is the part of an exclusive label's name before the last
// "/": at most one label of a scope sits on an issue. "" when the label is
// not exclusive or its name has no scope.
func (l *Label) ExclusiveScope() string {
	if !l.Exclusive {
		return ""
	}
	i := strings.LastIndex(l.Name, "/")
	if i <= 0 || i == len(l.Name)-1 {
		return ""
	}
	return l.Name[:i]
}

// Milestone groups issues of one repository. NumIssues and NumClosedIssues
// are kept by atomic increments in the transactions that change issues.
type Milestone struct {
	ID              int64 `gorm:"primaryKey"`
	RepoID          int64
	Title           string
	Description     string
	IsClosed        bool
	NumIssues       int64
	NumClosedIssues int64
	Deadline        *time.Time
	ClosedAt        *time.Time
	CreatedAt       time.Time
	UpdatedAt       time.Time
}

// Reaction is one user's emoji reaction to an issue (CommentID 0) or to a
// comment.
type Reaction struct {
	ID        int64 `gorm:"primaryKey"`
	Type      string
	IssueID   int64
	CommentID int64
	UserID    int64
	// OriginalAuthor and OriginalAuthorID: as Issue's (UserID is then the
	// user who ran the migration).
	OriginalAuthor   string
	OriginalAuthorID int64
	CreatedAt        time.Time
}

// TrackedTime is time (in seconds) a user spent on an issue.
type TrackedTime struct {
	ID        int64 `gorm:"primaryKey"`
	IssueID   int64
	UserID    int64
	Time      int64
	CreatedAt time.Time
}

// Project is a repository project board.
type Project struct {
	ID           int64 `gorm:"primaryKey"`
	RepoID       int64
	CreatorID    int64
	Title        string
	Description  string
	IsClosed     bool
	CardType     string
	TemplateType string
	ClosedAt     *time.Time
	CreatedAt    time.Time
	UpdatedAt    time.Time
}

// ProjectCounts are a project's issue counts, computed from its links when
// read, so they can never drift.
type ProjectCounts struct {
	Issues, Closed int64
}

// IssueLinks are the ids of the rows some issues are linked to, by issue
// id: IssueStore.Links.
type IssueLinks struct {
	// Labels are each issue's label ids, by label name, then id.
	Labels map[int64][]int64
	// Assignees are each issue's assignee ids, in assignment order.
	Assignees map[int64][]int64
	// Projects are each issue's project ids, ascending.
	Projects map[int64][]int64
}

// IssueFilter selects issues. Zero values mean "any".
type IssueFilter struct {
	RepoID int64
	// Viewer, with AcrossRepos, keeps issues of every repository the
	// viewer may see whose issue tracker is enabled (cross-repository
	// search); OwnerID narrows that to one owner.
	AcrossRepos bool
	Viewer      RepoViewer
	OwnerID     int64
	IsClosed    *bool
	IsPull      *bool
	// LabelNames: an issue must carry a label of each name (matched in
	// the issue's own repository).
	LabelNames []string
	// LabelIDs: an issue must carry a label of each group (the labels of
	// one repository that share a name, already looked up).
	LabelIDs [][]int64
	// MilestoneNames and MilestoneIDs: an issue must be in one of them.
	MilestoneNames []string
	MilestoneIDs   []int64
	Keyword        string
	UpdatedSince   *time.Time
	UpdatedBefore  *time.Time
	PosterID       int64
	AssigneeID     int64
	MentionedID    int64
	// ReviewRequestedID keeps pull requests with a pending review request
	// of that user; ReviewedID those the user has submitted a review of.
	ReviewRequestedID int64
	ReviewedID        int64
	// None makes the filter match nothing (a filter named something that
	// cannot exist).
	None bool
}

// IssueStore reads and writes issues and their links to assignees and
// mentioned users.
type IssueStore interface {
	// NextIndex allocates the next number of the repository's counter
	// shared by issues and pull requests. It must run in the transaction
	// that creates the issue: numbers are then unique and, unless that
	// transaction fails, dense.
	NextIndex(ctx context.Context, repoID int64) (int64, error)
	Create(ctx context.Context, is *Issue) error
	// RaiseIndex makes the repository's counter at least index, so that
	// the next number allocated follows issues created with their own
	// numbers (a migration keeps the source's).
	RaiseIndex(ctx context.Context, repoID, index int64) error
	// CreateNumbered is NextIndex, Create and AdjustRepoCounts(total,
	// closed) for a new issue, in the transaction in ctx; it sets is.ID
	// and is.Index. It also appends evs to the outbox (in their order,
	// setting their IDs), each payload (a JSON object) with its top-level
	// "id" and "index" set to the new issue's id and number. On PostgreSQL
	// it is one statement: the row locks the counter and the repository
	// take (which every creator in the repository waits for until commit)
	// are then held for one round trip, the COMMIT's, when it is the
	// transaction's last statement.
	CreateNumbered(ctx context.Context, is *Issue, total, closed int64, evs ...*Event) error
	// CreateNumberedAlone is CreateNumbered for an issue that nothing
	// else is written with: it joins the transaction in ctx if there is
	// one, and otherwise runs in one of its own. On PostgreSQL that is one
	// statement, which commits on its own: the locks every creator in the
	// repository waits for are then held for no round trip at all, and
	// the repository's creates that arrive meanwhile are written together
	// by the next statement (numbered in their order of arrival). If ctx
	// ends first, the issue may still be created.
	CreateNumberedAlone(ctx context.Context, is *Issue, total, closed int64, evs ...*Event) error
	FindByIndex(ctx context.Context, repoID, index int64) (*Issue, error)
	FindByID(ctx context.Context, id int64) (*Issue, error)
	FindByIDs(ctx context.Context, ids []int64) (map[int64]*Issue, error)
	// Lock takes the row lock of the issue for the rest of the
	// transaction (by touching updated_at) and returns its fresh state.
	Lock(ctx context.Context, repoID, index int64, now time.Time) (*Issue, error)
	// Update writes the named columns of is.
	Update(ctx context.Context, is *Issue, columns ...string) error
	// SetClosed changes the state and reports whether it did (false when
	// the issue already was in that state).
	SetClosed(ctx context.Context, id int64, closed bool, now time.Time) (bool, error)
	Delete(ctx context.Context, id int64) error
	// AdjustRepoCounts adds to the repository's issue counters atomically.
	AdjustRepoCounts(ctx context.Context, repoID, total, closed int64) error
	// AdjustRepoPullCounts adds to the repository's pull request counters
	// atomically.
	AdjustRepoPullCounts(ctx context.Context, repoID, total, closed int64) error
	// AdjustComments adds delta to the comment count and touches updated_at.
	AdjustComments(ctx context.Context, issueID, delta int64, now time.Time) error
	// SetAssignees replaces the issue's assignees.
	SetAssignees(ctx context.Context, issueID int64, userIDs []int64) error
	// Assignees returns the assignee ids of each issue, in assignment order.
	Assignees(ctx context.Context, issueIDs []int64) (map[int64][]int64, error)
	// Links returns, in one statement, what each issue is linked to: its
	// label ids (by label name, then id, as LabelStore.ForIssues), its
	// assignee ids (in assignment order, as Assignees) and its project ids
	// (ascending, as ProjectStore.ForIssues), for rendering issues with the rows
	// looked up by id (LabelStore.ByIDs, ProjectStore.ByIDs), which a
	// cache may serve. An issue without links of a kind has no entry in
	// that map.
	Links(ctx context.Context, issueIDs []int64) (IssueLinks, error)
	IsAssignee(ctx context.Context, issueID, userID int64) (bool, error)
	// AddMentions records that the users with these (lower-case) names are
	// mentioned in the issue; unknown names are ignored.
	AddMentions(ctx context.Context, issueID int64, lowerNames []string) error
	// List returns one page and the size of the filtered set, newest first.
	List(ctx context.Context, f IssueFilter, p Page) ([]*Issue, int64, error)
	// Repos loads the repositories (with owners) of a page of issues in a
	// fixed number of statements, for rendering lists that span
	// repositories; from the read cache as FindByID does (with
	// CountersMayLag, one whose counters have moved is served).
	Repos(ctx context.Context, repoIDs []int64) (map[int64]*Repository, error)
	// CheckCounters is a consistency check (a "doctor"): for each stored
	// counter it reports how many rows disagree with a COUNT over the rows
	// the counter summarises. All zero means every counter is exact.
	CheckCounters(ctx context.Context) (map[string]int64, error)
	// RecountCounters sets every stored counter CheckCounters checks
	// (and repositories.num_releases) to the count of the rows it
	// summarises, and returns, per counter, how many rows it corrected.
	RecountCounters(ctx context.Context) (map[string]int64, error)
	// Reindex rebuilds the full-text index of issue titles, bodies and
	// comments from their rows. The database keeps the index in the
	// transactions that write the text; this is for operators.
	Reindex(ctx context.Context) error
	// CheckSearchIndex counts entries of the full-text index that
	// disagree with the text they index (0 when it is current).
	CheckSearchIndex(ctx context.Context) (int64, error)
}

// CommentStore reads and writes comments.
type CommentStore interface {
	Create(ctx context.Context, c *Comment) error
	// CreateCounted is Create, IssueStore.AdjustComments(+1, c.CreatedAt)
	// and the append of evs (in their order, setting their IDs), each
	// payload (a JSON object) with its top-level "id" set to the new
	// comment's; in the transaction in ctx if there is one, and otherwise
	// in one of its own, on PostgreSQL one statement. A missing issue is
	// ErrNotFound.
	CreateCounted(ctx context.Context, c *Comment, evs ...*Event) error
	FindByID(ctx context.Context, id int64) (*Comment, error)
	Update(ctx context.Context, c *Comment) error
	Delete(ctx context.Context, id int64) error
	// List returns an issue's comments, oldest first, updated within the
	// optional bounds.
	List(ctx context.Context, issueID int64, since, before *time.Time, p Page) ([]*Comment, int64, error)
	// ListByRepo returns a repository's comments, oldest first, updated
	// within the optional bounds, on pull requests only, on issues only
	// or on both (isPull nil).
	ListByRepo(ctx context.Context, repoID int64, isPull *bool, since, before *time.Time, p Page) ([]*Comment, int64, error)
}

// LabelStore reads and writes labels and their links to issues.
type LabelStore interface {
	Create(ctx context.Context, l *Label) error
	// Find returns the repository's own label id (not its owner's).
	Find(ctx context.Context, repoID, id int64) (*Label, error)
	// FindByIDs returns the labels among ids usable on the repository (its
	// own and its owning organization's), in ids order; others are left
	// out.
	FindByIDs(ctx context.Context, repoID int64, ids []int64) ([]*Label, error)
	// FindByNames returns the labels of those names usable on the
	// repository (its own and its owning organization's), by id.
	FindByNames(ctx context.Context, repoID int64, names []string) ([]*Label, error)
	// FindOfOrg returns label id of organization orgID.
	FindOfOrg(ctx context.Context, orgID, id int64) (*Label, error)
	Update(ctx context.Context, l *Label) error
	Delete(ctx context.Context, id int64) error
	// List returns the repository's own labels, by name.
	List(ctx context.Context, repoID int64, p Page) ([]*Label, int64, error)
	// ListOfOrg returns the labels of organization orgID, by name.
	ListOfOrg(ctx context.Context, orgID int64, p Page) ([]*Label, int64, error)
	// ForIssues returns each issue's labels, by name.
	ForIssues(ctx context.Context, issueIDs []int64) (map[int64][]*Label, error)
	// ByIDs returns the labels among ids whatever repository each belongs
	// to, by id; ids of no label are left out. Unlike FindByIDs it does
	// not check that they belong to one repository: it is for rendering
	// links already stored (IssueStore.Links), and may serve labels from
	// the read cache outside transactions.
	ByIDs(ctx context.Context, ids []int64) (map[int64]*Label, error)
	AddToIssue(ctx context.Context, issueID int64, labelIDs []int64) error
	RemoveFromIssue(ctx context.Context, issueID int64, labelIDs []int64) error
	ClearIssue(ctx context.Context, issueID int64) error
}

// MilestoneStore reads and writes milestones.
type MilestoneStore interface {
	Create(ctx context.Context, m *Milestone) error
	Find(ctx context.Context, repoID, id int64) (*Milestone, error)
	FindByTitle(ctx context.Context, repoID int64, title string) (*Milestone, error)
	// FindByIDs returns the milestones among ids, by id; outside
	// transactions it may serve them from the read cache.
	FindByIDs(ctx context.Context, ids []int64) (map[int64]*Milestone, error)
	// Update writes everything but the counters, which only
	// AdjustCounts changes.
	Update(ctx context.Context, m *Milestone) error
	// Delete removes the milestone and takes its issues out of it.
	Delete(ctx context.Context, id int64) error
	// List filters by state (nil: all) and a title substring.
	List(ctx context.Context, repoID int64, closed *bool, name string, p Page) ([]*Milestone, int64, error)
	// AdjustCounts adds to the counters atomically; ErrNotFound when the
	// milestone is gone.
	AdjustCounts(ctx context.Context, id, total, closed int64) error
}

// ReactionStore reads and writes reactions.
type ReactionStore interface {
	// Create inserts r unless the same user already reacted the same way
	// to the same target; it reports whether it inserted, and otherwise
	// fills r from the existing row.
	Create(ctx context.Context, r *Reaction) (bool, error)
	Delete(ctx context.Context, issueID, commentID, userID int64, typ string) error
	DeleteByComment(ctx context.Context, commentID int64) error
	List(ctx context.Context, issueID, commentID int64, p Page) ([]*Reaction, int64, error)
}

// TimeFilter selects tracked times. Zero values mean "any".
type TimeFilter struct {
	IssueID int64
	RepoID  int64
	UserID  int64
	// Viewer, with VisibleOnly, keeps times on issues of repositories the
	// viewer may see now and whose time tracker is on (GET /user/times).
	VisibleOnly   bool
	Viewer        RepoViewer
	CreatedSince  *time.Time
	CreatedBefore *time.Time
}

// TrackedTimeStore reads and writes tracked time.
type TrackedTimeStore interface {
	Create(ctx context.Context, t *TrackedTime) error
	FindByID(ctx context.Context, id int64) (*TrackedTime, error)
	Delete(ctx context.Context, id int64) error
	DeleteByIssueUser(ctx context.Context, issueID, userID int64) error
	// List returns one page, oldest first, and the size of the filtered set.
	List(ctx context.Context, f TimeFilter, p Page) ([]*TrackedTime, int64, error)
}

// ProjectStore reads and writes projects and their links to issues.
type ProjectStore interface {
	Create(ctx context.Context, pr *Project) error
	Find(ctx context.Context, repoID, id int64) (*Project, error)
	// FindByIDs returns the repository's projects among ids.
	FindByIDs(ctx context.Context, repoID int64, ids []int64) ([]*Project, error)
	Update(ctx context.Context, pr *Project) error
	Delete(ctx context.Context, id int64) error
	List(ctx context.Context, repoID int64, closed *bool, p Page) ([]*Project, int64, error)
	// Counts computes the issue counts of each project in one statement.
	Counts(ctx context.Context, projectIDs []int64) (map[int64]ProjectCounts, error)
	// ForIssues returns each issue's projects.
	ForIssues(ctx context.Context, issueIDs []int64) (map[int64][]*Project, error)
	// ByIDs returns the projects among ids whatever repository each
	// belongs to, by id; ids of no project are left out. Like
	// LabelStore.ByIDs it is for rendering stored links, and may serve
	// projects from the read cache outside transactions.
	ByIDs(ctx context.Context, ids []int64) (map[int64]*Project, error)
	// SetIssueProjects replaces the issue's projects.
	SetIssueProjects(ctx context.Context, issueID int64, projectIDs []int64) error
}
