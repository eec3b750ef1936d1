package apitest_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"repohost/apitest"
	"repohost/impl/app"
	"repohost/impl/events"
	"repohost/models"
)

// TestEventDeadLettersAdmin: a consumer that keeps failing ends with a dead
// letter an admin sees in GET /admin/events/consumers, in the dead-letter
// list and in /metrics, and retries with POST …/retry; the retried job is
// handled once the consumer works again. Only site admins see any of it.
func TestEventDeadLettersAdmin(t *testing.T) {
	t.Parallel()
	var broken atomic.Bool
	broken.Store(true)
	var handled atomic.Int64
	e := apitest.NewWithDeps(t, func(d *app.Deps) {
		opts := d.Events.Options()
		opts.Attempts, opts.Backoff = 3, func(int) time.Duration { return 0 }
		d.Events.SetOptions(opts)
		// A consumer of the test's own, beside the server's.
		d.Events.Register(events.Consumer{Name: "flaky_test", Kinds: []events.Kind{events.IssueOpened},
			Handle: func(context.Context, events.Event) error {
				if broken.Load() {
					return errors.New("the receiving end is down")
				}
				handled.Add(1)
				return nil
			}})
	})
	admin := apitest.Basic(e.Admin)
	user := apitest.Basic(e.CreateUser("queue-user", false))
	e.Do("POST", "user/repos", map[string]any{"name": "q"}, admin).Expect(t, http.StatusCreated)
	e.Do("POST", "repos/admin/q/issues", map[string]any{"title": "one"}, admin).Expect(t, http.StatusCreated)

	var consumers []*models.EventConsumer
	e.Do("GET", "admin/events/consumers", nil, admin).Expect(t, http.StatusOK).JSON(t, &consumers)
	byName := map[string]*models.EventConsumer{}
	var names []string
	for _, c := range consumers {
		byName[c.Name] = c
		names = append(names, c.Name)
	}
	if got := strings.Join(names, ","); got != "flaky_test,log,webhooks,pull_refresh,actions,repo_size,auto_merge,repo_migrate,mirror_sync,push_mirror,notifications,commit_refs" {
		t.Errorf("consumers %s", got)
	}
	if c := byName["flaky_test"]; c == nil || c.Dead != 1 || c.Pending != 0 || c.OldestPending != nil {
		t.Fatalf("flaky_test: %+v", c)
	}
	if c := byName["webhooks"]; c == nil || c.Dead != 0 || c.Pending != 0 {
		t.Errorf("webhooks: %+v", c)
	}

	var dead []*models.EventDeadLetter
	r := e.Do("GET", "admin/events/dead-letters?consumer=flaky_test", nil, admin).Expect(t, http.StatusOK)
	r.JSON(t, &dead)
	if len(dead) != 1 || dead[0].EventKind != string(events.IssueOpened) || dead[0].Attempts != 3 ||
		dead[0].LastError != "the receiving end is down" || dead[0].RepoID == 0 || r.Header.Get("X-Total-Count") != "1" {
		t.Fatalf("dead letters: %+v (total %s)", dead, r.Header.Get("X-Total-Count"))
	}
	if r := e.Do("GET", "admin/events/dead-letters?consumer=webhooks", nil, admin).Expect(t, http.StatusOK); string(r.Body) != "[]\n" && string(r.Body) != "[]" {
		t.Errorf("webhooks' dead letters: %s", r.Body)
	}

	// What an operator scrapes.
	resp, err := http.Get(e.URL + "metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, want := range []string{`repohost_event_jobs_dead{consumer="flaky_test"} 1`, `repohost_event_jobs_pending{consumer="webhooks"} 0`,
		`repohost_event_jobs_retrying{consumer="flaky_test"} 0`, `repohost_event_jobs_oldest_pending_age_seconds{consumer="log"} 0`} {
		if !strings.Contains(string(body), want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}

	// Nobody else sees or retries anything.
	for _, cred := range []apitest.Cred{user, nil} {
		want := http.StatusForbidden
		if cred == nil {
			want = http.StatusUnauthorized
		}
		e.Do("GET", "admin/events/consumers", nil, cred).Expect(t, want)
		e.Do("GET", "admin/events/dead-letters", nil, cred).Expect(t, want)
		e.Do("POST", "admin/events/dead-letters/"+itoa(dead[0].ID)+"/retry", nil, cred).Expect(t, want)
	}

	broken.Store(false)
	deadID := dead[0].ID
	e.Do("POST", "admin/events/dead-letters/"+itoa(deadID)+"/retry", nil, admin).Expect(t, http.StatusNoContent)
	// Settled by the next request: handled, no dead letter left.
	e.Do("GET", "admin/events/dead-letters", nil, admin).Expect(t, http.StatusOK).JSON(t, &dead)
	if len(dead) != 0 || handled.Load() != 1 {
		t.Errorf("after the retry: %d dead letters, handled %d times", len(dead), handled.Load())
	}
	// Retried already: no such dead letter any more.
	e.Do("POST", "admin/events/dead-letters/"+itoa(deadID)+"/retry", nil, admin).Expect(t, http.StatusNotFound)
	e.Do("POST", "admin/events/dead-letters/999999/retry", nil, admin).Expect(t, http.StatusNotFound)
}

// TestCleanupEventsKeepsUnfinishedOnes: the retention task deletes events
// past the retention that every consumer is done with, and no other.
func TestCleanupEventsKeepsUnfinishedOnes(t *testing.T) {
	t.Parallel()
	e := apitest.NewWithDeps(t, func(d *app.Deps) { d.Config.EventRetention = 0 })
	admin := apitest.Basic(e.Admin)
	e.Do("POST", "user/repos", map[string]any{"name": "r"}, admin).Expect(t, http.StatusCreated)
	e.Do("POST", "repos/admin/r/issues", map[string]any{"title": "x"}, admin).Expect(t, http.StatusCreated)
	ctx := context.Background()
	before, err := e.DB.Events().ListAfter(ctx, 0, 1000)
	if err != nil || len(before) == 0 {
		t.Fatalf("events: %d, %v", len(before), err)
	}
	// Event times have second precision: the cutoff (now, with a
	// retention of 0) must pass them.
	time.Sleep(1100 * time.Millisecond)
	runCron(t, e, "cleanup_events")
	after, err := e.DB.Events().ListAfter(ctx, 0, 1000)
	if err != nil {
		t.Fatal(err)
	}
	// The event of the run's own record may be newer; none of before is
	// left.
	for _, ev := range after {
		if ev.ID <= before[len(before)-1].ID {
			t.Errorf("event %d (%s) was not pruned", ev.ID, ev.Kind)
		}
	}
}
