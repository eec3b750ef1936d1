package sqlstore

import (
	"time"

	"gorm.io/gorm"
)

// migrateV29 adds repository watches and issue subscriptions (a user's
// explicit choice about one issue). Both go with their user, and with
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
	if err := tx.Migrator().CreateTable(&Watch{}, &IssueWatch{}); err != nil {
		return err
	}
	for _, stmt := range []string{
		// A repository's watchers by user id; an issue's choices by user.
		`CREATE UNIQUE INDEX idx_watches_repo_user ON watches (repo_id, user_id)`,
		`CREATE UNIQUE INDEX idx_issue_watches_issue_user ON issue_watches (issue_id, is_watching, user_id)`,
	} {
		if err := tx.Exec(stmt).Error; err != nil {
			return err
		}
	}
	return nil
}
