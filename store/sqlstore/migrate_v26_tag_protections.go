package sqlstore

import (
	"time"

	"gorm.io/gorm"
)

// migrateV26 creates tag protection rules (one pattern is protected once
// per repository) and the language detector's cached count, one per
// repository. Both go with their repository (ON DELETE CASCADE).
func migrateV26(tx *gorm.DB) error {
	// A frozen stand-in for the referenced table, so GORM can declare the
	// foreign key; it is not created here.
	type Repository struct {
		ID int64 `gorm:"primaryKey"`
	}
	type ProtectedTag struct {
		ID               int64       `gorm:"primaryKey"`
		RepoID           int64       `gorm:"not null;uniqueIndex:idx_protected_tag_repo_pattern"`
		Repo             *Repository `gorm:"foreignKey:RepoID;constraint:OnDelete:CASCADE"`
		NamePattern      string      `gorm:"not null;uniqueIndex:idx_protected_tag_repo_pattern"`
		AllowlistUserIDs string      `gorm:"column:allowlist_user_ids;not null;default:'[]'"`
		AllowlistTeamIDs string      `gorm:"column:allowlist_team_ids;not null;default:'[]'"`
		CreatedAt        time.Time   `gorm:"not null"`
		UpdatedAt        time.Time   `gorm:"not null"`
	}
	type LanguageStats struct {
		RepoID int64       `gorm:"primaryKey;autoIncrement:false"`
		Repo   *Repository `gorm:"foreignKey:RepoID;constraint:OnDelete:CASCADE"`
		TreeID string      `gorm:"not null"`
		Sizes  string      `gorm:"not null;default:'{}'"`
	}
	return tx.Migrator().CreateTable(&ProtectedTag{}, &LanguageStats{})
}
