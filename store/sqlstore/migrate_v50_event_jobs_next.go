package sqlstore

import "gorm.io/gorm"

// migrateV50 lets a consumer claim its next jobs in the outbox's order
// without reading every due one: idx_event_jobs_due (consumer, state,
// run_at, id) serves the claim as a range of every job due by now, sorted
// by id before the batch is taken, and while consumers lag behind a burst
// of writes that range is the whole backlog: each claim got slower as
// the backlog grew (10 ms at a few thousand jobs), and the consumers fell
// further behind. Walked in id order, a claim reads the batch and the few
// jobs leased or waiting to be retried before it.
func migrateV50(tx *gorm.DB) error {
	return tx.Exec(`CREATE INDEX idx_event_jobs_next ON event_jobs (consumer, state, id)`).Error
}
