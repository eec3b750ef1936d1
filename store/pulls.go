package store

import (
	"context"
	"time"
)

// Mergeability of a pull request, as the last three-way merge of its head
// into its base found it.
const (
	// PullChecking: not computed yet for the current head and base.
	PullChecking = 0
	// PullMergeable: the merge is clean.
	PullMergeable = 1
	// PullConflict: the merge has conflicts (PullRequest.ConflictedFiles).
	PullConflict = 2
	// PullMerging: a merge has claimed the pull request (ClaimMerge);
	// refreshes leave its state alone until the merge ends.
	PullMerging = 3
)

// PullRequest is the pull half of an issue whose IsPull is set: which branch
// of which repository proposes to go into which branch of the issue's
// repository, and what merging it found or did. The line counts and the
// mergeability are stored when either side moves, so reads run no git.
type PullRequest struct {
	ID                  int64 `gorm:"primaryKey"`
	IssueID             int64
	BaseRepoID          int64
	BaseBranch          string
	HeadRepoID          int64
	HeadBranch          string
	HeadCommitID        string
	BaseCommitID        string
	MergeBase           string
	Status              int
	ConflictedFiles     string // newline-separated
	Additions           int64
	Deletions           int64
	ChangedFiles        int64
	HasMerged           bool
	MergedAt            *time.Time
	MergerID            int64
	MergedCommitID      string
	AllowMaintainerEdit bool
	CreatedAt           time.Time
	UpdatedAt           time.Time
}

// Review states, as the API names them.
const (
	ReviewApproved       = "APPROVED"
	ReviewPending        = "PENDING"
	ReviewCommented      = "COMMENT"
	ReviewRequestChanges = "REQUEST_CHANGES"
	ReviewRequest        = "REQUEST_REVIEW"
)

// Review is a review of a pull request, or a request for one (State
// ReviewRequest, by ReviewerID or ReviewerTeamID).
type Review struct {
	ID             int64 `gorm:"primaryKey"`
	IssueID        int64
	ReviewerID     int64
	ReviewerTeamID int64
	State          string
	Body           string
	CommitID       string
	// Official is fixed when the review is submitted: the reviewer could
	// then write to the repository (or is on the approvals whitelist).
	Official    bool
	Dismissed   bool
	SubmittedAt *time.Time
	// OriginalAuthor and OriginalAuthorID: as Issue's (ReviewerID is then
	// the user who ran the migration).
	OriginalAuthor   string
	OriginalAuthorID int64
	CreatedAt        time.Time
	UpdatedAt        time.Time
}

// ReviewComment is a line comment of a review.
type ReviewComment struct {
	ID               int64 `gorm:"primaryKey"`
	ReviewID         int64
	IssueID          int64
	PosterID         int64
	Path             string
	Body             string
	Line             int64 // in the new file; 0 when on the old side
	OldLine          int64
	CommitID         string
	OriginalCommitID string
	DiffHunk         string
	// ResolverID is who marked the comment's conversation resolved; 0
	// while it is open.
	ResolverID int64
	// OriginalAuthor and OriginalAuthorID: as Issue's.
	OriginalAuthor   string
	OriginalAuthorID int64
	CreatedAt        time.Time
	UpdatedAt        time.Time
}

// PullFilter selects the pull requests of one repository.
type PullFilter struct {
	RepoID      int64
	IsClosed    *bool
	BaseBranch  string
	MilestoneID int64
	PosterID    int64
	// LabelIDs: a pull request must carry each of them.
	LabelIDs []int64
	// Sort is one of the API's sort names; "" is newest first.
	Sort string
}

// PullStore reads and writes pull requests, their reviews and review
// comments.
type PullStore interface {
	Create(ctx context.Context, pr *PullRequest) error
	FindByIssueID(ctx context.Context, issueID int64) (*PullRequest, error)
	// ForIssues returns the pull requests of those issues that are pulls,
	// by issue id, in one statement.
	ForIssues(ctx context.Context, issueIDs []int64) (map[int64]*PullRequest, error)
	// FindOpen is the open pull request from head into base, if any.
	FindOpen(ctx context.Context, headRepoID int64, headBranch string, baseRepoID int64, baseBranch string) (*PullRequest, error)
	// FindNewest is the newest pull request (any state) from head into base.
	FindNewest(ctx context.Context, headRepoID int64, headBranch string, baseRepoID int64, baseBranch string) (*PullRequest, error)
	// OpenWithBranch lists the open, unmerged pull requests whose head or
	// base is that branch of the repository.
	OpenWithBranch(ctx context.Context, repoID int64, branch string) ([]*PullRequest, error)
	// Update writes the named columns of pr.
	Update(ctx context.Context, pr *PullRequest, columns ...string) error
	// UpdateState is Update for a refresh: it writes nothing while a
	// merge holds the pull request.
	UpdateState(ctx context.Context, pr *PullRequest, columns ...string) error
	// ClaimMerge lets one merge at a time proceed: it marks the unmerged
	// pull request as being merged unless another merge claimed it after
	// staleBefore, and reports whether it did.
	ClaimMerge(ctx context.Context, id int64, now, staleBefore time.Time) (bool, error)
	// ReleaseMerge ends a claim that did not merge, restoring status.
	ReleaseMerge(ctx context.Context, id int64, status int) error
	// MarkMerged records the merge once: false when the pull request was
	// already merged (a concurrent merge won).
	MarkMerged(ctx context.Context, pr *PullRequest) (bool, error)
	// List returns one page of the filter's pull requests with their
	// issues, and the size of the filtered set.
	List(ctx context.Context, f PullFilter, p Page) ([]*PullRequest, map[int64]*Issue, int64, error)

	CreateReview(ctx context.Context, r *Review) error
	FindReview(ctx context.Context, issueID, id int64) (*Review, error)
	UpdateReview(ctx context.Context, r *Review, columns ...string) error
	DeleteReview(ctx context.Context, id int64) error
	// Reviews lists an issue's reviews and requests, oldest first; pending
	// (unsubmitted) reviews only of viewerID.
	Reviews(ctx context.Context, issueID, viewerID int64, p Page) ([]*Review, int64, error)
	// AllReviews is every review and request of the issue, oldest first
	// (protection checks and requested reviewers).
	AllReviews(ctx context.Context, issueID int64) ([]*Review, error)
	// ReviewsForIssues is AllReviews for several issues in one statement.
	ReviewsForIssues(ctx context.Context, issueIDs []int64) (map[int64][]*Review, error)
	CreateReviewComments(ctx context.Context, cs []*ReviewComment) error
	// FindReviewComment finds a review comment by id (ErrNotFound).
	FindReviewComment(ctx context.Context, id int64) (*ReviewComment, error)
	UpdateReviewComment(ctx context.Context, c *ReviewComment, columns ...string) error
	ReviewComments(ctx context.Context, reviewID int64) ([]*ReviewComment, error)
	// CountReviewComments counts the comments of each review.
	CountReviewComments(ctx context.Context, reviewIDs []int64) (map[int64]int64, error)
}
