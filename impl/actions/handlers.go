package actions

import (
	"context"
	"fmt"

	"github.com/go-openapi/runtime/middleware"
	"github.com/go-openapi/swag/conv"

	"repohost/impl/apierr"
	"repohost/impl/app"
	"repohost/impl/auth"
	"repohost/impl/paging"
	"repohost/models"
	"repohost/restapi/operations/organization"
	"repohost/restapi/operations/repository"
	"repohost/restapi/operations/user"
	"repohost/store"
)

// The reference's refusals for the runner routes.
const (
	msgNeedRepoOwner = "user should be the owner of the repo"
	msgNeedOrgOwner  = "must be an organization owner"
)

// RequireUnrestricted refuses a token limited to public data: runners,
// and the runs and jobs of a whole owner or site, are never public.
func RequireUnrestricted(p *auth.Principal) error {
	if p.PublicOnly() {
		return apierr.Forbidden("token scope is limited to public data")
	}
	return nil
}

// EditedDisabled reads EditActionRunnerOption: disabled is required (the
// binding refuses a body without it; no body at all is refused here).
func EditedDisabled(body *models.EditActionRunnerOption) (bool, error) {
	if body == nil || body.Disabled == nil {
		return false, apierr.Validation("[Disabled]: Required")
	}
	return *body.Disabled, nil
}

// RepoHandlers implements the repository tag's actions operations.
type RepoHandlers struct {
	*app.Deps
	Actions Service
}

// ownerRepo loads the repository for its owner (the reference's
// reqOwner: the owning user, an owner of the owning organization, or a
// site admin; a repository admin is not enough).
func (h RepoHandlers) ownerRepo(ctx context.Context, owner, name string) (*store.Repository, Scope, error) {
	p, r, perm, err := h.SignedInRepo(ctx, owner, name)
	if err != nil {
		return nil, Scope{}, err
	}
	if err := RequireUnrestricted(p); err != nil {
		return nil, Scope{}, err
	}
	if !perm.Owner {
		return nil, Scope{}, apierr.Forbidden(msgNeedRepoOwner)
	}
	return r, Scope{OwnerID: r.OwnerID, RepoID: r.ID}, nil
}

// GetRepoRunners lists the runners the repository may use.
func (h RepoHandlers) GetRepoRunners(ctx context.Context, params repository.GetRepoRunnersParams) middleware.Responder {
	_, sc, err := h.ownerRepo(ctx, params.Owner, params.Repo)
	if err != nil {
		return h.Fail(err)
	}
	rs, total, err := h.Actions.ListRunners(ctx, sc, params.Disabled, h.Page(params.Page, params.Limit).Store())
	if err != nil {
		return h.Fail(err)
	}
	return repository.NewGetRepoRunnersOK().WithPayload(RunnerList(rs, total))
}

// RepoCreateRunnerRegistrationToken gives the repository's registration
// token.
func (h RepoHandlers) RepoCreateRunnerRegistrationToken(ctx context.Context, params repository.RepoCreateRunnerRegistrationTokenParams) middleware.Responder {
	_, sc, err := h.ownerRepo(ctx, params.Owner, params.Repo)
	if err != nil {
		return h.Fail(err)
	}
	token, err := h.Actions.RegistrationToken(ctx, sc)
	if err != nil {
		return h.Fail(err)
	}
	return repository.NewRepoCreateRunnerRegistrationTokenOK().WithPayload(&models.RegistrationToken{Token: token})
}

// GetRepoRunner reads one runner registered for the repository.
func (h RepoHandlers) GetRepoRunner(ctx context.Context, params repository.GetRepoRunnerParams) middleware.Responder {
	_, sc, err := h.ownerRepo(ctx, params.Owner, params.Repo)
	if err != nil {
		return h.Fail(err)
	}
	r, err := h.Actions.GetRunner(ctx, sc, params.RunnerID)
	if err != nil {
		return h.Fail(err)
	}
	return repository.NewGetRepoRunnerOK().WithPayload(RenderRunner(r))
}

