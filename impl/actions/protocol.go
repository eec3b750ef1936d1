package actions

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"unicode/utf8"

	pingv1 "code.gitea.io/actions-proto-go/ping/v1"
	"code.gitea.io/actions-proto-go/ping/v1/pingv1connect"
	runnerv1 "code.gitea.io/actions-proto-go/runner/v1"
	"code.gitea.io/actions-proto-go/runner/v1/runnerv1connect"
	"connectrpc.com/connect"
	"google.golang.org/protobuf/types/known/structpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	"repohost/store"
)

// The headers a registered runner authenticates every call with, as the
// reference's runners send them.
const (
	runnerUUIDHeader  = "x-runner-uuid"
	runnerTokenHeader = "x-runner-token"
)

// Protocol serves the runner protocol (code.gitea.io/actions-proto-go) on
// the generated connect handlers.
type Protocol struct {
	Service Service
}

var (
	_ runnerv1connect.RunnerServiceHandler = Protocol{}
	_ pingv1connect.PingServiceHandler     = Protocol{}
)

// Per-message read limits. A runner sends its pending log rows in one
// UpdateLog (act_runner's reporter batches everything not yet
// acknowledged, so a runner that lost the server for a while sends many at
// once), and UpdateTask carries the job's outputs; every other message is a
// few names and labels.
const (
	maxBulkMessage  = 32 << 20
	maxSmallMessage = 64 << 10
)

// Handler is the protocol's HTTP surface, to be mounted under
// /api/actions/ with that prefix stripped. Every call but Register and
// Ping is authenticated from its headers before connect reads the body,
// so an anonymous caller costs no more than its headers; every message is
// read only up to its procedure's limit.
func (p Protocol) Handler() http.Handler {
	limits := connect.WithConditionalHandlerOptions(func(spec connect.Spec) []connect.HandlerOption {
		switch spec.Procedure {
		case runnerv1connect.RunnerServiceUpdateLogProcedure, runnerv1connect.RunnerServiceUpdateTaskProcedure:
			return []connect.HandlerOption{connect.WithReadMaxBytes(maxBulkMessage)}
		}
		return []connect.HandlerOption{connect.WithReadMaxBytes(maxSmallMessage)}
	})
	mux := http.NewServeMux()
	mux.Handle(runnerv1connect.NewRunnerServiceHandler(p, limits))
	mux.Handle(pingv1connect.NewPingServiceHandler(p, limits))
	errs := connect.NewErrorWriter()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case runnerv1connect.RunnerServiceRegisterProcedure, pingv1connect.PingServicePingProcedure:
			mux.ServeHTTP(w, r)
			return
		}
		if !strings.HasPrefix(r.URL.Path, "/"+runnerv1connect.RunnerServiceName+"/") {
			mux.ServeHTTP(w, r) // connect's own 404 for unknown procedures
			return
		}
		runner, err := p.Service.AuthRunner(r.Context(), r.Header.Get(runnerUUIDHeader), r.Header.Get(runnerTokenHeader))
		if err != nil {
			_ = errs.Write(w, r, p.fail(err))
			return
		}
		mux.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), runnerKey{}, runner)))
	})
}

// runnerKey holds, in a request's context, the runner Handler
// authenticated.
type runnerKey struct{}

// fail turns a service error into the protocol's error without leaking
// internals.
func (p Protocol) fail(err error) error {
	switch {
	case errors.Is(err, ErrBadRunner):
		return connect.NewError(connect.CodeUnauthenticated, err)
	case errors.Is(err, ErrBadRegistration):
		return connect.NewError(connect.CodePermissionDenied, err)
	case errors.Is(err, errNotRunnersTask):
		return connect.NewError(connect.CodeNotFound, err)
	case errors.Is(err, context.Canceled):
		return connect.NewError(connect.CodeCanceled, err)
	}
	p.Service.Log.Error("actions: runner call failed", "err", err)
	return connect.NewError(connect.CodeInternal, errors.New("internal error"))
}

// runner is the caller Handler authenticated; a call that did not come
// through Handler has none.
func (p Protocol) runner(ctx context.Context) (*store.ActionRunner, error) {
	r, ok := ctx.Value(runnerKey{}).(*store.ActionRunner)
	if !ok {
		return nil, p.fail(ErrBadRunner)
	}
	return r, nil
}

