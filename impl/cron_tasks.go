package impl

import (
	"context"

	"repohost/impl/app"
	"repohost/impl/cron"
	"repohost/impl/lfs"
	"repohost/impl/refs"
	"repohost/impl/repo"
	"repohost/impl/webhook"
	"repohost/store"
)

// CronTasks is every maintenance task the server runs, in the order GET
// /admin/cron lists them (the reference's registration order). To add a
// task, add one line here: a cron.Task{Name, Schedule, Enabled, Run}.
func CronTasks(d *app.Deps, s Services) []cron.Task {
	repos := repo.Service{Deps: d}
	e := cron.Env{Store: d.Store, Git: d.Git, Log: d.Log, Clock: d.Clock, Metrics: d.Metrics,
		Archives: d.Objects.Archives, ArchiveMaxAge: d.Config.ArchiveMaxAge, InactiveAccountAge: d.Config.InactiveAccountAge,
		NoticeMaxAge: d.Config.NoticeMaxAge,
		DeleteUser:   func(ctx context.Context, u *store.User) error { return s.Users.Delete(ctx, nil, u, false) },
		DeleteRepo:   func(ctx context.Context, r *store.Repository) error { return repos.Delete(ctx, nil, r) },
		Maintain:     refs.New(d).Maintain}
	// The reference's tasks that have nothing to work on here are left
	// out rather than listed as tasks that do nothing: update_checker (no
	// outgoing requests), resync_all_sshkeys and resync_all_hooks (no
	// authorized_keys file, no hook scripts: keys and pushes are checked
	// in the server), deleted_branches_cleanup (deleted branches are not
	// kept), delete_generated_repository_avatars (repositories have no
	// avatars), sync_external_users (no external sources yet).
	tasks := []cron.Task{
		cron.RepoHealthCheck(e),
		cron.CheckRepoStats(e),
		cron.ArchiveCleanup(e),
		{Name: "cleanup_hook_task_table", Schedule: "@midnight", Enabled: true, Run: webhook.Service{Deps: d}.PruneDeliveries},
		{Name: "cleanup_events", Schedule: "@every 1h", Enabled: true, Run: func(ctx context.Context) error {
			return d.Events.Prune(ctx, d.Clock.Now().Add(-d.Config.EventRetention))
		}},
		{Name: "cleanup_packages", Schedule: "@midnight", Enabled: true, Run: s.Packages.CleanupBlobs},
		cron.DeleteInactiveAccounts(e),
		cron.DeleteRepoArchives(e),
		cron.GitGCRepos(e),
		cron.ReinitMissingRepos(e),
		cron.DeleteMissingRepos(e),
		{Name: "delete_old_actions", Schedule: "@every 168h", Enabled: false, Run: s.Actions.DeleteOldRuns},
		cron.DeleteOldSystemNotices(e),
		// Off by default, as in the reference.
		{Name: "gc_lfs", Schedule: "@every 24h", Enabled: false, Run: lfs.NewService(d).GC},
		{Name: "cleanup_actions", Schedule: "@midnight", Enabled: true, Run: s.Actions.CleanupActions},
		{Name: "stop_zombie_tasks", Schedule: "@every 5m", Enabled: true, Run: s.Actions.CleanupActions},
		{Name: "stop_endless_tasks", Schedule: "@every 30m", Enabled: true, Run: s.Actions.StopEndlessTasks},
		{Name: "cancel_abandoned_jobs", Schedule: "@every 6h", Enabled: true, Run: s.Actions.CancelAbandonedJobs},
	}
	if !d.Config.Mirrors.Disabled {
		// First, as the reference registers it, and only while mirrors
		// are on.
		tasks = append([]cron.Task{{Name: "update_mirrors", Schedule: "@every 10m", Enabled: true, Run: repos.UpdateMirrors}}, tasks...)
	}
	return tasks
}

// NewCron builds d.Cron from d's configuration with CronTasks
// registered: they run on demand (POST /admin/cron/{task}); StartCron also
// runs them on their schedules.
// extra are tasks beyond CronTasks (a test binary's).
func NewCron(d *app.Deps, extra ...cron.Task) error {
	sched := cron.New(d.Store.Cron(), d.Log, cron.Options{Lease: d.Config.CronLease, Settings: d.Config.Cron, OnRun: d.Metrics.CronRun})
	for _, t := range append(CronTasks(d, NewServices(d)), extra...) {
		if err := sched.Register(t); err != nil {
			return err
		}
	}
	if err := sched.CheckSettings(); err != nil {
		return err
	}
	d.Cron = sched
	return nil
}

// StartCron is NewCron, then runs the tasks on their schedules until ctx
// ends (d.Cron.Wait then lets the runs under way finish).
func StartCron(ctx context.Context, d *app.Deps, extra ...cron.Task) error {
	if err := NewCron(d, extra...); err != nil {
		return err
	}
	return d.Cron.Start(ctx)
}
