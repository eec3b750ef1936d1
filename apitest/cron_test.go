package apitest_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
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
	"repohost/store/objects"
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
			if time.Time(after.Prev).IsZero() {
				t.Fatalf("%s ran but prev is the zero time", task)
			}
			return after
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s did not run: exec_times still %d", task, after.ExecTimes)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// builtinCronTasks are the reference's tasks that have work to do on this
// server, in its registration order; the SDK's TestAdminCronTasks expects
// more than 15.
var builtinCronTasks = []string{"update_mirrors", "repo_health_check", "check_repo_stats", "archive_cleanup", "cleanup_hook_task_table", "cleanup_events", "cleanup_packages",
	"delete_inactive_accounts", "delete_repo_archives", "git_gc_repos", "reinit_missing_repos", "delete_missing_repos",
	"delete_old_actions", "delete_old_system_notices", "gc_lfs", "cleanup_actions", "stop_zombie_tasks", "stop_endless_tasks", "cancel_abandoned_jobs"}

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
			e.Do("POST", "admin/cron/delete_old_system_notices", nil, c.cred).Expect(t, c.run)
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
	if c := byName["git_gc_repos"]; c.Schedule != "-" || !time.Time(c.Next).IsZero() {
		t.Errorf("disabled git_gc_repos: schedule %q next %v", c.Schedule, c.Next)
	}
	// As the reference sends them: next and prev are always date-times,
	// the zero time for a task that is off or never ran, never null or ""
	// (a Go client cannot decode either as a time).
	raw := map[string]string{}
	var rows []map[string]any
	resp.JSON(t, &rows)
	for _, row := range rows {
		for _, k := range []string{"next", "prev"} {
			v, ok := row[k].(string)
			if !ok {
				t.Fatalf("%s of %v is %#v, want a date-time string", k, row["name"], row[k])
			}
			if _, err := time.Parse(time.RFC3339, v); err != nil {
				t.Fatalf("%s of %v: %v", k, row["name"], err)
			}
			raw[row["name"].(string)+"."+k] = v
		}
	}
	if raw["git_gc_repos.next"] != "0001-01-01T00:00:00Z" || raw["repo_health_check.prev"] != "0001-01-01T00:00:00Z" {
		t.Errorf("zero times rendered as %q and %q", raw["git_gc_repos.next"], raw["repo_health_check.prev"])
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
		// A push killed half way left its quarantine behind.
		left := filepath.Join(healthy, "objects", "incoming-killed", "objects", "pack")
		if err := os.MkdirAll(left, 0o755); err != nil {
			t.Fatal(err)
		}
		runCron(t, e, "git_gc_repos")
		if n := looseObjects(t, healthy); n != "0" {
			t.Fatalf("%s loose objects after git_gc_repos", n)
		}
		if _, err := os.Stat(filepath.Join(healthy, "objects", "incoming-killed")); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("the stale quarantine is still there: %v", err)
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
		if time.Since(time.Time(c.Prev)) > time.Minute {
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
		kept := func() []string { return apitest.Keys(t, e.Deps.Objects.Archives, "") }
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
		local := e.Deps.Objects.Archives.(objects.Local)
		if err := os.Chtimes(filepath.Join(local.Root, files[0]), old, old); err != nil {
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

	hasNotice := func(t *testing.T, kind, text string) bool {
		t.Helper()
		notices, _, err := e.DB.Notices().List(ctx, store.Page{Limit: 50})
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range notices {
			if n.Type == kind && strings.Contains(n.Description, text) {
				return true
			}
		}
		return false
	}

	t.Run("check_repo_stats recounts stored counters", func(t *testing.T) {
		e.Do("POST", "repos/admin/healthy/issues", map[string]any{"title": "counted"}, admin).Expect(t, http.StatusCreated)
		e.Do("POST", "repos/admin/healthy/issues/1/comments", map[string]any{"body": "one"}, admin).Expect(t, http.StatusCreated)
		pool, err := e.DB.SQL()
		if err != nil {
			t.Fatal(err)
		}
		// What a crash or a hand-edited database leaves behind.
		for _, q := range []string{`UPDATE repositories SET num_issues = 7, num_closed_issues = 3 WHERE name = 'healthy'`,
			`UPDATE issues SET num_comments = 9`} {
			if _, err := pool.Exec(q); err != nil {
				t.Fatal(err)
			}
		}
		bad, err := e.DB.Issues().CheckCounters(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if bad["repositories.num_issues"] == 0 || bad["issues.num_comments"] == 0 {
			t.Fatalf("the counters were not broken: %v", bad)
		}
		runCron(t, e, "check_repo_stats")
		if bad, err = e.DB.Issues().CheckCounters(ctx); err != nil {
			t.Fatal(err)
		}
		for name, n := range bad {
			if n != 0 {
				t.Errorf("after check_repo_stats %s is wrong in %d rows", name, n)
			}
		}
		var r models.Repository
		e.Do("GET", "repos/admin/healthy", nil, admin).Expect(t, http.StatusOK).JSON(t, &r)
		if r.OpenIssues != 1 {
			t.Errorf("open_issues_count %d, want 1", r.OpenIssues)
		}
		var is models.Issue
		e.Do("GET", "repos/admin/healthy/issues/1", nil, admin).Expect(t, http.StatusOK).JSON(t, &is)
		if is.Comments != 1 {
			t.Errorf("comments %d, want 1", is.Comments)
		}
		if !hasNotice(t, "check_repo_stats", "repositories.num_issues: 1") {
			t.Error("no notice of the corrected counters")
		}
	})

	t.Run("reinit_missing_repos makes a missing git directory again", func(t *testing.T) {
		roCreateRepo(t, e, admin, map[string]any{"name": "lost", "auto_init": true})
		e.Do("POST", "repos/admin/lost/issues", map[string]any{"title": "kept"}, admin).Expect(t, http.StatusCreated)
		dir, err := e.Deps.Git.Path("admin", "lost")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.RemoveAll(dir); err != nil {
			t.Fatal(err)
		}
		runCron(t, e, "reinit_missing_repos")
		if _, err := os.Stat(filepath.Join(dir, "HEAD")); err != nil {
			t.Fatalf("no git directory after reinit_missing_repos: %v", err)
		}
		var r models.Repository
		e.Do("GET", "repos/admin/lost", nil, admin).Expect(t, http.StatusOK).JSON(t, &r)
		if !r.Empty {
			t.Error("a re-made repository is not empty")
		}
		e.Do("GET", "repos/admin/lost/issues/1", nil, admin).Expect(t, http.StatusOK)
		if !hasNotice(t, "reinit_missing_repos", "admin/lost") {
			t.Error("no notice of the re-made repository")
		}
	})

	t.Run("delete_missing_repos deletes the rows of missing git directories only", func(t *testing.T) {
		roCreateRepo(t, e, admin, map[string]any{"name": "vanished", "auto_init": true})
		dir, err := e.Deps.Git.Path("admin", "vanished")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.RemoveAll(dir); err != nil {
			t.Fatal(err)
		}
		runCron(t, e, "delete_missing_repos")
		e.Do("GET", "repos/admin/vanished", nil, admin).Expect(t, http.StatusNotFound)
		for _, kept := range []string{"healthy", "broken", "lost"} {
			e.Do("GET", "repos/admin/"+kept, nil, admin).Expect(t, http.StatusOK)
		}
		if !hasNotice(t, "delete_missing_repos", "admin/vanished") {
			t.Error("no notice of the deleted repository")
		}
	})

	t.Run("delete_old_system_notices deletes notices older than a year", func(t *testing.T) {
		old := &store.Notice{Type: "test", Description: "an old notice", CreatedAt: time.Now().Add(-400 * 24 * time.Hour)}
		if err := e.DB.Notices().Create(ctx, old); err != nil {
			t.Fatal(err)
		}
		runCron(t, e, "delete_old_system_notices")
		if hasNotice(t, "test", "an old notice") {
			t.Error("the old notice is still there")
		}
		if !hasNotice(t, "delete_missing_repos", "admin/vanished") {
			t.Error("a recent notice was deleted")
		}
	})
}

// TestCronSchedule runs a task on a one-second schedule: exec_times, prev
// and next follow.
func TestCronSchedule(t *testing.T) {
	t.Parallel()
	settings, err := cron.ParseSettings("delete_old_system_notices=@every 1s;repo_health_check=off")
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
		c = cronTasks(t, e)["delete_old_system_notices"]
		if c.ExecTimes >= 3 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("delete_old_system_notices ran %d times in 20 s on @every 1s", c.ExecTimes)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if c.Schedule != "@every 1s" || time.Time(c.Prev).IsZero() || time.Time(c.Next).IsZero() {
		t.Fatalf("%+v", c)
	}
	prev, next := time.Time(c.Prev), time.Time(c.Next)
	if !next.After(prev) || next.Sub(prev) > 3*time.Second || time.Since(prev) > 3*time.Second {
		t.Errorf("prev %s next %s now %s", prev, next, time.Now())
	}
	if h := cronTasks(t, e)["repo_health_check"]; h.Schedule != "-" || !time.Time(h.Next).IsZero() || h.ExecTimes != 0 {
		t.Errorf("disabled repo_health_check: %+v", h)
	}
}
