package issue

import (
	"context"
	"time"

	"github.com/go-openapi/runtime/middleware"

	"repohost/impl/access"
	"repohost/impl/app"
	"repohost/impl/auth"
	"repohost/impl/convert"
	"repohost/models"
	"repohost/restapi/operations/issue"
	"repohost/store"
)

// IssueGetComments lists an issue's comments, from the rendered lists kept
// in Deps.CommentLists when it holds the answer; access is checked on every
// request.
func (h Handlers) IssueGetComments(ctx context.Context, params issue.IssueGetCommentsParams) middleware.Responder {
	p := auth.FromContext(ctx)
	s := h.svc()
	// Before anything the answer is read from, access included; the
	// repository's own part is taken once it is known (keptList).
	shared := h.CommentLists.Shared(ctx)
	r, _, err := s.Tracker(ctx, p, params.Owner, params.Repo)
	if err != nil {
		return h.Fail(err)
	}
	pg := h.Page(params.Page, params.Limit)
	base, viewer := app.BaseURL(params.HTTPRequest), app.Viewer(p)
	// The issue is looked up with the list, as it is one of the
	// repository's rows: a kept answer is one of an issue that existed
	// and is retired with it. Whether an issue (not a pull request) may be
	// listed depends on the repository's issue unit, hence in the key.
	query := struct {
		Repo, Index   int64
		IssuesOn      bool
		Since, Before *time.Time
	}{r.ID, params.Index, IssuesEnabled(r), QueryTime(params.Since), QueryTime(params.Before)}
	return s.keptList(h.CommentLists, params.HTTPRequest, shared, r.ID, listKey(base, viewer, query, pg), pg,
		func(link func(int64) string) (middleware.Responder, int64, error) {
			is, err := s.issue(ctx, r, params.Index)
			if err != nil {
				return nil, 0, err
			}
			list, total, err := h.Store.Comments().List(ctx, is.ID, query.Since, query.Before, pg.Store())
			if err != nil {
				return nil, 0, err
			}
			out, err := h.renderComments(ctx, base, viewer, r, list, map[int64]*store.Issue{is.ID: is})
			if err != nil {
				return nil, 0, err
			}
			return issue.NewIssueGetCommentsOK().WithPayload(out).WithXTotalCount(total).WithLink(link(total)), total, nil
		})
}

// IssueGetRepoComments lists every comment of the repository's issues and
// pull requests the caller may read: a caller who reads only one of the
// two units gets only its comments, as in the reference. It is kept in
// Deps.CommentLists as IssueGetComments is.
func (h Handlers) IssueGetRepoComments(ctx context.Context, params issue.IssueGetRepoCommentsParams) middleware.Responder {
	p := auth.FromContext(ctx)
	s := h.svc()
	shared := h.CommentLists.Shared(ctx)
	r, perm, err := s.Tracker(ctx, p, params.Owner, params.Repo)
	if err != nil {
		return h.Fail(err)
	}
	var isPull *bool
	switch issues, pulls := perm.CanRead(access.UnitIssues), perm.CanRead(access.UnitPulls); {
	case issues && !pulls:
		isPull = new(bool)
	case pulls && !issues:
		yes := true
		isPull = &yes
	}
	pg := h.Page(params.Page, params.Limit)
	base, viewer := app.BaseURL(params.HTTPRequest), app.Viewer(p)
	// What the caller may read is in the key as the kind of issue listed.
	query := struct {
		Repo          int64
		IsPull        *bool
		Since, Before *time.Time
	}{r.ID, isPull, QueryTime(params.Since), QueryTime(params.Before)}
	return s.keptList(h.CommentLists, params.HTTPRequest, shared, r.ID, listKey(base, viewer, query, pg), pg,
		func(link func(int64) string) (middleware.Responder, int64, error) {
			list, total, err := h.Store.Comments().ListByRepo(ctx, r.ID, isPull, query.Since, query.Before, pg.Store())
			if err != nil {
				return nil, 0, err
			}
			issueIDs := make([]int64, 0, len(list))
			for _, c := range list {
				issueIDs = append(issueIDs, c.IssueID)
			}
			issues, err := h.Store.Issues().FindByIDs(ctx, issueIDs)
			if err != nil {
				return nil, 0, err
			}
			out, err := h.renderComments(ctx, base, viewer, r, list, issues)
			if err != nil {
				return nil, 0, err
			}
			return issue.NewIssueGetRepoCommentsOK().WithPayload(out).WithXTotalCount(total).WithLink(link(total)), total, nil
		})
}

