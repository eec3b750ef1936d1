package sqlstore

import "gorm.io/gorm"

// migrateV16 copies each issue's creation time into its label links, with
// an index on (label, that time, issue): a page of a repository's issues
// carrying a label is then read from the link table's index in the list's
// own order (newest first), and stops once the page is full, where walking
// the repository's issues and probing each for the label read every issue
// down to the page, and counting them read every issue of the repository.
// An issue's creation time never changes, so the copy needs no upkeep
// beyond the insert (labelStore.AddToIssue). The index replaces the one on
// (label, issue), whose lookups it serves too.
func migrateV16(tx *gorm.DB) error {
	typ := "datetime"
	if tx.Dialector.Name() == "postgres" {
		typ = "timestamptz"
	}
	for _, stmt := range []string{
		`ALTER TABLE issue_labels ADD COLUMN issue_created_at ` + typ,
		`UPDATE issue_labels SET issue_created_at = (SELECT issues.created_at FROM issues WHERE issues.id = issue_labels.issue_id)`,
		`DROP INDEX IF EXISTS idx_issue_labels_label_issue`,
		`CREATE INDEX idx_issue_labels_label_created ON issue_labels (label_id, issue_created_at, issue_id)`,
	} {
		if err := tx.Exec(stmt).Error; err != nil {
			return err
		}
	}
	return nil
}
