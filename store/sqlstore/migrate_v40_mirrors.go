package sqlstore

import (
	"time"

	"gorm.io/gorm"
)

// migrateV40 adds pull mirrors (where a mirror repository comes from, its
// interval and last update on the repository) and push mirrors (remotes a
// repository is pushed to). Credentials are sealed with the instance key.
func migrateV40(tx *gorm.DB) error {
	type Repository struct {
		ID             int64
		MirrorInterval int64 `gorm:"not null;default:0"`
		MirrorUpdated  *time.Time
	}
	for _, col := range []string{"MirrorInterval", "MirrorUpdated"} {
		if err := tx.Migrator().AddColumn(&Repository{}, col); err != nil {
			return err
		}
	}
	type Mirror struct {
		ID            int64       `gorm:"primaryKey"`
		RepoID        int64       `gorm:"not null;uniqueIndex:idx_repo_mirrors_repo"`
		Repo          *Repository `gorm:"foreignKey:RepoID;constraint:OnDelete:CASCADE"`
		RemoteAddress string      `gorm:"not null"`
		AuthUsername  string      `gorm:"not null;default:''"`
		AuthSecret    string      `gorm:"not null;default:''"`
		EnablePrune   bool        `gorm:"not null;default:true"`
		NextUpdate    *time.Time  `gorm:"index:idx_repo_mirrors_next"`
		CreatedAt     time.Time
	}
	if err := tx.Table("repo_mirrors").Migrator().CreateTable(&Mirror{}); err != nil {
		return err
	}
	type PushMirror struct {
		ID            int64       `gorm:"primaryKey"`
		RepoID        int64       `gorm:"not null;uniqueIndex:idx_push_mirrors_repo_name,priority:1"`
		Repo          *Repository `gorm:"foreignKey:RepoID;constraint:OnDelete:CASCADE"`
		RemoteName    string      `gorm:"not null;uniqueIndex:idx_push_mirrors_repo_name,priority:2"`
		RemoteAddress string      `gorm:"not null"`
		AuthUsername  string      `gorm:"not null;default:''"`
		AuthSecret    string      `gorm:"not null;default:''"`
		Interval      int64       `gorm:"not null;default:0"`
		SyncOnCommit  bool        `gorm:"not null;default:false"`
		NextUpdate    *time.Time  `gorm:"index:idx_push_mirrors_next"`
		LastUpdate    *time.Time
		LastError     string `gorm:"not null;default:''"`
		CreatedAt     time.Time
	}
	if err := tx.Migrator().CreateTable(&PushMirror{}); err != nil {
		return err
	}
	// The list of a repository's push mirrors, oldest first.
	return tx.Exec(`CREATE INDEX idx_push_mirrors_repo_id ON push_mirrors (repo_id, id)`).Error
}
