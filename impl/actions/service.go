// Package actions runs workflows: runners register at a scope (the site,
// an owner or a repository) and speak the runner protocol (protocol.go);
// pushes turn workflow files into runs of jobs (trigger.go); the REST
// routes list and manage runners, runs and jobs at every scope.
package actions

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"repohost/impl/apierr"
	"repohost/impl/app"
	"repohost/impl/auth"
	"repohost/impl/events"
	"repohost/store"
)

// Service is the only place that writes runners, runs, jobs and tasks.
type Service struct{ *app.Deps }

// Scope is where runners and registration tokens belong: Site for the
// whole site (admin routes), else an owner (user or organization) or a
// repository (RepoID set; OwnerID then names the repository's owner, whose
// runners the repository may use).
type Scope struct {
	Site    bool
	OwnerID int64
	RepoID  int64
}

// registeredAt is the (owner, repo) pair a runner registered through this
// scope gets: a repository's runners belong to no owner.
func (sc Scope) registeredAt() (ownerID, repoID int64) {
	switch {
	case sc.Site:
		return 0, 0
	case sc.RepoID != 0:
		return 0, sc.RepoID
	}
	return sc.OwnerID, 0
}

// edits tells whether r was registered at exactly this scope (any runner
// for the site's admins), the reference's rule for reading, changing and
// deleting one runner.
func (sc Scope) edits(r *store.ActionRunner) bool {
	if sc.Site {
		return true
	}
	owner, repo := sc.registeredAt()
	return r.OwnerID == owner && r.RepoID == repo
}

// Runner is a runner as the API shows it.
type Runner struct {
	*store.ActionRunner
	Online bool
	Busy   bool
}

// Runner contact thresholds: the reference's offline and idle times.
const (
	runnerOfflineAfter = time.Minute
	runnerIdleAfter    = 10 * time.Second
)

func (s Service) view(r *store.ActionRunner, busy bool) *Runner {
	now := s.Clock.Now()
	online := r.LastOnline != nil && now.Sub(*r.LastOnline) < runnerOfflineAfter
	return &Runner{ActionRunner: r, Online: online, Busy: busy}
}

// errRunnerNotFound is the reference's answer for a runner id that is not
// a number, not there, or not of the caller's scope.
func errRunnerNotFound() error { return apierr.NotFound("Runner not found") }

func randomSecret() (string, error) {
	b := make([]byte, 20)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return hex.EncodeToString(b), nil
}

// RegistrationToken is sc's active registration token, made when there is
// none; the same one comes back until it is replaced.
func (s Service) RegistrationToken(ctx context.Context, sc Scope) (string, error) {
	owner, repo := sc.registeredAt()
	var token string
	err := s.Store.WithTx(ctx, func(ctx context.Context) error {
		t, err := s.Store.Actions().ActiveRunnerToken(ctx, owner, repo)
		if err == nil {
			token = t.Token
			return nil
		}
		if !errors.Is(err, store.ErrNotFound) {
			return err
		}
		secret, err := randomSecret()
		if err != nil {
			return err
		}
		token = secret
		return s.Store.Actions().CreateRunnerToken(ctx, &store.ActionRunnerToken{Token: secret, OwnerID: owner, RepoID: repo, IsActive: true, CreatedAt: s.Clock.Now()})
	})
	return token, err
}

// ListRunners lists the runners sc may use: a repository its own, its
// owner's and the site's; an owner its own and the site's; the site all.
func (s Service) ListRunners(ctx context.Context, sc Scope, disabled *bool, p store.Page) ([]*Runner, int64, error) {
	filter := store.RunnerScope{}
	if !sc.Site {
		filter = store.RunnerScope{OwnerID: sc.OwnerID, RepoID: sc.RepoID}
	}
	rs, total, err := s.Store.Actions().ListRunners(ctx, filter, disabled, p)
	if err != nil {
		return nil, 0, err
	}
	ids := make([]int64, len(rs))
	for i, r := range rs {
		ids[i] = r.ID
	}
	busy, err := s.Store.Actions().BusyRunners(ctx, ids)
	if err != nil {
		return nil, 0, err
	}
	out := make([]*Runner, len(rs))
	for i, r := range rs {
		out[i] = s.view(r, busy[r.ID])
	}
	return out, total, nil
}

