package sqlstore

import (
	"time"

	"gorm.io/gorm"
)

// migrateV29 adds repository watches, issue subscriptions and notification threads (a user's
// explicit choice about one issue) and notification threads. Both go with their user, and with
// their repository or issue (ON DELETE CASCADE). Existing repositories
// keep the watcher count they have (zero: nothing counted watches before).
func migrateV29(tx *gorm.DB) error {
	// User, Repository and Issue stand for the existing tables, only as
	// the targets of the foreign keys.
	type User struct{ ID int64 }
	type Repository struct{ ID int64 }
	type Issue struct{ ID int64 }
	type Watch struct {
		UserID    int64       `gorm:"primaryKey;autoIncrement:false"`
		User      *User       `gorm:"foreignKey:UserID;constraint:OnDelete:CASCADE"`
		RepoID    int64       `gorm:"primaryKey;autoIncrement:false"`
		Repo      *Repository `gorm:"foreignKey:RepoID;constraint:OnDelete:CASCADE"`
		CreatedAt time.Time
	}
	type IssueWatch struct {
		UserID     int64  `gorm:"primaryKey;autoIncrement:false"`
		User       *User  `gorm:"foreignKey:UserID;constraint:OnDelete:CASCADE"`
		IssueID    int64  `gorm:"primaryKey;autoIncrement:false"`
		Issue      *Issue `gorm:"foreignKey:IssueID;constraint:OnDelete:CASCADE"`
		IsWatching bool   `gorm:"not null"`
		CreatedAt  time.Time
		UpdatedAt  time.Time
	}
	type Notification struct {
		ID        int64       `gorm:"primaryKey"`
		UserID    int64       `gorm:"not null"`
		User      *User       `gorm:"foreignKey:UserID;constraint:OnDelete:CASCADE"`
		RepoID    int64       `gorm:"not null"`
		Repo      *Repository `gorm:"foreignKey:RepoID;constraint:OnDelete:CASCADE"`
		IssueID   int64       `gorm:"not null;default:0"`
		Source    string      `gorm:"not null"`
		Status    int         `gorm:"not null"`
		CommentID int64       `gorm:"not null;default:0"`
		ReleaseID int64       `gorm:"not null;default:0"`
		UpdatedBy int64       `gorm:"not null;default:0"`
		CreatedAt time.Time
		UpdatedAt time.Time
	}
	if err := tx.Migrator().CreateTable(&Watch{}, &IssueWatch{}, &Notification{}); err != nil {
		return err
	}
	for _, stmt := range []string{
		// A repository's watchers by user id; an issue's choices by user.
		`CREATE UNIQUE INDEX idx_watches_repo_user ON watches (repo_id, user_id)`,
		`CREATE UNIQUE INDEX idx_issue_watches_issue_user ON issue_watches (issue_id, is_watching, user_id)`,
		// One thread per user, repository and issue (the upsert's key);
		// a user's threads, and one repository's of them, newest first.
		// An issue's threads (no foreign key: 0 is a repository's
		// thread) are left out once the issue is gone.
		`CREATE UNIQUE INDEX idx_notifications_thread ON notifications (user_id, repo_id, issue_id)`,
		`CREATE INDEX idx_notifications_user_updated ON notifications (user_id, updated_at, id)`,
		`CREATE INDEX idx_notifications_user_repo_updated ON notifications (user_id, repo_id, updated_at, id)`,
		`CREATE INDEX idx_notifications_issue ON notifications (issue_id)`,
	} {
		if err := tx.Exec(stmt).Error; err != nil {
			return err
		}
	}
	return nil
}
