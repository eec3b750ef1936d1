package issue

import (
	"context"
	"time"

	"github.com/go-openapi/runtime/middleware"

	"repohost/impl/access"
	"repohost/impl/apierr"
	"repohost/impl/app"
	"repohost/impl/auth"
	"repohost/impl/convert"
	"repohost/impl/paging"
	"repohost/models"
	"repohost/restapi/operations/issue"
	"repohost/store"
)

// TimesQuery is what a tracked-time list asks for.
type TimesQuery struct {
	// User filters by a user name ("" for everyone the caller may see).
	User string
	// UserInPath marks the deprecated /times/{user} form, which only
	// repository admins, site admins and the user themself may call.
	UserInPath    bool
	Since, Before *time.Time
	Page          paging.Params
}

// timesUser applies the reference's rule on whose times a caller sees:
// site admins, writers and callers asking about themselves may filter by
// anyone; others are limited to their own entries (silently when they
// named nobody, with 403 when they named someone else).
func (s Service) timesUser(ctx context.Context, p *auth.Principal, perm access.Permission, q TimesQuery) (int64, error) {
	var uid int64
	if q.User != "" {
		u, err := s.Store.Users().FindByName(ctx, q.User)
		if err != nil {
			return 0, err
		}
		uid = u.ID
	}
	if q.UserInPath {
		if !perm.IsAdmin() && !p.IsAdmin() && uid != p.UserID() {
			return 0, apierr.Forbidden("query by user not allowed; not enough rights")
		}
		return uid, nil
	}
	if p.IsAdmin() || perm.CanWrite(access.UnitIssues) || (uid != 0 && uid == p.UserID()) {
		return uid, nil
	}
	if uid == 0 {
		return p.UserID(), nil
	}
	return 0, apierr.Forbidden("query by user not allowed; not enough rights")
}

// renderTimes renders a page of entries with their issues, in a fixed
// number of statements.
func (s Service) renderTimes(ctx context.Context, base string, viewer *store.User, list []*store.TrackedTime,
	repos map[int64]*store.Repository) ([]*models.TrackedTime, error) {
	issueIDs := make([]int64, 0, len(list))
	userIDs := make([]int64, 0, len(list))
	for _, t := range list {
		issueIDs = append(issueIDs, t.IssueID)
		userIDs = append(userIDs, t.UserID)
	}
	byID, err := s.Store.Issues().FindByIDs(ctx, issueIDs)
	if err != nil {
		return nil, err
	}
	issues := make([]*store.Issue, 0, len(byID))
	for _, is := range byID {
		issues = append(issues, is)
	}
	rendered, users, err := s.render(ctx, base, viewer, issues, repos, userIDs)
	if err != nil {
		return nil, err
	}
	apiIssues := make(map[int64]*models.Issue, len(rendered))
	for _, is := range rendered {
		apiIssues[is.ID] = is
	}
	out := make([]*models.TrackedTime, 0, len(list))
	for _, t := range list {
		out = append(out, convert.TrackedTime(t, users[t.UserID], apiIssues[t.IssueID]))
	}
	return out, nil
}

// RepoTimes lists the time tracked in repository owner/name, for
// GET /repos/{owner}/{repo}/times and its /times/{user} form.
func (s Service) RepoTimes(ctx context.Context, base string, owner, name string, q TimesQuery) ([]*models.TrackedTime, int64, error) {
	p, r, perm, err := s.userTracker(ctx, owner, name)
	if err != nil {
		return nil, 0, err
	}
	if !TimeTrackerEnabled(r) {
		return nil, 0, apierr.BadRequest("time tracking disabled")
	}
	uid, err := s.timesUser(ctx, p, perm, q)
	if err != nil {
		return nil, 0, err
	}
	f := store.TimeFilter{RepoID: r.ID, UserID: uid, CreatedSince: q.Since, CreatedBefore: q.Before}
	list, total, err := s.Store.TrackedTimes().List(ctx, f, q.Page.Store())
	if err != nil {
		return nil, 0, err
	}
	out, err := s.renderTimes(ctx, base, p.User, list, map[int64]*store.Repository{r.ID: r})
	return out, total, err
}