// Ping answers the runner's connectivity check.
func (p Protocol) Ping(_ context.Context, req *connect.Request[pingv1.PingRequest]) (*connect.Response[pingv1.PingResponse], error) {
	return connect.NewResponse(&pingv1.PingResponse{Data: "Hello, " + req.Msg.Data + "!"}), nil
}

func (p Protocol) message(r *store.ActionRunner) *runnerv1.Runner {
	status := runnerv1.RunnerStatus_RUNNER_STATUS_OFFLINE
	now := p.Service.Clock.Now()
	if r.LastOnline != nil && now.Sub(*r.LastOnline) < runnerOfflineAfter {
		status = runnerv1.RunnerStatus_RUNNER_STATUS_IDLE
		if r.LastActive != nil && now.Sub(*r.LastActive) < runnerIdleAfter {
			status = runnerv1.RunnerStatus_RUNNER_STATUS_ACTIVE
		}
	}
	return &runnerv1.Runner{Id: r.ID, Uuid: r.UUID, Name: r.Name, Status: status, Version: r.Version,
		Labels: r.Labels, Ephemeral: r.Ephemeral}
}

// Register makes a runner with a registration token.
func (p Protocol) Register(ctx context.Context, req *connect.Request[runnerv1.RegisterRequest]) (*connect.Response[runnerv1.RegisterResponse], error) {
	m := req.Msg
	labels := m.Labels
	if len(labels) == 0 {
		// Runners before labels were declared in one list sent two.
		labels = append(append([]string{}, m.AgentLabels...), m.CustomLabels...)
	}
	if err := checkRunnerFields(m.Name, m.Version, labels); err != nil {
		return nil, err
	}
	r, secret, err := p.Service.Register(ctx, RegisterInput{Token: m.Token, Name: m.Name, Version: m.Version, Labels: labels, Ephemeral: m.Ephemeral})
	if err != nil {
		return nil, p.fail(err)
	}
	msg := p.message(r)
	msg.Token = secret
	return connect.NewResponse(&runnerv1.RegisterResponse{Runner: msg}), nil
}

// Declare records the runner's version and labels.
func (p Protocol) Declare(ctx context.Context, req *connect.Request[runnerv1.DeclareRequest]) (*connect.Response[runnerv1.DeclareResponse], error) {
	r, err := p.runner(ctx)
	if err != nil {
		return nil, err
	}
	if err := checkRunnerFields("", req.Msg.Version, req.Msg.Labels); err != nil {
		return nil, err
	}
	if err := p.Service.Declare(ctx, r, req.Msg.Version, req.Msg.Labels); err != nil {
		return nil, p.fail(err)
	}
	return connect.NewResponse(&runnerv1.DeclareResponse{Runner: p.message(r)}), nil
}

// FetchTask answers at once, with a task or without one.
func (p Protocol) FetchTask(ctx context.Context, req *connect.Request[runnerv1.FetchTaskRequest]) (*connect.Response[runnerv1.FetchTaskResponse], error) {
	r, err := p.runner(ctx)
	if err != nil {
		return nil, err
	}
	a, err := p.Service.FetchTask(ctx, r)
	if err != nil {
		return nil, p.fail(err)
	}
	res := &runnerv1.FetchTaskResponse{TasksVersion: req.Msg.TasksVersion}
	if a != nil {
		if res.Task, err = p.task(ctx, a); err != nil {
			return nil, p.fail(err)
		}
	}
	return connect.NewResponse(res), nil
}