// renderComments renders comments of r's issues (by id), reading their
// posters in one statement.
func (h Handlers) renderComments(ctx context.Context, base string, viewer *store.User, r *store.Repository, list []*store.Comment, issues map[int64]*store.Issue) ([]*models.Comment, error) {
	ids := make([]int64, 0, len(list))
	for _, c := range list {
		ids = append(ids, c.PosterID)
	}
	users, err := h.Store.Users().FindByIDs(ctx, ids)
	if err != nil {
		return nil, err
	}
	out := make([]*models.Comment, 0, len(list))
	for _, c := range list {
		is := issues[c.IssueID]
		if is == nil {
			continue // deleted with its issue since the page was read
		}
		out = append(out, convert.Comment(base, r, is, c, users[c.PosterID], viewer))
	}
	return out, nil
}

func (h Handlers) IssueCreateComment(ctx context.Context, params issue.IssueCreateCommentParams) middleware.Responder {
	s := h.svc()
	p, r, perm, err := s.writableTracker(ctx, params.Owner, params.Repo)
	if err != nil {
		return h.Fail(err)
	}
	is, err := s.issue(ctx, r, params.Index)
	if err != nil {
		return h.Fail(err)
	}
	body := ""
	if params.Body != nil {
		body = deref(params.Body.Body)
	}
	c, err := s.Comment(ctx, p.User, r, perm, is, body)
	if err != nil {
		return h.Fail(err)
	}
	return issue.NewIssueCreateCommentCreated().WithPayload(convert.Comment(app.BaseURL(params.HTTPRequest), r, is, c, p.User, p.User))
}

func (h Handlers) IssueGetComment(ctx context.Context, params issue.IssueGetCommentParams) middleware.Responder {
	p := auth.FromContext(ctx)
	s := h.svc()
	r, _, err := s.Tracker(ctx, p, params.Owner, params.Repo)
	if err != nil {
		return h.Fail(err)
	}
	c, is, err := s.comment(ctx, r, params.ID)
	if err != nil {
		return h.Fail(err)
	}
	poster, err := s.poster(ctx, c.PosterID)
	if err != nil {
		return h.Fail(err)
	}
	return issue.NewIssueGetCommentOK().WithPayload(convert.Comment(app.BaseURL(params.HTTPRequest), r, is, c, poster, app.Viewer(p)))
}

func (h Handlers) IssueEditComment(ctx context.Context, params issue.IssueEditCommentParams) middleware.Responder {
	s := h.svc()
	p, r, perm, err := s.userTracker(ctx, params.Owner, params.Repo)
	if err != nil {
		return h.Fail(err)
	}
	body := ""
	if params.Body != nil {
		body = deref(params.Body.Body)
	}
	c, is, err := s.EditComment(ctx, p.User, r, perm, params.ID, body)
	if err != nil {
		return h.Fail(err)
	}
	poster, err := s.poster(ctx, c.PosterID)
	if err != nil {
		return h.Fail(err)
	}
	return issue.NewIssueEditCommentOK().WithPayload(convert.Comment(app.BaseURL(params.HTTPRequest), r, is, c, poster, p.User))
}

func (h Handlers) IssueDeleteComment(ctx context.Context, params issue.IssueDeleteCommentParams) middleware.Responder {
	s := h.svc()
	if err := remove(ctx, s, s.Tracker, params.Owner, params.Repo, params.ID, s.DeleteComment); err != nil {
		return h.Fail(err)
	}
	return issue.NewIssueDeleteCommentNoContent()
}

// poster loads an author, or nil (rendered as the ghost) when the account
// is gone.
func (s Service) poster(ctx context.Context, id int64) (*store.User, error) {
	u, err := s.Store.Users().FindByID(ctx, id)
	if isNotFound(err) {
		return nil, nil
	}
	return u, err
}