// findRunner reads the runner the path's runner_id names, if sc edits it.
func (s Service) findRunner(ctx context.Context, sc Scope, id string) (*store.ActionRunner, error) {
	n, err := strconv.ParseInt(id, 10, 64)
	if err != nil || n <= 0 {
		return nil, errRunnerNotFound()
	}
	r, err := s.Store.Actions().FindRunner(ctx, n)
	if errors.Is(err, store.ErrNotFound) || (err == nil && !sc.edits(r)) {
		return nil, errRunnerNotFound()
	}
	return r, err
}

// GetRunner is one runner registered at sc.
func (s Service) GetRunner(ctx context.Context, sc Scope, id string) (*Runner, error) {
	r, err := s.findRunner(ctx, sc, id)
	if err != nil {
		return nil, err
	}
	busy, err := s.Store.Actions().BusyRunners(ctx, []int64{r.ID})
	if err != nil {
		return nil, err
	}
	return s.view(r, busy[r.ID]), nil
}

// SetRunnerDisabled enables or disables a runner of sc; a disabled runner
// gets no tasks.
func (s Service) SetRunnerDisabled(ctx context.Context, sc Scope, id string, disabled bool) (*Runner, error) {
	r, err := s.findRunner(ctx, sc, id)
	if err != nil {
		return nil, err
	}
	if err := s.Store.Actions().UpdateRunner(ctx, r.ID, map[string]any{"disabled": disabled, "updated_at": s.Clock.Now()}); err != nil {
		return nil, err
	}
	return s.GetRunner(ctx, Scope{Site: true}, strconv.FormatInt(r.ID, 10))
}

// DeleteRunner removes a runner of sc; its token stops working.
func (s Service) DeleteRunner(ctx context.Context, sc Scope, id string) error {
	r, err := s.findRunner(ctx, sc, id)
	if err != nil {
		return err
	}
	return s.Store.Actions().DeleteRunner(ctx, r.ID)
}

// RegisterInput is what a runner sends to register.
type RegisterInput struct {
	Token     string
	Name      string
	Version   string
	Labels    []string
	Ephemeral bool
}

// ErrBadRegistration is a registration token that is unknown or replaced.
var ErrBadRegistration = errors.New("runner registration token is not valid")

// Register makes a runner at the scope of in.Token and returns it with the
// secret it authenticates with from now on (only its hash is kept).
func (s Service) Register(ctx context.Context, in RegisterInput) (*store.ActionRunner, string, error) {
	t, err := s.Store.Actions().FindRunnerToken(ctx, in.Token)
	if errors.Is(err, store.ErrNotFound) || (err == nil && !t.IsActive) {
		return nil, "", ErrBadRegistration
	}
	if err != nil {
		return nil, "", err
	}
	secret, err := randomSecret()
	if err != nil {
		return nil, "", err
	}
	uuid, err := newUUID()
	if err != nil {
		return nil, "", err
	}
	now := s.Clock.Now()
	name := in.Name
	if name == "" {
		name = "runner-" + uuid[:8]
	}
	r := &store.ActionRunner{UUID: uuid, Name: name, OwnerID: t.OwnerID, RepoID: t.RepoID,
		TokenHash: auth.HashToken(secret), TokenLastEight: secret[len(secret)-8:], Version: in.Version,
		Labels: cleanLabels(in.Labels), Ephemeral: in.Ephemeral, LastOnline: &now, CreatedAt: now, UpdatedAt: now}
	if err := s.Store.Actions().CreateRunner(ctx, r); err != nil {
		return nil, "", err
	}
	return r, secret, nil
}

// jsonText is v as the JSON text a serialized column holds, for updates
// that name columns.
func jsonText(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func newUUID() (string, error) {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b)
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:], nil
}

func cleanLabels(labels []string) []string {
	out := []string{}
	for _, l := range labels {
		l = strings.TrimSpace(l)
		if l != "" && !slices.Contains(out, l) {
			out = append(out, l)
		}
	}
	return out
}

// labelName is a runner label's name: "ubuntu-latest:docker://node:20"
// is the label ubuntu-latest with how the runner provides it.
func labelName(l string) string {
	name, _, _ := strings.Cut(l, ":")
	return name
}

// ErrBadRunner is a runner that is unknown or presented a wrong secret.
var ErrBadRunner = errors.New("unregistered runner")

