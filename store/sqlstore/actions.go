package sqlstore

import (
	"context"
	"errors"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"repohost/store"
)

type actionsStore struct{ d *DB }

// Actions implements store.Store.
func (d *DB) Actions() store.ActionsStore { return actionsStore{d} }

func (s actionsStore) CreateRunner(ctx context.Context, r *store.ActionRunner) error {
	if r.Labels == nil {
		r.Labels = []string{}
	}
	return translate(s.d.conn(ctx).Create(r).Error, "create runner")
}

func (s actionsStore) FindRunner(ctx context.Context, id int64) (*store.ActionRunner, error) {
	var r store.ActionRunner
	err := s.d.conn(ctx).Where("id = ?", id).Take(&r).Error
	return &r, translate(err, "find runner")
}

func (s actionsStore) FindRunnerByUUID(ctx context.Context, uuid string) (*store.ActionRunner, error) {
	var r store.ActionRunner
	err := s.d.conn(ctx).Where("uuid = ?", uuid).Take(&r).Error
	return &r, translate(err, "find runner")
}

func (s actionsStore) ListRunners(ctx context.Context, scope store.RunnerScope, disabled *bool, p store.Page) ([]*store.ActionRunner, int64, error) {
	db := s.d.conn(ctx).Model(&store.ActionRunner{})
	switch {
	case scope.RepoID != 0:
		db = db.Where("(repo_id = ? OR (repo_id = 0 AND owner_id IN ?))", scope.RepoID, []int64{scope.OwnerID, 0})
	case scope.OwnerID != 0:
		db = db.Where("repo_id = 0 AND owner_id IN ?", []int64{scope.OwnerID, 0})
	}
	if disabled != nil {
		db = db.Where("disabled = ?", *disabled)
	}
	var total int64
	if err := db.Count(&total).Error; err != nil {
		return nil, 0, translate(err, "count runners")
	}
	out, err := readPage[store.ActionRunner](db, listOrder{{expr: "action_runners.id"}}, p, total)
	return out, total, translate(err, "list runners")
}

func (s actionsStore) BusyRunners(ctx context.Context, ids []int64) (map[int64]bool, error) {
	out := map[int64]bool{}
	if len(ids) == 0 {
		return out, nil
	}
	var busy []int64
	err := s.d.conn(ctx).Model(&store.ActionTask{}).Where("runner_id IN ? AND status = ?", ids, store.ActionRunning).
		Distinct("runner_id").Pluck("runner_id", &busy).Error
	for _, id := range busy {
		out[id] = true
	}
	return out, translate(err, "busy runners")
}

func (s actionsStore) UpdateRunner(ctx context.Context, id int64, fields map[string]any) error {
	return affected(s.d.conn(ctx).Model(&store.ActionRunner{}).Where("id = ?", id).Updates(fields), "update runner")
}

func (s actionsStore) DeleteRunner(ctx context.Context, id int64) error {
	return affected(s.d.conn(ctx).Where("id = ?", id).Delete(&store.ActionRunner{}), "delete runner")
}

func (s actionsStore) ActiveRunnerToken(ctx context.Context, ownerID, repoID int64) (*store.ActionRunnerToken, error) {
	var t store.ActionRunnerToken
	err := s.d.conn(ctx).Where("owner_id = ? AND repo_id = ? AND is_active = ?", ownerID, repoID, true).
		Order("id DESC").Take(&t).Error
	return &t, translate(err, "find registration token")
}

func (s actionsStore) FindRunnerToken(ctx context.Context, token string) (*store.ActionRunnerToken, error) {
	var t store.ActionRunnerToken
	err := s.d.conn(ctx).Where("token = ?", token).Take(&t).Error
	return &t, translate(err, "find registration token")
}

func (s actionsStore) CreateRunnerToken(ctx context.Context, t *store.ActionRunnerToken) error {
	return translate(s.d.conn(ctx).Create(t).Error, "create registration token")
}

