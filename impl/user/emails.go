package user

import (
	"context"
	"errors"
	"strings"

	"github.com/go-openapi/runtime/middleware"

	"repohost/impl/apierr"
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

// UserAddEmail adds addresses to the caller, all or none. Each must be well
// formed and used by nobody (the caller included).
func (h Handlers) UserAddEmail(ctx context.Context, params user.UserAddEmailParams) middleware.Responder {
	p, err := auth.RequireUser(ctx)
	if err != nil {
		return h.Fail(err)
	}
	if params.Body == nil || len(params.Body.Emails) == 0 {
		return h.Fail(apierr.Validation("Email list empty"))
	}
	added := make([]*store.Email, 0, len(params.Body.Emails))
	seen := map[string]bool{}
	for _, raw := range params.Body.Emails {
		addr := strings.TrimSpace(raw)
		if CheckEmail(addr) != nil {
			return h.Fail(apierr.Validation("Email address %q invalid", addr))
		}
		if seen[strings.ToLower(addr)] {
			return h.Fail(apierr.Validation("Email address has been used: %s", addr))
		}
		seen[strings.ToLower(addr)] = true
		added = append(added, &store.Email{UserID: p.User.ID, Email: addr, IsActivated: true})
	}
	err = h.Store.WithTx(ctx, func(ctx context.Context) error {
		for _, e := range added {
			if _, err := h.Store.Emails().FindByEmail(ctx, e.Email); err == nil {
				return apierr.Validation("Email address has been used: %s", e.Email)
			} else if !errors.Is(err, store.ErrNotFound) {
				return err
			}
			if err := h.Store.Emails().Create(ctx, e); err != nil {
				if errors.Is(err, store.ErrDuplicate) {
					return apierr.Validation("Email address has been used: %s", e.Email)
				}
				return err
			}
		}
		return nil
	})
	if err != nil {
		return h.Fail(err)
	}
	return user.NewUserAddEmailCreated().WithPayload(emailList(added, p.User))
}

// UserDeleteEmail removes addresses of the caller, all or none. An address
// that is not the caller's answers 404; the primary one cannot go (422).
func (h Handlers) UserDeleteEmail(ctx context.Context, params user.UserDeleteEmailParams) middleware.Responder {
	p, err := auth.RequireUser(ctx)
	if err != nil {
		return h.Fail(err)
	}
	if params.Body == nil || len(params.Body.Emails) == 0 {
		return user.NewUserDeleteEmailNoContent()
	}
	err = h.Store.WithTx(ctx, func(ctx context.Context) error {
		es, err := h.Store.Emails().ListByUser(ctx, p.User.ID)
		if err != nil {
			return err
		}
		mine := make(map[string]*store.Email, len(es))
		for _, e := range es {
			mine[e.LowerEmail] = e
		}
		addrs := make([]string, 0, len(params.Body.Emails))
		seen := map[string]bool{}
		for _, raw := range params.Body.Emails {
			addr := strings.TrimSpace(raw)
			e := mine[strings.ToLower(addr)]
			switch {
			case e == nil:
				return apierr.NotFound("Email address does not exist [email: %s]", addr)
			case e.IsPrimary:
				return apierr.Validation("Primary email address cannot be deleted [email: %s]", addr)
			case seen[e.LowerEmail]:
				continue
			}
			seen[e.LowerEmail] = true
			addrs = append(addrs, addr)
		}
		return h.Store.Emails().Delete(ctx, p.User.ID, addrs)
	})
	if err != nil {
		return h.Fail(err)
	}
	return user.NewUserDeleteEmailNoContent()
}
