package webhook

import (
	"context"

	"github.com/go-openapi/runtime/middleware"

	"repohost/impl/app"
	"repohost/restapi/operations/organization"
	"repohost/restapi/operations/repository"
	"repohost/restapi/operations/user"
)

// RepoHandlers implements the hook operations of restapi.RepositoryAPI
// (repository admins only).
type RepoHandlers struct{ *app.Deps }

// OrgHandlers implements the hook operations of
// restapi.OrganizationAPI (organization owners only).
type OrgHandlers struct{ *app.Deps }

// UserHandlers implements the hook operations of restapi.UserAPI (the
// signed-in user's own hooks).
type UserHandlers struct{ *app.Deps }

func (h RepoHandlers) svc() Service { return Service{Deps: h.Deps} }
func (h OrgHandlers) svc() Service  { return Service{Deps: h.Deps} }
func (h UserHandlers) svc() Service { return Service{Deps: h.Deps} }

func (h RepoHandlers) RepoTestHook(ctx context.Context, params repository.RepoTestHookParams) middleware.Responder {
	p, r, err := h.RepoAdmin(ctx, params.Owner, params.Repo)
	if err != nil {
		return h.Fail(err)
	}
	ref := ""
	if params.Ref != nil {
		ref = *params.Ref
	}
	if err := h.svc().TestHook(ctx, r, p.User, params.ID, ref); err != nil {
		return h.Fail(err)
	}
	return repository.NewRepoTestHookNoContent()
}

func (h RepoHandlers) RepoListHooks(ctx context.Context, params repository.RepoListHooksParams) middleware.Responder {
	sc, err := repoScope(ctx, h.Deps, params.Owner, params.Repo)
	if err != nil {
		return h.Fail(err)
	}
	pg, err := h.svc().ListHooks(ctx, params.HTTPRequest, sc, nil, params.Page, params.Limit)
	if err != nil {
		return h.Fail(err)
	}
	return repository.NewRepoListHooksOK().WithPayload(pg.Items).WithXTotalCount(pg.Total).WithLink(pg.Link)
}

func (h RepoHandlers) RepoCreateHook(ctx context.Context, params repository.RepoCreateHookParams) middleware.Responder {
	sc, err := repoScope(ctx, h.Deps, params.Owner, params.Repo)
	if err != nil {
		return h.Fail(err)
	}
	out, err := h.svc().CreateHook(ctx, sc, params.Body)
	if err != nil {
		return h.Fail(err)
	}
	return repository.NewRepoCreateHookCreated().WithPayload(out)
}

func (h RepoHandlers) RepoGetHook(ctx context.Context, params repository.RepoGetHookParams) middleware.Responder {
	sc, err := repoScope(ctx, h.Deps, params.Owner, params.Repo)
	if err != nil {
		return h.Fail(err)
	}
	out, err := h.svc().GetHook(ctx, sc, params.ID)
	if err != nil {
		return h.Fail(err)
	}
	return repository.NewRepoGetHookOK().WithPayload(out)
}

func (h RepoHandlers) RepoEditHook(ctx context.Context, params repository.RepoEditHookParams) middleware.Responder {
	sc, err := repoScope(ctx, h.Deps, params.Owner, params.Repo)
	if err != nil {
		return h.Fail(err)
	}
	out, err := h.svc().ChangeHook(ctx, sc, params.ID, params.Body)
	if err != nil {
		return h.Fail(err)
	}
	return repository.NewRepoEditHookOK().WithPayload(out)
}

func (h RepoHandlers) RepoDeleteHook(ctx context.Context, params repository.RepoDeleteHookParams) middleware.Responder {
	sc, err := repoScope(ctx, h.Deps, params.Owner, params.Repo)
	if err != nil {
		return h.Fail(err)
	}
	if err := h.svc().Delete(ctx, sc, params.ID); err != nil {
		return h.Fail(err)
	}
	return repository.NewRepoDeleteHookNoContent()
}

func (h RepoHandlers) RepoListHookDeliveries(ctx context.Context, params repository.RepoListHookDeliveriesParams) middleware.Responder {
	sc, err := repoScope(ctx, h.Deps, params.Owner, params.Repo)
	if err != nil {
		return h.Fail(err)
	}
	pg, err := h.svc().ListDeliveries(ctx, params.HTTPRequest, sc, params.ID, params.Page, params.Limit)
	if err != nil {
		return h.Fail(err)
	}
	return repository.NewRepoListHookDeliveriesOK().WithPayload(pg.Items).WithXTotalCount(pg.Total).WithLink(pg.Link)
}