func (s actionsStore) CreateRun(ctx context.Context, run *store.ActionRun, jobs []*store.ActionRunJob) error {
	return s.d.WithTx(ctx, func(ctx context.Context) error {
		db, err := s.d.lockingConn(ctx)
		if err != nil {
			return err
		}
		// The repository's row is locked so that two runs of one
		// repository take consecutive numbers, not the same one.
		var repo store.Repository
		if err := db.Model(&store.Repository{}).Select("id").Where("id = ?", run.RepoID).Take(&repo).Error; err != nil {
			return translate(err, "lock repository")
		}
		var last int64
		if err := s.d.conn(ctx).Model(&store.ActionRun{}).Where("repo_id = ?", run.RepoID).
			Select("COALESCE(MAX(number), 0)").Scan(&last).Error; err != nil {
			return translate(err, "number run")
		}
		run.Number = last + 1
		if run.Attempt == 0 {
			run.Attempt = 1
		}
		// Serialized columns are NOT NULL: an unset one is stored empty.
		if run.Inputs == nil {
			run.Inputs = map[string]string{}
		}
		if err := s.d.conn(ctx).Create(run).Error; err != nil {
			return translate(err, "create run")
		}
		for _, j := range jobs {
			j.RunID = run.ID
			if j.Needs == nil {
				j.Needs = []string{}
			}
			if j.RunsOn == nil {
				j.RunsOn = []string{}
			}
		}
		if len(jobs) == 0 {
			return nil
		}
		return translate(s.d.conn(ctx).Create(&jobs).Error, "create jobs")
	})
}

func (s actionsStore) FindRun(ctx context.Context, id int64) (*store.ActionRun, error) {
	var r store.ActionRun
	err := s.d.conn(ctx).Where("id = ?", id).Take(&r).Error
	return &r, translate(err, "find run")
}

func (s actionsStore) UpdateRun(ctx context.Context, id int64, fields map[string]any) error {
	return affected(s.d.conn(ctx).Model(&store.ActionRun{}).Where("id = ?", id).Updates(fields), "update run")
}

// deleteJobs removes the jobs the column of action_run_jobs selects
// (run_id or repo_id = id), with their tasks, steps and logs.
func (s actionsStore) deleteJobs(ctx context.Context, column string, id int64) error {
	db := s.d.conn(ctx)
	jobs := db.Model(&store.ActionRunJob{}).Select("id").Where(column+" = ?", id)
	tasks := db.Model(&store.ActionTask{}).Select("id").Where("job_id IN (?)", jobs)
	for _, step := range []struct {
		what string
		q    *gorm.DB
	}{
		{"delete logs", db.Where("task_id IN (?)", tasks).Delete(&store.ActionTaskLog{})},
		{"delete steps", db.Where("task_id IN (?)", tasks).Delete(&store.ActionTaskStep{})},
		{"delete tasks", db.Where("job_id IN (?)", jobs).Delete(&store.ActionTask{})},
		{"delete jobs", db.Where(column+" = ?", id).Delete(&store.ActionRunJob{})},
	} {
		if step.q.Error != nil {
			return translate(step.q.Error, step.what)
		}
	}
	return nil
}

func (s actionsStore) DeleteRun(ctx context.Context, id int64) error {
	return s.d.WithTx(ctx, func(ctx context.Context) error {
		if err := s.deleteJobs(ctx, "run_id", id); err != nil {
			return err
		}
		return affected(s.d.conn(ctx).Where("id = ?", id).Delete(&store.ActionRun{}), "delete run")
	})
}

func (s actionsStore) DeleteRepo(ctx context.Context, repoID int64) error {
	return s.d.WithTx(ctx, func(ctx context.Context) error {
		if err := s.deleteJobs(ctx, "repo_id", repoID); err != nil {
			return err
		}
		db := s.d.conn(ctx)
		for what, model := range map[string]any{"delete runs": &store.ActionRun{}, "delete runners": &store.ActionRunner{}, "delete registration tokens": &store.ActionRunnerToken{}} {
			if err := db.Where("repo_id = ?", repoID).Delete(model).Error; err != nil {
				return translate(err, what)
			}
		}
		return nil
	})
}

