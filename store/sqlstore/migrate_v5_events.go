package sqlstore

import (
	"time"

	"gorm.io/gorm"
)

// migrateV5 creates the outbox of domain events. Rows are appended in the
// transaction of the change they describe and read in id order, so the
// primary key is the only index consumers need.
func migrateV5(tx *gorm.DB) error {
	type Event struct {
		ID        int64  `gorm:"primaryKey"`
		Kind      string `gorm:"not null"`
		RepoID    int64  `gorm:"not null;default:0"`
		ActorID   int64  `gorm:"not null;default:0"`
		Payload   []byte `gorm:"not null"`
		CreatedAt time.Time
	}
	return tx.Migrator().CreateTable(&Event{})
}
