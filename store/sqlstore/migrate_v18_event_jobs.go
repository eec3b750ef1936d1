package sqlstore

import (
	"time"

	"gorm.io/gorm"
)

// migrateV18 gives every consumer of the outbox the same durable queue:
// one job per consumer and event, written with the event, deleted when the
// consumer is done with it (see store.EventJob). The webhook consumer's
// own bookkeeping (a position and per-event marks) goes; the events it had
// not turned into deliveries yet become its jobs, so an upgrade loses
// none.
func migrateV18(tx *gorm.DB) error {
	type EventJob struct {
		ID        int64  `gorm:"primaryKey"`
		Consumer  string `gorm:"not null"`
		EventID   int64  `gorm:"not null"`
		RepoID    int64  `gorm:"not null;default:0"`
		State     string `gorm:"not null;default:'pending'"`
		Attempts  int    `gorm:"not null;default:0"`
		RunAt     int64  `gorm:"not null;default:0"`
		Token     int64  `gorm:"not null;default:0"`
		LastError string `gorm:"not null;default:''"`
		CreatedAt time.Time
		UpdatedAt time.Time
	}
	if err := tx.Migrator().CreateTable(&EventJob{}); err != nil {
		return err
	}
	for _, stmt := range []string{
		// Claiming: a consumer's due jobs (state, then the due time).
		`CREATE INDEX idx_event_jobs_due ON event_jobs (consumer, state, run_at, id)`,
		// An ordered consumer's check for an earlier job of the same
		// repository.
		`CREATE INDEX idx_event_jobs_repo ON event_jobs (consumer, repo_id, id)`,
		// Pruning: is an event still some consumer's?
		`CREATE INDEX idx_event_jobs_event ON event_jobs (event_id)`,
		// One job per consumer and event, whoever writes it.
		`CREATE UNIQUE INDEX idx_event_jobs_consumer_event ON event_jobs (consumer, event_id)`,
		// The webhook consumer's pending events: after its position and
		// not marked as turned into deliveries.
		`INSERT INTO event_jobs (consumer, event_id, repo_id, state, attempts, run_at, token, last_error, created_at, updated_at)
			SELECT 'webhooks', e.id, e.repo_id, 'pending', 0, 0, 0, '', e.created_at, e.created_at FROM events e
			WHERE e.id > COALESCE((SELECT event_id FROM hook_outbox_positions WHERE name = 'webhooks'), 0)
			AND NOT EXISTS (SELECT 1 FROM hook_event_marks m WHERE m.event_id = e.id)`,
		`DROP TABLE hook_event_marks`,
		`DROP TABLE hook_outbox_positions`,
	} {
		if err := tx.Exec(stmt).Error; err != nil {
			return err
		}
	}
	return nil
}
