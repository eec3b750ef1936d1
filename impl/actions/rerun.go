package actions

import (
	"context"
	"slices"

	"repohost/impl/apierr"
	"repohost/store"
)

// Rerun queues jobs of a finished run again: those pick selects (every
// job when pick is nil) and every job that needs one of them, directly or
// not. Each gets a new task, and a new attempt, when a runner takes it.
func (s Service) Rerun(ctx context.Context, run *store.ActionRun, pick func(*store.ActionRunJob) bool) error {
	if !run.Status.IsDone() {
		return apierr.Conflict("workflow run %d is not done", run.ID)
	}
	return s.Store.WithTx(ctx, func(ctx context.Context) error {
		jobs, err := s.Store.Actions().JobsOfRun(ctx, run.ID)
		if err != nil {
			return err
		}
		selected := map[int64]bool{}
		keys := map[string]bool{}
		for _, j := range jobs {
			if pick == nil || pick(j) {
				selected[j.ID], keys[j.JobID] = true, true
			}
		}
		// Dependents follow what they need, however far down.
		for grown := true; grown; {
			grown = false
			for _, j := range jobs {
				if selected[j.ID] || !slices.ContainsFunc(j.Needs, func(n string) bool { return keys[n] }) {
					continue
				}
				selected[j.ID], keys[j.JobID], grown = true, true, true
			}
		}
		if len(selected) == 0 {
			return nil
		}
		now := s.Clock.Now()
		for _, j := range jobs {
			if !selected[j.ID] {
				continue
			}
			// Blocked first; settle then queues those whose needs are met.
			j.Status, j.TaskID, j.Started, j.Stopped = store.ActionBlocked, 0, nil, nil
			if err := s.Store.Actions().UpdateJob(ctx, j.ID, map[string]any{"status": j.Status, "task_id": 0,
				"started": nil, "stopped": nil, "updated_at": now}); err != nil {
				return err
			}
			if err := s.emitJob(ctx, j, 0); err != nil {
				return err
			}
		}
		run.Attempt++
		if err := s.Store.Actions().UpdateRun(ctx, run.ID, map[string]any{"attempt": run.Attempt, "started": nil, "stopped": nil, "updated_at": now}); err != nil {
			return err
		}
		return s.settle(ctx, run.ID)
	})
}

// failedJob picks the jobs rerun-failed-jobs runs again.
func failedJob(j *store.ActionRunJob) bool {
	return j.Status == store.ActionFailure || j.Status == store.ActionCancelled
}