// DeleteRepoRunner removes a runner registered for the repository.
func (h RepoHandlers) DeleteRepoRunner(ctx context.Context, params repository.DeleteRepoRunnerParams) middleware.Responder {
	_, sc, err := h.ownerRepo(ctx, params.Owner, params.Repo)
	if err != nil {
		return h.Fail(err)
	}
	if err := h.Actions.DeleteRunner(ctx, sc, params.RunnerID); err != nil {
		return h.Fail(err)
	}
	return repository.NewDeleteRepoRunnerNoContent()
}

// UpdateRepoRunner enables or disables a runner registered for the
// repository.
func (h RepoHandlers) UpdateRepoRunner(ctx context.Context, params repository.UpdateRepoRunnerParams) middleware.Responder {
	_, sc, err := h.ownerRepo(ctx, params.Owner, params.Repo)
	if err != nil {
		return h.Fail(err)
	}
	disabled, err := EditedDisabled(params.Body)
	if err != nil {
		return h.Fail(err)
	}
	r, err := h.Actions.SetRunnerDisabled(ctx, sc, params.RunnerID, disabled)
	if err != nil {
		return h.Fail(err)
	}
	return repository.NewUpdateRepoRunnerOK().WithPayload(RenderRunner(r))
}

// ListWorkflowJobs lists the repository's jobs.
func (h RepoHandlers) ListWorkflowJobs(ctx context.Context, params repository.ListWorkflowJobsParams) middleware.Responder {
	r, _, err := h.UnitRepo(ctx, auth.FromContext(ctx), params.Owner, params.Repo, app.ActionsUnit)
	if err != nil {
		return h.Fail(err)
	}
	pg := h.Page(params.Page, params.Limit)
	out, err := h.Actions.ListJobs(ctx, app.BaseURL(params.HTTPRequest), store.JobFilter{RepoID: r.ID},
		JobQuery{Status: conv.Value(params.Status), Order: params.Order}, pg.Store())
	if err != nil {
		return h.Fail(err)
	}
	return repository.NewListWorkflowJobsOK().WithPayload(out).WithXTotalCount(out.TotalCount).
		WithLink(paging.Link(params.HTTPRequest, pg, out.TotalCount))
}

// GetWorkflowJob reads one job of the repository.
func (h RepoHandlers) GetWorkflowJob(ctx context.Context, params repository.GetWorkflowJobParams) middleware.Responder {
	r, _, err := h.UnitRepo(ctx, auth.FromContext(ctx), params.Owner, params.Repo, app.ActionsUnit)
	if err != nil {
		return h.Fail(err)
	}
	id, ok := parseID(params.JobID)
	if !ok {
		return h.Fail(apierr.NotFound("job not found"))
	}
	j, err := h.Actions.RepoJob(ctx, r, id)
	if err != nil {
		return h.Fail(err)
	}
	out, err := h.Actions.RenderJob(ctx, app.BaseURL(params.HTTPRequest), r, j)
	if err != nil {
		return h.Fail(err)
	}
	return repository.NewGetWorkflowJobOK().WithPayload(out)
}

// DownloadActionsRunJobLogs serves a job's log as text.
func (h RepoHandlers) DownloadActionsRunJobLogs(ctx context.Context, params repository.DownloadActionsRunJobLogsParams) middleware.Responder {
	r, _, err := h.UnitRepo(ctx, auth.FromContext(ctx), params.Owner, params.Repo, app.ActionsUnit)
	if err != nil {
		return h.Fail(err)
	}
	j, err := h.Actions.RepoJob(ctx, r, params.JobID)
	if err != nil {
		return h.Fail(err)
	}
	text, err := h.Actions.JobLog(ctx, j)
	if err != nil {
		return h.Fail(err)
	}
	return repository.NewDownloadActionsRunJobLogsOK().WithPayload(text)
}

