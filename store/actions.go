package store

import (
	"context"
	"time"
)

// ActionStatus is the state of a workflow run, job, task or step, with the
// reference's numbering.
type ActionStatus int

const (
	ActionUnknown   ActionStatus = 0
	ActionSuccess   ActionStatus = 1
	ActionFailure   ActionStatus = 2
	ActionCancelled ActionStatus = 3
	ActionSkipped   ActionStatus = 4
	// ActionWaiting is a job ready for a runner (the API's "queued").
	ActionWaiting ActionStatus = 5
	ActionRunning ActionStatus = 6
	// ActionBlocked is a job whose needs have not finished (the API's
	// "waiting"; the filter value "pending").
	ActionBlocked ActionStatus = 7
)

// IsDone tells whether the status is final.
func (s ActionStatus) IsDone() bool {
	switch s {
	case ActionSuccess, ActionFailure, ActionCancelled, ActionSkipped:
		return true
	}
	return false
}

// ActionRunner is a runner registered at one scope: the whole site (no
// owner, no repository), an owner (user or organization) or a repository.
type ActionRunner struct {
	ID      int64
	UUID    string
	Name    string
	OwnerID int64
	RepoID  int64
	// TokenHash is the SHA-256 of the secret the runner authenticates with.
	TokenHash      string
	TokenLastEight string
	Version        string
	Labels         []string `gorm:"serializer:json"`
	Ephemeral      bool
	Disabled       bool
	// LastOnline is the runner's last contact, LastActive the last time it
	// reported on a task.
	LastOnline *time.Time
	LastActive *time.Time
	CreatedAt  time.Time
	UpdatedAt  time.Time
}

// ActionRunnerToken registers runners at its scope (OwnerID, RepoID as in
// ActionRunner) while active; the API hands the same one out again until
// it is replaced.
type ActionRunnerToken struct {
	ID        int64
	Token     string
	OwnerID   int64
	RepoID    int64
	IsActive  bool
	CreatedAt time.Time
}

// ActionRun is one workflow file triggered by one event.
type ActionRun struct {
	ID         int64
	RepoID     int64
	OwnerID    int64
	WorkflowID string // the file's name, "ci.yml"
	Title      string
	// Number is the run's number within its repository.
	Number        int64
	TriggerUserID int64
	Ref           string // full ref name
	CommitSHA     string
	Event         string
	// Attempt counts the times the run was started: 1, and one more for
	// each rerun.
	Attempt int64
	// Inputs are a workflow_dispatch's inputs.
	Inputs    map[string]string `gorm:"serializer:json"`
	Status    ActionStatus
	Started   *time.Time
	Stopped   *time.Time
	CreatedAt time.Time
	UpdatedAt time.Time
}

// ActionRunJob is one job of a run (one per matrix combination).
type ActionRunJob struct {
	ID        int64
	RunID     int64
	RepoID    int64
	OwnerID   int64
	CommitSHA string
	Name      string
	// JobID is the job's key in the workflow; needs refer to it.
	JobID  string
	Needs  []string `gorm:"serializer:json"`
	RunsOn []string `gorm:"serializer:json"`
	// WorkflowPayload is the single-job workflow handed to the runner.
	WorkflowPayload []byte
	TaskID          int64
	Attempt         int64
	Status          ActionStatus
	Started         *time.Time
	Stopped         *time.Time
	CreatedAt       time.Time
	UpdatedAt       time.Time
}

// ActionTask is one attempt of a job on a runner.
type ActionTask struct {
	ID        int64
	JobID     int64
	Attempt   int64
	RunnerID  int64
	Status    ActionStatus
	RepoID    int64
	OwnerID   int64
	CommitSHA string
	// TokenHash is the SHA-256 of the task's repository token.
	TokenHash      string
	TokenLastEight string
	LogLength      int64
	LogDone        bool
	// Outputs are the job's outputs as its runner reported them.
	Outputs   map[string]string `gorm:"serializer:json"`
	Started   *time.Time
	Stopped   *time.Time
	CreatedAt time.Time
	UpdatedAt time.Time
}

// ActionTaskStep is a step of a task as its runner reports it.
type ActionTaskStep struct {
	ID        int64
	TaskID    int64
	Number    int64
	Name      string
	Status    ActionStatus
	LogIndex  int64
	LogLength int64
	Started   *time.Time
	Stopped   *time.Time
}

// ActionTaskLog is one log line of a task.
type ActionTaskLog struct {
	TaskID  int64 `gorm:"primaryKey;autoIncrement:false"`
	Line    int64 `gorm:"primaryKey;autoIncrement:false"`
	Time    time.Time
	Content string
}

// RunnerScope selects runners. Exact keeps those registered at exactly
// (OwnerID, RepoID); otherwise a repository scope (RepoID set, with its
// owner in OwnerID) also sees its owner's and the site's runners, an
// owner scope also the site's, and the site scope (both 0) every runner.
type RunnerScope struct {
	OwnerID int64
	RepoID  int64
}

