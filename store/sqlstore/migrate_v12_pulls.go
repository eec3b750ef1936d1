package sqlstore

import (
	"time"

	"gorm.io/gorm"
)

// migrateV12 adds pull requests (the pull half of an issue), reviews with
// their line comments, and the index that lists a repository's forks.
func migrateV12(tx *gorm.DB) error {
	// Issue stands for the existing table, only as the target of the
	// foreign keys: rows go with their issue.
	type Issue struct {
		ID int64 `gorm:"primaryKey"`
	}
	type PullRequest struct {
		ID                  int64  `gorm:"primaryKey"`
		IssueID             int64  `gorm:"not null;uniqueIndex"`
		Issue               *Issue `gorm:"foreignKey:IssueID;constraint:OnDelete:CASCADE"`
		BaseRepoID          int64  `gorm:"not null"`
		BaseBranch          string `gorm:"not null"`
		HeadRepoID          int64  `gorm:"not null"`
		HeadBranch          string `gorm:"not null"`
		HeadCommitID        string `gorm:"not null;default:''"`
		BaseCommitID        string `gorm:"not null;default:''"`
		MergeBase           string `gorm:"not null;default:''"`
		Status              int    `gorm:"not null;default:0"`
		ConflictedFiles     string `gorm:"not null;default:''"`
		Additions           int64  `gorm:"not null;default:0"`
		Deletions           int64  `gorm:"not null;default:0"`
		ChangedFiles        int64  `gorm:"not null;default:0"`
		HasMerged           bool   `gorm:"not null;default:false"`
		MergedAt            *time.Time
		MergerID            int64  `gorm:"not null;default:0"`
		MergedCommitID      string `gorm:"not null;default:''"`
		AllowMaintainerEdit bool   `gorm:"not null;default:false"`
		CreatedAt           time.Time
		UpdatedAt           time.Time
	}
	type Review struct {
		ID             int64  `gorm:"primaryKey"`
		IssueID        int64  `gorm:"not null"`
		Issue          *Issue `gorm:"foreignKey:IssueID;constraint:OnDelete:CASCADE"`
		ReviewerID     int64  `gorm:"not null;default:0"`
		ReviewerTeamID int64  `gorm:"not null;default:0"`
		State          string `gorm:"not null"`
		Body           string `gorm:"not null;default:''"`
		CommitID       string `gorm:"not null;default:''"`
		Official       bool   `gorm:"not null;default:false"`
		Dismissed      bool   `gorm:"not null;default:false"`
		SubmittedAt    *time.Time
		CreatedAt      time.Time
		UpdatedAt      time.Time
	}
	type ReviewComment struct {
		ID               int64  `gorm:"primaryKey"`
		ReviewID         int64  `gorm:"not null;index"`
		IssueID          int64  `gorm:"not null"`
		Issue            *Issue `gorm:"foreignKey:IssueID;constraint:OnDelete:CASCADE"`
		PosterID         int64  `gorm:"not null"`
		Path             string `gorm:"not null"`
		Body             string `gorm:"not null"`
		Line             int64  `gorm:"not null;default:0"`
		OldLine          int64  `gorm:"not null;default:0"`
		CommitID         string `gorm:"not null;default:''"`
		OriginalCommitID string `gorm:"not null;default:''"`
		DiffHunk         string `gorm:"not null;default:''"`
		CreatedAt        time.Time
		UpdatedAt        time.Time
	}
	if err := tx.AutoMigrate(&PullRequest{}, &Review{}, &ReviewComment{}); err != nil {
		return err
	}
	for _, stmt := range []string{
		// Lists of a repository's pull requests go through issues
		// (repo_id, is_pull, ...); these serve the lookups by branch.
		`CREATE INDEX idx_pull_requests_head ON pull_requests (head_repo_id, head_branch)`,
		`CREATE INDEX idx_pull_requests_base ON pull_requests (base_repo_id, base_branch)`,
		`CREATE INDEX idx_repositories_fork ON repositories (fork_id, id)`,
		// A pull request's reviews, oldest first (plan_test.go).
		`CREATE INDEX idx_reviews_issue ON reviews (issue_id, id)`,
		// The pull request list's other orders, per state.
		`CREATE INDEX idx_issues_repo_pull_closed_updated ON issues (repo_id, is_pull, is_closed, updated_at, id)`,
		`CREATE INDEX idx_issues_repo_pull_closed_comments ON issues (repo_id, is_pull, is_closed, num_comments, id)`,
	} {
		if err := tx.Exec(stmt).Error; err != nil {
			return err
		}
	}
	return nil
}
