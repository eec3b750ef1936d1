package notification

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/go-openapi/runtime/middleware"
	"github.com/go-openapi/strfmt"

	"repohost/impl/access"
	"repohost/impl/apierr"
	"repohost/impl/app"
	"repohost/impl/auth"
	"repohost/impl/convert"
	"repohost/impl/paging"
	"repohost/impl/repo"
	"repohost/models"
	"repohost/restapi/operations/notification"
	"repohost/store"
)

// Handlers implements the notification tag.
type Handlers struct {
	*app.Deps
}

var statusOf = map[string]int{"unread": store.NotificationUnread, "read": store.NotificationRead, "pinned": store.NotificationPinned}

// statuses reads status-types (names the spec's enum holds), def when none.
func statuses(names []string, def ...int) []int {
	if len(names) == 0 {
		return def
	}
	out := make([]int, 0, len(names))
	for _, n := range names {
		out = append(out, statusOf[strings.ToLower(n)])
	}
	return out
}

func timeOf(t *strfmt.DateTime) *time.Time {
	if t == nil {
		return nil
	}
	v := time.Time(*t)
	return &v
}

// listFilter is the filter of a thread list: every status with all, else
// status-types or unread and pinned, as the reference reads them.
func listFilter(p *auth.Principal, repoID int64, all *bool, st, subjects []string, since, before *strfmt.DateTime) store.NotificationFilter {
	// Clients send the reference's type names ("Issue") and sometimes an
	// empty one, which selects nothing more.
	var sources []string
	for _, s := range subjects {
		if s != "" {
			sources = append(sources, strings.ToLower(s))
		}
	}
	f := store.NotificationFilter{UserID: p.User.ID, Viewer: access.Viewer(p), RepoID: repoID, Sources: sources,
		Since: timeOf(since), Before: timeOf(before)}
	if all == nil || !*all {
		f.Statuses = statuses(st, store.NotificationUnread, store.NotificationPinned)
	}
	return f
}

// hidden is, per repository of p's threads (repoID's alone when not 0),
// the thread sources of the units p may not read there: a user who may
// read a repository's code but no longer its issues sees none of its
// issue threads. Repositories p may not see at all are left out by the
// store's visibility filter.
func (h Handlers) hidden(ctx context.Context, p *auth.Principal, repoID int64) (map[int64][]string, error) {
	ids, err := h.Store.Notifications().RepoIDs(ctx, p.User.ID, repoID)
	if err != nil {
		return nil, err
	}
	repos, err := h.Store.Repos().FindByIDs(ctx, ids)
	if err != nil {
		return nil, err
	}
	perms, err := h.Access.Repos(ctx, p, repos)
	if err != nil {
		return nil, err
	}
	out := map[int64][]string{}
	for i, r := range repos {
		if !perms[i].Pull {
			continue
		}
		if src := hiddenSources(perms[i]); len(src) > 0 {
			out[r.ID] = src
		}
	}
	return out, nil
}

// unitOf is the unit a thread's source belongs to.
var unitOf = map[string]access.Unit{
	store.NotificationSourceIssue:      access.UnitIssues,
	store.NotificationSourcePull:       access.UnitPulls,
	store.NotificationSourceRepository: access.UnitReleases,
}

// hiddenSources are the thread sources whose unit perm cannot read.
func hiddenSources(perm access.Permission) []string {
	var out []string
	for _, src := range []string{store.NotificationSourceIssue, store.NotificationSourcePull, store.NotificationSourceRepository} {
		if !perm.CanRead(unitOf[src]) {
			out = append(out, src)
		}
	}
	return out
}

func (h Handlers) list(ctx context.Context, p *auth.Principal, req *http.Request, f store.NotificationFilter, page, limit *int64) ([]*models.NotificationThread, int64, string, error) {
	pg := h.Page(page, limit)
	var err error
	if f.Hidden, err = h.hidden(ctx, p, f.RepoID); err != nil {
		return nil, 0, "", err
	}
	ns, total, err := h.Store.Notifications().List(ctx, f, pg.Store())
	if err != nil {
		return nil, 0, "", err
	}
	out, err := h.render(ctx, p, app.BaseURL(req), ns)
	return out, total, paging.Link(req, pg, total), err
}

