package admin

import (
	"context"
	"strings"

	"github.com/go-openapi/runtime/middleware"

	"repohost/impl/auth"
	"repohost/impl/convert"
	"repohost/impl/paging"
	"repohost/models"
	"repohost/restapi/operations/admin"
)

func (h Handlers) AdminGetAllEmails(ctx context.Context, params admin.AdminGetAllEmailsParams) middleware.Responder {
	if _, err := auth.RequireAdmin(ctx); err != nil {
		return h.Fail(err)
	}
	pg := h.Page(params.Page, params.Limit)
	out, total, err := h.searchEmails(ctx, "", pg)
	if err != nil {
		return h.Fail(err)
	}
	return admin.NewAdminGetAllEmailsOK().
		WithXTotalCount(total).
		WithLink(paging.Link(params.HTTPRequest, pg, total)).
		WithPayload(out)
}

// AdminSearchEmails is AdminGetAllEmails narrowed by a keyword matched
// against the owner's name, full name and the address; an empty keyword
// lists everything.
func (h Handlers) AdminSearchEmails(ctx context.Context, params admin.AdminSearchEmailsParams) middleware.Responder {
	if _, err := auth.RequireAdmin(ctx); err != nil {
		return h.Fail(err)
	}
	pg := h.Page(params.Page, params.Limit)
	keyword := ""
	if params.Q != nil {
		keyword = strings.TrimSpace(*params.Q)
	}
	out, total, err := h.searchEmails(ctx, keyword, pg)
	if err != nil {
		return h.Fail(err)
	}
	return admin.NewAdminSearchEmailsOK().
		WithXTotalCount(total).
		WithLink(paging.Link(params.HTTPRequest, pg, total)).
		WithPayload(out)
}

func (h Handlers) searchEmails(ctx context.Context, keyword string, pg paging.Params) ([]*models.Email, int64, error) {
	es, total, err := h.Store.Emails().Search(ctx, keyword, pg.Store())
	if err != nil {
		return nil, 0, err
	}
	out := make([]*models.Email, 0, len(es))
	for _, e := range es {
		out = append(out, convert.Email(&e.Email, e.UserName))
	}
	return out, total, nil
}
