// Package cron runs the server's maintenance tasks on their schedules.
//
// Every server process on one database runs the same scheduler over the
// same rows (store.CronStore): a task is due when its row says so, and the
// process that claims it (one conditional UPDATE, which exactly one of
// several racing processes wins) runs it, holding a lease that it renews
// while the task runs. A process that dies stops renewing; once its lease
// has run out another process takes the task. Counts and times live in the
// row, so GET /admin/cron answers the same on every process.
package cron

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sort"
	"strings"
	"sync"
	"time"

	robfig "github.com/robfig/cron/v3"

	"repohost/store"
)

// Task is one maintenance job. Areas hand their jobs over as a Task; the
// list of every task the server runs is impl.CronTasks.
type Task struct {
	// Name is what GET /admin/cron lists and POST /admin/cron/{task} runs
	// (the reference's task names).
	Name string
	// Schedule is the default: "@every 24h", "@midnight", "@hourly" or a
	// five-field cron expression; configuration may replace it.
	Schedule string
	// Enabled tells whether the task runs on its schedule by default
	// (a disabled task still runs on demand).
	Enabled bool
	// Run does the work; ctx ends when the server shuts down.
	Run func(ctx context.Context) error
}

// Setting is one task's configuration: a schedule replacing the default,
// or only on/off.
type Setting struct {
	Enabled  *bool
	Schedule string
}

// ParseSettings reads --cron / REPOHOST_CRON: "name=SPEC;name=off;name=on",
// where SPEC is a schedule (which also enables the task). Schedules may
// hold commas (cron lists), so entries are separated by semicolons.
func ParseSettings(s string) (map[string]Setting, error) {
	out := map[string]Setting{}
	for _, item := range strings.Split(s, ";") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		name, value, ok := strings.Cut(item, "=")
		name, value = strings.TrimSpace(name), strings.TrimSpace(value)
		if !ok || name == "" || value == "" {
			return nil, fmt.Errorf("cron setting %q: want name=SCHEDULE, name=on or name=off", item)
		}
		var st Setting
		switch value {
		case "on", "off":
			on := value == "on"
			st.Enabled = &on
		default:
			if _, err := parser.Parse(value); err != nil {
				return nil, fmt.Errorf("cron setting %q: %w", item, err)
			}
			on := true
			st.Enabled, st.Schedule = &on, value
		}
		out[name] = st
	}
	return out, nil
}

// parser reads the reference's schedule syntax: five-field cron
// expressions and the descriptors (@every, @midnight, @hourly, …).
var parser = robfig.NewParser(robfig.Minute | robfig.Hour | robfig.Dom | robfig.Month | robfig.Dow | robfig.Descriptor)

// Options configure a Scheduler.
type Options struct {
	// Lease is how long a claimed run stays this process's without a
	// renewal: the longest a dead process keeps a task from the others.
	// DefaultLease when zero.
	Lease time.Duration
	// Settings override tasks' defaults by name.
	Settings map[string]Setting
	// OnRun, when set, hears of every finished run (metrics).
	OnRun func(task string, took time.Duration, err error)
	// Now is the scheduler's clock; time.Now when nil. Schedules need
	// sub-second time, which store.Clock (whole seconds) does not give.
	Now func() time.Time
}

// DefaultLease lets a crashed process hold its tasks for at most a minute.
const DefaultLease = time.Minute

// ErrUnknownTask is RunNow's answer for a name no task has.
var ErrUnknownTask = errors.New("unknown cron task")

type entry struct {
	Task
	spec     string          // "" when not scheduled
	schedule robfig.Schedule // nil when not scheduled
}

// Scheduler runs the registered tasks.
type Scheduler struct {
	store  store.CronStore
	log    *slog.Logger
	opts   Options
	holder string

	mu      sync.Mutex
	entries []*entry
	byName  map[string]*entry
	base    context.Context // lives as long as Start's context
	wake    chan struct{}
	runs    sync.WaitGroup
	started bool
}

