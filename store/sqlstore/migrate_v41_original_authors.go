package sqlstore

import "gorm.io/gorm"

// migrateV41 lets issues, pull requests and comments brought in by a
// migration keep the name and id of their author on the source server
// (original_author, original_author_id), as the reference records
// authors who have no account here; the poster is then the user who ran
// the migration. A migration under way also remembers which items beyond
// the git data it brings (items: labels, milestones, releases, issues,
// pull_requests, comma-separated).
func migrateV41(tx *gorm.DB) error {
	for _, stmt := range []string{
		`ALTER TABLE issues ADD COLUMN original_author varchar(255) NOT NULL DEFAULT ''`,
		`ALTER TABLE issues ADD COLUMN original_author_id bigint NOT NULL DEFAULT 0`,
		`ALTER TABLE comments ADD COLUMN original_author varchar(255) NOT NULL DEFAULT ''`,
		`ALTER TABLE comments ADD COLUMN original_author_id bigint NOT NULL DEFAULT 0`,
		`ALTER TABLE repo_migrations ADD COLUMN items varchar(255) NOT NULL DEFAULT ''`,
	} {
		if err := tx.Exec(stmt).Error; err != nil {
			return err
		}
	}
	return nil
}