// task is what the runner needs to run an assignment: the single-job
// workflow, the github-style context, the needed jobs' results, the
// variables and secrets its repository resolves (taskSettings: none for
// a pull request from a fork) and the task's own repository token.
func (p Protocol) task(ctx context.Context, a *Assignment) (*runnerv1.Task, error) {
	actor := ""
	if a.Run.TriggerUserID != 0 {
		if u, err := p.Service.Store.Users().FindByID(ctx, a.Run.TriggerUserID); err == nil {
			actor = u.Name
		}
	}
	root := strings.TrimSuffix(p.Service.Config.RootURL, "/") + "/"
	full := a.Repo.Owner.Name + "/" + a.Repo.Name
	refType, refName := "branch", strings.TrimPrefix(a.Run.Ref, "refs/heads/")
	if name, ok := strings.CutPrefix(a.Run.Ref, "refs/tags/"); ok {
		refType, refName = "tag", name
	}
	if index, ok := pullRefIndex(a.Run.Ref); ok {
		// The reference names a pull request's ref by its number.
		refType, refName = "pull", strconv.FormatInt(index, 10)
	}
	event := map[string]any{
		"ref":   a.Run.Ref,
		"after": a.Run.CommitSHA,
		"repository": map[string]any{
			"name": a.Repo.Name, "full_name": full, "private": a.Repo.IsPrivate,
			"html_url": root + full, "clone_url": root + full + ".git",
			"owner": map[string]any{"login": a.Repo.Owner.Name},
		},
		"sender": map[string]any{"login": actor},
	}
	if a.Run.Event == "workflow_dispatch" {
		inputs := map[string]any{}
		for k, v := range a.Run.Inputs {
			inputs[k] = v
		}
		event["inputs"] = inputs
	}
	headRef, baseRef := "", ""
	fromFork := false
	if a.Run.Event == "pull_request" {
		info, ok, err := p.Service.pullEvent(ctx, a.Repo, a.Run)
		if err != nil {
			return nil, err
		}
		if ok {
			for k, v := range info.payload {
				event[k] = v
			}
			headRef, baseRef, fromFork = info.headRef, info.baseRef, info.fromFork
		} else if _, isPull := pullRefIndex(a.Run.Ref); isPull {
			// The pull request is gone: nothing tells whose code this
			// is, so the task is treated as a fork's.
			fromFork = true
		}
	}
	ctxMap := map[string]any{
		"actor":            actor,
		"api_url":          root + "api/v1",
		"base_ref":         baseRef,
		"head_ref":         headRef,
		"event":            event,
		"event_name":       a.Run.Event,
		"job":              a.Job.JobID,
		"ref":              a.Run.Ref,
		"ref_name":         refName,
		"ref_type":         refType,
		"repository":       full,
		"repository_owner": a.Repo.Owner.Name,
		"repositoryUrl":    root + full,
		"run_id":           strconv.FormatInt(a.Run.ID, 10),
		"run_number":       strconv.FormatInt(a.Run.Number, 10),
		"run_attempt":      strconv.FormatInt(a.Task.Attempt, 10),
		"secret_source":    "Actions",
		"server_url":       strings.TrimSuffix(root, "/"),
		"sha":              a.Run.CommitSHA,
		"token":            a.Token,
		"workflow":         a.Run.WorkflowID,
	}
	st, err := structpb.NewStruct(ctxMap)
	if err != nil {
		return nil, err
	}
	needs := map[string]*runnerv1.TaskNeed{}
	for id, n := range a.Needs {
		needs[id] = &runnerv1.TaskNeed{Result: runnerv1.Result(n.Result), Outputs: n.Outputs}
	}
	secrets, vars, err := p.Service.taskSettings(ctx, a.Repo, fromFork)
	if err != nil {
		return nil, err
	}
	// The task's own token, which no stored secret may replace (their
	// names cannot start with GITEA_ or GITHUB_).
	secrets["GITEA_TOKEN"], secrets["GITHUB_TOKEN"] = a.Token, a.Token
	return &runnerv1.Task{
		Id:              a.Task.ID,
		WorkflowPayload: a.Job.WorkflowPayload,
		Context:         st,
		Secrets:         secrets,
		Needs:           needs,
		Vars:            vars,
	}, nil
}

