package org

import (
	"context"

	"github.com/go-openapi/runtime/middleware"

	"repohost/impl/access"
	"repohost/impl/apierr"
	"repohost/impl/app"
	"repohost/impl/auth"
	"repohost/impl/convert"
	"repohost/impl/paging"
	"repohost/restapi/operations/organization"
	"repohost/store"
)

func errNotOwner() error { return apierr.Forbidden("Must be an organization owner") }

// ownedOrg loads an organization p may see and checks that p owns it: 404
// when hidden, 403 when visible but not owned.
func (h Handlers) ownedOrg(ctx context.Context, p *auth.Principal, name string) (*store.User, error) {
	o, err := h.VisibleOrg(ctx, p, name)
	if err != nil {
		return nil, err
	}
	ok, err := h.Access.IsOrgOwner(ctx, p, o)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, errNotOwner()
	}
	return o, nil
}

func (h Handlers) OrgCreate(ctx context.Context, params organization.OrgCreateParams) middleware.Responder {
	p, err := auth.RequireUser(ctx)
	if err != nil {
		return h.Fail(err)
	}
	if !p.User.IsAdmin && (!p.User.AllowCreateOrg || p.User.Restricted) {
		return h.Fail(apierr.Forbidden("Create organization not allowed"))
	}
	o, err := Create(ctx, h.Deps, p.User, params.Organization)
	if err != nil {
		return h.Fail(err)
	}
	return organization.NewOrgCreateCreated().WithPayload(convert.Org(app.BaseURL(params.HTTPRequest), o))
}

func (h Handlers) OrgGet(ctx context.Context, params organization.OrgGetParams) middleware.Responder {
	o, err := h.VisibleOrg(ctx, auth.FromContext(ctx), params.Org)
	if err != nil {
		return h.Fail(err)
	}
	return organization.NewOrgGetOK().WithPayload(convert.Org(app.BaseURL(params.HTTPRequest), o))
}

func (h Handlers) OrgGetAll(ctx context.Context, params organization.OrgGetAllParams) middleware.Responder {
	// An organization is listed to whoever could open it: the visibilities
	// the caller sees, plus the ones it belongs to.
	vis, memberID := access.UserVisibilities(auth.FromContext(ctx))
	pg := h.Page(params.Page, params.Limit)
	orgs, total, err := h.Store.Orgs().ListVisible(ctx, memberID, vis, pg.Store())
	if err != nil {
		return h.Fail(err)
	}
	return organization.NewOrgGetAllOK().
		WithXTotalCount(total).
		WithLink(paging.Link(params.HTTPRequest, pg, total)).
		WithPayload(convert.Orgs(app.BaseURL(params.HTTPRequest), orgs))
}

func (h Handlers) OrgListCurrentUserOrgs(ctx context.Context, params organization.OrgListCurrentUserOrgsParams) middleware.Responder {
	p, err := auth.RequireUser(ctx)
	if err != nil {
		return h.Fail(err)
	}
	var vis []store.Visibility
	if p.PublicOnly() {
		vis = []store.Visibility{store.VisibilityPublic}
	}
	pg := h.Page(params.Page, params.Limit)
	orgs, total, err := h.Store.Orgs().ListUserOrgs(ctx, p.UserID(), vis, pg.Store())
	if err != nil {
		return h.Fail(err)
	}
	return organization.NewOrgListCurrentUserOrgsOK().
		WithXTotalCount(total).
		WithLink(paging.Link(params.HTTPRequest, pg, total)).
		WithPayload(convert.Orgs(app.BaseURL(params.HTTPRequest), orgs))
}

func (h Handlers) OrgEdit(ctx context.Context, params organization.OrgEditParams) middleware.Responder {
	p, err := auth.RequireUser(ctx)
	if err != nil {
		return h.Fail(err)
	}
	o, err := h.ownedOrg(ctx, p, params.Org)
	if err != nil {
		return h.Fail(err)
	}
	opt := params.Body
	if opt != nil {
		if err := checkProfile(opt.Email, opt.Website); err != nil {
			return h.Fail(err)
		}
		err = h.Store.WithTx(ctx, func(ctx context.Context) error {
			// Re-read, locked, inside the transaction so fields changed
			// meanwhile by someone else are not written back with old values.
			fresh, err := h.Store.Users().FindByIDForUpdate(ctx, o.ID)
			if err != nil {
				return err
			}
			set(&fresh.FullName, opt.FullName)
			set(&fresh.Email, opt.Email)
			set(&fresh.Description, opt.Description)
			set(&fresh.Website, opt.Website)
			set(&fresh.Location, opt.Location)
			set(&fresh.RepoAdminChangeTeamAcc, opt.RepoAdminChangeTeamAccess)
			fresh.Visibility = visibility(opt.Visibility, fresh.Visibility)
			o = fresh
			return h.Store.Users().Update(ctx, fresh)
		})
		if err != nil {
			return h.Fail(err)
		}
	}
	return organization.NewOrgEditOK().WithPayload(convert.Org(app.BaseURL(params.HTTPRequest), o))
}

func set[T any](dst *T, src *T) {
	if src != nil {
		*dst = *src
	}
}

func (h Handlers) OrgDelete(ctx context.Context, params organization.OrgDeleteParams) middleware.Responder {
	p, err := auth.RequireUser(ctx)
	if err != nil {
		return h.Fail(err)
	}
	o, err := h.ownedOrg(ctx, p, params.Org)
	if err != nil {
		return h.Fail(err)
	}
	err = h.Store.WithTx(ctx, func(ctx context.Context) error {
		// Counted inside the transaction, right before the delete, so the
		// window for a repository created concurrently is as small as the
		// database allows.
		n, err := h.Store.Repos().CountByOwner(ctx, o.ID)
		if err != nil {
			return err
		}
		if n > 0 {
			return apierr.Validation("organization still has ownership of repositories")
		}
		if err := h.Store.Orgs().DeleteOrgMembers(ctx, o.ID); err != nil {
			return err
		}
		return h.Store.Users().Delete(ctx, o.ID)
	})
	if err != nil {
		return h.Fail(err)
	}
	return organization.NewOrgDeleteNoContent()
}
