package apitest_test

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"repohost/apitest"
	"repohost/impl/app"
	"repohost/impl/cron"
	"repohost/models"
	"repohost/store"
)

// cronTasks reads GET /admin/cron (one page of 50) by name.
func cronTasks(t *testing.T, e *apitest.Env) map[string]*models.Cron {
	t.Helper()
	var list []*models.Cron
	e.Do("GET", "admin/cron?limit=50", nil, apitest.Basic(e.Admin)).Expect(t, http.StatusOK).JSON(t, &list)
	out := map[string]*models.Cron{}
	for _, c := range list {
		out[c.Name] = c
	}
	return out
}

// runCron runs task through POST /admin/cron/{task} and waits until its
// exec_times has moved: the answer does not wait for the run.
func runCron(t *testing.T, e *apitest.Env, task string) *models.Cron {
	t.Helper()
	before := cronTasks(t, e)[task]
	e.Do("POST", "admin/cron/"+task, nil, apitest.Basic(e.Admin)).Expect(t, http.StatusNoContent)
	deadline := time.Now().Add(30 * time.Second)
	for {
		after := cronTasks(t, e)[task]
		if after.ExecTimes > before.ExecTimes {
			if after.Prev == nil {
				t.Fatalf("%s ran but prev is null", task)
			}
			return after
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s did not run: exec_times still %d", task, after.ExecTimes)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

var builtinCronTasks = []string{"repo_health_check", "archive_cleanup", "cleanup_hook_task_table", "cleanup_events", "cleanup_packages", "delete_inactive_accounts",
	"delete_repo_archives", "git_gc_repos", "resync_all_sshkeys", "delete_old_actions", "update_checker", "cleanup_actions",
	"stop_zombie_tasks", "stop_endless_tasks", "cancel_abandoned_jobs"}

func TestCronListAccessAndPaging(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	outsider := apitest.Basic(e.CreateUser("cron-outsider", false))
	admin := apitest.Basic(e.Admin)
	for _, c := range []struct {
		name       string
		cred       apitest.Cred
		list, run  int
		unknownRun int
	}{
		{"anonymous", nil, http.StatusUnauthorized, http.StatusUnauthorized, http.StatusUnauthorized},
		{"outsider", outsider, http.StatusForbidden, http.StatusForbidden, http.StatusForbidden},
		{"admin", admin, http.StatusOK, http.StatusNoContent, http.StatusNotFound},
	} {
		t.Run(c.name, func(t *testing.T) {
			e.Do("GET", "admin/cron", nil, c.cred).Expect(t, c.list)
			e.Do("POST", "admin/cron/update_checker", nil, c.cred).Expect(t, c.run)
			e.Do("POST", "admin/cron/no_such_task", nil, c.cred).Expect(t, c.unknownRun)
		})
	}

	// Every task, in registration order; disabled ones too, with the
	// reference's "-" schedule and no next run.
	var all []*models.Cron
	resp := e.Do("GET", "admin/cron", nil, admin).Expect(t, http.StatusOK)
	resp.JSON(t, &all)
	var names []string
	for _, c := range all {
		names = append(names, c.Name)
	}
	if strings.Join(names, ",") != strings.Join(builtinCronTasks, ",") {
		t.Fatalf("tasks %v, want %v", names, builtinCronTasks)
	}
	if got := resp.Header.Get("X-Total-Count"); got != strconv.Itoa(len(builtinCronTasks)) {
		t.Errorf("X-Total-Count %q", got)
	}
	byName := cronTasks(t, e)
	if c := byName["repo_health_check"]; c.Schedule != "@midnight" {
		t.Errorf("repo_health_check schedule %q", c.Schedule)
	}
	if c := byName["git_gc_repos"]; c.Schedule != "-" || c.Next != nil {
		t.Errorf("disabled git_gc_repos: schedule %q next %v", c.Schedule, c.Next)
	}

	// Pages of 3: the last holds the last task.
	var page []*models.Cron
	last := (len(builtinCronTasks) + 2) / 3
	resp = e.Do("GET", fmt.Sprintf("admin/cron?page=%d&limit=3", last), nil, admin).Expect(t, http.StatusOK)
	resp.JSON(t, &page)
	if len(page) != len(builtinCronTasks)-3*(last-1) || page[len(page)-1].Name != builtinCronTasks[len(builtinCronTasks)-1] {
		t.Fatalf("page %d: %+v", last, page)
	}
	if l := resp.Header.Get("Link"); !strings.Contains(l, `rel="first"`) || !strings.Contains(l, `rel="prev"`) || strings.Contains(l, `rel="next"`) {
		t.Errorf("Link %q", l)
	}
	resp = e.Do("GET", "admin/cron?page=9", nil, admin).Expect(t, http.StatusOK)
	if string(resp.Body) != "[]\n" && string(resp.Body) != "[]" {
		t.Errorf("page past the end: %s", resp.Body)
	}
}

// gitCount runs git count-objects in a bare repository and returns the
// loose object count.
func looseObjects(t *testing.T, dir string) string {
	t.Helper()
	out, err := exec.Command("git", "-C", dir, "count-objects", "-v").CombinedOutput()
	if err != nil {
		t.Fatalf("count-objects: %v %s", err, out)
	}
	for _, l := range strings.Split(string(out), "\n") {
		if v, ok := strings.CutPrefix(l, "count: "); ok {
			return v
		}
	}
	t.Fatalf("count-objects: %s", out)
	return ""
}

func TestCronTasksDoTheirWork(t *testing.T) {
	t.Parallel()
	e := apitest.NewWithConfig(t, func(c *app.Config) {
		c.InactiveAccountAge = 0
		c.ArchiveMaxAge = time.Hour
	})
	admin := apitest.Basic(e.Admin)
	ctx := context.Background()

	roCreateRepo(t, e, admin, map[string]any{"name": "healthy", "auto_init": true, "readme": "Default"})
	roCreateRepo(t, e, admin, map[string]any{"name": "broken", "auto_init": true, "readme": "Default"})
	healthy, err := e.Deps.Git.Path("admin", "healthy")
	if err != nil {
		t.Fatal(err)
	}

	t.Run("git_gc_repos packs loose objects", func(t *testing.T) {
		if n := looseObjects(t, healthy); n == "0" {
			t.Fatal("a new repository has no loose objects to pack")
		}
		runCron(t, e, "git_gc_repos")
		if n := looseObjects(t, healthy); n != "0" {
			t.Fatalf("%s loose objects after git_gc_repos", n)
		}
		// Still whole: the archive (a walk of every object) downloads.
		e.Do("GET", "repos/admin/healthy/archive/main.zip", nil, admin).Expect(t, http.StatusOK)
	})

	t.Run("repo_health_check reports a broken repository", func(t *testing.T) {
		broken, err := e.Deps.Git.Path("admin", "broken")
		if err != nil {
			t.Fatal(err)
		}
		// Lose every object: the branch now names a missing commit.
		if err := os.RemoveAll(filepath.Join(broken, "objects")); err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Join(broken, "objects", "pack"), 0o755); err != nil {
			t.Fatal(err)
		}
		c := runCron(t, e, "repo_health_check")
		if c.Prev == nil || time.Since(time.Time(*c.Prev)) > time.Minute {
			t.Errorf("prev %v", c.Prev)
		}
		notices, _, err := e.DB.Notices().List(ctx, store.Page{Limit: 50})
		if err != nil {
			t.Fatal(err)
		}
		var found, wrong bool
		for _, n := range notices {
			found = found || strings.Contains(n.Description, "admin/broken")
			wrong = wrong || strings.Contains(n.Description, "admin/healthy")
		}
		if !found || wrong {
			t.Fatalf("notices %+v: want admin/broken only", notices)
		}
	})

	t.Run("archive_cleanup and delete_repo_archives remove kept archives", func(t *testing.T) {
		kept := func() []string {
			var files []string
			_ = filepath.Walk(e.Deps.ArchiveDir, func(p string, info os.FileInfo, err error) error {
				if err == nil && !info.IsDir() {
					files = append(files, p)
				}
				return nil
			})
			return files
		}
		first := e.Do("GET", "repos/admin/healthy/archive/main.tar.gz", nil, admin).Expect(t, http.StatusOK)
		e.Do("GET", "repos/admin/healthy/archive/main.zip", nil, admin).Expect(t, http.StatusOK)
		files := kept()
		if len(files) != 2 {
			t.Fatalf("kept archives %v, want the tar.gz and the zip", files)
		}
		// Served again from the kept file, byte for byte.
		again := e.Do("GET", "repos/admin/healthy/archive/main.tar.gz", nil, admin).Expect(t, http.StatusOK)
		if string(again.Body) != string(first.Body) {
			t.Fatal("kept archive differs from the one made")
		}
		// One of them is old; archive_cleanup removes it alone.
		old := time.Now().Add(-2 * time.Hour)
		if err := os.Chtimes(files[0], old, old); err != nil {
			t.Fatal(err)
		}
		runCron(t, e, "archive_cleanup")
		if left := kept(); len(left) != 1 || left[0] != files[1] {
			t.Fatalf("after archive_cleanup: %v, want %s", left, files[1])
		}
		runCron(t, e, "delete_repo_archives")
		if left := kept(); len(left) != 0 {
			t.Fatalf("after delete_repo_archives: %v", left)
		}
		// And made again on demand.
		e.Do("GET", "repos/admin/healthy/archive/main.tar.gz", nil, admin).Expect(t, http.StatusOK)
	})

	t.Run("delete_inactive_accounts deletes never-activated accounts only", func(t *testing.T) {
		inactive := e.CreateUser("never-activated", false)
		active := e.CreateUser("activated", false)
		u := inactive.User
		u.IsActive = false
		if err := e.DB.WithTx(ctx, func(ctx context.Context) error { return e.DB.Users().Update(ctx, u) }); err != nil {
			t.Fatal(err)
		}
		runCron(t, e, "delete_inactive_accounts")
		if _, err := e.DB.Users().FindByID(ctx, inactive.User.ID); err == nil {
			t.Error("inactive account still there")
		}
		if _, err := e.DB.Users().FindByID(ctx, active.User.ID); err != nil {
			t.Errorf("active account: %v", err)
		}
	})

	t.Run("update_checker and resync_all_sshkeys run and change nothing", func(t *testing.T) {
		runCron(t, e, "update_checker")
		runCron(t, e, "resync_all_sshkeys")
	})
}

// TestCronSchedule runs a task on a one-second schedule: exec_times, prev
// and next follow.
func TestCronSchedule(t *testing.T) {
	t.Parallel()
	settings, err := cron.ParseSettings("update_checker=@every 1s;repo_health_check=off")
	if err != nil {
		t.Fatal(err)
	}
	e := apitest.NewWithConfig(t, func(c *app.Config) { c.Cron = settings })
	if err := e.Deps.Cron.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	var c *models.Cron
	for {
		c = cronTasks(t, e)["update_checker"]
		if c.ExecTimes >= 3 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("update_checker ran %d times in 20 s on @every 1s", c.ExecTimes)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if c.Schedule != "@every 1s" || c.Prev == nil || c.Next == nil {
		t.Fatalf("%+v", c)
	}
	prev, next := time.Time(*c.Prev), time.Time(*c.Next)
	if !next.After(prev) || next.Sub(prev) > 3*time.Second || time.Since(prev) > 3*time.Second {
		t.Errorf("prev %s next %s now %s", prev, next, time.Now())
	}
	if h := cronTasks(t, e)["repo_health_check"]; h.Schedule != "-" || h.Next != nil || h.ExecTimes != 0 {
		t.Errorf("disabled repo_health_check: %+v", h)
	}
}