func (h RepoHandlers) RepoGetHookDelivery(ctx context.Context, params repository.RepoGetHookDeliveryParams) middleware.Responder {
	sc, err := repoScope(ctx, h.Deps, params.Owner, params.Repo)
	if err != nil {
		return h.Fail(err)
	}
	out, err := h.svc().GetDelivery(ctx, sc, params.ID, params.DeliveryID)
	if err != nil {
		return h.Fail(err)
	}
	return repository.NewRepoGetHookDeliveryOK().WithPayload(out)
}

func (h RepoHandlers) RepoRedeliverHookDelivery(ctx context.Context, params repository.RepoRedeliverHookDeliveryParams) middleware.Responder {
	sc, err := repoScope(ctx, h.Deps, params.Owner, params.Repo)
	if err != nil {
		return h.Fail(err)
	}
	out, err := h.svc().RedeliverHook(ctx, sc, params.ID, params.DeliveryID)
	if err != nil {
		return h.Fail(err)
	}
	return repository.NewRepoRedeliverHookDeliveryAccepted().WithPayload(out)
}

func (h OrgHandlers) OrgListHooks(ctx context.Context, params organization.OrgListHooksParams) middleware.Responder {
	sc, err := orgScope(ctx, h.Deps, params.Org)
	if err != nil {
		return h.Fail(err)
	}
	pg, err := h.svc().ListHooks(ctx, params.HTTPRequest, sc, nil, params.Page, params.Limit)
	if err != nil {
		return h.Fail(err)
	}
	return organization.NewOrgListHooksOK().WithPayload(pg.Items).WithXTotalCount(pg.Total).WithLink(pg.Link)
}

func (h OrgHandlers) OrgCreateHook(ctx context.Context, params organization.OrgCreateHookParams) middleware.Responder {
	sc, err := orgScope(ctx, h.Deps, params.Org)
	if err != nil {
		return h.Fail(err)
	}
	out, err := h.svc().CreateHook(ctx, sc, params.Body)
	if err != nil {
		return h.Fail(err)
	}
	return organization.NewOrgCreateHookCreated().WithPayload(out)
}

func (h OrgHandlers) OrgGetHook(ctx context.Context, params organization.OrgGetHookParams) middleware.Responder {
	sc, err := orgScope(ctx, h.Deps, params.Org)
	if err != nil {
		return h.Fail(err)
	}
	out, err := h.svc().GetHook(ctx, sc, params.ID)
	if err != nil {
		return h.Fail(err)
	}
	return organization.NewOrgGetHookOK().WithPayload(out)
}

func (h OrgHandlers) OrgEditHook(ctx context.Context, params organization.OrgEditHookParams) middleware.Responder {
	sc, err := orgScope(ctx, h.Deps, params.Org)
	if err != nil {
		return h.Fail(err)
	}
	out, err := h.svc().ChangeHook(ctx, sc, params.ID, params.Body)
	if err != nil {
		return h.Fail(err)
	}
	return organization.NewOrgEditHookOK().WithPayload(out)
}

func (h OrgHandlers) OrgDeleteHook(ctx context.Context, params organization.OrgDeleteHookParams) middleware.Responder {
	sc, err := orgScope(ctx, h.Deps, params.Org)
	if err != nil {
		return h.Fail(err)
	}
	if err := h.svc().Delete(ctx, sc, params.ID); err != nil {
		return h.Fail(err)
	}
	return organization.NewOrgDeleteHookNoContent()
}

func (h OrgHandlers) OrgListHookDeliveries(ctx context.Context, params organization.OrgListHookDeliveriesParams) middleware.Responder {
	sc, err := orgScope(ctx, h.Deps, params.Org)
	if err != nil {
		return h.Fail(err)
	}
	pg, err := h.svc().ListDeliveries(ctx, params.HTTPRequest, sc, params.ID, params.Page, params.Limit)
	if err != nil {
		return h.Fail(err)
	}
	return organization.NewOrgListHookDeliveriesOK().WithPayload(pg.Items).WithXTotalCount(pg.Total).WithLink(pg.Link)
}

func (h OrgHandlers) OrgGetHookDelivery(ctx context.Context, params organization.OrgGetHookDeliveryParams) middleware.Responder {
	sc, err := orgScope(ctx, h.Deps, params.Org)
	if err != nil {
		return h.Fail(err)
	}
	out, err := h.svc().GetDelivery(ctx, sc, params.ID, params.DeliveryID)
	if err != nil {
		return h.Fail(err)
	}
	return organization.NewOrgGetHookDeliveryOK().WithPayload(out)
}