// New builds a scheduler over st; register tasks, then Start it.
func New(st store.CronStore, log *slog.Logger, opts Options) *Scheduler {
	if opts.Lease <= 0 {
		opts.Lease = DefaultLease
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	host, _ := os.Hostname()
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return &Scheduler{store: st, log: log, opts: opts,
		// Unique per process, and telling an operator which one it is.
		holder: fmt.Sprintf("%s/%d/%s", host, os.Getpid(), hex.EncodeToString(b)),
		byName: map[string]*entry{}, base: context.Background(), wake: make(chan struct{}, 1)}
}

// Holder names this process in the leases it takes.
func (s *Scheduler) Holder() string { return s.holder }

// Register adds t, with its configured schedule.
func (s *Scheduler) Register(t Task) error {
	if t.Name == "" || t.Run == nil {
		return errors.New("cron task needs a name and a Run function")
	}
	e := &entry{Task: t}
	enabled, spec := t.Enabled, t.Schedule
	if st, ok := s.opts.Settings[t.Name]; ok {
		if st.Enabled != nil {
			enabled = *st.Enabled
		}
		if st.Schedule != "" {
			spec = st.Schedule
		}
	}
	if enabled {
		sched, err := parser.Parse(spec)
		if err != nil {
			return fmt.Errorf("cron task %s: schedule %q: %w", t.Name, spec, err)
		}
		e.spec, e.schedule = spec, sched
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, dup := s.byName[t.Name]; dup {
		return fmt.Errorf("cron task %s registered twice", t.Name)
	}
	s.entries = append(s.entries, e)
	s.byName[t.Name] = e
	return nil
}

// CheckSettings fails when the configuration names a task nobody
// registered (a typo would otherwise be ignored silently).
func (s *Scheduler) CheckSettings() error {
	var unknown []string
	for name := range s.opts.Settings {
		if _, ok := s.byName[name]; !ok {
			unknown = append(unknown, name)
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		return fmt.Errorf("cron settings name unknown tasks: %s", strings.Join(unknown, ", "))
	}
	return nil
}

// ensure creates the rows of every task and brings their schedules up to
// this process's configuration.
func (s *Scheduler) ensure(ctx context.Context) error {
	now := s.opts.Now()
	for _, e := range s.entries {
		var next *time.Time
		if e.schedule != nil {
			n := e.schedule.Next(now)
			next = &n
		}
		if err := s.store.Ensure(ctx, e.Name, e.spec, next); err != nil {
			return err
		}
	}
	return nil
}

// Start creates the tasks' rows and runs the schedule until ctx ends.
func (s *Scheduler) Start(ctx context.Context) error {
	if err := s.ensure(ctx); err != nil {
		return err
	}
	s.mu.Lock()
	s.base, s.started = ctx, true
	s.mu.Unlock()
	go s.loop(ctx)
	return nil
}

// Wait returns once every run this process started has finished (after
// Start's context ended, for a clean shutdown).
func (s *Scheduler) Wait() {
	if s != nil {
		s.runs.Wait()
	}
}

// idleWait bounds a sleep, so a schedule changed by another process is
// noticed; retryWait spaces claims of a due task another process holds.
const (
	idleWait  = 30 * time.Second
	retryWait = 500 * time.Millisecond
)

func (s *Scheduler) loop(ctx context.Context) {
	for {
		wait := s.tick(ctx)
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		case <-s.wake:
			t.Stop()
		}
	}
}

// tick claims and starts every due task, and says how long to sleep.
func (s *Scheduler) tick(ctx context.Context) time.Duration {
	rows, err := s.store.List(ctx)
	if err != nil {
		if ctx.Err() == nil {
			s.log.Warn("cron: read tasks", "err", err)
		}
		return 5 * time.Second
	}
	byName := make(map[string]*store.CronTask, len(rows))
	for _, r := range rows {
		byName[r.Name] = r
	}
	now := s.opts.Now()
	wait := idleWait
	for _, e := range s.entries {
		if e.schedule == nil {
			continue
		}
		row := byName[e.Name]
		if row == nil || row.NextRun == nil || row.Schedule != e.spec {
			// New, or scheduled by a process configured otherwise.
			next := e.schedule.Next(now)
			if err := s.store.Ensure(ctx, e.Name, e.spec, &next); err != nil {
				s.log.Warn("cron: schedule task", "task", e.Name, "err", err)
			}
			wait = min(wait, max(next.Sub(now), retryWait))
			continue
		}
		if until := row.NextRun.Sub(now); until > 0 {
			wait = min(wait, until)
			continue
		}
		next := e.schedule.Next(now)
		ok, err := s.store.ClaimDue(ctx, e.Name, s.holder, now, next, now.Add(s.opts.Lease))
		switch {
		case err != nil:
			if ctx.Err() == nil {
				s.log.Warn("cron: claim task", "task", e.Name, "err", err)
			}
			wait = min(wait, retryWait)
		case ok:
			s.runs.Add(1)
			go s.execute(ctx, e, now)
			wait = min(wait, max(next.Sub(now), retryWait))
		default:
			// Another process runs it, or has just claimed it: look
			// again soon, so a lease that runs out is taken at once.
			wait = min(wait, retryWait)
		}
	}
	return wait
}

// RunNow starts name in the background, whatever its schedule (disabled
// tasks too); a run already under way anywhere makes it a no-op, as the
// reference skips it.
func (s *Scheduler) RunNow(name string) error {
	s.mu.Lock()
	e, ok := s.byName[name]
	base := s.base
	s.mu.Unlock()
	if !ok {
		return ErrUnknownTask
	}
	s.runs.Add(1)
	go func() {
		now := s.opts.Now()
		claimed, err := s.store.ClaimNow(base, e.Name, s.holder, now, now.Add(s.opts.Lease))
		if err == nil && !claimed {
			// The row may not exist yet (a scheduler never started).
			if err = s.ensureOne(base, e, now); err == nil {
				claimed, err = s.store.ClaimNow(base, e.Name, s.holder, now, now.Add(s.opts.Lease))
			}
		}
		switch {
		case err != nil:
			s.log.Warn("cron: claim task", "task", e.Name, "err", err)
			s.runs.Done()
		case !claimed:
			s.log.Info("cron: task already running, run on demand skipped", "task", e.Name)
			s.runs.Done()
		default:
			s.execute(base, e, now)
		}
	}()
	return nil
}

func (s *Scheduler) ensureOne(ctx context.Context, e *entry, now time.Time) error {
	var next *time.Time
	if e.schedule != nil {
		n := e.schedule.Next(now)
		next = &n
	}
	return s.store.Ensure(ctx, e.Name, e.spec, next)
}

// execute runs e under the lease this process has just claimed; it calls
// s.runs.Done when finished.
func (s *Scheduler) execute(ctx context.Context, e *entry, started time.Time) {
	defer s.runs.Done()
	runCtx, cancel := context.WithCancel(ctx)
	renewed := make(chan struct{})
	go func() {
		defer close(renewed)
		s.renew(runCtx, e.Name)
	}()
	s.log.Info("cron: task started", "task", e.Name, "holder", s.holder)
	err := runSafely(runCtx, e.Run)
	cancel()
	<-renewed
	took := s.opts.Now().Sub(started)
	msg := ""
	if err != nil {
		msg = err.Error()
		s.log.Error("cron: task failed", "task", e.Name, "duration_ms", took.Milliseconds(), "err", err)
	} else {
		s.log.Info("cron: task finished", "task", e.Name, "duration_ms", took.Milliseconds())
	}
	// Recorded even when the server is shutting down: the run happened.
	fctx, fcancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer fcancel()
	if ferr := s.store.Finish(fctx, e.Name, s.holder, started, msg); ferr != nil {
		s.log.Error("cron: record task run", "task", e.Name, "err", ferr)
	}
	if s.opts.OnRun != nil {
		s.opts.OnRun(e.Name, took, err)
	}
	// The finished run may free a due task for this process.
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// renew keeps the lease while the task runs, three renewals per lease.
func (s *Scheduler) renew(ctx context.Context, name string) {
	t := time.NewTicker(s.opts.Lease / 3)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			ok, err := s.store.Renew(ctx, name, s.holder, s.opts.Now().Add(s.opts.Lease))
			if err != nil && ctx.Err() == nil {
				s.log.Warn("cron: renew lease", "task", name, "err", err)
			} else if err == nil && !ok {
				s.log.Warn("cron: lease lost to another process; this run continues", "task", name)
			}
		}
	}
}

func runSafely(ctx context.Context, run func(context.Context) error) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = fmt.Errorf("panic: %v", v)
		}
	}()
	return run(ctx)
}

