package sqlstore

import (
	"time"

	"gorm.io/gorm"
)

// migrateV27 adds commit statuses, numbered per commit, and the merges
// scheduled for when a pull request's checks succeed (one per pull
// request).
// Both go with their repository, and a schedule with its pull request's
// issue (ON DELETE CASCADE).
func migrateV27(tx *gorm.DB) error {
	// Repository and Issue stand for the existing tables, only as the
	// targets of the foreign keys.
	type Repository struct{ ID int64 }
	type Issue struct{ ID int64 }
	type CommitStatus struct {
		ID          int64       `gorm:"primaryKey"`
		RepoID      int64       `gorm:"not null"`
		Repo        *Repository `gorm:"foreignKey:RepoID;constraint:OnDelete:CASCADE"`
		SHA         string      `gorm:"column:sha;not null"`
		Seq         int64       `gorm:"not null"`
		State       string      `gorm:"not null"`
		TargetURL   string      `gorm:"not null;default:''"`
		Description string      `gorm:"not null;default:''"`
		Context     string      `gorm:"not null;default:''"`
		CreatorID   int64       `gorm:"not null;default:0"`
		CreatedAt   time.Time
		UpdatedAt   time.Time
	}
	type PullAutoMerge struct {
		ID           int64       `gorm:"primaryKey"`
		IssueID      int64       `gorm:"not null"`
		Issue        *Issue      `gorm:"foreignKey:IssueID;constraint:OnDelete:CASCADE"`
		RepoID       int64       `gorm:"not null"`
		Repo         *Repository `gorm:"foreignKey:RepoID;constraint:OnDelete:CASCADE"`
		DoerID       int64       `gorm:"not null"`
		Style        string      `gorm:"not null"`
		Title        string      `gorm:"not null;default:''"`
		Message      string      `gorm:"not null;default:''"`
		DeleteBranch bool        `gorm:"not null;default:false"`
		CreatedAt    time.Time
	}
	if err := tx.Migrator().CreateTable(&CommitStatus{}, &PullAutoMerge{}); err != nil {
		return err
	}
	for _, stmt := range []string{
		// A commit's statuses by index (numbering, the index sorts) and
		// the newest per context (the combined status).
		`CREATE UNIQUE INDEX idx_commit_statuses_commit_seq ON commit_statuses (repo_id, sha, seq)`,
		`CREATE INDEX idx_commit_statuses_commit_context ON commit_statuses (repo_id, sha, context, id)`,
		`CREATE INDEX idx_commit_statuses_commit_created ON commit_statuses (repo_id, sha, created_at, id)`,
		`CREATE UNIQUE INDEX idx_pull_auto_merges_issue ON pull_auto_merges (issue_id)`,
		`CREATE INDEX idx_pull_auto_merges_repo ON pull_auto_merges (repo_id, id)`,
	} {
		if err := tx.Exec(stmt).Error; err != nil {
			return err
		}
	}
	return nil
}
