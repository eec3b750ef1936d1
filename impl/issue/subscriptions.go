package issue

import (
	"context"
	"errors"

	"github.com/go-openapi/runtime/middleware"

	"repohost/impl/access"
	"repohost/impl/apierr"
	"repohost/impl/app"
	"repohost/impl/auth"
	"repohost/impl/convert"
	"repohost/impl/events"
	"repohost/impl/paging"
	"repohost/restapi/operations/issue"
	"repohost/store"
)

// Issue subscriptions. A user is subscribed to an issue when they chose to
// (a row in issue_watches saying so); without a choice, when they take
// part in it (posted, commented, are assigned or mentioned) or watch its
// repository. Choosing not to (the row saying so) overrides both.

// readableIssue loads the issue or pull request a route names, for p:
// 404 when p may not read the unit it belongs to.
func (s Service) readableIssue(ctx context.Context, p *auth.Principal, owner, name string, index int64) (*store.Repository, *store.Issue, error) {
	r, perm, err := s.Tracker(ctx, p, owner, name)
	if err != nil {
		return nil, nil, err
	}
	is, err := s.issue(ctx, r, index)
	if err != nil {
		return nil, nil, err
	}
	unit := access.UnitIssues
	if is.IsPull {
		unit = access.UnitPulls
	}
	if !perm.CanRead(unit) {
		return nil, nil, apierr.NotFound("not found")
	}
	return r, is, nil
}

// Subscribed tells whether user u is subscribed to is (see above).
func (s Service) Subscribed(ctx context.Context, u *store.User, is *store.Issue) (bool, error) {
	w, err := s.Store.Watches().FindIssueWatch(ctx, u.ID, is.ID)
	if err == nil {
		return w.IsWatching, nil
	}
	if !errors.Is(err, store.ErrNotFound) {
		return false, err
	}
	if ok, err := s.Store.Watches().IsParticipant(ctx, u.ID, is); err != nil || ok {
		return ok, err
	}
	_, err = s.Store.Watches().FindWatch(ctx, u.ID, is.RepoID)
	if errors.Is(err, store.ErrNotFound) {
		return false, nil
	}
	return err == nil, err
}

// SetSubscription records u's choice about is, made by doer (u, or a site
// admin); false when u's subscription already was as chosen (then nothing
// is recorded).
func (s Service) SetSubscription(ctx context.Context, doer, u *store.User, is *store.Issue, subscribe bool) (bool, error) {
	changed := false
	err := s.Store.WithTx(ctx, func(ctx context.Context) error {
		cur, err := s.Subscribed(ctx, u, is)
		if err != nil || cur == subscribe {
			return err
		}
		if err := s.Store.Watches().SetIssueWatch(ctx, u.ID, is.ID, subscribe); err != nil {
			return err
		}
		changed = true
		kind := events.IssueSubscribed
		if !subscribe {
			kind = events.IssueUnsubscribed
		}
		return s.emitIssueEdit(ctx, doer, is, events.Issue{ID: is.ID, Index: is.Index, Subscriber: u.ID}, kind)
	})
	return changed, err
}

func (h Handlers) IssueSubscriptions(ctx context.Context, params issue.IssueSubscriptionsParams) middleware.Responder {
	p := auth.FromContext(ctx)
	_, is, err := h.svc().readableIssue(ctx, p, params.Owner, params.Repo, params.Index)
	if err != nil {
		return h.Fail(err)
	}
	pg := h.Page(params.Page, params.Limit)
	users, total, err := h.Store.Watches().ListIssueSubscribers(ctx, is, pg.Store())
	if err != nil {
		return h.Fail(err)
	}
	out := convert.Users(app.BaseURL(params.HTTPRequest), users, app.Viewer(p))
	return issue.NewIssueSubscriptionsOK().WithPayload(out).WithXTotalCount(total).
		WithLink(paging.Link(params.HTTPRequest, pg, total))
}

func (h Handlers) IssueCheckSubscription(ctx context.Context, params issue.IssueCheckSubscriptionParams) middleware.Responder {
	p, err := auth.RequireUser(ctx)
	if err != nil {
		return h.Fail(err)
	}
	r, is, err := h.svc().readableIssue(ctx, p, params.Owner, params.Repo, params.Index)
	if err != nil {
		return h.Fail(err)
	}
	ok, err := h.svc().Subscribed(ctx, p.User, is)
	if err != nil {
		return h.Fail(err)
	}
	return issue.NewIssueCheckSubscriptionOK().WithPayload(convert.IssueWatch(app.BaseURL(params.HTTPRequest), r, is, ok))
}

// subscriber loads the issue and the user a subscription change names:
// the caller may change their own subscription, a site admin anyone's (the
// reference's rule).
func (h Handlers) subscriber(ctx context.Context, owner, name string, index int64, login string) (*store.User, *store.Issue, error) {
	p, err := auth.RequireUser(ctx)
	if err != nil {
		return nil, nil, err
	}
	_, is, err := h.svc().readableIssue(ctx, p, owner, name, index)
	if err != nil {
		return nil, nil, err
	}
	u, err := h.Store.Users().FindByName(ctx, login)
	if err != nil {
		return nil, nil, err
	}
	if u.ID != p.User.ID && !p.User.IsAdmin {
		return nil, nil, apierr.Forbidden("%s is not permitted to change subscriptions for %s", p.User.Name, u.Name)
	}
	return u, is, nil
}

func (h Handlers) IssueAddSubscription(ctx context.Context, params issue.IssueAddSubscriptionParams) middleware.Responder {
	u, is, err := h.subscriber(ctx, params.Owner, params.Repo, params.Index, params.User)
	if err != nil {
		return h.Fail(err)
	}
	changed, err := h.svc().SetSubscription(ctx, auth.FromContext(ctx).User, u, is, true)
	if err != nil {
		return h.Fail(err)
	}
	if !changed {
		return issue.NewIssueAddSubscriptionOK()
	}
	return issue.NewIssueAddSubscriptionCreated()
}

func (h Handlers) IssueDeleteSubscription(ctx context.Context, params issue.IssueDeleteSubscriptionParams) middleware.Responder {
	u, is, err := h.subscriber(ctx, params.Owner, params.Repo, params.Index, params.User)
	if err != nil {
		return h.Fail(err)
	}
	changed, err := h.svc().SetSubscription(ctx, auth.FromContext(ctx).User, u, is, false)
	if err != nil {
		return h.Fail(err)
	}
	if !changed {
		return issue.NewIssueDeleteSubscriptionOK()
	}
	return issue.NewIssueDeleteSubscriptionCreated()
}
