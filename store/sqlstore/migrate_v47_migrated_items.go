package sqlstore

import "gorm.io/gorm"

// migrateV47 keeps what a migration brings beyond issues and comments as
// the reference records it: reactions, reviews and their line comments
// by a user with no account here carry that user's name and id on the
// source (original_author, original_author_id), the migrating user being
// their user. Two such reactions of one kind differ only by their
// original author, so the unique index of reactions takes it in (it is
// ” for every reaction given here). A migrated repository remembers the
// address it came from, without credentials (original_url).
func migrateV47(tx *gorm.DB) error {
	for _, stmt := range []string{
		`ALTER TABLE reactions ADD COLUMN original_author varchar(255) NOT NULL DEFAULT ''`,
		`ALTER TABLE reactions ADD COLUMN original_author_id bigint NOT NULL DEFAULT 0`,
		`DROP INDEX idx_reactions_unique`,
		`CREATE UNIQUE INDEX idx_reactions_unique ON reactions (issue_id, comment_id, user_id, type, original_author)`,
		`ALTER TABLE reviews ADD COLUMN original_author varchar(255) NOT NULL DEFAULT ''`,
		`ALTER TABLE reviews ADD COLUMN original_author_id bigint NOT NULL DEFAULT 0`,
		`ALTER TABLE review_comments ADD COLUMN original_author varchar(255) NOT NULL DEFAULT ''`,
		`ALTER TABLE review_comments ADD COLUMN original_author_id bigint NOT NULL DEFAULT 0`,
		`ALTER TABLE repositories ADD COLUMN original_url varchar(2048) NOT NULL DEFAULT ''`,
	} {
		if err := tx.Exec(stmt).Error; err != nil {
			return err
		}
	}
	return nil
}