// GetWorkflowRuns lists the repository's runs.
func (h RepoHandlers) GetWorkflowRuns(ctx context.Context, params repository.GetWorkflowRunsParams) middleware.Responder {
	p := auth.FromContext(ctx)
	r, _, err := h.UnitRepo(ctx, p, params.Owner, params.Repo, app.ActionsUnit)
	if err != nil {
		return h.Fail(err)
	}
	// Pull requests do not trigger runs (yet), so exclude_pull_requests
	// leaves the list as it is.
	f, err := h.Actions.RunFilter(ctx, store.RunFilter{RepoID: r.ID}, RunFilterInput{Event: conv.Value(params.Event),
		Branch: conv.Value(params.Branch), Status: conv.Value(params.Status), Actor: conv.Value(params.Actor), HeadSHA: conv.Value(params.HeadSha)})
	if err != nil {
		return h.Fail(err)
	}
	pg := h.Page(params.Page, params.Limit)
	out, err := h.Actions.ListRuns(ctx, app.BaseURL(params.HTTPRequest), app.Viewer(p), f, pg.Store())
	if err != nil {
		return h.Fail(err)
	}
	return repository.NewGetWorkflowRunsOK().WithPayload(out).WithXTotalCount(out.TotalCount).
		WithLink(paging.Link(params.HTTPRequest, pg, out.TotalCount))
}

// GetWorkflowRun reads one run.
func (h RepoHandlers) GetWorkflowRun(ctx context.Context, params repository.GetWorkflowRunParams) middleware.Responder {
	p := auth.FromContext(ctx)
	r, _, err := h.UnitRepo(ctx, p, params.Owner, params.Repo, app.ActionsUnit)
	if err != nil {
		return h.Fail(err)
	}
	run, err := h.Actions.RepoRun(ctx, r, params.Run)
	if err != nil {
		return h.Fail(err)
	}
	out, err := h.Actions.RenderRun(ctx, app.BaseURL(params.HTTPRequest), app.Viewer(p), r, run)
	if err != nil {
		return h.Fail(err)
	}
	return repository.NewGetWorkflowRunOK().WithPayload(out)
}

// DeleteActionRun deletes a finished run (writers of the Actions unit).
func (h RepoHandlers) DeleteActionRun(ctx context.Context, params repository.DeleteActionRunParams) middleware.Responder {
	_, r, err := h.UnitWriteRepo(ctx, params.Owner, params.Repo, app.ActionsUnit)
	if err != nil {
		return h.Fail(err)
	}
	run, err := h.Actions.RepoRun(ctx, r, params.Run)
	if err != nil {
		return h.Fail(err)
	}
	if err := h.Actions.DeleteRun(ctx, run); err != nil {
		return h.Fail(err)
	}
	return repository.NewDeleteActionRunNoContent()
}

// ListWorkflowRunJobs lists the jobs of one run.
func (h RepoHandlers) ListWorkflowRunJobs(ctx context.Context, params repository.ListWorkflowRunJobsParams) middleware.Responder {
	r, _, err := h.UnitRepo(ctx, auth.FromContext(ctx), params.Owner, params.Repo, app.ActionsUnit)
	if err != nil {
		return h.Fail(err)
	}
	run, err := h.Actions.RepoRun(ctx, r, params.Run)
	if err != nil {
		return h.Fail(err)
	}
	pg := h.Page(params.Page, params.Limit)
	out, err := h.Actions.ListJobs(ctx, app.BaseURL(params.HTTPRequest), store.JobFilter{RepoID: r.ID, RunID: run.ID},
		JobQuery{Status: conv.Value(params.Status), Order: params.Order}, pg.Store())
	if err != nil {
		return h.Fail(err)
	}
	return repository.NewListWorkflowRunJobsOK().WithPayload(out).WithXTotalCount(out.TotalCount).
		WithLink(paging.Link(params.HTTPRequest, pg, out.TotalCount))
}

