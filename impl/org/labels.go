package org

import (
	"context"

	"github.com/go-openapi/runtime/middleware"

	"repohost/impl/app"
	"repohost/impl/auth"
	"repohost/impl/convert"
	"repohost/impl/issue"
	"repohost/impl/paging"
	"repohost/models"
	"repohost/restapi/operations/organization"
)

// An organization's labels are usable on each of its repositories. Whoever
// may see the organization lists them (anonymous callers too, as in the
// reference); showing one takes a signed-in caller who may see it; its
// owners create, change and delete them.

func (h Handlers) labels() issue.Service { return issue.Service{Deps: h.Deps} }

func (h Handlers) OrgListLabels(ctx context.Context, params organization.OrgListLabelsParams) middleware.Responder {
	o, err := h.VisibleOrg(ctx, auth.FromContext(ctx), params.Org)
	if err != nil {
		return h.Fail(err)
	}
	pg := h.Page(params.Page, params.Limit)
	list, total, err := h.Store.Labels().ListOfOrg(ctx, o.ID, pg.Store())
	if err != nil {
		return h.Fail(err)
	}
	return organization.NewOrgListLabelsOK().WithPayload(convert.OrgLabels(app.BaseURL(params.HTTPRequest), o, list)).
		WithXTotalCount(total).WithLink(paging.Link(params.HTTPRequest, pg, total))
}

func (h Handlers) OrgGetLabel(ctx context.Context, params organization.OrgGetLabelParams) middleware.Responder {
	p, err := auth.RequireUser(ctx)
	if err != nil {
		return h.Fail(err)
	}
	o, err := h.VisibleOrg(ctx, p, params.Org)
	if err != nil {
		return h.Fail(err)
	}
	l, err := h.Store.Labels().FindOfOrg(ctx, o.ID, params.ID)
	if err != nil {
		return h.Fail(err)
	}
	return organization.NewOrgGetLabelOK().WithPayload(convert.OrgLabel(app.BaseURL(params.HTTPRequest), o, l))
}

func (h Handlers) OrgCreateLabel(ctx context.Context, params organization.OrgCreateLabelParams) middleware.Responder {
	p, o, err := h.OwnedOrg(ctx, params.Org)
	if err != nil {
		return h.Fail(err)
	}
	b := params.Body
	if b == nil {
		b = &models.CreateLabelOption{}
	}
	l, err := h.labels().CreateOrgLabel(ctx, p.User, o, issue.LabelInput{Name: deref(b.Name), Color: deref(b.Color),
		Description: deref(b.Description), Exclusive: deref(b.Exclusive), Archived: deref(b.IsArchived)})
	if err != nil {
		return h.Fail(err)
	}
	return organization.NewOrgCreateLabelCreated().WithPayload(convert.OrgLabel(app.BaseURL(params.HTTPRequest), o, l))
}

func (h Handlers) OrgEditLabel(ctx context.Context, params organization.OrgEditLabelParams) middleware.Responder {
	p, o, err := h.OwnedOrg(ctx, params.Org)
	if err != nil {
		return h.Fail(err)
	}
	b := params.Body
	if b == nil {
		b = &models.EditLabelOption{}
	}
	l, err := h.labels().EditOrgLabel(ctx, p.User, o, params.ID, issue.LabelEdit{Name: b.Name, Color: b.Color,
		Description: b.Description, Exclusive: b.Exclusive, Archived: b.IsArchived})
	if err != nil {
		return h.Fail(err)
	}
	return organization.NewOrgEditLabelOK().WithPayload(convert.OrgLabel(app.BaseURL(params.HTTPRequest), o, l))
}

func (h Handlers) OrgDeleteLabel(ctx context.Context, params organization.OrgDeleteLabelParams) middleware.Responder {
	p, o, err := h.OwnedOrg(ctx, params.Org)
	if err != nil {
		return h.Fail(err)
	}
	if err := h.labels().DeleteOrgLabel(ctx, p.User, o, params.ID); err != nil {
		return h.Fail(err)
	}
	return organization.NewOrgDeleteLabelNoContent()
}
