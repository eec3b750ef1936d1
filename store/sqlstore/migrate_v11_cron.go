package sqlstore

import (
	"time"

	"gorm.io/gorm"
)

// migrateV11 adds the scheduled tasks' shared state (one row per task,
// claimed by a conditional UPDATE, so several processes on one database run
// a task once per schedule) and the notices a site admin reads.
func migrateV11(tx *gorm.DB) error {
	type CronTask struct {
		Name        string `gorm:"primaryKey"`
		Schedule    string `gorm:"not null;default:''"`
		NextRun     *time.Time
		PrevRun     *time.Time
		ExecTimes   int64  `gorm:"not null;default:0"`
		LeaseHolder string `gorm:"not null;default:''"`
		LeaseUntil  int64  `gorm:"not null;default:0"`
		LastError   string `gorm:"not null;default:''"`
	}
	type Notice struct {
		ID          int64     `gorm:"primaryKey"`
		Type        string    `gorm:"not null"`
		Description string    `gorm:"not null"`
		CreatedAt   time.Time `gorm:"not null"`
	}
	if err := tx.AutoMigrate(&CronTask{}, &Notice{}); err != nil {
		return err
	}
	// The notices list reads newest first, ties by id (plan_test.go).
	return tx.Exec(`CREATE INDEX idx_notices_created ON notices (created_at, id)`).Error
}
