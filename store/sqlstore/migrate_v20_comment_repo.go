package sqlstore

import "gorm.io/gorm"

// migrateV20 gives each comment its issue's repository (repo_id), indexed
// in conversation order: GET /repos/{owner}/{repo}/issues/comments lists a
// repository's comments oldest first, a page at a time, and with the index
// a page reads only its own rows, where going through the issues sorted
// every comment of the repository. Issues never move between repositories,
// so the copy never goes stale; the store sets it when a comment is created.
func migrateV20(tx *gorm.DB) error {
	for _, q := range []string{
		`ALTER TABLE comments ADD COLUMN repo_id bigint NOT NULL DEFAULT 0`,
		`UPDATE comments SET repo_id = (SELECT issues.repo_id FROM issues WHERE issues.id = comments.issue_id)`,
		`CREATE INDEX idx_comments_repo_created ON comments (repo_id, created_at, id)`,
	} {
		if err := tx.Exec(q).Error; err != nil {
			return err
		}
	}
	return nil
}
