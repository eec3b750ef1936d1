package sqlstore

import (
	"time"

	"gorm.io/gorm"
)

// migrateV9 creates the webhooks, their delivery queue, the marks of
// outbox events already turned into deliveries and the webhook consumer's
// position in the outbox.
func migrateV9(tx *gorm.DB) error {
	type Webhook struct {
		ID                  int64  `gorm:"primaryKey"`
		RepoID              int64  `gorm:"not null;default:0"`
		OwnerID             int64  `gorm:"not null;default:0"`
		IsSystem            bool   `gorm:"not null;default:false"`
		Type                string `gorm:"not null"`
		URL                 string `gorm:"not null"`
		HTTPMethod          string `gorm:"not null;default:'POST'"`
		ContentType         string `gorm:"not null;default:'json'"`
		Secret              string `gorm:"not null;default:''"`
		Meta                string `gorm:"not null;default:'{}'"`
		Events              string `gorm:"not null;default:'[]'"`
		BranchFilter        string `gorm:"not null;default:''"`
		AuthorizationHeader string `gorm:"not null;default:''"`
		Name                string `gorm:"not null;default:''"`
		Active              bool   `gorm:"not null;default:false"`
		CreatedAt           time.Time
		UpdatedAt           time.Time
	}
	type HookDelivery struct {
		ID              int64  `gorm:"primaryKey"`
		HookID          int64  `gorm:"not null"`
		UUID            string `gorm:"not null"`
		EventID         int64  `gorm:"not null;default:0"`
		Event           string `gorm:"not null"`
		EventType       string `gorm:"not null"`
		Action          string `gorm:"not null;default:''"`
		Payload         []byte `gorm:"not null"`
		IsRedelivery    bool   `gorm:"not null;default:false"`
		State           int    `gorm:"not null;default:0"`
		Attempts        int    `gorm:"not null;default:0"`
		NextAttemptAt   int64  `gorm:"not null;default:0"`
		QueuedAt        int64  `gorm:"not null;default:0"`
		RequestURL      string `gorm:"not null;default:''"`
		RequestMethod   string `gorm:"not null;default:''"`
		RequestHeaders  string `gorm:"not null;default:''"`
		ResponseStatus  int    `gorm:"not null;default:0"`
		ResponseHeaders string `gorm:"not null;default:''"`
		ResponseBody    string `gorm:"not null;default:''"`
		DurationMicros  int64  `gorm:"not null;default:0"`
		Error           string `gorm:"not null;default:''"`
		CreatedAt       time.Time
		DeliveredAt     *time.Time
	}
	type HookEventMark struct {
		EventID int64 `gorm:"primaryKey;autoIncrement:false"`
	}
	type HookOutboxPosition struct {
		Name    string `gorm:"primaryKey"`
		EventID int64  `gorm:"not null"`
	}
	if err := tx.Migrator().CreateTable(&Webhook{}, &HookDelivery{}, &HookEventMark{}, &HookOutboxPosition{}); err != nil {
		return err
	}
	for _, stmt := range []string{
		// A repository's hooks, an owner's, and the site-wide ones (owner
		// and repository 0: all, or system or default ones), each in id
		// order.
		`CREATE INDEX idx_webhooks_repo ON webhooks (repo_id, id)`,
		`CREATE INDEX idx_webhooks_owner ON webhooks (owner_id, repo_id, id)`,
		`CREATE INDEX idx_webhooks_site ON webhooks (owner_id, repo_id, is_system, id)`,
		// Claiming: the due pending deliveries, oldest due first.
		`CREATE INDEX idx_hook_deliveries_due ON hook_deliveries (state, next_attempt_at)`,
		// A hook's deliveries, newest first.
		`CREATE INDEX idx_hook_deliveries_hook ON hook_deliveries (hook_id, id)`,
		// Pruning finished deliveries by age.
		`CREATE INDEX idx_hook_deliveries_delivered ON hook_deliveries (delivered_at)`,
	} {
		if err := tx.Exec(stmt).Error; err != nil {
			return err
		}
	}
	// Events from before webhooks existed are nobody's to deliver.
	return tx.Exec(`INSERT INTO hook_outbox_positions (name, event_id) SELECT 'webhooks', COALESCE(MAX(id), 0) FROM events`).Error
}
