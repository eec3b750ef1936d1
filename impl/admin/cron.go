package admin

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/go-openapi/strfmt"

	"github.com/go-openapi/runtime/middleware"

	"repohost/impl/apierr"
	"repohost/impl/auth"
	"repohost/impl/cron"
	"repohost/impl/paging"
	"repohost/models"
	"repohost/restapi/operations/admin"
	"repohost/store"
)

// scheduler is the process's task scheduler; a server always has one
// (impl.StartCron), a handler built without it answers 503.
func (h Handlers) scheduler() (*cron.Scheduler, error) {
	if h.Cron == nil {
		return nil, fmt.Errorf("the task scheduler is not running: %w", store.ErrUnavailable)
	}
	return h.Cron, nil
}

func (h Handlers) AdminCronList(ctx context.Context, params admin.AdminCronListParams) middleware.Responder {
	if _, err := auth.RequireAdmin(ctx); err != nil {
		return h.Fail(err)
	}
	s, err := h.scheduler()
	if err != nil {
		return h.Fail(err)
	}
	tasks, err := s.List(ctx)
	if err != nil {
		return h.Fail(err)
	}
	pg := h.Page(params.Page, params.Limit)
	total := int64(len(tasks))
	win := pg.Store()
	page := tasks[min(win.Offset, len(tasks)):min(win.Offset+win.Limit, len(tasks))]
	out := make([]*models.Cron, 0, len(page))
	for _, t := range page {
		out = append(out, &models.Cron{Name: t.Name, Schedule: t.Schedule, Next: cronTime(t.Next),
			Prev: cronTime(t.Prev), ExecTimes: t.ExecTimes})
	}
	return admin.NewAdminCronListOK().WithPayload(out).
		WithXTotalCount(total).WithLink(paging.Link(params.HTTPRequest, pg, total))
}

// cronTime renders a task's time as the reference does: always a date-time,
// the zero time (0001-01-01T00:00:00Z) for a task that is off or never ran.
// Clients decode these fields as plain times, so null or "" fails them.
func cronTime(t *time.Time) strfmt.DateTime {
	if t == nil {
		return strfmt.DateTime(time.Time{})
	}
	return strfmt.DateTime(t.UTC())
}

func (h Handlers) AdminCronRun(ctx context.Context, params admin.AdminCronRunParams) middleware.Responder {
	if _, err := auth.RequireAdmin(ctx); err != nil {
		return h.Fail(err)
	}
	s, err := h.scheduler()
	if err != nil {
		return h.Fail(err)
	}
	if err := s.RunNow(params.Task); errors.Is(err, cron.ErrUnknownTask) {
		return h.Fail(apierr.NotFound("cron task %q does not exist", params.Task))
	} else if err != nil {
		return h.Fail(err)
	}
	return admin.NewAdminCronRunNoContent()
}
