package sqlstore

import (
	"time"

	"gorm.io/gorm"
)

// migrateV13 adds Actions: runners and their registration tokens, workflow
// runs, their jobs, the tasks that run the jobs on runners, the tasks'
// steps and log lines.
func migrateV13(tx *gorm.DB) error {
	type ActionRunner struct {
		ID             int64  `gorm:"primaryKey"`
		UUID           string `gorm:"not null;uniqueIndex"`
		Name           string `gorm:"not null;default:''"`
		OwnerID        int64  `gorm:"not null;default:0;index:idx_action_runners_scope,priority:1"`
		RepoID         int64  `gorm:"not null;default:0;index:idx_action_runners_scope,priority:2;index"`
		TokenHash      string `gorm:"not null;uniqueIndex"`
		TokenLastEight string `gorm:"not null;default:''"`
		Version        string `gorm:"not null;default:''"`
		Labels         string `gorm:"not null;default:'[]'"`
		Ephemeral      bool   `gorm:"not null;default:false"`
		Disabled       bool   `gorm:"not null;default:false"`
		LastOnline     *time.Time
		LastActive     *time.Time
		CreatedAt      time.Time
		UpdatedAt      time.Time
	}
	type ActionRunnerToken struct {
		ID        int64  `gorm:"primaryKey"`
		Token     string `gorm:"not null;uniqueIndex"`
		OwnerID   int64  `gorm:"not null;default:0;index:idx_action_runner_tokens_scope,priority:1"`
		RepoID    int64  `gorm:"not null;default:0;index:idx_action_runner_tokens_scope,priority:2"`
		IsActive  bool   `gorm:"not null;default:true"`
		CreatedAt time.Time
	}
	type ActionRun struct {
		ID            int64  `gorm:"primaryKey"`
		RepoID        int64  `gorm:"not null;uniqueIndex:idx_action_runs_repo_index,priority:1"`
		OwnerID       int64  `gorm:"not null"`
		WorkflowID    string `gorm:"not null;default:''"`
		Title         string `gorm:"not null;default:''"`
		Number        int64  `gorm:"not null;uniqueIndex:idx_action_runs_repo_index,priority:2"`
		TriggerUserID int64  `gorm:"not null;default:0"`
		Ref           string `gorm:"not null;default:''"`
		CommitSHA     string `gorm:"not null;default:''"`
		Event         string `gorm:"not null;default:''"`
		Attempt       int64  `gorm:"not null;default:1"`
		Inputs        string `gorm:"not null;default:'{}'"`
		Status        int    `gorm:"not null;default:0"`
		Started       *time.Time
		Stopped       *time.Time
		CreatedAt     time.Time `gorm:"index"`
		UpdatedAt     time.Time
	}
	type ActionRunJob struct {
		ID              int64  `gorm:"primaryKey"`
		RunID           int64  `gorm:"not null"`
		RepoID          int64  `gorm:"not null"`
		OwnerID         int64  `gorm:"not null"`
		CommitSHA       string `gorm:"not null;default:''"`
		Name            string `gorm:"not null;default:''"`
		JobID           string `gorm:"not null;default:''"`
		Needs           string `gorm:"not null;default:'[]'"`
		RunsOn          string `gorm:"not null;default:'[]'"`
		WorkflowPayload []byte
		TaskID          int64 `gorm:"not null;default:0;index"`
		Attempt         int64 `gorm:"not null;default:0"`
		Status          int   `gorm:"not null;default:0"`
		Started         *time.Time
		Stopped         *time.Time
		CreatedAt       time.Time
		UpdatedAt       time.Time
	}
	type ActionTask struct {
		ID             int64  `gorm:"primaryKey"`
		JobID          int64  `gorm:"not null;index"`
		Attempt        int64  `gorm:"not null;default:0"`
		RunnerID       int64  `gorm:"not null;default:0;index:idx_action_tasks_runner,priority:1"`
		Status         int    `gorm:"not null;default:0;index:idx_action_tasks_runner,priority:2;index:idx_action_tasks_status,priority:1"`
		RepoID         int64  `gorm:"not null;default:0"`
		OwnerID        int64  `gorm:"not null;default:0"`
		CommitSHA      string `gorm:"not null;default:''"`
		TokenHash      string `gorm:"not null;uniqueIndex"`
		TokenLastEight string `gorm:"not null;default:''"`
		LogLength      int64  `gorm:"not null;default:0"`
		LogDone        bool   `gorm:"not null;default:false"`
		Outputs        string `gorm:"not null;default:'{}'"`
		Started        *time.Time
		Stopped        *time.Time
		CreatedAt      time.Time
		UpdatedAt      time.Time `gorm:"index:idx_action_tasks_status,priority:2"`
	}
	type ActionTaskStep struct {
		ID        int64  `gorm:"primaryKey"`
		TaskID    int64  `gorm:"not null;uniqueIndex:idx_action_task_steps_task,priority:1"`
		Number    int64  `gorm:"not null;uniqueIndex:idx_action_task_steps_task,priority:2"`
		Name      string `gorm:"not null;default:''"`
		Status    int    `gorm:"not null;default:0"`
		LogIndex  int64  `gorm:"not null;default:0"`
		LogLength int64  `gorm:"not null;default:0"`
		Started   *time.Time
		Stopped   *time.Time
	}
	type ActionTaskLog struct {
		TaskID  int64 `gorm:"primaryKey;autoIncrement:false"`
		Line    int64 `gorm:"primaryKey;autoIncrement:false"`
		Time    time.Time
		Content string `gorm:"not null;default:''"`
	}
	if err := tx.AutoMigrate(&ActionRunner{}, &ActionRunnerToken{}, &ActionRun{}, &ActionRunJob{},
		&ActionTask{}, &ActionTaskStep{}, &ActionTaskLog{}); err != nil {
		return err
	}
	// The lists read newest or oldest first by id within a repository or
	// an owner (plan_test.go).
	for _, stmt := range []string{
		`CREATE INDEX idx_action_runs_repo_id ON action_runs (repo_id, id)`,
		`CREATE INDEX idx_action_runs_owner_id ON action_runs (owner_id, id)`,
		`CREATE INDEX idx_action_run_jobs_repo_id ON action_run_jobs (repo_id, id)`,
		`CREATE INDEX idx_action_run_jobs_owner_id ON action_run_jobs (owner_id, id)`,
		`CREATE INDEX idx_action_run_jobs_run_id ON action_run_jobs (run_id, id)`,
		`CREATE INDEX idx_action_run_jobs_status_id ON action_run_jobs (status, id)`,
	} {
		if err := tx.Exec(stmt).Error; err != nil {
			return err
		}
	}
	return nil
}
