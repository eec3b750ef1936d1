package sqlstore

import (
	"time"

	"gorm.io/gorm"
)

// migrateV4 creates releases and their attachments. Both reference their
// repository with ON DELETE CASCADE (and attachments their release), so
// deleting a repository or a release removes the rows on both databases.
func migrateV4(tx *gorm.DB) error {
	// Repository is only the target of the foreign keys.
	type Repository struct {
		ID int64 `gorm:"primaryKey"`
	}
	type Release struct {
		ID     int64       `gorm:"primaryKey"`
		RepoID int64       `gorm:"not null;uniqueIndex:idx_release_repo_tag,priority:1"`
		Repo   *Repository `gorm:"foreignKey:RepoID;constraint:OnDelete:CASCADE"`
		// Tag names are case-sensitive in git, so the unique key is too.
		TagName      string `gorm:"not null;uniqueIndex:idx_release_repo_tag,priority:2"`
		PublisherID  int64  `gorm:"not null;default:0"`
		Target       string `gorm:"not null;default:''"`
		Title        string `gorm:"not null;default:''"`
		Note         string `gorm:"type:text;not null;default:''"`
		Sha1         string `gorm:"not null;default:''"`
		IsDraft      bool   `gorm:"not null;default:false"`
		IsPrerelease bool   `gorm:"not null;default:false"`
		CreatedAt    time.Time
		UpdatedAt    time.Time
		PublishedAt  *time.Time
	}
	type ReleaseAttachment struct {
		ID            int64       `gorm:"primaryKey"`
		UUID          string      `gorm:"not null;uniqueIndex"`
		RepoID        int64       `gorm:"not null;index"`
		Repo          *Repository `gorm:"foreignKey:RepoID;constraint:OnDelete:CASCADE"`
		ReleaseID     int64       `gorm:"not null;index"`
		Release       *Release    `gorm:"foreignKey:ReleaseID;constraint:OnDelete:CASCADE"`
		UploaderID    int64       `gorm:"not null;default:0"`
		Name          string      `gorm:"not null"`
		Size          int64       `gorm:"not null;default:0"`
		DownloadCount int64       `gorm:"not null;default:0"`
		CreatedAt     time.Time
	}
	return tx.Migrator().CreateTable(&Release{}, &ReleaseAttachment{})
}