func (s actionsStore) DeleteOwner(ctx context.Context, ownerID int64) error {
	return s.d.WithTx(ctx, func(ctx context.Context) error {
		db := s.d.conn(ctx)
		if err := db.Where("owner_id = ?", ownerID).Delete(&store.ActionRunner{}).Error; err != nil {
			return translate(err, "delete runners")
		}
		return translate(db.Where("owner_id = ?", ownerID).Delete(&store.ActionRunnerToken{}).Error, "delete registration tokens")
	})
}

// repoNames joins a run's or job's repository and its owner for their
// names.
func repoNames(db *gorm.DB, table string) *gorm.DB {
	return db.Joins("LEFT JOIN repositories ON repositories.id = " + table + ".repo_id").
		Joins("LEFT JOIN users AS repo_owners ON repo_owners.id = repositories.owner_id")
}

const repoNameColumns = "COALESCE(repo_owners.name, '') AS owner_name, COALESCE(repositories.name, '') AS repo_name"

func (s actionsStore) ListRuns(ctx context.Context, f store.RunFilter, p store.Page) ([]*store.RunView, int64, error) {
	db := s.d.conn(ctx).Model(&store.ActionRun{})
	if f.RepoID != 0 {
		db = db.Where("action_runs.repo_id = ?", f.RepoID)
	}
	if f.OwnerID != 0 {
		db = db.Where("action_runs.owner_id = ?", f.OwnerID)
	}
	if f.Event != "" {
		db = db.Where("action_runs.event = ?", f.Event)
	}
	if f.Ref != "" {
		db = db.Where("action_runs.ref = ?", f.Ref)
	}
	if len(f.Statuses) > 0 {
		db = db.Where("action_runs.status IN ?", f.Statuses)
	}
	if f.TriggerUserID != 0 {
		db = db.Where("action_runs.trigger_user_id = ?", f.TriggerUserID)
	}
	if f.CommitSHA != "" {
		db = db.Where("action_runs.commit_sha = ?", f.CommitSHA)
	}
	var total int64
	if err := db.Count(&total).Error; err != nil {
		return nil, 0, translate(err, "count runs")
	}
	db = repoNames(db.Select("action_runs.*, "+repoNameColumns), "action_runs")
	out, err := readPage[store.RunView](db, listOrder{{expr: "action_runs.id", desc: true}}, p, total)
	return out, total, translate(err, "list runs")
}

func (s actionsStore) RunsBefore(ctx context.Context, t time.Time, limit int) ([]int64, error) {
	var ids []int64
	err := s.d.conn(ctx).Model(&store.ActionRun{}).Where("created_at <= ?", sec(t)).Order("created_at").Limit(limit).Pluck("id", &ids).Error
	return ids, translate(err, "list old runs")
}

func (s actionsStore) FindJob(ctx context.Context, id int64) (*store.ActionRunJob, error) {
	var j store.ActionRunJob
	err := s.d.conn(ctx).Where("id = ?", id).Take(&j).Error
	return &j, translate(err, "find job")
}

func (s actionsStore) JobsOfRun(ctx context.Context, runID int64) ([]*store.ActionRunJob, error) {
	var out []*store.ActionRunJob
	err := s.d.conn(ctx).Where("run_id = ?", runID).Order("id").Find(&out).Error
	return out, translate(err, "list jobs of run")
}

func (s actionsStore) UpdateJob(ctx context.Context, id int64, fields map[string]any) error {
	return affected(s.d.conn(ctx).Model(&store.ActionRunJob{}).Where("id = ?", id).Updates(fields), "update job")
}

