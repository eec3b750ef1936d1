package user

import (
	"context"

	"github.com/go-openapi/runtime/middleware"

	"repohost/impl/app"
	"repohost/impl/issue"
	"repohost/impl/paging"
	"repohost/restapi/operations/user"
)

// UserCurrentTrackedTimes lists the caller's own tracked time; the rules
// live with the rest of time tracking in impl/issue.
func (h Handlers) UserCurrentTrackedTimes(ctx context.Context, params user.UserCurrentTrackedTimesParams) middleware.Responder {
	q := issue.TimesQuery{Page: h.Page(params.Page, params.Limit)}
	q.Since, q.Before = issue.QueryTime(params.Since), issue.QueryTime(params.Before)
	out, total, err := issue.Service{Deps: h.Deps}.MyTimes(ctx, app.BaseURL(params.HTTPRequest), q)
	if err != nil {
		return h.Fail(err)
	}
	return user.NewUserCurrentTrackedTimesOK().WithPayload(out).WithXTotalCount(total).WithLink(paging.Link(params.HTTPRequest, q.Page, total))
}
