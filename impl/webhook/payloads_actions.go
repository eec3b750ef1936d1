package webhook

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"path"
	"time"

	"repohost/impl/actions"
	"repohost/impl/convert"
	"repohost/impl/events"
	"repohost/models"
	"repohost/store"
)

// workflowRunPayload and workflowJobPayload are the reference's
// WorkflowRunPayload and WorkflowJobPayload (pull_request is left out:
// pull requests trigger no runs).
type workflowRunPayload struct {
	Action       string                    `json:"action"`
	Workflow     *hookWorkflow             `json:"workflow"`
	WorkflowRun  *models.ActionWorkflowRun `json:"workflow_run"`
	Organization *models.Organization      `json:"organization,omitempty"`
	Repository   *models.Repository        `json:"repository"`
	Sender       *models.User              `json:"sender"`
}

type workflowJobPayload struct {
	Action       string                    `json:"action"`
	WorkflowJob  *models.ActionWorkflowJob `json:"workflow_job"`
	Organization *models.Organization      `json:"organization,omitempty"`
	Repository   *models.Repository        `json:"repository"`
	Sender       *models.User              `json:"sender"`
}

// hookWorkflow is the reference's ActionWorkflow, the workflow file a
// run came from.
type hookWorkflow struct {
	ID        string    `json:"id"`
	Name      string    `json:"name"`
	Path      string    `json:"path"`
	State     string    `json:"state"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
	URL       string    `json:"url"`
	HTMLURL   string    `json:"html_url"`
	BadgeURL  string    `json:"badge_url"`
}

// runAction is a workflow_run's action for a run's API status, as the
// reference maps it: not yet started is "requested".
func runAction(status string) string {
	switch status {
	case "in_progress", "completed":
		return status
	}
	return "requested"
}

// workflowRun renders a run event. The run is read as it is now but shown
// with the status the event announced, since deliveries are built after
// the fact and a later status would contradict the action.
func (b *builder) workflowRun(ctx context.Context, p events.ActionsRun) ([]hookEvent, error) {
	run, err := b.s.Store.Actions().FindRun(ctx, p.ID)
	if isNotFound(err) {
		return nil, nil // deleted since; nothing left to describe
	} else if err != nil {
		return nil, err
	}
	apiRun, err := actions.Service{Deps: b.s.Deps}.RenderRun(ctx, b.base, nil, b.repo, run)
	if err != nil {
		return nil, err
	}
	apiRun.Status, apiRun.Conclusion = p.Status, p.Conclusion
	if p.Status != "completed" {
		apiRun.CompletedAt = nil
	}
	repo, err := b.apiRepo(ctx)
	if err != nil {
		return nil, err
	}
	wf, err := b.workflow(run)
	if err != nil {
		return nil, err
	}
	action := runAction(p.Status)
	payload := &workflowRunPayload{Action: action, Workflow: wf, WorkflowRun: apiRun,
		Repository: repo, Sender: b.apiSender()}
	if b.repo.Owner.IsOrganization() {
		payload.Organization = convert.Org(b.base, b.repo.Owner)
	}
	return []hookEvent{{Type: "workflow_run", Action: action, Payload: payload}}, nil
}

// workflow describes the workflow file of run as the reference's
// ActionWorkflow; a file gone from the repository since is described at
// its usual folder and dated by the run.
func (b *builder) workflow(run *store.ActionRun) (*hookWorkflow, error) {
	filePath, when, ok, err := actions.Service{Deps: b.s.Deps}.WorkflowFile(b.repo, run)
	if err != nil {
		return nil, err
	}
	if !ok {
		filePath, when = path.Join(".gitea/workflows", run.WorkflowID), run.CreatedAt
	}
	repoPath := b.repo.Owner.Name + "/" + b.repo.Name
	file := url.PathEscape(run.WorkflowID)
	branch := url.PathEscape(b.repo.DefaultBranch)
	return &hookWorkflow{
		ID: run.WorkflowID, Name: run.WorkflowID, Path: filePath, State: "active",
		CreatedAt: when.UTC(), UpdatedAt: when.UTC(),
		URL:      fmt.Sprintf("%sapi/v1/repos/%s/actions/workflows/%s", b.base, repoPath, file),
		HTMLURL:  fmt.Sprintf("%s%s/src/branch/%s/%s", b.base, repoPath, branch, filePath),
		BadgeURL: fmt.Sprintf("%s%s/actions/workflows/%s/badge.svg?branch=%s", b.base, repoPath, file, url.QueryEscape(b.repo.DefaultBranch)),
	}, nil
}

// workflowJob renders a job event; its action is the job's API status
// (queued, waiting, in_progress, completed), shown as announced.
func (b *builder) workflowJob(ctx context.Context, p events.ActionsJob) ([]hookEvent, error) {
	job, err := b.s.Store.Actions().FindJob(ctx, p.ID)
	if isNotFound(err) {
		return nil, nil
	} else if err != nil {
		return nil, err
	}
	apiJob, err := actions.Service{Deps: b.s.Deps}.RenderJob(ctx, b.base, b.repo, job)
	if err != nil {
		return nil, err
	}
	apiJob.Status, apiJob.Conclusion = p.Status, p.Conclusion
	if p.Status != "completed" {
		apiJob.CompletedAt = nil
	}
	repo, err := b.apiRepo(ctx)
	if err != nil {
		return nil, err
	}
	payload := &workflowJobPayload{Action: p.Status, WorkflowJob: apiJob, Repository: repo, Sender: b.apiSender()}
	if b.repo.Owner.IsOrganization() {
		payload.Organization = convert.Org(b.base, b.repo.Owner)
	}
	return []hookEvent{{Type: "workflow_job", Action: p.Status, Payload: payload}}, nil
}

// actionsEvent decodes an actions event's payload and renders it.
func (b *builder) actionsEvent(ctx context.Context, e *store.Event) ([]hookEvent, error) {
	if events.Kind(e.Kind) == events.ActionsJobStatus {
		var p events.ActionsJob
		if err := json.Unmarshal(e.Payload, &p); err != nil {
			return nil, err
		}
		return b.workflowJob(ctx, p)
	}
	var p events.ActionsRun
	if err := json.Unmarshal(e.Payload, &p); err != nil {
		return nil, err
	}
	return b.workflowRun(ctx, p)
}
