package admin

import (
	"context"

	"github.com/go-openapi/runtime/middleware"

	"repohost/impl/apierr"
	"repohost/impl/auth"
	"repohost/impl/convert"
	"repohost/impl/paging"
	"repohost/models"
	"repohost/restapi/operations/admin"
)

// The outbox's consumers as an operator watches them (see impl/events).

func (h Handlers) AdminListEventConsumers(ctx context.Context, _ admin.AdminListEventConsumersParams) middleware.Responder {
	if _, err := auth.RequireAdmin(ctx); err != nil {
		return h.Fail(err)
	}
	stats, err := h.Events.Stats(ctx)
	if err != nil {
		return h.Fail(err)
	}
	out := make([]*models.EventConsumer, len(stats))
	for i, s := range stats {
		out[i] = convert.EventConsumer(s)
	}
	return admin.NewAdminListEventConsumersOK().WithPayload(out)
}

func (h Handlers) AdminListEventDeadLetters(ctx context.Context, params admin.AdminListEventDeadLettersParams) middleware.Responder {
	if _, err := auth.RequireAdmin(ctx); err != nil {
		return h.Fail(err)
	}
	consumer := ""
	if params.Consumer != nil {
		consumer = *params.Consumer
	}
	pg := h.Page(params.Page, params.Limit)
	win := pg.Store()
	list, total, err := h.Events.DeadLetters(ctx, consumer, win.Offset, win.Limit)
	if err != nil {
		return h.Fail(err)
	}
	out := make([]*models.EventDeadLetter, len(list))
	for i, d := range list {
		out[i] = convert.DeadLetter(d)
	}
	return admin.NewAdminListEventDeadLettersOK().WithPayload(out).
		WithXTotalCount(total).WithLink(paging.Link(params.HTTPRequest, pg, total))
}

func (h Handlers) AdminRetryEventDeadLetter(ctx context.Context, params admin.AdminRetryEventDeadLetterParams) middleware.Responder {
	if _, err := auth.RequireAdmin(ctx); err != nil {
		return h.Fail(err)
	}
	n, err := h.Events.Retry(ctx, "", params.ID)
	if err != nil {
		return h.Fail(err)
	}
	if n == 0 {
		return h.Fail(apierr.NotFound("dead letter %d does not exist", params.ID))
	}
	return admin.NewAdminRetryEventDeadLetterNoContent()
}
