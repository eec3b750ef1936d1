package repo

import (
	"context"

	"github.com/go-openapi/runtime/middleware"

	"repohost/impl/app"
	"repohost/impl/issue"
	"repohost/impl/paging"
	"repohost/restapi/operations/repository"
)

// The reference files these two lists under "repository"; the rules live
// with the rest of time tracking in impl/issue.

func (h Handlers) RepoTrackedTimes(ctx context.Context, params repository.RepoTrackedTimesParams) middleware.Responder {
	q := issue.TimesQuery{Page: h.Page(params.Page, params.Limit)}
	if params.User != nil {
		q.User = *params.User
	}
	q.Since, q.Before = issue.QueryTime(params.Since), issue.QueryTime(params.Before)
	out, total, err := issue.Service{Deps: h.Deps}.RepoTimes(ctx, app.BaseURL(params.HTTPRequest), params.Owner, params.Repo, q)
	if err != nil {
		return h.Fail(err)
	}
	return repository.NewRepoTrackedTimesOK().WithPayload(out).WithXTotalCount(total).WithLink(paging.Link(params.HTTPRequest, q.Page, total))
}

func (h Handlers) UserTrackedTimes(ctx context.Context, params repository.UserTrackedTimesParams) middleware.Responder {
	q := issue.TimesQuery{User: params.User, UserInPath: true, Page: h.Page(params.Page, params.Limit)}
	out, total, err := issue.Service{Deps: h.Deps}.RepoTimes(ctx, app.BaseURL(params.HTTPRequest), params.Owner, params.Repo, q)
	if err != nil {
		return h.Fail(err)
	}
	return repository.NewUserTrackedTimesOK().WithPayload(out).WithXTotalCount(total).WithLink(paging.Link(params.HTTPRequest, q.Page, total))
}
