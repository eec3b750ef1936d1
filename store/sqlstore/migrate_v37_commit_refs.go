package sqlstore

import "gorm.io/gorm"

// migrateV37 gives timeline events the commit they refer to (commit_ref:
// a pushed commit whose message names the issue), recorded once per issue
// and commit whichever branches bring it.
func migrateV37(tx *gorm.DB) error {
	for _, stmt := range []string{
		`ALTER TABLE issue_events ADD COLUMN commit_sha varchar(64) NOT NULL DEFAULT ''`,
		`CREATE UNIQUE INDEX idx_issue_events_commit_ref ON issue_events (issue_id, commit_sha) WHERE commit_sha <> ''`,
	} {
		if err := tx.Exec(stmt).Error; err != nil {
			return err
		}
	}
	return nil
}