func (h Handlers) NotifyGetList(ctx context.Context, params notification.NotifyGetListParams) middleware.Responder {
	p, err := auth.RequireUser(ctx)
	if err != nil {
		return h.Fail(err)
	}
	f := listFilter(p, 0, params.All, params.StatusTypes, params.SubjectType, params.Since, params.Before)
	out, total, link, err := h.list(ctx, p, params.HTTPRequest, f, params.Page, params.Limit)
	if err != nil {
		return h.Fail(err)
	}
	return notification.NewNotifyGetListOK().WithPayload(out).WithXTotalCount(total).WithLink(link)
}

func (h Handlers) NotifyGetRepoList(ctx context.Context, params notification.NotifyGetRepoListParams) middleware.Responder {
	p, err := auth.RequireUser(ctx)
	if err != nil {
		return h.Fail(err)
	}
	r, _, err := h.Repo(ctx, p, params.Owner, params.Repo)
	if err != nil {
		return h.Fail(err)
	}
	f := listFilter(p, r.ID, params.All, params.StatusTypes, params.SubjectType, params.Since, params.Before)
	out, total, link, err := h.list(ctx, p, params.HTTPRequest, f, params.Page, params.Limit)
	if err != nil {
		return h.Fail(err)
	}
	return notification.NewNotifyGetRepoListOK().WithPayload(out).WithXTotalCount(total).WithLink(link)
}

// mark gives the caller's threads (of repository repoID, or all) updated
// at or before lastRead the status toStatus (default read): those of the
// statuses named (default unread), or with all every status.
func (h Handlers) mark(ctx context.Context, p *auth.Principal, req *http.Request, repoID int64, all *string, st []string,
	toStatus *string, lastRead *strfmt.DateTime) ([]*models.NotificationThread, error) {
	f := store.NotificationFilter{UserID: p.User.ID, Viewer: access.Viewer(p), RepoID: repoID}
	everything := false
	if all != nil {
		everything, _ = strconv.ParseBool(*all)
	}
	if !everything {
		f.Statuses = statuses(st, store.NotificationUnread)
	}
	to := store.NotificationRead
	if toStatus != nil && *toStatus != "" {
		to = statusOf[strings.ToLower(*toStatus)]
	}
	now := h.Clock.Now()
	upTo := now
	if lastRead != nil {
		upTo = time.Time(*lastRead)
	}
	var err error
	if f.Hidden, err = h.hidden(ctx, p, repoID); err != nil {
		return nil, err
	}
	ns, err := h.Store.Notifications().SetStatuses(ctx, f, upTo, to, now)
	if err != nil {
		return nil, err
	}
	return h.render(ctx, p, app.BaseURL(req), ns)
}

func (h Handlers) NotifyReadList(ctx context.Context, params notification.NotifyReadListParams) middleware.Responder {
	p, err := auth.RequireUser(ctx)
	if err != nil {
		return h.Fail(err)
	}
	out, err := h.mark(ctx, p, params.HTTPRequest, 0, params.All, params.StatusTypes, params.ToStatus, params.LastReadAt)
	if err != nil {
		return h.Fail(err)
	}
	return notification.NewNotifyReadListResetContent().WithPayload(out)
}

func (h Handlers) NotifyReadRepoList(ctx context.Context, params notification.NotifyReadRepoListParams) middleware.Responder {
	p, err := auth.RequireUser(ctx)
	if err != nil {
		return h.Fail(err)
	}
	r, _, err := h.Repo(ctx, p, params.Owner, params.Repo)
	if err != nil {
		return h.Fail(err)
	}
	out, err := h.mark(ctx, p, params.HTTPRequest, r.ID, params.All, params.StatusTypes, params.ToStatus, params.LastReadAt)
	if err != nil {
		return h.Fail(err)
	}
	return notification.NewNotifyReadRepoListResetContent().WithPayload(out)
}