// UpdateTask records the task's state; the answer says what the server
// holds, so a runner learns that its task was cancelled.
func (p Protocol) UpdateTask(ctx context.Context, req *connect.Request[runnerv1.UpdateTaskRequest]) (*connect.Response[runnerv1.UpdateTaskResponse], error) {
	r, err := p.runner(ctx)
	if err != nil {
		return nil, err
	}
	state := req.Msg.State
	if state == nil {
		return nil, connect.NewError(connect.CodeInvalidArgument, errors.New("state is required"))
	}
	rep := TaskReport{TaskID: state.Id, Result: resultStatus(state.Result), Outputs: req.Msg.Outputs}
	if state.StoppedAt != nil {
		t := state.StoppedAt.AsTime()
		rep.Stopped = &t
	}
	for i, s := range state.Steps {
		step := &store.ActionTaskStep{Number: int64(i), Status: resultStatus(s.Result), LogIndex: s.LogIndex, LogLength: s.LogLength}
		if s.Id != 0 {
			step.Number = s.Id
		}
		if s.StartedAt != nil {
			t := s.StartedAt.AsTime()
			step.Started = &t
			if step.Status == store.ActionUnknown {
				step.Status = store.ActionRunning
			}
		} else if step.Status == store.ActionUnknown {
			step.Status = store.ActionWaiting
		}
		if s.StoppedAt != nil {
			t := s.StoppedAt.AsTime()
			step.Stopped = &t
		}
		rep.Steps = append(rep.Steps, step)
	}
	task, err := p.Service.UpdateTask(ctx, r, rep)
	if err != nil {
		return nil, p.fail(err)
	}
	sent := make([]string, 0, len(task.Outputs))
	for k := range task.Outputs {
		sent = append(sent, k)
	}
	out := &runnerv1.TaskState{Id: task.ID}
	if task.Status.IsDone() {
		out.Result = runnerv1.Result(task.Status)
	}
	if task.Stopped != nil {
		out.StoppedAt = timestamppb.New(*task.Stopped)
	}
	return connect.NewResponse(&runnerv1.UpdateTaskResponse{State: out, SentOutputs: sent}), nil
}

// resultStatus maps the protocol's result to a status: the numbering is
// the same for the final results, and unspecified means still running.
func resultStatus(r runnerv1.Result) store.ActionStatus {
	switch r {
	case runnerv1.Result_RESULT_SUCCESS, runnerv1.Result_RESULT_FAILURE, runnerv1.Result_RESULT_CANCELLED, runnerv1.Result_RESULT_SKIPPED:
		return store.ActionStatus(r)
	}
	return store.ActionUnknown
}

// UpdateLog appends log rows and acknowledges how many are stored.
func (p Protocol) UpdateLog(ctx context.Context, req *connect.Request[runnerv1.UpdateLogRequest]) (*connect.Response[runnerv1.UpdateLogResponse], error) {
	r, err := p.runner(ctx)
	if err != nil {
		return nil, err
	}
	if req.Msg.Index < 0 {
		return nil, connect.NewError(connect.CodeInvalidArgument, errors.New("index must not be negative"))
	}
	rows := make([]LogRow, len(req.Msg.Rows))
	for i, row := range req.Msg.Rows {
		rows[i] = LogRow{Content: row.Content}
		if row.Time != nil {
			rows[i].Time = row.Time.AsTime()
		} else {
			rows[i].Time = p.Service.Clock.Now()
		}
	}
	ack, err := p.Service.UpdateLog(ctx, r, req.Msg.TaskId, req.Msg.Index, rows, req.Msg.NoMore)
	if err != nil {
		return nil, p.fail(err)
	}
	return connect.NewResponse(&runnerv1.UpdateLogResponse{AckIndex: ack}), nil
}

// Bounds of what a runner may have stored about itself: the reference keeps
// the version in a 64-character column and the name in 255; labels are
// names with an optional "name:scheme://image" suffix.
const (
	maxRunnerName    = 255
	maxRunnerVersion = 64
	maxRunnerLabels  = 64
	maxRunnerLabel   = 255
)

// checkRunnerFields refuses names, versions and labels past those bounds,
// or that are not text.
func checkRunnerFields(name, version string, labels []string) error {
	bad := func(what string, max int) error {
		return connect.NewError(connect.CodeInvalidArgument, fmt.Errorf("%s must be valid UTF-8 of at most %d bytes", what, max))
	}
	if len(name) > maxRunnerName || !utf8.ValidString(name) {
		return bad("name", maxRunnerName)
	}
	if len(version) > maxRunnerVersion || !utf8.ValidString(version) {
		return bad("version", maxRunnerVersion)
	}
	if len(labels) > maxRunnerLabels {
		return connect.NewError(connect.CodeInvalidArgument, fmt.Errorf("at most %d labels", maxRunnerLabels))
	}
	for _, l := range labels {
		if len(l) > maxRunnerLabel || !utf8.ValidString(l) {
			return bad("a label", maxRunnerLabel)
		}
	}
	return nil
}