// MyTimes lists the caller's own tracked time in every repository they
// can still see, for GET /user/times.
func (s Service) MyTimes(ctx context.Context, base string, q TimesQuery) ([]*models.TrackedTime, int64, error) {
	p, err := auth.RequireUser(ctx)
	if err != nil {
		return nil, 0, err
	}
	f := store.TimeFilter{UserID: p.UserID(), VisibleOnly: true, Viewer: access.Viewer(p), CreatedSince: q.Since, CreatedBefore: q.Before}
	list, total, err := s.Store.TrackedTimes().List(ctx, f, q.Page.Store())
	if err != nil {
		return nil, 0, err
	}
	out, err := s.renderTimes(ctx, base, p.User, list, nil)
	return out, total, err
}

func (h Handlers) IssueTrackedTimes(ctx context.Context, params issue.IssueTrackedTimesParams) middleware.Responder {
	s := h.svc()
	p, r, perm, err := s.userTracker(ctx, params.Owner, params.Repo)
	if err != nil {
		return h.Fail(err)
	}
	if !TimeTrackerEnabled(r) {
		return h.Fail(apierr.NotFound("Timetracker is disabled"))
	}
	is, err := s.issue(ctx, r, params.Index)
	if err != nil {
		return h.Fail(err)
	}
	q := TimesQuery{User: deref(params.User), Since: QueryTime(params.Since), Before: QueryTime(params.Before), Page: h.Page(params.Page, params.Limit)}
	uid, err := s.timesUser(ctx, p, perm, q)
	if err != nil {
		return h.Fail(err)
	}
	f := store.TimeFilter{IssueID: is.ID, UserID: uid, CreatedSince: q.Since, CreatedBefore: q.Before}
	list, total, err := h.Store.TrackedTimes().List(ctx, f, q.Page.Store())
	if err != nil {
		return h.Fail(err)
	}
	out, err := s.renderTimes(ctx, app.BaseURL(params.HTTPRequest), p.User, list, map[int64]*store.Repository{r.ID: r})
	if err != nil {
		return h.Fail(err)
	}
	return issue.NewIssueTrackedTimesOK().WithPayload(out).WithXTotalCount(total).WithLink(paging.Link(params.HTTPRequest, q.Page, total))
}

// timeTarget resolves the issue of a tracked-time change.
func (h Handlers) timeTarget(ctx context.Context, owner, name string, index int64) (*auth.Principal, *reactionTarget, error) {
	s := h.svc()
	p, r, perm, err := s.writableTracker(ctx, owner, name)
	if err != nil {
		return nil, nil, err
	}
	is, err := s.issue(ctx, r, index)
	if err != nil {
		return nil, nil, err
	}
	return p, &reactionTarget{r: r, perm: perm, issue: is}, nil
}

func (h Handlers) IssueAddTime(ctx context.Context, params issue.IssueAddTimeParams) middleware.Responder {
	p, t, err := h.timeTarget(ctx, params.Owner, params.Repo, params.Index)
	if err != nil {
		return h.Fail(err)
	}
	o := orEmpty(params.Body)
	tt, user, err := h.svc().TrackTime(ctx, p.User, t.r, t.perm, t.issue, deref(o.Time), QueryTime(o.Created), deref(o.User))
	if err != nil {
		return h.Fail(err)
	}
	base := app.BaseURL(params.HTTPRequest)
	is, err := h.svc().renderOne(ctx, base, p.User, t.r, t.issue)
	if err != nil {
		return h.Fail(err)
	}
	return issue.NewIssueAddTimeOK().WithPayload(convert.TrackedTime(tt, user, is))
}

func (h Handlers) IssueResetTime(ctx context.Context, params issue.IssueResetTimeParams) middleware.Responder {
	p, t, err := h.timeTarget(ctx, params.Owner, params.Repo, params.Index)
	if err != nil {
		return h.Fail(err)
	}
	if err := h.svc().ResetTime(ctx, p.User, t.r, t.perm, t.issue); err != nil {
		return h.Fail(err)
	}
	return issue.NewIssueResetTimeNoContent()
}

func (h Handlers) IssueDeleteTime(ctx context.Context, params issue.IssueDeleteTimeParams) middleware.Responder {
	p, t, err := h.timeTarget(ctx, params.Owner, params.Repo, params.Index)
	if err != nil {
		return h.Fail(err)
	}
	if err := h.svc().DeleteTime(ctx, p.User, t.r, t.perm, t.issue, params.ID); err != nil {
		return h.Fail(err)
	}
	return issue.NewIssueDeleteTimeNoContent()
}
