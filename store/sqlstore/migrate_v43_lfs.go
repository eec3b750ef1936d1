package sqlstore

import (
	"time"

	"gorm.io/gorm"
)

// migrateV43 adds Git LFS: which repositories link which objects (the
// bytes live in the LFS object store, once per oid) and the locks users
// hold on paths. Both go with their repository.
func migrateV43(tx *gorm.DB) error {
	type Repository struct{ ID int64 }
	type User struct{ ID int64 }
	type LFSMetaObject struct {
		ID           int64       `gorm:"primaryKey"`
		Oid          string      `gorm:"not null;uniqueIndex:idx_lfs_meta_objects_repo_oid,priority:2;index:idx_lfs_meta_objects_oid,priority:1"`
		Size         int64       `gorm:"not null"`
		RepositoryID int64       `gorm:"not null;uniqueIndex:idx_lfs_meta_objects_repo_oid,priority:1;index:idx_lfs_meta_objects_oid,priority:2"`
		Repository   *Repository `gorm:"foreignKey:RepositoryID;constraint:OnDelete:CASCADE"`
		CreatedAt    time.Time   `gorm:"not null"`
	}
	if err := tx.Table("lfs_meta_objects").Migrator().CreateTable(&LFSMetaObject{}); err != nil {
		return err
	}
	type LFSLock struct {
		ID        int64       `gorm:"primaryKey"`
		RepoID    int64       `gorm:"not null;uniqueIndex:idx_lfs_locks_repo_path,priority:1"`
		Repo      *Repository `gorm:"foreignKey:RepoID;constraint:OnDelete:CASCADE"`
		OwnerID   int64       `gorm:"not null;index:idx_lfs_locks_owner"`
		Owner     *User       `gorm:"foreignKey:OwnerID;constraint:OnDelete:CASCADE"`
		Path      string      `gorm:"not null;uniqueIndex:idx_lfs_locks_repo_path,priority:2"`
		CreatedAt time.Time   `gorm:"not null"`
	}
	if err := tx.Table("lfs_locks").Migrator().CreateTable(&LFSLock{}); err != nil {
		return err
	}
	// The list of a repository's locks, oldest first.
	return tx.Exec(`CREATE INDEX idx_lfs_locks_repo_list ON lfs_locks (repo_id, id)`).Error
}