func (h OrgHandlers) OrgRedeliverHookDelivery(ctx context.Context, params organization.OrgRedeliverHookDeliveryParams) middleware.Responder {
	sc, err := orgScope(ctx, h.Deps, params.Org)
	if err != nil {
		return h.Fail(err)
	}
	out, err := h.svc().RedeliverHook(ctx, sc, params.ID, params.DeliveryID)
	if err != nil {
		return h.Fail(err)
	}
	return organization.NewOrgRedeliverHookDeliveryAccepted().WithPayload(out)
}

func (h UserHandlers) UserListHooks(ctx context.Context, params user.UserListHooksParams) middleware.Responder {
	sc, err := userScope(ctx)
	if err != nil {
		return h.Fail(err)
	}
	pg, err := h.svc().ListHooks(ctx, params.HTTPRequest, sc, nil, params.Page, params.Limit)
	if err != nil {
		return h.Fail(err)
	}
	return user.NewUserListHooksOK().WithPayload(pg.Items).WithXTotalCount(pg.Total).WithLink(pg.Link)
}

func (h UserHandlers) UserCreateHook(ctx context.Context, params user.UserCreateHookParams) middleware.Responder {
	sc, err := userScope(ctx)
	if err != nil {
		return h.Fail(err)
	}
	out, err := h.svc().CreateHook(ctx, sc, params.Body)
	if err != nil {
		return h.Fail(err)
	}
	return user.NewUserCreateHookCreated().WithPayload(out)
}

func (h UserHandlers) UserGetHook(ctx context.Context, params user.UserGetHookParams) middleware.Responder {
	sc, err := userScope(ctx)
	if err != nil {
		return h.Fail(err)
	}
	out, err := h.svc().GetHook(ctx, sc, params.ID)
	if err != nil {
		return h.Fail(err)
	}
	return user.NewUserGetHookOK().WithPayload(out)
}

func (h UserHandlers) UserEditHook(ctx context.Context, params user.UserEditHookParams) middleware.Responder {
	sc, err := userScope(ctx)
	if err != nil {
		return h.Fail(err)
	}
	out, err := h.svc().ChangeHook(ctx, sc, params.ID, params.Body)
	if err != nil {
		return h.Fail(err)
	}
	return user.NewUserEditHookOK().WithPayload(out)
}

func (h UserHandlers) UserDeleteHook(ctx context.Context, params user.UserDeleteHookParams) middleware.Responder {
	sc, err := userScope(ctx)
	if err != nil {
		return h.Fail(err)
	}
	if err := h.svc().Delete(ctx, sc, params.ID); err != nil {
		return h.Fail(err)
	}
	return user.NewUserDeleteHookNoContent()
}

func (h UserHandlers) UserListHookDeliveries(ctx context.Context, params user.UserListHookDeliveriesParams) middleware.Responder {
	sc, err := userScope(ctx)
	if err != nil {
		return h.Fail(err)
	}
	pg, err := h.svc().ListDeliveries(ctx, params.HTTPRequest, sc, params.ID, params.Page, params.Limit)
	if err != nil {
		return h.Fail(err)
	}
	return user.NewUserListHookDeliveriesOK().WithPayload(pg.Items).WithXTotalCount(pg.Total).WithLink(pg.Link)
}

func (h UserHandlers) UserGetHookDelivery(ctx context.Context, params user.UserGetHookDeliveryParams) middleware.Responder {
	sc, err := userScope(ctx)
	if err != nil {
		return h.Fail(err)
	}
	out, err := h.svc().GetDelivery(ctx, sc, params.ID, params.DeliveryID)
	if err != nil {
		return h.Fail(err)
	}
	return user.NewUserGetHookDeliveryOK().WithPayload(out)
}

func (h UserHandlers) UserRedeliverHookDelivery(ctx context.Context, params user.UserRedeliverHookDeliveryParams) middleware.Responder {
	sc, err := userScope(ctx)
	if err != nil {
		return h.Fail(err)
	}
	out, err := h.svc().RedeliverHook(ctx, sc, params.ID, params.DeliveryID)
	if err != nil {
		return h.Fail(err)
	}
	return user.NewUserRedeliverHookDeliveryAccepted().WithPayload(out)
}
