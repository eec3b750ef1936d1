package sqlstore

import (
	"time"

	"gorm.io/gorm"
)

// migrateV30 adds the events of issue timelines (label, milestone,
// assignee, state, title, lock, pin, dependency and review changes), kept apart
// from comments so that comment lists, counts and the search index see
// only comments (an event notes the last comment before it, which places
// it among them exactly, whatever the clock's resolution); the dependencies between issues; and the pin order of
// issues. Events and dependencies go with their issues (ON DELETE CASCADE).
func migrateV30(tx *gorm.DB) error {
	// Issue stands for the existing table, only as the target of the
	// foreign keys.
	type Issue struct{ ID int64 }
	type IssueEvent struct {
		ID               int64  `gorm:"primaryKey"`
		IssueID          int64  `gorm:"not null"`
		Issue            *Issue `gorm:"foreignKey:IssueID;constraint:OnDelete:CASCADE"`
		RepoID           int64  `gorm:"not null"`
		Type             string `gorm:"not null"`
		PosterID         int64  `gorm:"not null;default:0"`
		LabelID          int64  `gorm:"not null;default:0"`
		MilestoneID      int64  `gorm:"not null;default:0"`
		OldMilestoneID   int64  `gorm:"not null;default:0"`
		AssigneeID       int64  `gorm:"not null;default:0"`
		DependentIssueID int64  `gorm:"not null;default:0"`
		AfterCommentID   int64  `gorm:"not null;default:0"`
		AssigneeTeamID   int64  `gorm:"not null;default:0"`
		ReviewID         int64  `gorm:"not null;default:0"`
		Removed          bool   `gorm:"not null;default:false"`
		OldTitle         string `gorm:"not null;default:''"`
		NewTitle         string `gorm:"not null;default:''"`
		Body             string `gorm:"not null;default:''"`
		CreatedAt        time.Time
		UpdatedAt        time.Time
	}
	type IssueDependency struct {
		IssueID      int64  `gorm:"primaryKey;autoIncrement:false"`
		Issue        *Issue `gorm:"foreignKey:IssueID;constraint:OnDelete:CASCADE"`
		DependencyID int64  `gorm:"primaryKey;autoIncrement:false"`
		Dependency   *Issue `gorm:"foreignKey:DependencyID;constraint:OnDelete:CASCADE"`
		CreatedAt    time.Time
	}
	if err := tx.Migrator().CreateTable(&IssueEvent{}, &IssueDependency{}); err != nil {
		return err
	}
	for _, stmt := range []string{
		// An issue's timeline in order, as idx_comments_issue_created
		// serves its comments.
		`CREATE INDEX idx_issue_events_issue_created ON issue_events (issue_id, created_at, id)`,
		// The issues an issue blocks (its dependencies are the primary key).
		`CREATE INDEX idx_issue_dependencies_dependency ON issue_dependencies (dependency_id, issue_id)`,
		`ALTER TABLE issues ADD COLUMN pin_order bigint NOT NULL DEFAULT 0`,
		// A repository's pinned issues or pull requests in pin order.
		`CREATE INDEX idx_issues_repo_pull_pin ON issues (repo_id, is_pull, pin_order)`,
	} {
		if err := tx.Exec(stmt).Error; err != nil {
			return err
		}
	}
	return nil
}