func (h Handlers) NotifyNewAvailable(ctx context.Context, params notification.NotifyNewAvailableParams) middleware.Responder {
	p, err := auth.RequireUser(ctx)
	if err != nil {
		return h.Fail(err)
	}
	hidden, err := h.hidden(ctx, p, 0)
	if err != nil {
		return h.Fail(err)
	}
	n, err := h.Store.Notifications().Count(ctx, store.NotificationFilter{UserID: p.User.ID, Viewer: access.Viewer(p),
		Statuses: []int{store.NotificationUnread}, Hidden: hidden})
	if err != nil {
		return h.Fail(err)
	}
	return notification.NewNotifyNewAvailableOK().WithPayload(&models.NotificationCount{New: n})
}

// thread loads thread id for p: 403 when it is another user's (a site
// admin may read any), 404 when missing or its repository is no longer
// visible to p.
func (h Handlers) thread(ctx context.Context, p *auth.Principal, id string) (*store.Notification, error) {
	n64, err := strconv.ParseInt(id, 10, 64)
	if err != nil {
		return nil, apierr.NotFound("not found")
	}
	n, err := h.Store.Notifications().Find(ctx, n64)
	if err != nil {
		return nil, err
	}
	if n.UserID != p.User.ID && !p.User.IsAdmin {
		return nil, apierr.Forbidden("only the notification's owner may read it")
	}
	r, err := h.Store.Repos().FindByID(ctx, n.RepoID)
	if err != nil {
		return nil, err
	}
	perm, err := h.Access.Repo(ctx, p, r)
	if err != nil {
		return nil, err
	}
	if !perm.Pull || !perm.CanRead(unitOf[n.Source]) {
		return nil, apierr.NotFound("not found")
	}
	if n.IssueID != 0 {
		if _, err := h.Store.Issues().FindByID(ctx, n.IssueID); err != nil {
			return nil, err
		}
	}
	return n, nil
}

func (h Handlers) NotifyGetThread(ctx context.Context, params notification.NotifyGetThreadParams) middleware.Responder {
	p, err := auth.RequireUser(ctx)
	if err != nil {
		return h.Fail(err)
	}
	n, err := h.thread(ctx, p, params.ID)
	if err != nil {
		return h.Fail(err)
	}
	out, err := h.render(ctx, p, app.BaseURL(params.HTTPRequest), []*store.Notification{n})
	if err != nil {
		return h.Fail(err)
	}
	return notification.NewNotifyGetThreadOK().WithPayload(out[0])
}

func (h Handlers) NotifyReadThread(ctx context.Context, params notification.NotifyReadThreadParams) middleware.Responder {
	p, err := auth.RequireUser(ctx)
	if err != nil {
		return h.Fail(err)
	}
	n, err := h.thread(ctx, p, params.ID)
	if err != nil {
		return h.Fail(err)
	}
	to := store.NotificationRead
	if params.ToStatus != nil && *params.ToStatus != "" {
		to = statusOf[strings.ToLower(*params.ToStatus)]
	}
	now := h.Clock.Now()
	if err := h.Store.Notifications().SetStatus(ctx, n.ID, to, now); err != nil {
		return h.Fail(err)
	}
	n.Status, n.UpdatedAt = to, now
	out, err := h.render(ctx, p, app.BaseURL(params.HTTPRequest), []*store.Notification{n})
	if err != nil {
		return h.Fail(err)
	}
	return notification.NewNotifyReadThreadResetContent().WithPayload(out[0])
}