// AuthRunner finds the runner uuid names when secret is its token, and
// notes the contact.
func (s Service) AuthRunner(ctx context.Context, uuid, secret string) (*store.ActionRunner, error) {
	if uuid == "" || secret == "" {
		return nil, ErrBadRunner
	}
	r, err := s.Store.Actions().FindRunnerByUUID(ctx, uuid)
	if errors.Is(err, store.ErrNotFound) {
		return nil, ErrBadRunner
	}
	if err != nil {
		return nil, err
	}
	if subtle.ConstantTimeCompare([]byte(r.TokenHash), []byte(auth.HashToken(secret))) != 1 {
		return nil, ErrBadRunner
	}
	now := s.Clock.Now()
	// One write per few seconds is enough for the online status.
	if r.LastOnline == nil || now.Sub(*r.LastOnline) >= time.Second {
		if err := s.Store.Actions().UpdateRunner(ctx, r.ID, map[string]any{"last_online": now}); err != nil {
			return nil, err
		}
		r.LastOnline = &now
	}
	return r, nil
}

// Declare records the runner's version and labels.
func (s Service) Declare(ctx context.Context, r *store.ActionRunner, version string, labels []string) error {
	r.Version, r.Labels = version, cleanLabels(labels)
	return s.Store.Actions().UpdateRunner(ctx, r.ID, map[string]any{"version": r.Version, "labels": jsonText(r.Labels), "updated_at": s.Clock.Now()})
}

// emitJob announces a job's new status in the transaction of ctx.
func (s Service) emitJob(ctx context.Context, j *store.ActionRunJob, runnerID int64) error {
	st, concl := APIStatus(j.Status)
	return s.Events.Emit(ctx, events.ActionsJobStatus, j.RepoID, 0, events.ActionsJob{
		ID: j.ID, RunID: j.RunID, Name: j.Name, RunnerID: runnerID, Status: st, Conclusion: concl})
}

func (s Service) emitRun(ctx context.Context, kind events.Kind, r *store.ActionRun) error {
	st, concl := APIStatus(r.Status)
	return s.Events.Emit(ctx, kind, r.RepoID, r.TriggerUserID, events.ActionsRun{
		ID: r.ID, Number: r.Number, WorkflowID: r.WorkflowID, Event: r.Event, Ref: r.Ref, CommitSHA: r.CommitSHA, Status: st, Conclusion: concl})
}

// settle moves the blocked jobs of a run whose needs have finished on,
// as the reference's job emitter does: to waiting when every need
// succeeded; when one failed, was cancelled or was skipped, to waiting
// still if the job has an if: (its runner evaluates it, with always() or
// failure() in mind), else to skipped. Then it gives the run its jobs'
// aggregate status; each change is announced. It runs in the transaction
// of the change that called it.
func (s Service) settle(ctx context.Context, runID int64) error {
	jobs, err := s.Store.Actions().JobsOfRun(ctx, runID)
	if err != nil {
		return err
	}
	now := s.Clock.Now()
	for changed := true; changed; {
		changed = false
		for _, j := range jobs {
			if j.Status != store.ActionBlocked {
				continue
			}
			done, ok := true, true
			for _, need := range j.Needs {
				for _, o := range jobs {
					if o.JobID != need {
						continue
					}
					done = done && o.Status.IsDone()
					ok = ok && o.Status == store.ActionSuccess
				}
			}
			if !done {
				continue
			}
			fields := map[string]any{"updated_at": now}
			if ok || jobHasIf(j.WorkflowPayload, j.JobID) {
				j.Status = store.ActionWaiting
			} else {
				j.Status = store.ActionSkipped
				j.Stopped = &now
				fields["stopped"] = now
			}
			fields["status"] = j.Status
			if err := s.Store.Actions().UpdateJob(ctx, j.ID, fields); err != nil {
				return err
			}
			if err := s.emitJob(ctx, j, 0); err != nil {
				return err
			}
			changed = true
		}
	}
	run, err := s.Store.Actions().FindRun(ctx, runID)
	if err != nil {
		return err
	}
	status := aggregate(jobs)
	if status == run.Status {
		return nil
	}
	run.Status = status
	fields := map[string]any{"status": status, "updated_at": now}
	if status == store.ActionRunning && run.Started == nil {
		run.Started = &now
		fields["started"] = now
	}
	if status.IsDone() {
		run.Stopped = &now
		fields["stopped"] = now
	}
	if err := s.Store.Actions().UpdateRun(ctx, runID, fields); err != nil {
		return err
	}
	return s.emitRun(ctx, events.ActionsRunStatus, run)
}

