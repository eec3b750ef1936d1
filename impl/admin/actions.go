package admin

import (
	"context"

	"github.com/go-openapi/runtime/middleware"
	"github.com/go-openapi/swag/conv"

	"repohost/impl/actions"
	"repohost/impl/app"
	"repohost/impl/auth"
	"repohost/impl/paging"
	"repohost/models"
	"repohost/restapi/operations/admin"
	"repohost/store"
)

// siteScope is the admins' view of runners: every runner, and registration
// at the whole site.
var siteScope = actions.Scope{Site: true}

// siteAdmin is the caller when a site admin with a token not limited to
// public data.
func siteAdmin(ctx context.Context) (*auth.Principal, error) {
	p, err := auth.RequireAdmin(ctx)
	if err != nil {
		return nil, err
	}
	return p, actions.RequireUnrestricted(p)
}

// GetAdminRunners lists every runner.
func (h Handlers) GetAdminRunners(ctx context.Context, params admin.GetAdminRunnersParams) middleware.Responder {
	if _, err := siteAdmin(ctx); err != nil {
		return h.Fail(err)
	}
	rs, total, err := h.Actions.ListRunners(ctx, siteScope, params.Disabled, h.Page(params.Page, params.Limit).Store())
	if err != nil {
		return h.Fail(err)
	}
	return admin.NewGetAdminRunnersOK().WithPayload(actions.RunnerList(rs, total))
}

// AdminCreateRunnerRegistrationToken gives the site's registration token.
func (h Handlers) AdminCreateRunnerRegistrationToken(ctx context.Context, _ admin.AdminCreateRunnerRegistrationTokenParams) middleware.Responder {
	if _, err := siteAdmin(ctx); err != nil {
		return h.Fail(err)
	}
	token, err := h.Actions.RegistrationToken(ctx, siteScope)
	if err != nil {
		return h.Fail(err)
	}
	return admin.NewAdminCreateRunnerRegistrationTokenOK().WithPayload(&models.RegistrationToken{Token: token})
}

// GetAdminRunner reads any runner.
func (h Handlers) GetAdminRunner(ctx context.Context, params admin.GetAdminRunnerParams) middleware.Responder {
	if _, err := siteAdmin(ctx); err != nil {
		return h.Fail(err)
	}
	r, err := h.Actions.GetRunner(ctx, siteScope, params.RunnerID)
	if err != nil {
		return h.Fail(err)
	}
	return admin.NewGetAdminRunnerOK().WithPayload(actions.RenderRunner(r))
}

// DeleteAdminRunner removes any runner.
func (h Handlers) DeleteAdminRunner(ctx context.Context, params admin.DeleteAdminRunnerParams) middleware.Responder {
	if _, err := siteAdmin(ctx); err != nil {
		return h.Fail(err)
	}
	if err := h.Actions.DeleteRunner(ctx, siteScope, params.RunnerID); err != nil {
		return h.Fail(err)
	}
	return admin.NewDeleteAdminRunnerNoContent()
}

// UpdateAdminRunner enables or disables any runner.
func (h Handlers) UpdateAdminRunner(ctx context.Context, params admin.UpdateAdminRunnerParams) middleware.Responder {
	if _, err := siteAdmin(ctx); err != nil {
		return h.Fail(err)
	}
	disabled, err := actions.EditedDisabled(params.Body)
	if err != nil {
		return h.Fail(err)
	}
	r, err := h.Actions.SetRunnerDisabled(ctx, siteScope, params.RunnerID, disabled)
	if err != nil {
		return h.Fail(err)
	}
	return admin.NewUpdateAdminRunnerOK().WithPayload(actions.RenderRunner(r))
}

// ListAdminWorkflowJobs lists the jobs of every repository.
func (h Handlers) ListAdminWorkflowJobs(ctx context.Context, params admin.ListAdminWorkflowJobsParams) middleware.Responder {
	if _, err := siteAdmin(ctx); err != nil {
		return h.Fail(err)
	}
	pg := h.Page(params.Page, params.Limit)
	out, err := h.Actions.ListJobs(ctx, app.BaseURL(params.HTTPRequest), store.JobFilter{},
		actions.JobQuery{Status: conv.Value(params.Status), Order: params.Order}, pg.Store())
	if err != nil {
		return h.Fail(err)
	}
	return admin.NewListAdminWorkflowJobsOK().WithPayload(out).WithXTotalCount(out.TotalCount).
		WithLink(paging.Link(params.HTTPRequest, pg, out.TotalCount))
}

// ListAdminWorkflowRuns lists the runs of every repository.
func (h Handlers) ListAdminWorkflowRuns(ctx context.Context, params admin.ListAdminWorkflowRunsParams) middleware.Responder {
	p, err := siteAdmin(ctx)
	if err != nil {
		return h.Fail(err)
	}
	f, err := h.Actions.RunFilter(ctx, store.RunFilter{}, actions.RunFilterInput{Event: conv.Value(params.Event),
		Branch: conv.Value(params.Branch), Status: conv.Value(params.Status), Actor: conv.Value(params.Actor), HeadSHA: conv.Value(params.HeadSha)})
	if err != nil {
		return h.Fail(err)
	}
	pg := h.Page(params.Page, params.Limit)
	out, err := h.Actions.ListRuns(ctx, app.BaseURL(params.HTTPRequest), p.User, f, pg.Store())
	if err != nil {
		return h.Fail(err)
	}
	return admin.NewListAdminWorkflowRunsOK().WithPayload(out).WithXTotalCount(out.TotalCount).
		WithLink(paging.Link(params.HTTPRequest, pg, out.TotalCount))
}