// ActionsDispatchWorkflow starts a workflow by hand.
func (h RepoHandlers) ActionsDispatchWorkflow(ctx context.Context, params repository.ActionsDispatchWorkflowParams) middleware.Responder {
	p, r, err := h.UnitWriteRepo(ctx, params.Owner, params.Repo, app.ActionsUnit)
	if err != nil {
		return h.Fail(err)
	}
	run, err := h.Actions.Dispatch(ctx, r, p.User, params.WorkflowID, conv.Value(params.Body.Ref), params.Body.Inputs)
	if err != nil {
		return h.Fail(err)
	}
	if !conv.Value(params.ReturnRunDetails) {
		return repository.NewActionsDispatchWorkflowNoContent()
	}
	base := app.BaseURL(params.HTTPRequest)
	return repository.NewActionsDispatchWorkflowOK().WithPayload(&models.RunDetails{
		WorkflowRunID: run.ID,
		RunURL:        fmt.Sprintf("%sapi/v1/repos/%s/%s/actions/runs/%d", base, r.Owner.Name, r.Name, run.ID),
		HTMLURL:       fmt.Sprintf("%s%s/%s/actions/runs/%d", base, r.Owner.Name, r.Name, run.Number),
	})
}

// writerRun loads a run of the repository for a writer of the Actions
// unit.
func (h RepoHandlers) writerRun(ctx context.Context, owner, name string, id int64) (*auth.Principal, *store.Repository, *store.ActionRun, error) {
	p, r, err := h.UnitWriteRepo(ctx, owner, name, app.ActionsUnit)
	if err != nil {
		return nil, nil, nil, err
	}
	run, err := h.Actions.RepoRun(ctx, r, id)
	return p, r, run, err
}

// RerunWorkflowRun runs every job of a finished run again.
func (h RepoHandlers) RerunWorkflowRun(ctx context.Context, params repository.RerunWorkflowRunParams) middleware.Responder {
	p, r, run, err := h.writerRun(ctx, params.Owner, params.Repo, params.Run)
	if err != nil {
		return h.Fail(err)
	}
	if err := h.Actions.Rerun(ctx, run, nil); err != nil {
		return h.Fail(err)
	}
	if run, err = h.Actions.RepoRun(ctx, r, run.ID); err != nil {
		return h.Fail(err)
	}
	out, err := h.Actions.RenderRun(ctx, app.BaseURL(params.HTTPRequest), p.User, r, run)
	if err != nil {
		return h.Fail(err)
	}
	return repository.NewRerunWorkflowRunCreated().WithPayload(out)
}

// RerunFailedWorkflowRun runs the failed and cancelled jobs of a finished
// run again.
func (h RepoHandlers) RerunFailedWorkflowRun(ctx context.Context, params repository.RerunFailedWorkflowRunParams) middleware.Responder {
	_, _, run, err := h.writerRun(ctx, params.Owner, params.Repo, params.Run)
	if err != nil {
		return h.Fail(err)
	}
	if err := h.Actions.Rerun(ctx, run, failedJob); err != nil {
		return h.Fail(err)
	}
	return repository.NewRerunFailedWorkflowRunCreated()
}

// RerunWorkflowJob runs one job of a finished run again.
func (h RepoHandlers) RerunWorkflowJob(ctx context.Context, params repository.RerunWorkflowJobParams) middleware.Responder {
	_, r, run, err := h.writerRun(ctx, params.Owner, params.Repo, params.Run)
	if err != nil {
		return h.Fail(err)
	}
	job, err := h.Actions.RepoJob(ctx, r, params.JobID)
	if err == nil && job.RunID != run.ID {
		err = apierr.NotFound("job not found")
	}
	if err != nil {
		return h.Fail(err)
	}
	if err := h.Actions.Rerun(ctx, run, func(j *store.ActionRunJob) bool { return j.ID == job.ID }); err != nil {
		return h.Fail(err)
	}
	out, err := h.Actions.RenderJob(ctx, app.BaseURL(params.HTTPRequest), r, job)
	if err != nil {
		return h.Fail(err)
	}
	return repository.NewRerunWorkflowJobCreated().WithPayload(out)
}

