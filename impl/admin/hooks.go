package admin

import (
	"context"

	"github.com/go-openapi/runtime/middleware"

	"repohost/impl/webhook"
	"repohost/restapi/operations/admin"
)

// The site-wide hooks: system hooks fire for every repository, default
// hooks are copied into each new one. The shared work is in impl/webhook.

// adminHookType reads GET /admin/hooks?type=: system (the default, and
// any unknown value), default, or all.
func adminHookType(t *string) *bool {
	system := true
	if t == nil {
		return &system
	}
	switch *t {
	case "all":
		return nil
	case "default":
		system = false
	}
	return &system
}

func (h Handlers) hooks() webhook.Service { return webhook.Service{Deps: h.Deps} }

func (h Handlers) AdminListHooks(ctx context.Context, params admin.AdminListHooksParams) middleware.Responder {
	sc, err := webhook.SiteScope(ctx)
	if err != nil {
		return h.Fail(err)
	}
	pg, err := h.hooks().ListHooks(ctx, params.HTTPRequest, sc, adminHookType(params.Type), params.Page, params.Limit)
	if err != nil {
		return h.Fail(err)
	}
	return admin.NewAdminListHooksOK().WithPayload(pg.Items).WithXTotalCount(pg.Total).WithLink(pg.Link)
}

func (h Handlers) AdminCreateHook(ctx context.Context, params admin.AdminCreateHookParams) middleware.Responder {
	sc, err := webhook.SiteScope(ctx)
	if err != nil {
		return h.Fail(err)
	}
	out, err := h.hooks().CreateHook(ctx, sc, params.Body)
	if err != nil {
		return h.Fail(err)
	}
	return admin.NewAdminCreateHookCreated().WithPayload(out)
}

func (h Handlers) AdminGetHook(ctx context.Context, params admin.AdminGetHookParams) middleware.Responder {
	sc, err := webhook.SiteScope(ctx)
	if err != nil {
		return h.Fail(err)
	}
	out, err := h.hooks().GetHook(ctx, sc, params.ID)
	if err != nil {
		return h.Fail(err)
	}
	return admin.NewAdminGetHookOK().WithPayload(out)
}

func (h Handlers) AdminEditHook(ctx context.Context, params admin.AdminEditHookParams) middleware.Responder {
	sc, err := webhook.SiteScope(ctx)
	if err != nil {
		return h.Fail(err)
	}
	out, err := h.hooks().ChangeHook(ctx, sc, params.ID, params.Body)
	if err != nil {
		return h.Fail(err)
	}
	return admin.NewAdminEditHookOK().WithPayload(out)
}

func (h Handlers) AdminDeleteHook(ctx context.Context, params admin.AdminDeleteHookParams) middleware.Responder {
	sc, err := webhook.SiteScope(ctx)
	if err != nil {
		return h.Fail(err)
	}
	if err := h.hooks().Delete(ctx, sc, params.ID); err != nil {
		return h.Fail(err)
	}
	return admin.NewAdminDeleteHookNoContent()
}

func (h Handlers) AdminListHookDeliveries(ctx context.Context, params admin.AdminListHookDeliveriesParams) middleware.Responder {
	sc, err := webhook.SiteScope(ctx)
	if err != nil {
		return h.Fail(err)
	}
	pg, err := h.hooks().ListDeliveries(ctx, params.HTTPRequest, sc, params.ID, params.Page, params.Limit)
	if err != nil {
		return h.Fail(err)
	}
	return admin.NewAdminListHookDeliveriesOK().WithPayload(pg.Items).WithXTotalCount(pg.Total).WithLink(pg.Link)
}

func (h Handlers) AdminGetHookDelivery(ctx context.Context, params admin.AdminGetHookDeliveryParams) middleware.Responder {
	sc, err := webhook.SiteScope(ctx)
	if err != nil {
		return h.Fail(err)
	}
	out, err := h.hooks().GetDelivery(ctx, sc, params.ID, params.DeliveryID)
	if err != nil {
		return h.Fail(err)
	}
	return admin.NewAdminGetHookDeliveryOK().WithPayload(out)
}

func (h Handlers) AdminRedeliverHookDelivery(ctx context.Context, params admin.AdminRedeliverHookDeliveryParams) middleware.Responder {
	sc, err := webhook.SiteScope(ctx)
	if err != nil {
		return h.Fail(err)
	}
	out, err := h.hooks().RedeliverHook(ctx, sc, params.ID, params.DeliveryID)
	if err != nil {
		return h.Fail(err)
	}
	return admin.NewAdminRedeliverHookDeliveryAccepted().WithPayload(out)
}