// Assignment is a task handed to a runner, with what it runs.
type Assignment struct {
	Task  *store.ActionTask
	Job   *store.ActionRunJob
	Run   *store.ActionRun
	Repo  *store.Repository
	Token string
	// Needs are the finished jobs this one needs, by job id.
	Needs map[string]NeedResult
}

// NeedResult is the outcome of a needed job.
type NeedResult struct {
	Result  store.ActionStatus
	Outputs map[string]string
}

// runsOnMatch tells whether a runner with labels may run a job with
// runs-on: every label the job asks for is one of the runner's.
func runsOnMatch(labels []string) func([]string) bool {
	have := map[string]bool{}
	for _, l := range labels {
		have[labelName(l)] = true
	}
	return func(runsOn []string) bool {
		for _, l := range runsOn {
			if !have[l] {
				return false
			}
		}
		return true
	}
}

// FetchTask hands r the oldest free job it may run, nil when there is
// none; the job is r's alone.
func (s Service) FetchTask(ctx context.Context, r *store.ActionRunner) (*Assignment, error) {
	if r.Disabled {
		return nil, nil
	}
	secret, err := randomSecret()
	if err != nil {
		return nil, err
	}
	task := &store.ActionTask{RunnerID: r.ID, TokenHash: auth.HashToken(secret), TokenLastEight: secret[len(secret)-8:]}
	var a *Assignment
	err = s.Store.WithTx(ctx, func(ctx context.Context) error {
		job, err := s.Store.Actions().ClaimJob(ctx, r, runsOnMatch(r.Labels), task)
		if errors.Is(err, store.ErrNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		if err := s.emitJob(ctx, job, r.ID); err != nil {
			return err
		}
		if err := s.settle(ctx, job.RunID); err != nil {
			return err
		}
		a = &Assignment{Task: task, Job: job, Token: secret}
		return nil
	})
	if err != nil || a == nil {
		return nil, err
	}
	if err := s.Store.Actions().UpdateRunner(ctx, r.ID, map[string]any{"last_active": s.Clock.Now()}); err != nil {
		return nil, err
	}
	if a.Run, err = s.Store.Actions().FindRun(ctx, a.Job.RunID); err != nil {
		return nil, err
	}
	if a.Repo, err = s.Store.Repos().FindByID(ctx, a.Job.RepoID); err != nil {
		return nil, err
	}
	a.Needs, err = s.needs(ctx, a.Job)
	return a, err
}

// needs collects the results and outputs of the jobs j needs.
func (s Service) needs(ctx context.Context, j *store.ActionRunJob) (map[string]NeedResult, error) {
	out := map[string]NeedResult{}
	if len(j.Needs) == 0 {
		return out, nil
	}
	jobs, err := s.Store.Actions().JobsOfRun(ctx, j.RunID)
	if err != nil {
		return nil, err
	}
	for _, o := range jobs {
		if !slices.Contains(j.Needs, o.JobID) {
			continue
		}
		nr := out[o.JobID]
		if nr.Result == store.ActionUnknown || o.Status != store.ActionSuccess {
			nr.Result = o.Status
		}
		if nr.Outputs == nil {
			nr.Outputs = map[string]string{}
		}
		if o.TaskID != 0 {
			t, err := s.Store.Actions().FindTask(ctx, o.TaskID)
			if err != nil {
				return nil, err
			}
			for k, v := range t.Outputs {
				nr.Outputs[k] = v
			}
		}
		out[o.JobID] = nr
	}
	return out, nil
}

// TaskReport is what a runner reports about its task.
type TaskReport struct {
	TaskID int64
	// Result is the final status; ActionUnknown while the task runs.
	Result  store.ActionStatus
	Stopped *time.Time
	Steps   []*store.ActionTaskStep
	Outputs map[string]string
}

// errNotRunnersTask is a task id that is not one of the caller's.
var errNotRunnersTask = errors.New("task not found")

// UpdateTask records a runner's report on its task; a final result ends
// the task and its job and moves the run on. It returns the task as
// stored, whose status tells the runner whether to go on.
func (s Service) UpdateTask(ctx context.Context, r *store.ActionRunner, rep TaskReport) (*store.ActionTask, error) {
	var task *store.ActionTask
	err := s.Store.WithTx(ctx, func(ctx context.Context) error {
		var err error
		task, err = s.Store.Actions().FindTask(ctx, rep.TaskID)
		if errors.Is(err, store.ErrNotFound) || (err == nil && task.RunnerID != r.ID) {
			return errNotRunnersTask
		}
		if err != nil {
			return err
		}
		if task.Status.IsDone() {
			return nil
		}
		now := s.Clock.Now()
		fields := map[string]any{"updated_at": now}
		if len(rep.Outputs) > 0 {
			if task.Outputs == nil {
				task.Outputs = map[string]string{}
			}
			for k, v := range rep.Outputs {
				task.Outputs[k] = v
			}
			fields["outputs"] = jsonText(task.Outputs)
		}
		for _, st := range rep.Steps {
			st.TaskID = task.ID
		}
		if err := s.Store.Actions().SaveSteps(ctx, task.ID, rep.Steps); err != nil {
			return err
		}
		if rep.Result != store.ActionUnknown {
			stopped := now
			if rep.Stopped != nil {
				stopped = *rep.Stopped
			}
			task.Status, task.Stopped = rep.Result, &stopped
			fields["status"], fields["stopped"] = rep.Result, stopped
		}
		if err := s.Store.Actions().UpdateTask(ctx, task.ID, fields); err != nil {
			return err
		}
		if rep.Result == store.ActionUnknown {
			return nil
		}
		job, err := s.Store.Actions().FindJob(ctx, task.JobID)
		if err != nil {
			return err
		}
		if job.TaskID != task.ID || job.Status.IsDone() {
			return nil
		}
		job.Status, job.Stopped = task.Status, task.Stopped
		if err := s.Store.Actions().UpdateJob(ctx, job.ID, map[string]any{"status": job.Status, "stopped": *job.Stopped, "updated_at": now}); err != nil {
			return err
		}
		if err := s.emitJob(ctx, job, r.ID); err != nil {
			return err
		}
		return s.settle(ctx, job.RunID)
	})
	if err != nil {
		return nil, err
	}
	if r.Ephemeral && task.Status.IsDone() {
		// An ephemeral runner runs one task and goes.
		return task, s.Store.Actions().DeleteRunner(ctx, r.ID)
	}
	return task, s.Store.Actions().UpdateRunner(ctx, r.ID, map[string]any{"last_active": s.Clock.Now()})
}

// LogRow is one line a runner sends.
type LogRow struct {
	Time    time.Time
	Content string
}

// UpdateLog stores the rows of the task's log starting at line index and
// returns how many lines are stored (the acknowledged index). Rows already
// stored are skipped; rows past a gap are refused until the gap is sent.
func (s Service) UpdateLog(ctx context.Context, r *store.ActionRunner, taskID, index int64, rows []LogRow, noMore bool) (int64, error) {
	var ack int64
	err := s.Store.WithTx(ctx, func(ctx context.Context) error {
		task, err := s.Store.Actions().FindTask(ctx, taskID)
		if errors.Is(err, store.ErrNotFound) || (err == nil && task.RunnerID != r.ID) {
			return errNotRunnersTask
		}
		if err != nil {
			return err
		}
		ack = task.LogLength
		end := index + int64(len(rows))
		fields := map[string]any{}
		if len(rows) > 0 && index <= ack && end > ack {
			// No secret of the repository is stored in clear, whatever
			// the runner printed: every value is masked before the rows
			// are kept.
			// The repository's owner now (it may have been transferred
			// since the task began), as taskSettings resolves them.
			ownerID := task.OwnerID
			if repo, err := s.Store.Repos().FindByID(ctx, task.RepoID); err == nil {
				ownerID = repo.OwnerID
			} else if !errors.Is(err, store.ErrNotFound) {
				return err
			}
			secrets, err := s.Store.ActionSecrets().ForRepo(ctx, ownerID, task.RepoID)
			if err != nil {
				return err
			}
			fresh := slices.Clone(rows[ack-index:])
			maskSecrets(fresh, secrets)
			var add []*store.ActionTaskLog
			for i, row := range fresh {
				add = append(add, &store.ActionTaskLog{TaskID: task.ID, Line: ack + int64(i), Time: row.Time, Content: row.Content})
			}
			if err := s.Store.Actions().AppendLogs(ctx, add); err != nil {
				return err
			}
			ack = end
			// Log rows are word from the runner too: the task is alive.
			fields["log_length"], fields["updated_at"] = ack, s.Clock.Now()
		}
		if noMore && index+int64(len(rows)) <= ack {
			fields["log_done"] = true
		}
		if len(fields) == 0 {
			return nil
		}
		return s.Store.Actions().UpdateTask(ctx, task.ID, fields)
	})
	return ack, err
}

// JobLog is the log of the job's latest task as text, a line per row
// prefixed with its time; a job that never ran has none.
func (s Service) JobLog(ctx context.Context, job *store.ActionRunJob) (string, error) {
	if job.TaskID == 0 {
		return "", apierr.NotFound("job has no log")
	}
	rows, err := s.Store.Actions().Logs(ctx, job.TaskID)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	for _, r := range rows {
		b.WriteString(r.Time.UTC().Format(time.RFC3339Nano))
		b.WriteByte(' ')
		b.WriteString(r.Content)
		b.WriteByte('\n')
	}
	return b.String(), nil
}

// RepoJob is one job of repo, 404 for another repository's.
func (s Service) RepoJob(ctx context.Context, repo *store.Repository, id int64) (*store.ActionRunJob, error) {
	j, err := s.Store.Actions().FindJob(ctx, id)
	if errors.Is(err, store.ErrNotFound) || (err == nil && j.RepoID != repo.ID) {
		return nil, apierr.NotFound("job not found")
	}
	return j, err
}

// RepoRun is one run of repo, 404 for another repository's.
func (s Service) RepoRun(ctx context.Context, repo *store.Repository, id int64) (*store.ActionRun, error) {
	r, err := s.Store.Actions().FindRun(ctx, id)
	if errors.Is(err, store.ErrNotFound) || (err == nil && r.RepoID != repo.ID) {
		return nil, apierr.NotFound("run not found")
	}
	return r, err
}

// DeleteRun removes a finished run with its jobs and logs; a run still
// under way is refused (the reference's 400).
func (s Service) DeleteRun(ctx context.Context, run *store.ActionRun) error {
	if !run.Status.IsDone() {
		return apierr.BadRequest("this workflow run is not done")
	}
	return s.Store.Actions().DeleteRun(ctx, run.ID)
}

// RunFilterInput is a runs list's query as the API gives it.
type RunFilterInput struct {
	Event, Branch, Status, Actor, HeadSHA string
}

// RunFilter turns the API's query into the store's filter for the runs of
// base (a repository, an owner, or everything).
func (s Service) RunFilter(ctx context.Context, base store.RunFilter, in RunFilterInput) (store.RunFilter, error) {
	statuses, err := ParseStatusFilter(in.Status)
	if err != nil {
		return base, err
	}
	base.Statuses, base.Event, base.CommitSHA = statuses, in.Event, in.HeadSHA
	if in.Branch != "" {
		base.Ref = "refs/heads/" + in.Branch
	}
	if in.Actor != "" {
		u, err := s.Store.Users().FindByName(ctx, in.Actor)
		if errors.Is(err, store.ErrNotFound) {
			return base, apierr.NotFound("user %s not found", in.Actor)
		}
		if err != nil {
			return base, err
		}
		base.TriggerUserID = u.ID
	}
	return base, nil
}

// DeleteOldRuns removes finished runs older than the retention period
// (the delete_old_actions task).
func (s Service) DeleteOldRuns(ctx context.Context) error {
	before := s.Clock.Now().Add(-s.Config.ActionsRetention)
	for {
		ids, err := s.Store.Actions().RunsBefore(ctx, before, 100)
		if err != nil {
			return err
		}
		deleted := 0
		for _, id := range ids {
			run, err := s.Store.Actions().FindRun(ctx, id)
			if errors.Is(err, store.ErrNotFound) {
				continue
			}
			if err != nil {
				return err
			}
			if !run.Status.IsDone() {
				continue
			}
			if err := s.Store.Actions().DeleteRun(ctx, id); err != nil && !errors.Is(err, store.ErrNotFound) {
				return err
			}
			deleted++
		}
		if len(ids) < 100 || deleted == 0 {
			return nil
		}
	}
}

// CleanupActions fails the tasks whose runner has not reported for the
// zombie timeout, with their jobs, and moves their runs on: the
// reference's stop_zombie_tasks, every five minutes, and this server's
// cleanup_actions at midnight (the reference's cleans artifacts, which
// this server has none of).
func (s Service) CleanupActions(ctx context.Context) error {
	tasks, err := s.Store.Actions().RunningTasksBefore(ctx, s.Clock.Now().Add(-s.Config.ActionsZombieTimeout), 1000)
	if err != nil {
		return err
	}
	return s.failTasks(ctx, tasks)
}

// StopEndlessTasks fails the tasks that started longer than the endless
// task timeout ago and still run, however often their runner reports,
// with their jobs, and moves their runs on (the stop_endless_tasks task).
func (s Service) StopEndlessTasks(ctx context.Context) error {
	tasks, err := s.Store.Actions().RunningTasksStartedBefore(ctx, s.Clock.Now().Add(-s.Config.ActionsEndlessTaskTimeout), 1000)
	if err != nil {
		return err
	}
	return s.failTasks(ctx, tasks)
}

// failTasks ends each of tasks as a failure, one transaction each: the
// task, its job when the task is still the job's, and the job's run. A
// task that finished meanwhile is left as it is.
func (s Service) failTasks(ctx context.Context, tasks []*store.ActionTask) error {
	for _, t := range tasks {
		err := s.Store.WithTx(ctx, func(ctx context.Context) error {
			task, err := s.Store.Actions().FindTask(ctx, t.ID)
			if err != nil {
				return err
			}
			if task.Status.IsDone() {
				return nil
			}
			now := s.Clock.Now()
			if err := s.Store.Actions().UpdateTask(ctx, t.ID, map[string]any{"status": store.ActionFailure, "stopped": now, "updated_at": now}); err != nil {
				return err
			}
			job, err := s.Store.Actions().FindJob(ctx, t.JobID)
			if err != nil {
				return err
			}
			if job.TaskID != t.ID || job.Status.IsDone() {
				return nil
			}
			job.Status, job.Stopped = store.ActionFailure, &now
			if err := s.Store.Actions().UpdateJob(ctx, job.ID, map[string]any{"status": job.Status, "stopped": now, "updated_at": now}); err != nil {
				return err
			}
			if err := s.emitJob(ctx, job, t.RunnerID); err != nil {
				return err
			}
			return s.settle(ctx, job.RunID)
		})
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			return fmt.Errorf("stop task %d: %w", t.ID, err)
		}
	}
	return nil
}