func (s actionsStore) ListJobs(ctx context.Context, f store.JobFilter, p store.Page) ([]*store.JobView, int64, error) {
	db := s.d.conn(ctx).Model(&store.ActionRunJob{})
	if f.RepoID != 0 {
		db = db.Where("action_run_jobs.repo_id = ?", f.RepoID)
	}
	if f.OwnerID != 0 {
		db = db.Where("action_run_jobs.owner_id = ?", f.OwnerID)
	}
	if f.ID != 0 {
		db = db.Where("action_run_jobs.id = ?", f.ID)
	}
	if f.RunID != 0 {
		db = db.Where("action_run_jobs.run_id = ?", f.RunID)
	}
	if len(f.Statuses) > 0 {
		db = db.Where("action_run_jobs.status IN ?", f.Statuses)
	}
	var total int64
	if err := db.Count(&total).Error; err != nil {
		return nil, 0, translate(err, "count jobs")
	}
	db = db.Select("action_run_jobs.*, COALESCE(action_runs.ref, '') AS ref, COALESCE(action_runs.number, 0) AS run_number, " + repoNameColumns + ", " +
		"COALESCE(action_tasks.runner_id, 0) AS runner_id, COALESCE(action_runners.name, '') AS runner_name").
		Joins("LEFT JOIN action_runs ON action_runs.id = action_run_jobs.run_id").
		Joins("LEFT JOIN action_tasks ON action_tasks.id = action_run_jobs.task_id").
		Joins("LEFT JOIN action_runners ON action_runners.id = action_tasks.runner_id")
	db = repoNames(db, "action_run_jobs")
	out, err := readPage[store.JobView](db, listOrder{{expr: "action_run_jobs.id", desc: f.Desc}}, p, total)
	if err != nil {
		return nil, 0, translate(err, "list jobs")
	}
	// One more statement for the steps of every listed job's task.
	var taskIDs []int64
	byTask := map[int64]*store.JobView{}
	for _, j := range out {
		if j.TaskID != 0 {
			taskIDs = append(taskIDs, j.TaskID)
			byTask[j.TaskID] = j
		}
	}
	if len(taskIDs) > 0 {
		var steps []*store.ActionTaskStep
		if err := s.d.conn(ctx).Where("task_id IN ?", taskIDs).Order("task_id, number").Find(&steps).Error; err != nil {
			return nil, 0, translate(err, "list steps")
		}
		for _, st := range steps {
			j := byTask[st.TaskID]
			j.Steps = append(j.Steps, st)
		}
	}
	return out, total, nil
}

// claimBatch is how many free jobs one look at the queue considers.
const claimBatch = 100

func (s actionsStore) ClaimJob(ctx context.Context, runner *store.ActionRunner, match func([]string) bool, task *store.ActionTask) (*store.ActionRunJob, error) {
	var claimed *store.ActionRunJob
	err := s.d.WithTx(ctx, func(ctx context.Context) error {
		after := int64(0)
		for {
			db := s.d.conn(ctx).Model(&store.ActionRunJob{}).
				Where("status = ? AND task_id = 0 AND id > ?", store.ActionWaiting, after)
			switch {
			case runner.RepoID != 0:
				db = db.Where("repo_id = ?", runner.RepoID)
			case runner.OwnerID != 0:
				db = db.Where("owner_id = ?", runner.OwnerID)
			}
			if s.d.usesPostgres() {
				// Jobs another process is handing out right now are
				// skipped instead of waited for.
				db = db.Clauses(clause.Locking{Strength: "UPDATE", Options: "SKIP LOCKED"})
			}
			var batch []*store.ActionRunJob
			if err := db.Order("id").Limit(claimBatch).Find(&batch).Error; err != nil {
				return translate(err, "find free jobs")
			}
			for _, j := range batch {
				if !match(j.RunsOn) {
					continue
				}
				ok, err := s.claim(ctx, j, task)
				if err != nil {
					return err
				}
				if ok {
					claimed = j
					return nil
				}
			}
			if len(batch) < claimBatch {
				return store.ErrNotFound
			}
			after = batch[len(batch)-1].ID
		}
	})
	return claimed, err
}