// Status is one task as GET /admin/cron shows it.
type Status struct {
	Name string
	// Schedule is the spec it runs on, "-" when it is not scheduled (the
	// reference's rendering of a disabled task).
	Schedule  string
	Next      *time.Time // nil when not scheduled
	Prev      *time.Time // nil when it never ran
	ExecTimes int64
	LastError string
}

// List returns every registered task, in registration order, with the
// state every process shares.
func (s *Scheduler) List(ctx context.Context) ([]Status, error) {
	rows, err := s.store.List(ctx)
	if err != nil {
		return nil, err
	}
	byName := make(map[string]*store.CronTask, len(rows))
	for _, r := range rows {
		byName[r.Name] = r
	}
	s.mu.Lock()
	entries := append([]*entry(nil), s.entries...)
	s.mu.Unlock()
	out := make([]Status, 0, len(entries))
	for _, e := range entries {
		st := Status{Name: e.Name, Schedule: "-"}
		if e.schedule != nil {
			st.Schedule = e.spec
		}
		if r := byName[e.Name]; r != nil {
			st.Prev, st.ExecTimes, st.LastError = r.PrevRun, r.ExecTimes, r.LastError
			if e.schedule != nil {
				st.Next = r.NextRun
			}
		}
		out = append(out, st)
	}
	return out, nil
}
