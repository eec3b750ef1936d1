package sqlstore

import (
	"time"

	"gorm.io/gorm"
)

// migrateV8 creates the key tables: users' SSH keys, repositories' deploy
// keys and users' GPG keys (a subkey is a row of its own pointing at its
// primary key by key id). Each hangs off its owner or repository with ON
// DELETE CASCADE, so deleting either removes its keys. Every list's index
// ends with the id it is ordered by.
func migrateV8(tx *gorm.DB) error {
	type User struct {
		ID int64 `gorm:"primaryKey"`
	}
	type Repository struct {
		ID int64 `gorm:"primaryKey"`
	}
	type PublicKey struct {
		ID          int64  `gorm:"primaryKey"`
		OwnerID     int64  `gorm:"not null;uniqueIndex:idx_public_keys_owner_name,priority:1;index:idx_public_keys_owner_id,priority:1"`
		Owner       *User  `gorm:"foreignKey:OwnerID;constraint:OnDelete:CASCADE"`
		Name        string `gorm:"not null;uniqueIndex:idx_public_keys_owner_name,priority:2"`
		Fingerprint string `gorm:"not null;uniqueIndex"`
		Content     string `gorm:"not null"`
		CreatedAt   time.Time
		LastUsedAt  *time.Time
	}
	type DeployKey struct {
		ID          int64       `gorm:"primaryKey"`
		RepoID      int64       `gorm:"not null;uniqueIndex:idx_deploy_keys_repo_name,priority:1;uniqueIndex:idx_deploy_keys_repo_fingerprint,priority:1"`
		Repo        *Repository `gorm:"foreignKey:RepoID;constraint:OnDelete:CASCADE"`
		Name        string      `gorm:"not null;uniqueIndex:idx_deploy_keys_repo_name,priority:2"`
		Fingerprint string      `gorm:"not null;uniqueIndex:idx_deploy_keys_repo_fingerprint,priority:2;index"`
		Content     string      `gorm:"not null"`
		ReadOnly    bool        `gorm:"not null;default:false"`
		CreatedAt   time.Time
	}
	type GPGKey struct {
		ID                int64  `gorm:"primaryKey"`
		OwnerID           int64  `gorm:"not null;index:idx_gpg_keys_owner_primary,priority:1"`
		Owner             *User  `gorm:"foreignKey:OwnerID;constraint:OnDelete:CASCADE"`
		KeyID             string `gorm:"not null;uniqueIndex"`
		PrimaryKeyID      string `gorm:"not null;default:'';index:idx_gpg_keys_owner_primary,priority:2"`
		Content           string `gorm:"not null"`
		Armored           string `gorm:"not null;default:''"`
		Emails            string `gorm:"not null;default:'[]'"`
		CanSign           bool   `gorm:"not null;default:false"`
		CanCertify        bool   `gorm:"not null;default:false"`
		CanEncryptComms   bool   `gorm:"not null;default:false"`
		CanEncryptStorage bool   `gorm:"not null;default:false"`
		Verified          bool   `gorm:"not null;default:false"`
		CreatedAt         time.Time
		ExpiresAt         *time.Time
		AddedAt           time.Time
	}
	if err := tx.AutoMigrate(&PublicKey{}, &DeployKey{}, &GPGKey{}); err != nil {
		return err
	}
	// Lists read newest first within an owner (or a primary key's
	// subkeys), from the index alone.
	for _, stmt := range []string{
		`DROP INDEX IF EXISTS idx_public_keys_owner_id`,
		`CREATE INDEX idx_public_keys_owner_id ON public_keys (owner_id, id)`,
		`CREATE INDEX idx_deploy_keys_repo_id ON deploy_keys (repo_id, id)`,
		`DROP INDEX IF EXISTS idx_gpg_keys_owner_primary`,
		`CREATE INDEX idx_gpg_keys_owner_primary ON gpg_keys (owner_id, primary_key_id, id)`,
	} {
		if err := tx.Exec(stmt).Error; err != nil {
			return err
		}
	}
	return nil
}
