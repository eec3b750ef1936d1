package sqlstore

import "gorm.io/gorm"

// migrateV51 drops idx_event_jobs_due (consumer, state, run_at, id), which
// no statement walks since migrateV50, so that no index holds run_at, the
// column a claim moves: PostgreSQL then updates a claimed job in place (a
// heap-only tuple), without a new entry in each of the table's indexes.
// Every job is claimed at least once, and with run_at indexed each claim
// wrote six index entries per job.
func migrateV51(tx *gorm.DB) error {
	return tx.Exec(`DROP INDEX idx_event_jobs_due`).Error
}
