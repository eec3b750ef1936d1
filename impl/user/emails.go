package user

import (
	"context"

	"github.com/go-openapi/runtime/middleware"

	"repohost/impl/auth"
	"repohost/impl/convert"
	"repohost/impl/paging"
	"repohost/models"
	"repohost/restapi/operations/user"
	"repohost/store"
)

func emailList(es []*store.Email, owner *store.User) []*models.Email {
	out := make([]*models.Email, 0, len(es))
	for _, e := range es {
		out = append(out, convert.Email(e, owner.Name))
	}
	return out
}

// UserListEmails lists every address of the caller. A user has few
// addresses, so the list is not paged; the headers still describe it as a
// single page, as on every list.
func (h Handlers) UserListEmails(ctx context.Context, params user.UserListEmailsParams) middleware.Responder {
	p, err := auth.RequireUser(ctx)
	if err != nil {
		return h.Fail(err)
	}
	es, err := h.Store.Emails().ListByUser(ctx, p.User.ID)
	if err != nil {
		return h.Fail(err)
	}
	total := int64(len(es))
	one := paging.Params{Page: 1, Limit: max(len(es), 1)}
	return user.NewUserListEmailsOK().
		WithXTotalCount(total).
		WithLink(paging.Link(params.HTTPRequest, one, total)).
		WithPayload(emailList(es, p.User))
}

// UserAddEmail adds addresses to the caller, all or none, and answers with
// all of the caller's addresses.
func (h Handlers) UserAddEmail(ctx context.Context, params user.UserAddEmailParams) middleware.Responder {
	p, err := auth.RequireUser(ctx)
	if err != nil {
		return h.Fail(err)
	}
	var addrs []string
	if params.Body != nil {
		addrs = params.Body.Emails
	}
	if _, err := h.Users.AddEmails(ctx, p.User, p.User, addrs); err != nil {
		return h.Fail(err)
	}
	// The reference answers with every address of the caller, the new
	// ones among them.
	all, err := h.Store.Emails().ListByUser(ctx, p.User.ID)
	if err != nil {
		return h.Fail(err)
	}
	return user.NewUserAddEmailCreated().WithPayload(emailList(all, p.User))
}

// UserDeleteEmail removes addresses of the caller, all or none.
func (h Handlers) UserDeleteEmail(ctx context.Context, params user.UserDeleteEmailParams) middleware.Responder {
	p, err := auth.RequireUser(ctx)
	if err != nil {
		return h.Fail(err)
	}
	var addrs []string
	if params.Body != nil {
		addrs = params.Body.Emails
	}
	if err := h.Users.DeleteEmails(ctx, p.User, p.User, addrs); err != nil {
		return h.Fail(err)
	}
	return user.NewUserDeleteEmailNoContent()
}