// JobFilter selects jobs: the one with ID, of one repository, owner or
// run when set, in
// one of Statuses when any.
type JobFilter struct {
	ID       int64
	RepoID   int64
	OwnerID  int64
	RunID    int64
	Statuses []ActionStatus
	Desc     bool
}

// RunFilter selects runs; empty fields do not filter.
type RunFilter struct {
	RepoID        int64
	OwnerID       int64
	Event         string
	Ref           string
	Statuses      []ActionStatus
	TriggerUserID int64
	CommitSHA     string
}

// JobView is a job with the facts its listing shows from other rows.
type JobView struct {
	ActionRunJob
	OwnerName  string
	RepoName   string
	RunNumber  int64
	Ref        string
	RunnerID   int64
	RunnerName string
	Steps      []*ActionTaskStep `gorm:"-"`
}

// RunView is a run with its repository's names.
type RunView struct {
	ActionRun
	OwnerName string
	RepoName  string
}

// ActionsStore keeps runners, runs, jobs, tasks and their logs.
type ActionsStore interface {
	CreateRunner(ctx context.Context, r *ActionRunner) error
	FindRunner(ctx context.Context, id int64) (*ActionRunner, error)
	FindRunnerByUUID(ctx context.Context, uuid string) (*ActionRunner, error)
	// ListRunners lists the runners scope sees, disabled filtering when
	// set, oldest first.
	ListRunners(ctx context.Context, scope RunnerScope, disabled *bool, p Page) ([]*ActionRunner, int64, error)
	// BusyRunners reports which of ids run a task now.
	BusyRunners(ctx context.Context, ids []int64) (map[int64]bool, error)
	UpdateRunner(ctx context.Context, id int64, fields map[string]any) error
	DeleteRunner(ctx context.Context, id int64) error

	// ActiveRunnerToken is the newest active registration token of the
	// scope; ErrNotFound when there is none.
	ActiveRunnerToken(ctx context.Context, ownerID, repoID int64) (*ActionRunnerToken, error)
	FindRunnerToken(ctx context.Context, token string) (*ActionRunnerToken, error)
	CreateRunnerToken(ctx context.Context, t *ActionRunnerToken) error

	// CreateRun stores run (numbered within its repository) and its jobs.
	CreateRun(ctx context.Context, run *ActionRun, jobs []*ActionRunJob) error
	FindRun(ctx context.Context, id int64) (*ActionRun, error)
	UpdateRun(ctx context.Context, id int64, fields map[string]any) error
	// DeleteRun removes the run with its jobs, tasks, steps and logs.
	DeleteRun(ctx context.Context, id int64) error
	ListRuns(ctx context.Context, f RunFilter, p Page) ([]*RunView, int64, error)
	// RunsBefore lists up to limit ids of runs created before t (at
	// whole seconds).
	RunsBefore(ctx context.Context, t time.Time, limit int) ([]int64, error)

	FindJob(ctx context.Context, id int64) (*ActionRunJob, error)
	JobsOfRun(ctx context.Context, runID int64) ([]*ActionRunJob, error)
	UpdateJob(ctx context.Context, id int64, fields map[string]any) error
	// JobsUpdatedBefore lists up to limit jobs in one of statuses last
	// updated before t (at whole seconds), in no particular order.
	JobsUpdatedBefore(ctx context.Context, statuses []ActionStatus, t time.Time, limit int) ([]*ActionRunJob, error)
	ListJobs(ctx context.Context, f JobFilter, p Page) ([]*JobView, int64, error)
	// ClaimJob hands the oldest waiting job runner may take (in its scope,
	// whose runs-on match accepts) to task: the job becomes running with
	// task's id, atomically, so no other runner gets it. ErrNotFound when
	// no job is free.
	ClaimJob(ctx context.Context, runner *ActionRunner, match func(runsOn []string) bool, task *ActionTask) (*ActionRunJob, error)

	FindTask(ctx context.Context, id int64) (*ActionTask, error)
	FindTaskByTokenHash(ctx context.Context, hash string) (*ActionTask, error)
	UpdateTask(ctx context.Context, id int64, fields map[string]any) error
	// RunningTasksBefore lists running tasks last updated before t (at
	// whole seconds).
	RunningTasksBefore(ctx context.Context, t time.Time, limit int) ([]*ActionTask, error)
	// RunningTasksStartedBefore lists running tasks started before t (at
	// whole seconds), however recently they were updated.
	RunningTasksStartedBefore(ctx context.Context, t time.Time, limit int) ([]*ActionTask, error)
	// SaveSteps replaces the steps of a task.
	SaveSteps(ctx context.Context, taskID int64, steps []*ActionTaskStep) error
	// AppendLogs stores rows (each naming its task and line).
	AppendLogs(ctx context.Context, rows []*ActionTaskLog) error
	Logs(ctx context.Context, taskID int64) ([]*ActionTaskLog, error)

	// DeleteRepo removes a deleted repository's runs (with their jobs,
	// tasks, steps and logs), runners and registration tokens.
	DeleteRepo(ctx context.Context, repoID int64) error
	// DeleteOwner removes a deleted owner's runners and registration
	// tokens (its repositories' runs go with each repository).
	DeleteOwner(ctx context.Context, ownerID int64) error
}
