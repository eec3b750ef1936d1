package cron

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"repohost/store"
	"repohost/store/gitstore"
	"repohost/store/objects"
)

// Env is what the built-in tasks work on. It names its dependencies one by
// one (rather than taking impl/app.Deps) so that app can hold the
// scheduler.
type Env struct {
	Store store.Store
	Git   gitstore.Repos
	Log   *slog.Logger
	Clock store.Clock
	// Metrics counts the git commands the tasks run (nil: not counted).
	Metrics interface{ GitOperation(op string, err error) }
	// Archives holds the generated repository archives (see
	// impl/contents), nil when they are not kept.
	Archives objects.Store
	// ArchiveMaxAge is how old a kept archive archive_cleanup removes.
	ArchiveMaxAge time.Duration
	// InactiveAccountAge is how long an account may stay unactivated
	// before delete_inactive_accounts removes it.
	InactiveAccountAge time.Duration
	// DeleteUser deletes an account through its area's service (which
	// refuses accounts that still own repositories or organizations).
	DeleteUser func(ctx context.Context, u *store.User) error
	// Maintain runs fn on r's repository with no ref change under way
	// or starting (impl/refs' Service.Maintain).
	Maintain func(ctx context.Context, r *store.Repository, fn func() error) error
	// DeleteRepo deletes a repository (Owner loaded) through its area's
	// service.
	DeleteRepo func(ctx context.Context, r *store.Repository) error
	// NoticeMaxAge is how old a notice delete_old_system_notices removes.
	NoticeMaxAge time.Duration
}

// Notice records something a site admin must look at: it is stored (see
// store.NoticeStore and `repohost admin notices`) and logged.
func (e Env) Notice(ctx context.Context, kind, format string, args ...any) {
	desc := fmt.Sprintf(format, args...)
	e.Log.Warn("notice", "type", kind, "description", desc)
	if err := e.Store.Notices().Create(ctx, &store.Notice{Type: kind, Description: desc, CreatedAt: e.Clock.Now()}); err != nil {
		e.Log.Error("record notice", "type", kind, "err", err)
	}
}

func (e Env) countGit(op string, err error) {
	if e.Metrics != nil {
		e.Metrics.GitOperation(op, err)
	}
}

// eachRepository calls fn for every repository row, a page at a time.
func (e Env) eachRepository(ctx context.Context, fn func(r *store.Repository) error) error {
	const page = 50
	for offset := 0; ; offset += page {
		if err := ctx.Err(); err != nil {
			return err
		}
		repos, _, err := e.Store.Repos().Search(ctx, store.RepoSearch{Viewer: store.RepoViewer{IsAdmin: true}, OrderBy: "id ASC"},
			store.Page{Offset: offset, Limit: page})
		if err != nil {
			return err
		}
		for _, r := range repos {
			if err := fn(r); err != nil {
				return err
			}
		}
		if len(repos) < page {
			return nil
		}
	}
}

// git runs the git binary in dir; its output becomes the error's text.
func git(ctx context.Context, dir string, args ...string) error {
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Dir = dir
	// The server's configuration only: no user's or system's gitconfig
	// changes what a maintenance command does.
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null", "GIT_TERMINAL_PROMPT=0")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("git %s: %w: %s", args[0], err, strings.TrimSpace(out.String()))
	}
	return nil
}

// RepoHealthCheck checks every repository's objects and refs with git
// fsck (connectivity and object integrity), and that each repository row
// has its directory; every failure becomes a notice.
func RepoHealthCheck(e Env) Task {
	return Task{Name: "repo_health_check", Schedule: "@midnight", Enabled: true, Run: func(ctx context.Context) error {
		failed := 0
		err := e.eachRepository(ctx, func(r *store.Repository) error {
			dir, err := e.Git.Path(r.Owner.Name, r.Name)
			if err == nil {
				if _, err = os.Stat(filepath.Join(dir, "HEAD")); err != nil {
					err = fmt.Errorf("repository directory is missing or not a git repository: %w", err)
				}
			}
			if err == nil {
				err = git(ctx, dir, "fsck", "--no-progress", "--no-dangling")
				e.countGit("fsck", err)
			}
			if err != nil {
				if ctx.Err() != nil {
					return ctx.Err()
				}
				failed++
				e.Notice(ctx, "repo_health_check", "repository %s failed its health check: %v", r.FullName(), err)
			}
			return nil
		})
		if err != nil {
			return err
		}
		if failed > 0 {
			return fmt.Errorf("%d repositories failed the health check (see the notices)", failed)
		}
		return nil
	}}
}

