package sqlstore

import "gorm.io/gorm"

// migrateV49 lets a process record on the change clock's row that it is
// alone on its database, and until when (see cluster_alone.go): a process
// that joins, or that writes, waits until nobody is. alone_until is in
// milliseconds since 1970 on the database's clock.
func migrateV49(tx *gorm.DB) error {
	for _, stmt := range []string{
		`ALTER TABLE cluster_clock ADD COLUMN alone_proc text`,
		`ALTER TABLE cluster_clock ADD COLUMN alone_until bigint`,
	} {
		if err := tx.Exec(stmt).Error; err != nil {
			return err
		}
	}
	return nil
}
