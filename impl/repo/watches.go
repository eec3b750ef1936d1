package repo

import (
	"context"

	"github.com/go-openapi/runtime/middleware"

	"repohost/impl/app"
	"repohost/impl/auth"
	"repohost/impl/convert"
	"repohost/impl/events"
	"repohost/impl/paging"
	"repohost/restapi/operations/repository"
	"repohost/store"
)

// Watches: a user who watches a repository hears of its issues, pull
// requests and releases (the notifications consumer). Watching needs only
// to see the repository, archived or not, as the reference allows.

// watched loads the repository a subscription route names for the signed-in
// caller.
func (h Handlers) watched(ctx context.Context, owner, name string) (*auth.Principal, *store.Repository, error) {
	p, err := auth.RequireUser(ctx)
	if err != nil {
		return nil, nil, err
	}
	r, _, err := h.Repo(ctx, p, owner, name)
	return p, r, err
}

func (h Handlers) UserCurrentCheckSubscription(ctx context.Context, params repository.UserCurrentCheckSubscriptionParams) middleware.Responder {
	p, r, err := h.watched(ctx, params.Owner, params.Repo)
	if err != nil {
		return h.Fail(err)
	}
	if _, err := h.Store.Watches().FindWatch(ctx, p.User.ID, r.ID); err != nil {
		return h.Fail(err)
	}
	return repository.NewUserCurrentCheckSubscriptionOK().WithPayload(convert.RepoWatch(app.BaseURL(params.HTTPRequest), r))
}

func (h Handlers) UserCurrentPutSubscription(ctx context.Context, params repository.UserCurrentPutSubscriptionParams) middleware.Responder {
	p, r, err := h.watched(ctx, params.Owner, params.Repo)
	if err != nil {
		return h.Fail(err)
	}
	if err := h.svc().SetWatch(ctx, p.User, r, true); err != nil {
		return h.Fail(err)
	}
	return repository.NewUserCurrentPutSubscriptionOK().WithPayload(convert.RepoWatch(app.BaseURL(params.HTTPRequest), r))
}

func (h Handlers) UserCurrentDeleteSubscription(ctx context.Context, params repository.UserCurrentDeleteSubscriptionParams) middleware.Responder {
	p, r, err := h.watched(ctx, params.Owner, params.Repo)
	if err != nil {
		return h.Fail(err)
	}
	if err := h.svc().SetWatch(ctx, p.User, r, false); err != nil {
		return h.Fail(err)
	}
	return repository.NewUserCurrentDeleteSubscriptionNoContent()
}

// RepoListSubscribers lists the repository's watchers, by user id.
func (h Handlers) RepoListSubscribers(ctx context.Context, params repository.RepoListSubscribersParams) middleware.Responder {
	p := auth.FromContext(ctx)
	r, _, err := h.Repo(ctx, p, params.Owner, params.Repo)
	if err != nil {
		return h.Fail(err)
	}
	pg := h.Page(params.Page, params.Limit)
	users, total, err := h.Store.Watches().ListWatchers(ctx, r.ID, pg.Store())
	if err != nil {
		return h.Fail(err)
	}
	out := convert.Users(app.BaseURL(params.HTTPRequest), users, app.Viewer(p))
	return repository.NewRepoListSubscribersOK().WithPayload(out).WithXTotalCount(total).
		WithLink(paging.Link(params.HTTPRequest, pg, total))
}

// SetWatch makes u watch r, or stop watching it; doing it again changes
// nothing and emits nothing.
func (s Service) SetWatch(ctx context.Context, u *store.User, r *store.Repository, watch bool) error {
	if watch {
		// A user the owner blocks cannot watch its repositories.
		if err := s.RefuseBlocked(ctx, u, r.OwnerID); err != nil {
			return err
		}
	}
	return s.Store.WithTx(ctx, func(ctx context.Context) error {
		change, kind := s.Store.Watches().Watch, events.RepoWatched
		if !watch {
			change, kind = s.Store.Watches().Unwatch, events.RepoUnwatched
		}
		changed, err := change(ctx, u.ID, r.ID)
		if err != nil || !changed {
			return err
		}
		return s.Events.Emit(ctx, kind, r.ID, u.ID, EventOf(r))
	})
}