func parseID(s string) (int64, bool) {
	var n int64
	if s == "" || len(s) > 18 {
		return 0, false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	return n, n > 0
}

// OrgHandlers implements the organization tag's actions operations, for
// the organization's owners.
type OrgHandlers struct {
	*app.Deps
	Actions Service
}

func (h OrgHandlers) ownedOrg(ctx context.Context, name string) (*store.User, Scope, error) {
	p, err := auth.RequireUser(ctx)
	if err != nil {
		return nil, Scope{}, err
	}
	if err := RequireUnrestricted(p); err != nil {
		return nil, Scope{}, err
	}
	org, err := h.VisibleOrg(ctx, p, name)
	if err != nil {
		return nil, Scope{}, err
	}
	owner, err := h.Access.IsOrgOwner(ctx, p, org)
	if err != nil {
		return nil, Scope{}, err
	}
	if !owner {
		return nil, Scope{}, apierr.Forbidden(msgNeedOrgOwner)
	}
	return org, Scope{OwnerID: org.ID}, nil
}

// GetOrgRunners lists the runners the organization may use.
func (h OrgHandlers) GetOrgRunners(ctx context.Context, params organization.GetOrgRunnersParams) middleware.Responder {
	_, sc, err := h.ownedOrg(ctx, params.Org)
	if err != nil {
		return h.Fail(err)
	}
	rs, total, err := h.Actions.ListRunners(ctx, sc, params.Disabled, h.Page(params.Page, params.Limit).Store())
	if err != nil {
		return h.Fail(err)
	}
	return organization.NewGetOrgRunnersOK().WithPayload(RunnerList(rs, total))
}

// OrgCreateRunnerRegistrationToken gives the organization's registration
// token.
func (h OrgHandlers) OrgCreateRunnerRegistrationToken(ctx context.Context, params organization.OrgCreateRunnerRegistrationTokenParams) middleware.Responder {
	_, sc, err := h.ownedOrg(ctx, params.Org)
	if err != nil {
		return h.Fail(err)
	}
	token, err := h.Actions.RegistrationToken(ctx, sc)
	if err != nil {
		return h.Fail(err)
	}
	return organization.NewOrgCreateRunnerRegistrationTokenOK().WithPayload(&models.RegistrationToken{Token: token})
}

// GetOrgRunner reads one runner registered for the organization.
func (h OrgHandlers) GetOrgRunner(ctx context.Context, params organization.GetOrgRunnerParams) middleware.Responder {
	_, sc, err := h.ownedOrg(ctx, params.Org)
	if err != nil {
		return h.Fail(err)
	}
	r, err := h.Actions.GetRunner(ctx, sc, params.RunnerID)
	if err != nil {
		return h.Fail(err)
	}
	return organization.NewGetOrgRunnerOK().WithPayload(RenderRunner(r))
}

// DeleteOrgRunner removes a runner registered for the organization.
func (h OrgHandlers) DeleteOrgRunner(ctx context.Context, params organization.DeleteOrgRunnerParams) middleware.Responder {
	_, sc, err := h.ownedOrg(ctx, params.Org)
	if err != nil {
		return h.Fail(err)
	}
	if err := h.Actions.DeleteRunner(ctx, sc, params.RunnerID); err != nil {
		return h.Fail(err)
	}
	return organization.NewDeleteOrgRunnerNoContent()
}

// UpdateOrgRunner enables or disables a runner registered for the
// organization.
func (h OrgHandlers) UpdateOrgRunner(ctx context.Context, params organization.UpdateOrgRunnerParams) middleware.Responder {
	_, sc, err := h.ownedOrg(ctx, params.Org)
	if err != nil {
		return h.Fail(err)
	}
	disabled, err := EditedDisabled(params.Body)
	if err != nil {
		return h.Fail(err)
	}
	r, err := h.Actions.SetRunnerDisabled(ctx, sc, params.RunnerID, disabled)
	if err != nil {
		return h.Fail(err)
	}
	return organization.NewUpdateOrgRunnerOK().WithPayload(RenderRunner(r))
}

// GetOrgWorkflowJobs lists the jobs of the organization's repositories.
func (h OrgHandlers) GetOrgWorkflowJobs(ctx context.Context, params organization.GetOrgWorkflowJobsParams) middleware.Responder {
	org, _, err := h.ownedOrg(ctx, params.Org)
	if err != nil {
		return h.Fail(err)
	}
	pg := h.Page(params.Page, params.Limit)
	out, err := h.Actions.ListJobs(ctx, app.BaseURL(params.HTTPRequest), store.JobFilter{OwnerID: org.ID},
		JobQuery{Status: conv.Value(params.Status), Order: params.Order}, pg.Store())
	if err != nil {
		return h.Fail(err)
	}
	return organization.NewGetOrgWorkflowJobsOK().WithPayload(out).WithXTotalCount(out.TotalCount).
		WithLink(paging.Link(params.HTTPRequest, pg, out.TotalCount))
}

// GetOrgWorkflowRuns lists the runs of the organization's repositories.
func (h OrgHandlers) GetOrgWorkflowRuns(ctx context.Context, params organization.GetOrgWorkflowRunsParams) middleware.Responder {
	org, _, err := h.ownedOrg(ctx, params.Org)
	if err != nil {
		return h.Fail(err)
	}
	f, err := h.Actions.RunFilter(ctx, store.RunFilter{OwnerID: org.ID}, RunFilterInput{Event: conv.Value(params.Event),
		Branch: conv.Value(params.Branch), Status: conv.Value(params.Status), Actor: conv.Value(params.Actor), HeadSHA: conv.Value(params.HeadSha)})
	if err != nil {
		return h.Fail(err)
	}
	pg := h.Page(params.Page, params.Limit)
	out, err := h.Actions.ListRuns(ctx, app.BaseURL(params.HTTPRequest), app.Viewer(auth.FromContext(ctx)), f, pg.Store())
	if err != nil {
		return h.Fail(err)
	}
	return organization.NewGetOrgWorkflowRunsOK().WithPayload(out).WithXTotalCount(out.TotalCount).
		WithLink(paging.Link(params.HTTPRequest, pg, out.TotalCount))
}

// UserHandlers implements the user tag's actions operations for the
// signed-in user's own scope.
type UserHandlers struct {
	*app.Deps
	Actions Service
}

func userScope(ctx context.Context) (*auth.Principal, Scope, error) {
	p, err := auth.RequireUser(ctx)
	if err != nil {
		return nil, Scope{}, err
	}
	if err := RequireUnrestricted(p); err != nil {
		return nil, Scope{}, err
	}
	return p, Scope{OwnerID: p.User.ID}, nil
}

// GetUserRunners lists the runners the user may use.
func (h UserHandlers) GetUserRunners(ctx context.Context, params user.GetUserRunnersParams) middleware.Responder {
	_, sc, err := userScope(ctx)
	if err != nil {
		return h.Fail(err)
	}
	rs, total, err := h.Actions.ListRunners(ctx, sc, params.Disabled, h.Page(params.Page, params.Limit).Store())
	if err != nil {
		return h.Fail(err)
	}
	return user.NewGetUserRunnersOK().WithPayload(RunnerList(rs, total))
}

// UserCreateRunnerRegistrationToken gives the user's registration token.
func (h UserHandlers) UserCreateRunnerRegistrationToken(ctx context.Context, _ user.UserCreateRunnerRegistrationTokenParams) middleware.Responder {
	_, sc, err := userScope(ctx)
	if err != nil {
		return h.Fail(err)
	}
	token, err := h.Actions.RegistrationToken(ctx, sc)
	if err != nil {
		return h.Fail(err)
	}
	return user.NewUserCreateRunnerRegistrationTokenOK().WithPayload(&models.RegistrationToken{Token: token})
}

// GetUserRunner reads one of the user's runners; another's is not found.
func (h UserHandlers) GetUserRunner(ctx context.Context, params user.GetUserRunnerParams) middleware.Responder {
	_, sc, err := userScope(ctx)
	if err != nil {
		return h.Fail(err)
	}
	r, err := h.Actions.GetRunner(ctx, sc, params.RunnerID)
	if err != nil {
		return h.Fail(err)
	}
	return user.NewGetUserRunnerOK().WithPayload(RenderRunner(r))
}

// DeleteUserRunner removes one of the user's runners.
func (h UserHandlers) DeleteUserRunner(ctx context.Context, params user.DeleteUserRunnerParams) middleware.Responder {
	_, sc, err := userScope(ctx)
	if err != nil {
		return h.Fail(err)
	}
	if err := h.Actions.DeleteRunner(ctx, sc, params.RunnerID); err != nil {
		return h.Fail(err)
	}
	return user.NewDeleteUserRunnerNoContent()
}

// UpdateUserRunner enables or disables one of the user's runners.
func (h UserHandlers) UpdateUserRunner(ctx context.Context, params user.UpdateUserRunnerParams) middleware.Responder {
	_, sc, err := userScope(ctx)
	if err != nil {
		return h.Fail(err)
	}
	disabled, err := EditedDisabled(params.Body)
	if err != nil {
		return h.Fail(err)
	}
	r, err := h.Actions.SetRunnerDisabled(ctx, sc, params.RunnerID, disabled)
	if err != nil {
		return h.Fail(err)
	}
	return user.NewUpdateUserRunnerOK().WithPayload(RenderRunner(r))
}

// GetUserWorkflowJobs lists the jobs of the user's repositories.
func (h UserHandlers) GetUserWorkflowJobs(ctx context.Context, params user.GetUserWorkflowJobsParams) middleware.Responder {
	p, _, err := userScope(ctx)
	if err != nil {
		return h.Fail(err)
	}
	pg := h.Page(params.Page, params.Limit)
	out, err := h.Actions.ListJobs(ctx, app.BaseURL(params.HTTPRequest), store.JobFilter{OwnerID: p.User.ID},
		JobQuery{Status: conv.Value(params.Status), Order: params.Order}, pg.Store())
	if err != nil {
		return h.Fail(err)
	}
	return user.NewGetUserWorkflowJobsOK().WithPayload(out).WithXTotalCount(out.TotalCount).
		WithLink(paging.Link(params.HTTPRequest, pg, out.TotalCount))
}

// GetUserWorkflowRuns lists the runs of the user's repositories.
func (h UserHandlers) GetUserWorkflowRuns(ctx context.Context, params user.GetUserWorkflowRunsParams) middleware.Responder {
	p, _, err := userScope(ctx)
	if err != nil {
		return h.Fail(err)
	}
	f, err := h.Actions.RunFilter(ctx, store.RunFilter{OwnerID: p.User.ID}, RunFilterInput{Event: conv.Value(params.Event),
		Branch: conv.Value(params.Branch), Status: conv.Value(params.Status), Actor: conv.Value(params.Actor), HeadSHA: conv.Value(params.HeadSha)})
	if err != nil {
		return h.Fail(err)
	}
	pg := h.Page(params.Page, params.Limit)
	out, err := h.Actions.ListRuns(ctx, app.BaseURL(params.HTTPRequest), p.User, f, pg.Store())
	if err != nil {
		return h.Fail(err)
	}
	return user.NewGetUserWorkflowRunsOK().WithPayload(out).WithXTotalCount(out.TotalCount).
		WithLink(paging.Link(params.HTTPRequest, pg, out.TotalCount))
}
