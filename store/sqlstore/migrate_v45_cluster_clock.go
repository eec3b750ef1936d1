package sqlstore

import "gorm.io/gorm"

// migrateV45 adds the cluster's change clock: one row whose number every
// process sharing the database moves, in the transaction that tells the
// others what it changed, so that a process can tell, with one read,
// whether it has heard of every change made so far (see cluster).
func migrateV45(tx *gorm.DB) error {
	for _, stmt := range []string{
		`CREATE TABLE cluster_clock (id integer PRIMARY KEY, n bigint NOT NULL)`,
		`INSERT INTO cluster_clock (id, n) VALUES (1, 0)`,
	} {
		if err := tx.Exec(stmt).Error; err != nil {
			return err
		}
	}
	return nil
}