// GitGCRepos packs every repository's loose objects and refs (git gc),
// each with no push or other ref change under way (Env.Maintain): gc
// prunes unreachable objects past git's grace period, which a push may
// have found present and not sent again, and packs the refs that
// compare-and-swaps are moving. With no push under way, any push
// quarantine left is a killed process's, and is removed first.
func GitGCRepos(e Env) Task {
	return Task{Name: "git_gc_repos", Schedule: "@every 72h", Enabled: false, Run: func(ctx context.Context) error {
		failed := 0
		err := e.eachRepository(ctx, func(r *store.Repository) error {
			dir, err := e.Git.Path(r.Owner.Name, r.Name)
			if err == nil {
				err = e.Maintain(ctx, r, func() error {
					if _, err := gitstore.RemoveQuarantines(dir); err != nil {
						return err
					}
					err := git(ctx, dir, "gc", "--quiet")
					e.countGit("gc", err)
					return err
				})
			}
			if err != nil {
				if ctx.Err() != nil {
					return ctx.Err()
				}
				failed++
				e.Notice(ctx, "git_gc_repos", "git gc of %s failed: %v", r.FullName(), err)
			}
			return nil
		})
		if err != nil {
			return err
		}
		if failed > 0 {
			return fmt.Errorf("git gc failed in %d repositories (see the notices)", failed)
		}
		return nil
	}}
}

// removeArchives deletes the kept archives last written before cutoff
// (every one when cutoff is zero).
func (e Env) removeArchives(ctx context.Context, cutoff time.Time) error {
	if e.Archives == nil {
		return nil
	}
	// The keys are gathered first: a store's listing is not to be
	// changed under it.
	var old []string
	err := e.Archives.Walk(ctx, "", func(key string, _ int64, modified time.Time) error {
		if cutoff.IsZero() || modified.Before(cutoff) {
			old = append(old, key)
		}
		return nil
	})
	if err != nil {
		return err
	}
	for _, key := range old {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := e.Archives.Delete(ctx, key); err != nil {
			return err
		}
	}
	e.Log.Info("removed repository archives", "count", len(old))
	return nil
}

// ArchiveCleanup removes kept archives older than ArchiveMaxAge.
func ArchiveCleanup(e Env) Task {
	return Task{Name: "archive_cleanup", Schedule: "@midnight", Enabled: true, Run: func(ctx context.Context) error {
		return e.removeArchives(ctx, e.Clock.Now().Add(-e.ArchiveMaxAge))
	}}
}

// DeleteRepoArchives removes every kept archive.
func DeleteRepoArchives(e Env) Task {
	return Task{Name: "delete_repo_archives", Schedule: "@annually", Enabled: false, Run: func(ctx context.Context) error {
		return e.removeArchives(ctx, time.Time{})
	}}
}

// DeleteInactiveAccounts deletes accounts never activated within
// InactiveAccountAge of their creation. Off by default, as in the
// reference; accounts that own repositories or belong to organizations
// are kept (the user service refuses them).
func DeleteInactiveAccounts(e Env) Task {
	return Task{Name: "delete_inactive_accounts", Schedule: "@annually", Enabled: false, Run: func(ctx context.Context) error {
		inactive := false
		cutoff := e.Clock.Now().Add(-e.InactiveAccountAge)
		var stale []*store.User
		const page = 50
		for offset := 0; ; offset += page {
			users, _, err := e.Store.Users().Search(ctx, store.UserSearch{Type: store.UserTypeIndividual, IsActive: &inactive, OrderBy: "id ASC"},
				store.Page{Offset: offset, Limit: page})
			if err != nil {
				return err
			}
			for _, u := range users {
				if !u.CreatedAt.After(cutoff) {
					stale = append(stale, u)
				}
			}
			if len(users) < page {
				break
			}
		}
		deleted := 0
		for _, u := range stale {
			if err := e.DeleteUser(ctx, u); err != nil {
				e.Log.Info("delete_inactive_accounts: account kept", "user", u.Name, "reason", err)
				continue
			}
			deleted++
		}
		e.Log.Info("deleted inactive accounts", "count", deleted, "kept", len(stale)-deleted)
		return nil
	}}
}
