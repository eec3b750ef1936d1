package sqlstore

import "gorm.io/gorm"

// migrateV21 adds the user who resolved a review comment's conversation
// (0 while it is open); the same statement serves SQLite and PostgreSQL.
func migrateV21(tx *gorm.DB) error {
	return tx.Exec(`ALTER TABLE review_comments ADD COLUMN resolver_id bigint NOT NULL DEFAULT 0`).Error
}
