package apitest_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"repohost/apitest"
	"repohost/impl/refs"
)

// TestGitGCAndRefChangesDoNotOverlap: maintenance of a repository (the
// git_gc_repos task) and its ref changes (a push, a branch created through
// the API) exclude one another: a ref change waits while maintenance
// runs, and git gc waits while a ref change (or a push's objects) is under
// way.
func TestGitGCAndRefChangesDoNotOverlap(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	alice := e.CreateUser("alice", false)
	ac := apitest.Basic(alice)
	roCreateRepo(t, e, ac, map[string]any{"name": "r", "auto_init": true})
	ctx := context.Background()
	r, err := e.DB.Repos().FindByName(ctx, alice.User.ID, "r")
	if err != nil {
		t.Fatal(err)
	}
	svc := refs.New(e.Deps)
	const hold = 400 * time.Millisecond

	// Maintenance under way: the branch waits for it.
	inMaintenance, endMaintenance, maintained := make(chan struct{}), make(chan struct{}), make(chan error, 1)
	go func() {
		maintained <- svc.Maintain(ctx, r, func() error {
			close(inMaintenance)
			<-endMaintenance
			return nil
		})
	}()
	<-inMaintenance
	created := make(chan int, 1)
	go func() {
		created <- e.DoFor(t, "POST", "repos/alice/r/branches", map[string]any{"new_branch_name": "b1", "old_branch_name": "main"}, ac).Status
	}()
	select {
	case status := <-created:
		t.Fatalf("branch created (%d) during maintenance", status)
	case <-time.After(hold):
	}
	if ok, err := e.Deps.Git.HasBranch("alice", "r", "b1"); err != nil || ok {
		t.Fatalf("branch b1 exists during maintenance (%v, %v)", ok, err)
	}
	close(endMaintenance)
	if err := <-maintained; err != nil {
		t.Fatal(err)
	}
	if status := <-created; status != http.StatusCreated {
		t.Fatalf("branch after maintenance: %d", status)
	}

	// A ref change under way (a push between its objects and its refs):
	// git gc waits for it.
	release, err := svc.Hold(ctx, r)
	if err != nil {
		t.Fatal(err)
	}
	before := cronTasks(t, e)["git_gc_repos"].ExecTimes
	e.Do("POST", "admin/cron/git_gc_repos", nil, apitest.Basic(e.Admin)).Expect(t, http.StatusNoContent)
	time.Sleep(hold)
	if n := cronTasks(t, e)["git_gc_repos"].ExecTimes; n != before {
		release()
		t.Fatalf("git_gc_repos finished (%d runs) while a ref change held the repository", n)
	}
	release()
	deadline := time.Now().Add(30 * time.Second)
	for cronTasks(t, e)["git_gc_repos"].ExecTimes == before {
		if time.Now().After(deadline) {
			t.Fatal("git_gc_repos did not finish after the ref change")
		}
		time.Sleep(20 * time.Millisecond)
	}
	tasks, err := e.DB.Cron().List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range tasks {
		if c.Name == "git_gc_repos" && c.LastError != "" {
			t.Fatalf("git_gc_repos failed: %s", c.LastError)
		}
	}
	// Both still work on the repository afterwards.
	e.Do("POST", "repos/alice/r/branches", map[string]any{"new_branch_name": "b2", "old_branch_name": "b1"}, ac).Expect(t, http.StatusCreated)
}
