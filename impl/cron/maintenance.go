package cron

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"repohost/store"
	"repohost/store/gitstore"
)

// CheckRepoStats sets every stored counter (a repository's issues, closed
// issues, pull requests, closed pull requests, forks and releases, a
// milestone's issues, an issue's comments) to the count of the rows it
// summarises. The transactions that change those rows keep the counters
// exact; this repairs what a crash, a restore or a manual change to the
// database left behind, and says what it corrected.
func CheckRepoStats(e Env) Task {
	return Task{Name: "check_repo_stats", Schedule: "@midnight", Enabled: true, Run: func(ctx context.Context) error {
		fixed, err := e.Store.Issues().RecountCounters(ctx)
		if err != nil {
			return err
		}
		var parts []string
		for name, n := range fixed {
			if n > 0 {
				parts = append(parts, fmt.Sprintf("%s: %d", name, n))
			}
		}
		if len(parts) > 0 {
			sort.Strings(parts)
			e.Notice(ctx, "check_repo_stats", "stored counters corrected (rows per counter): %s", strings.Join(parts, ", "))
		}
		return nil
	}}
}

// missingRepos returns the repositories whose row exists but whose git
// directory does not.
func (e Env) missingRepos(ctx context.Context) ([]*store.Repository, error) {
	var missing []*store.Repository
	err := e.eachRepository(ctx, func(r *store.Repository) error {
		ok, err := e.Git.IsRepoDir(r.Owner.Name, r.Name)
		if err != nil {
			return err
		}
		if !ok {
			missing = append(missing, r)
		}
		return nil
	})
	return missing, err
}

// stillMissing reads r again and tells whether its directory is still
// missing: a rename or transfer under way moves the directory and the row
// one after the other, so a repository is acted on only when both reads
// agree.
func (e Env) stillMissing(ctx context.Context, r *store.Repository) (*store.Repository, bool, error) {
	cur, err := e.Store.Repos().FindByID(ctx, r.ID)
	if err != nil {
		return nil, false, err
	}
	ok, err := e.Git.IsRepoDir(cur.Owner.Name, cur.Name)
	return cur, !ok, err
}

// DeleteMissingRepos deletes, through the repository service, every
// repository whose git directory is gone (its issues, releases and the
// rest go with it), leaving a notice for each. Off by default, as in the
// reference: reinit_missing_repos keeps the rows instead.
func DeleteMissingRepos(e Env) Task {
	return Task{Name: "delete_missing_repos", Schedule: "@every 72h", Enabled: false, Run: func(ctx context.Context) error {
		missing, err := e.missingRepos(ctx)
		if err != nil {
			return err
		}
		for _, r := range missing {
			cur, gone, err := e.stillMissing(ctx, r)
			if err != nil || !gone {
				continue // deleted or restored meanwhile
			}
			if err := e.DeleteRepo(ctx, cur); err != nil {
				e.Notice(ctx, "delete_missing_repos", "repository %s has no git directory and could not be deleted: %v", cur.FullName(), err)
				continue
			}
			e.Notice(ctx, "delete_missing_repos", "deleted repository %s: its git directory was missing", cur.FullName())
		}
		return nil
	}}
}

// ReinitMissingRepos makes an empty git repository (the row's default
// branch and object format) for every repository whose git directory is
// gone, marking it empty, and leaves a notice for each: the rows (issues,
// pull requests, releases) stay usable and the code can be pushed again.
func ReinitMissingRepos(e Env) Task {
	return Task{Name: "reinit_missing_repos", Schedule: "@every 72h", Enabled: false, Run: func(ctx context.Context) error {
		missing, err := e.missingRepos(ctx)
		if err != nil {
			return err
		}
		failed := 0
		for _, r := range missing {
			cur, gone, err := e.stillMissing(ctx, r)
			if err != nil || !gone {
				continue
			}
			if err := e.reinit(ctx, cur); err != nil {
				failed++
				e.Notice(ctx, "reinit_missing_repos", "repository %s has no git directory and could not be made again: %v", cur.FullName(), err)
				continue
			}
			e.Notice(ctx, "reinit_missing_repos", "made an empty git directory for repository %s: its directory was missing", cur.FullName())
		}
		if failed > 0 {
			return fmt.Errorf("%d repositories could not be made again (see the notices)", failed)
		}
		return nil
	}}
}

func (e Env) reinit(ctx context.Context, r *store.Repository) error {
	if _, err := e.Git.Create(r.Owner.Name, r.Name, gitstore.InitOptions{DefaultBranch: r.DefaultBranch, ObjectFormat: r.ObjectFormat}); err != nil {
		return err
	}
	return e.Store.WithTx(ctx, func(ctx context.Context) error {
		cur, err := e.Store.Repos().FindByIDForUpdate(ctx, r.ID)
		if err != nil {
			return err
		}
		if cur.IsEmpty {
			return nil
		}
		cur.IsEmpty = true
		return e.Store.Repos().Update(ctx, cur)
	})
}

// DeleteOldSystemNotices deletes the notices older than NoticeMaxAge. Off
// by default, as in the reference.
func DeleteOldSystemNotices(e Env) Task {
	return Task{Name: "delete_old_system_notices", Schedule: "@every 168h", Enabled: false, Run: func(ctx context.Context) error {
		n, err := e.Store.Notices().DeleteBefore(ctx, e.Clock.Now().Add(-e.NoticeMaxAge))
		if err != nil {
			return err
		}
		e.Log.Info("deleted old system notices", "count", n)
		return nil
	}}
}