// abandonedStatuses are the statuses of jobs no runner has taken yet.
var abandonedStatuses = []store.ActionStatus{store.ActionWaiting, store.ActionBlocked}

// CancelAbandonedJobs cancels the jobs that have waited for a runner (or
// on their needs) without a change for longer than the abandoned job
// timeout, and moves their runs on (the cancel_abandoned_jobs task). The
// jobs of one run are cancelled together, then the run settles once.
func (s Service) CancelAbandonedJobs(ctx context.Context) error {
	before := s.Clock.Now().Add(-s.Config.ActionsAbandonedJobTimeout)
	for {
		jobs, err := s.Store.Actions().JobsUpdatedBefore(ctx, abandonedStatuses, before, 500)
		if err != nil {
			return err
		}
		var runs []int64
		byRun := map[int64][]int64{}
		for _, j := range jobs {
			if _, seen := byRun[j.RunID]; !seen {
				runs = append(runs, j.RunID)
			}
			byRun[j.RunID] = append(byRun[j.RunID], j.ID)
		}
		cancelled := 0
		for _, runID := range runs {
			err := s.Store.WithTx(ctx, func(ctx context.Context) error {
				now := s.Clock.Now()
				changed := false
				for _, id := range byRun[runID] {
					j, err := s.Store.Actions().FindJob(ctx, id)
					if errors.Is(err, store.ErrNotFound) {
						continue
					}
					if err != nil {
						return err
					}
					// Taken by a runner or changed since the list was read.
					if !slices.Contains(abandonedStatuses, j.Status) || j.UpdatedAt.After(before) {
						continue
					}
					j.Status, j.Stopped = store.ActionCancelled, &now
					if err := s.Store.Actions().UpdateJob(ctx, j.ID, map[string]any{"status": j.Status, "stopped": now, "updated_at": now}); err != nil {
						return err
					}
					if err := s.emitJob(ctx, j, 0); err != nil {
						return err
					}
					changed = true
					cancelled++
				}
				if !changed {
					return nil
				}
				return s.settle(ctx, runID)
			})
			if err != nil && !errors.Is(err, store.ErrNotFound) {
				return fmt.Errorf("cancel the abandoned jobs of run %d: %w", runID, err)
			}
		}
		if len(jobs) < 500 || cancelled == 0 {
			return nil
		}
	}
}