// render turns threads into the reference's NotificationThread: the
// repository as p sees it, and the subject (the issue or pull request with
// its state and the comment the thread points at, or the latest release).
func (h Handlers) render(ctx context.Context, p *auth.Principal, base string, ns []*store.Notification) ([]*models.NotificationThread, error) {
	out := make([]*models.NotificationThread, 0, len(ns))
	if len(ns) == 0 {
		return out, nil
	}
	var repoIDs, issueIDs []int64
	seen := map[int64]bool{}
	for _, n := range ns {
		if !seen[n.RepoID] {
			seen[n.RepoID] = true
			repoIDs = append(repoIDs, n.RepoID)
		}
		if n.IssueID != 0 {
			issueIDs = append(issueIDs, n.IssueID)
		}
	}
	var repos []*store.Repository
	for _, id := range repoIDs {
		r, err := h.Store.Repos().FindByID(ctx, id)
		if err != nil {
			return nil, err
		}
		repos = append(repos, r)
	}
	models_, err := repo.Models(ctx, h.Deps, p, base, repos)
	if err != nil {
		return nil, err
	}
	byRepo := map[int64]*store.Repository{}
	modelOf := map[int64]*models.Repository{}
	for i, r := range repos {
		byRepo[r.ID], modelOf[r.ID] = r, models_[i]
	}
	issues, err := h.Store.Issues().FindByIDs(ctx, issueIDs)
	if err != nil {
		return nil, err
	}
	// The pull requests of the closed ones (merged or not) and the
	// releases, each read in one go.
	var closedPulls, releaseIDs []int64
	for _, n := range ns {
		if is := issues[n.IssueID]; is != nil && is.IsPull && is.IsClosed {
			closedPulls = append(closedPulls, is.ID)
		}
		if n.IssueID == 0 && n.ReleaseID != 0 {
			releaseIDs = append(releaseIDs, n.ReleaseID)
		}
	}
	pulls, err := h.Store.Pulls().ForIssues(ctx, closedPulls)
	if err != nil {
		return nil, err
	}
	releases, err := h.Store.Releases().FindByIDs(ctx, releaseIDs)
	if err != nil {
		return nil, err
	}
	for _, n := range ns {
		r := byRepo[n.RepoID]
		subj, err := subject(base, r, n, issues[n.IssueID], pulls, releases)
		if err != nil {
			return nil, err
		}
		out = append(out, &models.NotificationThread{ID: n.ID, Repository: modelOf[n.RepoID], Subject: subj,
			Unread: n.Status == store.NotificationUnread, Pinned: n.Status == store.NotificationPinned,
			UpdatedAt: strfmt.DateTime(n.UpdatedAt.UTC()), URL: fmt.Sprintf("%sapi/v1/notifications/threads/%d", base, n.ID)})
	}
	return out, nil
}

// subject is thread n's subject: its issue is (nil for a repository
// thread), with the pull requests and releases read for the page.
func subject(base string, r *store.Repository, n *store.Notification, is *store.Issue,
	pulls map[int64]*store.PullRequest, releases map[int64]*store.Release) (*models.NotificationSubject, error) {
	api := base + "api/v1/repos/" + r.FullName()
	if n.IssueID == 0 {
		s := &models.NotificationSubject{Type: "Repository", Title: r.FullName(), URL: api, HTMLURL: base + r.FullName()}
		if rel := releases[n.ReleaseID]; n.ReleaseID != 0 && rel != nil && rel.RepoID == r.ID {
			s.Title = rel.Title
			if s.Title == "" {
				s.Title = rel.TagName
			}
			s.URL = fmt.Sprintf("%s/releases/%d", api, rel.ID)
			s.HTMLURL = base + r.FullName() + "/releases/tag/" + rel.TagName
		}
		return s, nil
	}
	if is == nil {
		return nil, apierr.NotFound("not found")
	}
	s := &models.NotificationSubject{Type: "Issue", Title: is.Title, URL: fmt.Sprintf("%s/issues/%d", api, is.Index),
		HTMLURL: convert.IssueHTMLURL(base, r, is.Index), State: "open"}
	if is.IsClosed {
		s.State = "closed"
	}
	if is.IsPull {
		s.Type, s.URL, s.HTMLURL = "Pull", fmt.Sprintf("%s/pulls/%d", api, is.Index), convert.PullHTMLURL(base, r, is.Index)
		if pr := pulls[is.ID]; is.IsClosed && pr != nil && pr.HasMerged {
			s.State = "merged"
		}
	}
	if n.CommentID != 0 {
		s.LatestCommentURL = fmt.Sprintf("%s/issues/comments/%d", api, n.CommentID)
		s.LatestCommentHTMLURL = fmt.Sprintf("%s#issuecomment-%d", s.HTMLURL, n.CommentID)
	}
	return s, nil
}
