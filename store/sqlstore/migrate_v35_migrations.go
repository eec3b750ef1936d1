package sqlstore

import (
	"time"

	"gorm.io/gorm"
)

// migrateV35 adds the repositories' status (ready, or being migrated)
// and the migrations under way, which go with their repository.
func migrateV35(tx *gorm.DB) error {
	type Repository struct {
		ID     int64
		Status int `gorm:"not null;default:0"`
	}
	if err := tx.Migrator().AddColumn(&Repository{}, "Status"); err != nil {
		return err
	}
	type RepoMigration struct {
		RepoID       int64       `gorm:"primaryKey;autoIncrement:false"`
		Repo         *Repository `gorm:"foreignKey:RepoID;constraint:OnDelete:CASCADE"`
		DoerID       int64       `gorm:"not null"`
		CloneAddr    string      `gorm:"not null"`
		AuthUsername string      `gorm:"not null;default:''"`
		AuthSecret   string      `gorm:"not null;default:''"`
		Service      string      `gorm:"not null;default:''"`
		CreatedAt    time.Time
	}
	return tx.Migrator().CreateTable(&RepoMigration{})
}
