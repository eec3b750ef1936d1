package sqlstore

import (
	"time"

	"gorm.io/gorm"
)

// migrateV31 creates the Actions secrets and variables. Each belongs to an
// owner (a user or organization) or to a repository, never both: the
// other column is NULL, so each scope's names are unique through its own
// index (NULLs never collide) and each row goes with its owner or
// repository (ON DELETE CASCADE). A secret's data is sealed with the
// instance secret key.
func migrateV31(tx *gorm.DB) error {
	// Frozen stand-ins for the referenced tables, so GORM can declare the
	// foreign keys; they are not created here.
	type User struct {
		ID int64 `gorm:"primaryKey"`
	}
	type Repository struct {
		ID int64 `gorm:"primaryKey"`
	}
	type ActionSecret struct {
		ID          int64       `gorm:"primaryKey"`
		OwnerID     *int64      `gorm:"uniqueIndex:idx_action_secret_owner_name;check:chk_action_secret_scope,(owner_id IS NULL) <> (repo_id IS NULL)"`
		Owner       *User       `gorm:"foreignKey:OwnerID;constraint:OnDelete:CASCADE"`
		RepoID      *int64      `gorm:"uniqueIndex:idx_action_secret_repo_name"`
		Repo        *Repository `gorm:"foreignKey:RepoID;constraint:OnDelete:CASCADE"`
		Name        string      `gorm:"not null;uniqueIndex:idx_action_secret_owner_name;uniqueIndex:idx_action_secret_repo_name"`
		Data        string      `gorm:"not null"`
		Description string      `gorm:"not null;default:''"`
		CreatedAt   time.Time   `gorm:"not null"`
	}
	type ActionVariable struct {
		ID          int64       `gorm:"primaryKey"`
		OwnerID     *int64      `gorm:"uniqueIndex:idx_action_variable_owner_name;check:chk_action_variable_scope,(owner_id IS NULL) <> (repo_id IS NULL)"`
		Owner       *User       `gorm:"foreignKey:OwnerID;constraint:OnDelete:CASCADE"`
		RepoID      *int64      `gorm:"uniqueIndex:idx_action_variable_repo_name"`
		Repo        *Repository `gorm:"foreignKey:RepoID;constraint:OnDelete:CASCADE"`
		Name        string      `gorm:"not null;uniqueIndex:idx_action_variable_owner_name;uniqueIndex:idx_action_variable_repo_name"`
		Data        string      `gorm:"not null"`
		Description string      `gorm:"not null;default:''"`
		CreatedAt   time.Time   `gorm:"not null"`
		UpdatedAt   time.Time   `gorm:"not null"`
	}
	return tx.Migrator().CreateTable(&ActionSecret{}, &ActionVariable{})
}