// claim gives j to task unless someone took it first: the task row is
// written, then the job is updated only while it is still free.
func (s actionsStore) claim(ctx context.Context, j *store.ActionRunJob, task *store.ActionTask) (bool, error) {
	now := s.d.clock.Now()
	task.JobID, task.Attempt = j.ID, j.Attempt+1
	task.RepoID, task.OwnerID, task.CommitSHA = j.RepoID, j.OwnerID, j.CommitSHA
	task.Status, task.Started = store.ActionRunning, &now
	if task.Outputs == nil {
		task.Outputs = map[string]string{}
	}
	if err := s.d.conn(ctx).Create(task).Error; err != nil {
		return false, translate(err, "create task")
	}
	res := s.d.conn(ctx).Model(&store.ActionRunJob{}).
		Where("id = ? AND status = ? AND task_id = 0", j.ID, store.ActionWaiting).
		Updates(map[string]any{"task_id": task.ID, "status": store.ActionRunning, "attempt": task.Attempt, "started": now, "updated_at": now})
	if res.Error != nil {
		return false, translate(res.Error, "claim job")
	}
	if res.RowsAffected == 1 {
		j.TaskID, j.Status, j.Attempt, j.Started = task.ID, store.ActionRunning, task.Attempt, &now
		return true, nil
	}
	if err := s.d.conn(ctx).Where("id = ?", task.ID).Delete(&store.ActionTask{}).Error; err != nil {
		return false, translate(err, "drop unclaimed task")
	}
	task.ID = 0
	return false, nil
}

func (s actionsStore) FindTask(ctx context.Context, id int64) (*store.ActionTask, error) {
	var t store.ActionTask
	err := s.d.conn(ctx).Where("id = ?", id).Take(&t).Error
	return &t, translate(err, "find task")
}

func (s actionsStore) FindTaskByTokenHash(ctx context.Context, hash string) (*store.ActionTask, error) {
	var t store.ActionTask
	err := s.d.conn(ctx).Where("token_hash = ?", hash).Take(&t).Error
	return &t, translate(err, "find task")
}

func (s actionsStore) UpdateTask(ctx context.Context, id int64, fields map[string]any) error {
	return affected(s.d.conn(ctx).Model(&store.ActionTask{}).Where("id = ?", id).Updates(fields), "update task")
}

func (s actionsStore) RunningTasksBefore(ctx context.Context, t time.Time, limit int) ([]*store.ActionTask, error) {
	var out []*store.ActionTask
	err := s.d.conn(ctx).Where("status = ? AND updated_at <= ?", store.ActionRunning, sec(t)).Order("updated_at").Limit(limit).Find(&out).Error
	return out, translate(err, "list stale tasks")
}

func (s actionsStore) RunningTasksStartedBefore(ctx context.Context, t time.Time, limit int) ([]*store.ActionTask, error) {
	var out []*store.ActionTask
	err := s.d.conn(ctx).Where("status = ? AND started <= ?", store.ActionRunning, sec(t)).Order("started, id").Limit(limit).Find(&out).Error
	return out, translate(err, "list endless tasks")
}

func (s actionsStore) JobsUpdatedBefore(ctx context.Context, statuses []store.ActionStatus, t time.Time, limit int) ([]*store.ActionRunJob, error) {
	var out []*store.ActionRunJob
	if len(statuses) == 0 {
		return out, nil
	}
	// In no order: every such job is cancelled, and several statuses are
	// several ranges of the index, which one order would have to merge.
	err := s.d.conn(ctx).Where("status IN ? AND updated_at <= ?", statuses, sec(t)).Limit(limit).Find(&out).Error
	return out, translate(err, "list idle jobs")
}

func (s actionsStore) SaveSteps(ctx context.Context, taskID int64, steps []*store.ActionTaskStep) error {
	return s.d.WithTx(ctx, func(ctx context.Context) error {
		if err := s.d.conn(ctx).Where("task_id = ?", taskID).Delete(&store.ActionTaskStep{}).Error; err != nil {
			return translate(err, "replace steps")
		}
		if len(steps) == 0 {
			return nil
		}
		return translate(s.d.conn(ctx).Create(&steps).Error, "save steps")
	})
}

func (s actionsStore) AppendLogs(ctx context.Context, rows []*store.ActionTaskLog) error {
	if len(rows) == 0 {
		return nil
	}
	// A line resent after a lost acknowledgement is already there.
	err := s.d.conn(ctx).Clauses(clause.OnConflict{DoNothing: true}).CreateInBatches(&rows, 200).Error
	return translate(err, "append logs")
}

func (s actionsStore) Logs(ctx context.Context, taskID int64) ([]*store.ActionTaskLog, error) {
	var out []*store.ActionTaskLog
	err := s.d.conn(ctx).Where("task_id = ?", taskID).Order("line").Find(&out).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return nil, nil
	}
	return out, translate(err, "read logs")
}
