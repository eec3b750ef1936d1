package sqlstore

import "gorm.io/gorm"

// migrateV37 gives timeline events the commit they refer to (commit_ref:
// a pushed commit whose message names the issue), recorded once per issue
// and commit whichever branches bring it, and the issue and comment that
// refer to the issue (issue_ref, comment_ref, pull_ref), once per issue
// and referring text.
func migrateV37(tx *gorm.DB) error {
	for _, stmt := range []string{
		`ALTER TABLE issue_events ADD COLUMN commit_sha varchar(64) NOT NULL DEFAULT ''`,
		`CREATE UNIQUE INDEX idx_issue_events_commit_ref ON issue_events (issue_id, commit_sha) WHERE commit_sha <> ''`,
		`ALTER TABLE issue_events ADD COLUMN ref_issue_id bigint NOT NULL DEFAULT 0`,
		`ALTER TABLE issue_events ADD COLUMN ref_comment_id bigint NOT NULL DEFAULT 0`,
		`CREATE UNIQUE INDEX idx_issue_events_issue_ref ON issue_events (issue_id, ref_issue_id, ref_comment_id) WHERE ref_issue_id <> 0`,
	} {
		if err := tx.Exec(stmt).Error; err != nil {
			return err
		}
	}
	return nil
}
