package sqlstore

import (
	"fmt"
	"strings"

	"gorm.io/gorm"
)

// labelOwnerCheck: a label belongs to exactly one repository or one
// organization.
const labelOwnerCheck = `CHECK ((repo_id IS NULL) <> (org_id IS NULL))`

// migrateV36 lets a label belong to an organization instead of a
// repository: labels gain org_id (the organization, deleted with it) and
// repo_id may be NULL; exactly one of the two is set. An organization's
// labels are listed and found by name through (org_id, name, id).
//
// PostgreSQL drops the column's NOT NULL in place. SQLite cannot alter a
// column's constraints, and rebuilding the table is not possible here:
// the migration runs in a transaction with foreign keys enforced (the
// pragma cannot change inside one), so renaming labels rewrites
// issue_labels' reference to the new name and dropping the old table then
// cascades to every issue's label links. SQLite documents a narrower
// procedure for removing a NOT NULL constraint (sqlite.org/lang_altertable.html,
// "making other kinds of table schema changes"): the table's text in the
// schema is edited in place and the schema version bumped, which leaves
// the stored rows, the table's ids and everything referring to it as they
// were. The new column and its CHECK are added by ADD COLUMN, which SQLite
// checks against the rows already there.
func migrateV36(tx *gorm.DB) error {
	if tx.Dialector.Name() == "postgres" {
		for _, stmt := range []string{
			`ALTER TABLE labels ALTER COLUMN repo_id DROP NOT NULL`,
			`ALTER TABLE labels ADD COLUMN org_id bigint REFERENCES users(id) ON DELETE CASCADE`,
			`ALTER TABLE labels ADD CONSTRAINT chk_labels_owner ` + labelOwnerCheck,
			`CREATE INDEX idx_labels_org_name ON labels (org_id, name, id)`,
		} {
			if err := tx.Exec(stmt).Error; err != nil {
				return err
			}
		}
		return nil
	}
	if err := tx.Exec(`ALTER TABLE labels ADD COLUMN org_id integer REFERENCES users(id) ON DELETE CASCADE ` + labelOwnerCheck).Error; err != nil {
		return err
	}
	var ddl string
	if err := tx.Raw(`SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'labels'`).Row().Scan(&ddl); err != nil {
		return err
	}
	const notNull, nullable = "`repo_id` integer NOT NULL,", "`repo_id` integer,"
	if strings.Count(ddl, notNull) != 1 {
		return fmt.Errorf("labels: unexpected definition %q", ddl)
	}
	var version int64
	if err := tx.Raw(`PRAGMA schema_version`).Row().Scan(&version); err != nil {
		return err
	}
	for _, stmt := range []string{
		`PRAGMA writable_schema = ON`,
		`UPDATE sqlite_master SET sql = '` + strings.ReplaceAll(strings.Replace(ddl, notNull, nullable, 1), "'", "''") +
			`' WHERE type = 'table' AND name = 'labels'`,
		fmt.Sprintf(`PRAGMA schema_version = %d`, version+1),
		`PRAGMA writable_schema = OFF`,
		`CREATE INDEX idx_labels_org_name ON labels (org_id, name, id)`,
	} {
		if err := tx.Exec(stmt).Error; err != nil {
			return err
		}
	}
	var problems []string
	if err := tx.Raw(`PRAGMA integrity_check(labels)`).Scan(&problems).Error; err != nil {
		return err
	}
	if len(problems) != 1 || problems[0] != "ok" {
		return fmt.Errorf("labels: integrity check after the schema change: %v", problems)
	}
	return nil
}
