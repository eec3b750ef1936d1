package sqlstore

import "gorm.io/gorm"

// migrateV15 indexes what the actions maintenance sweeps look for, so that
// each reads only the rows it acts on: running tasks by their start
// (stop_endless_tasks) and waiting or blocked jobs by their last change
// (cancel_abandoned_jobs), where the status indexes alone made them sort
// every running task or waiting job.
func migrateV15(tx *gorm.DB) error {
	for _, stmt := range []string{
		`CREATE INDEX idx_action_tasks_status_started ON action_tasks (status, started, id)`,
		`CREATE INDEX idx_action_run_jobs_status_updated ON action_run_jobs (status, updated_at, id)`,
	} {
		if err := tx.Exec(stmt).Error; err != nil {
			return err
		}
	}
	return nil
}
