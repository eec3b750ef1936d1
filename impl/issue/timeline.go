package issue

import (
	"context"
	"fmt"
	"strconv"

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

func (h Handlers) IssueGetCommentsAndTimeline(ctx context.Context, params issue.IssueGetCommentsAndTimelineParams) middleware.Responder {
	p := auth.FromContext(ctx)
	s := h.svc()
	r, perm, err := s.Tracker(ctx, p, params.Owner, params.Repo)
	if err != nil {
		return h.Fail(err)
	}
	is, err := s.issue(ctx, r, params.Index)
	if err != nil {
		return h.Fail(err)
	}
	pg := h.Page(params.Page, params.Limit)
	list, total, err := h.Store.Timeline().List(ctx, is.ID, QueryTime(params.Since), QueryTime(params.Before), pg.Store())
	if err != nil {
		return h.Fail(err)
	}
	out, err := s.renderTimeline(ctx, app.BaseURL(params.HTTPRequest), p, r, perm, is, list)
	if err != nil {
		return h.Fail(err)
	}
	return issue.NewIssueGetCommentsAndTimelineOK().WithPayload(out).WithXTotalCount(total).
		WithLink(paging.Link(params.HTTPRequest, pg, total))
}

// renderTimeline renders a page of is's timeline, loading the users,
// labels, milestones and other issues its entries name once for the page.
// Another issue p may not read is left out of the entry naming it.
func (s Service) renderTimeline(ctx context.Context, base string, p *auth.Principal, r *store.Repository, perm access.Permission,
	is *store.Issue, list []store.TimelineEntry) ([]*models.TimelineComment, error) {
	var userIDs, labelIDs, milestoneIDs, issueIDs, teamIDs []int64
	for _, e := range list {
		if c := e.Comment; c != nil {
			userIDs = append(userIDs, c.PosterID)
			continue
		}
		ev := e.Event
		userIDs = append(userIDs, ev.PosterID)
		if ev.AssigneeID != 0 {
			userIDs = append(userIDs, ev.AssigneeID)
		}
		if ev.LabelID != 0 {
			labelIDs = append(labelIDs, ev.LabelID)
		}
		if ev.AssigneeTeamID != 0 {
			teamIDs = append(teamIDs, ev.AssigneeTeamID)
		}
		for _, id := range []int64{ev.MilestoneID, ev.OldMilestoneID} {
			if id != 0 {
				milestoneIDs = append(milestoneIDs, id)
			}
		}
		if ev.DependentIssueID != 0 {
			issueIDs = append(issueIDs, ev.DependentIssueID)
		}
		if ev.RefIssueID != 0 {
			issueIDs = append(issueIDs, ev.RefIssueID)
		}
	}
	st := s.Store
	users, err := st.Users().FindByIDs(ctx, userIDs)
	if err != nil {
		return nil, err
	}
	labels, err := st.Labels().ByIDs(ctx, labelIDs)
	if err != nil {
		return nil, err
	}
	milestones, err := st.Milestones().FindByIDs(ctx, milestoneIDs)
	if err != nil {
		return nil, err
	}
	teams, err := st.Teams().FindByIDs(ctx, teamIDs)
	if err != nil {
		return nil, err
	}
	others := map[int64]*models.Issue{}
	// The referring issues p may read, with their repositories, for the
	// comments that refer.
	refIssues, refRepos := map[int64]*store.Issue{}, map[int64]*store.Repository{}
	if len(issueIDs) > 0 {
		found, err := st.Issues().FindByIDs(ctx, issueIDs)
		if err != nil {
			return nil, err
		}
		flat := make([]*store.Issue, 0, len(found))
		for _, o := range found {
			flat = append(flat, o)
		}
		visible, repos, err := s.visibleIssues(ctx, p, r, perm, flat)
		if err != nil {
			return nil, err
		}
		rendered, _, err := s.render(ctx, base, app.Viewer(p), visible, repos, nil)
		if err != nil {
			return nil, err
		}
		for i, o := range visible {
			others[o.ID] = rendered[i]
			refIssues[o.ID] = o
		}
		refRepos = repos
	}
	viewer := app.Viewer(p)
	user := func(id int64) *models.User {
		u := users[id]
		if u == nil {
			u = convert.Ghost()
		}
		return convert.User(base, u, viewer)
	}
	api := fmt.Sprintf("%sapi/v1/repos/%s", base, r.FullName())
	issueURL, prURL, page := api+"/issues/"+strconv.FormatInt(is.Index, 10), "", convert.IssueHTMLURL(base, r, is.Index)
	if is.IsPull {
		prURL, page = api+"/pulls/"+strconv.FormatInt(is.Index, 10), convert.PullHTMLURL(base, r, is.Index)
	}
	out := make([]*models.TimelineComment, 0, len(list))
	for _, e := range list {
		if c := e.Comment; c != nil {
			out = append(out, &models.TimelineComment{
				ID: c.ID, Type: "comment", Body: c.Body, User: user(c.PosterID),
				HTMLURL: fmt.Sprintf("%s#issuecomment-%d", page, c.ID), IssueURL: issueURL, PullRequestURL: prURL,
				CreatedAt: *convert.TimeOf(c.CreatedAt), UpdatedAt: *convert.TimeOf(c.UpdatedAt),
			})
			continue
		}
		ev := e.Event
		var refComment *models.Comment
		if ev.RefIssueID != 0 {
			// A reference from an issue p may not read is not shown, as
			// the reference leaves it out.
			ri := refIssues[ev.RefIssueID]
			if ri == nil {
				continue
			}
			if ev.RefCommentID != 0 {
				c, err := st.Comments().FindByID(ctx, ev.RefCommentID)
				if err != nil && !app.IsNotFound(err) {
					return nil, err
				}
				if c != nil && err == nil {
					poster, err := st.Users().FindByID(ctx, c.PosterID)
					if err != nil && !app.IsNotFound(err) {
						return nil, err
					}
					refComment = convert.Comment(base, refRepos[ri.RepoID], ri, c, poster, viewer)
				}
			}
		}
		tc := &models.TimelineComment{
			ID: ev.ID, Type: ev.Type, Body: ev.Body, User: user(ev.PosterID),
			HTMLURL: fmt.Sprintf("%s#issuecomment-%d", page, ev.ID), IssueURL: issueURL, PullRequestURL: prURL,
			CreatedAt: *convert.TimeOf(ev.CreatedAt), UpdatedAt: *convert.TimeOf(ev.UpdatedAt),
			OldTitle: ev.OldTitle, NewTitle: ev.NewTitle, RemovedAssignee: ev.Removed,
		}
		if ev.RefIssueID != 0 && ev.RefAction >= 0 && ev.RefAction < len(store.RefActionNames) {
			tc.RefAction = store.RefActionNames[ev.RefAction]
		}
		if l := labels[ev.LabelID]; l != nil {
			tc.Label = convert.Label(base, r, l)
		}
		if m := milestones[ev.MilestoneID]; m != nil {
			tc.Milestone = convert.Milestone(m)
		}
		if m := milestones[ev.OldMilestoneID]; m != nil {
			tc.OldMilestone = convert.Milestone(m)
		}
		if ev.AssigneeID != 0 {
			tc.Assignee = user(ev.AssigneeID)
		}
		if t := teams[ev.AssigneeTeamID]; t != nil {
			tc.AssigneeTeam = convert.Team(base, t, false)
		}
		tc.ReviewID = ev.ReviewID
		tc.RefCommitSha = ev.CommitSHA
		if ev.RefIssueID != 0 {
			tc.RefIssue, tc.RefComment = others[ev.RefIssueID], refComment
		}
		tc.DependentIssue = others[ev.DependentIssueID]
		out = append(out, tc)
	}
	return out, nil
}

// onIssue is the whole of a route that changes one issue and answers
// 204: it loads the repository for the signed-in caller (404, 423 as
// writableTracker) and has fn make the change.
func (h Handlers) onIssue(ctx context.Context, owner, name string, fn func(s Service, doer *store.User, r *store.Repository, perm access.Permission) error) error {
	s := h.svc()
	p, r, perm, err := s.writableTracker(ctx, owner, name)
	if err != nil {
		return err
	}
	return fn(s, p.User, r, perm)
}

func (h Handlers) IssueLockIssue(ctx context.Context, params issue.IssueLockIssueParams) middleware.Responder {
	reason := ""
	if params.Body != nil {
		reason = params.Body.LockReason
	}
	if err := h.onIssue(ctx, params.Owner, params.Repo, func(s Service, doer *store.User, r *store.Repository, perm access.Permission) error {
		return s.SetLocked(ctx, doer, r, perm, params.Index, true, reason)
	}); err != nil {
		return h.Fail(err)
	}
	return issue.NewIssueLockIssueNoContent()
}

func (h Handlers) IssueUnlockIssue(ctx context.Context, params issue.IssueUnlockIssueParams) middleware.Responder {
	if err := h.onIssue(ctx, params.Owner, params.Repo, func(s Service, doer *store.User, r *store.Repository, perm access.Permission) error {
		return s.SetLocked(ctx, doer, r, perm, params.Index, false, "")
	}); err != nil {
		return h.Fail(err)
	}
	return issue.NewIssueUnlockIssueNoContent()
}

func (h Handlers) PinIssue(ctx context.Context, params issue.PinIssueParams) middleware.Responder {
	if err := h.onIssue(ctx, params.Owner, params.Repo, func(s Service, doer *store.User, r *store.Repository, perm access.Permission) error {
		return s.Pin(ctx, doer, r, perm, params.Index)
	}); err != nil {
		return h.Fail(err)
	}
	return issue.NewPinIssueNoContent()
}

func (h Handlers) UnpinIssue(ctx context.Context, params issue.UnpinIssueParams) middleware.Responder {
	if err := h.onIssue(ctx, params.Owner, params.Repo, func(s Service, doer *store.User, r *store.Repository, perm access.Permission) error {
		return s.Unpin(ctx, doer, r, perm, params.Index)
	}); err != nil {
		return h.Fail(err)
	}
	return issue.NewUnpinIssueNoContent()
}

func (h Handlers) MoveIssuePin(ctx context.Context, params issue.MoveIssuePinParams) middleware.Responder {
	if err := h.onIssue(ctx, params.Owner, params.Repo, func(s Service, doer *store.User, r *store.Repository, perm access.Permission) error {
		return s.MovePin(ctx, doer, r, perm, params.Index, params.Position)
	}); err != nil {
		return h.Fail(err)
	}
	return issue.NewMoveIssuePinNoContent()
}

// PinnedIssues renders r's pinned issues for p (GET …/issues/pinned).
func (s Service) PinnedIssues(ctx context.Context, p *auth.Principal, base string, r *store.Repository, perm access.Permission) ([]*models.Issue, error) {
	list, err := s.Pinned(ctx, r, perm, false)
	if err != nil {
		return nil, err
	}
	out, _, err := s.render(ctx, base, app.Viewer(p), list, map[int64]*store.Repository{r.ID: r}, nil)
	return out, err
}

// pathIndex reads the issue number of the dependency routes, whose path
// parameter the reference types as a string: anything but a number names
// no issue.
func pathIndex(s string) (int64, error) {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n <= 0 {
		return 0, apierr.NotFound("not found")
	}
	return n, nil
}

// issueRef is the issue an IssueMeta body names.
func issueRef(m *models.IssueMeta) (IssueRef, error) {
	if m == nil || m.Index <= 0 {
		return IssueRef{}, apierr.Validation("[Index]: Required")
	}
	return IssueRef{Owner: m.Owner, Repo: m.Repo, Index: m.Index}, nil
}

// listDependencies is the whole of the two dependency list routes.
func (h Handlers) listDependencies(ctx context.Context, base, owner, name, index string, page, limit *int64, blocks bool) ([]*models.Issue, int64, paging.Params, error) {
	p := auth.FromContext(ctx)
	s := h.svc()
	pg := h.Page(page, limit)
	n, err := pathIndex(index)
	if err != nil {
		return nil, 0, pg, err
	}
	r, perm, err := s.Tracker(ctx, p, owner, name)
	if err != nil {
		return nil, 0, pg, err
	}
	list, repos, err := s.Dependencies(ctx, p, r, perm, n, blocks)
	if err != nil {
		return nil, 0, pg, err
	}
	total := int64(len(list))
	w := pg.Store()
	list = list[min(w.Offset, len(list)):min(w.Offset+w.Limit, len(list))]
	out, _, err := s.render(ctx, base, app.Viewer(p), list, repos, nil)
	return out, total, pg, err
}

func (h Handlers) IssueListIssueDependencies(ctx context.Context, params issue.IssueListIssueDependenciesParams) middleware.Responder {
	out, total, pg, err := h.listDependencies(ctx, app.BaseURL(params.HTTPRequest), params.Owner, params.Repo, params.Index, params.Page, params.Limit, false)
	if err != nil {
		return h.Fail(err)
	}
	return issue.NewIssueListIssueDependenciesOK().WithPayload(out).WithXTotalCount(total).
		WithLink(paging.Link(params.HTTPRequest, pg, total))
}

func (h Handlers) IssueListBlocks(ctx context.Context, params issue.IssueListBlocksParams) middleware.Responder {
	out, total, pg, err := h.listDependencies(ctx, app.BaseURL(params.HTTPRequest), params.Owner, params.Repo, params.Index, params.Page, params.Limit, true)
	if err != nil {
		return h.Fail(err)
	}
	return issue.NewIssueListBlocksOK().WithPayload(out).WithXTotalCount(total).
		WithLink(paging.Link(params.HTTPRequest, pg, total))
}

// setDependency is the whole of the four dependency change routes; it
// renders the issue of the path.
func (h Handlers) setDependency(ctx context.Context, base, owner, name, index string, body *models.IssueMeta, blocks, add bool) (*models.Issue, error) {
	s := h.svc()
	n, err := pathIndex(index)
	if err != nil {
		return nil, err
	}
	p, r, perm, err := s.writableTracker(ctx, owner, name)
	if err != nil {
		return nil, err
	}
	ref, err := issueRef(body)
	if err != nil {
		return nil, err
	}
	is, _, err := s.SetDependency(ctx, p, r, perm, n, ref, blocks, add)
	if err != nil {
		return nil, err
	}
	return s.renderOne(ctx, base, p.User, r, is)
}

func (h Handlers) IssueCreateIssueDependencies(ctx context.Context, params issue.IssueCreateIssueDependenciesParams) middleware.Responder {
	out, err := h.setDependency(ctx, app.BaseURL(params.HTTPRequest), params.Owner, params.Repo, params.Index, params.Body, false, true)
	if err != nil {
		return h.Fail(err)
	}
	return issue.NewIssueCreateIssueDependenciesCreated().WithPayload(out)
}

func (h Handlers) IssueRemoveIssueDependencies(ctx context.Context, params issue.IssueRemoveIssueDependenciesParams) middleware.Responder {
	out, err := h.setDependency(ctx, app.BaseURL(params.HTTPRequest), params.Owner, params.Repo, params.Index, params.Body, false, false)
	if err != nil {
		return h.Fail(err)
	}
	return issue.NewIssueRemoveIssueDependenciesOK().WithPayload(out)
}

func (h Handlers) IssueCreateIssueBlocking(ctx context.Context, params issue.IssueCreateIssueBlockingParams) middleware.Responder {
	out, err := h.setDependency(ctx, app.BaseURL(params.HTTPRequest), params.Owner, params.Repo, params.Index, params.Body, true, true)
	if err != nil {
		return h.Fail(err)
	}
	return issue.NewIssueCreateIssueBlockingCreated().WithPayload(out)
}

func (h Handlers) IssueRemoveIssueBlocking(ctx context.Context, params issue.IssueRemoveIssueBlockingParams) middleware.Responder {
	out, err := h.setDependency(ctx, app.BaseURL(params.HTTPRequest), params.Owner, params.Repo, params.Index, params.Body, true, false)
	if err != nil {
		return h.Fail(err)
	}
	return issue.NewIssueRemoveIssueBlockingOK().WithPayload(out)
}
