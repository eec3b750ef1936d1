package issue

import (
	"context"

	"github.com/go-openapi/runtime/middleware"

	"repohost/impl/access"
	"repohost/impl/app"
	"repohost/impl/auth"
	"repohost/impl/convert"
	"repohost/impl/paging"
	"repohost/models"
	"repohost/restapi/operations/issue"
	"repohost/store"
)

// reactionTarget is an issue, or a comment of it (commentID != 0).
type reactionTarget struct {
	r         *store.Repository
	perm      access.Permission
	issue     *store.Issue
	commentID int64
}

// issueTarget resolves the issue a reaction route names.
func (h Handlers) issueTarget(ctx context.Context, p *auth.Principal, owner, name string, index int64) (*reactionTarget, error) {
	s := h.svc()
	r, perm, err := s.Tracker(ctx, p, owner, name)
	if err != nil {
		return nil, err
	}
	is, err := s.issue(ctx, r, index)
	if err != nil {
		return nil, err
	}
	return &reactionTarget{r: r, perm: perm, issue: is}, nil
}

// commentTarget resolves the comment a reaction route names.
func (h Handlers) commentTarget(ctx context.Context, p *auth.Principal, owner, name string, id int64) (*reactionTarget, error) {
	s := h.svc()
	r, perm, err := s.Tracker(ctx, p, owner, name)
	if err != nil {
		return nil, err
	}
	c, is, err := s.comment(ctx, r, id)
	if err != nil {
		return nil, err
	}
	return &reactionTarget{r: r, perm: perm, issue: is, commentID: c.ID}, nil
}

// listReactions renders one page of a target's reactions.
func (s Service) listReactions(ctx context.Context, base string, viewer *store.User, t *reactionTarget, pg paging.Params) ([]*models.Reaction, int64, error) {
	list, total, err := s.Store.Reactions().List(ctx, t.issue.ID, t.commentID, pg.Store())
	if err != nil {
		return nil, 0, err
	}
	ids := make([]int64, 0, len(list))
	for _, rc := range list {
		ids = append(ids, rc.UserID)
	}
	users, err := s.Store.Users().FindByIDs(ctx, ids)
	if err != nil {
		return nil, 0, err
	}
	out := make([]*models.Reaction, 0, len(list))
	for _, rc := range list {
		out = append(out, convert.Reaction(base, rc, users[rc.UserID], viewer))
	}
	return out, total, nil
}

// react adds p's reaction to t and renders it; created tells a new reaction
// (201) from one p had already given (200).
func (h Handlers) react(ctx context.Context, base string, p *auth.Principal, t *reactionTarget, o *models.EditReactionOption) (*models.Reaction, bool, error) {
	rc, created, err := h.svc().React(ctx, p.User, t.r, t.perm, t.issue, t.commentID, content(o))
	if err != nil {
		return nil, false, err
	}
	return convert.Reaction(base, rc, p.User, p.User), created, nil
}

func content(o *models.EditReactionOption) string {
	if o == nil {
		return ""
	}
	return deref(o.Reaction)
}

func (h Handlers) IssueGetIssueReactions(ctx context.Context, params issue.IssueGetIssueReactionsParams) middleware.Responder {
	p := auth.FromContext(ctx)
	t, err := h.issueTarget(ctx, p, params.Owner, params.Repo, params.Index)
	if err != nil {
		return h.Fail(err)
	}
	pg := h.Page(params.Page, params.Limit)
	out, total, err := h.svc().listReactions(ctx, app.BaseURL(params.HTTPRequest), app.Viewer(p), t, pg)
	if err != nil {
		return h.Fail(err)
	}
	return issue.NewIssueGetIssueReactionsOK().WithPayload(out).WithXTotalCount(total).WithLink(paging.Link(params.HTTPRequest, pg, total))
}

func (h Handlers) IssueGetCommentReactions(ctx context.Context, params issue.IssueGetCommentReactionsParams) middleware.Responder {
	p := auth.FromContext(ctx)
	t, err := h.commentTarget(ctx, p, params.Owner, params.Repo, params.ID)
	if err != nil {
		return h.Fail(err)
	}
	pg := h.Page(params.Page, params.Limit)
	out, total, err := h.svc().listReactions(ctx, app.BaseURL(params.HTTPRequest), app.Viewer(p), t, pg)
	if err != nil {
		return h.Fail(err)
	}
	return issue.NewIssueGetCommentReactionsOK().WithPayload(out).WithXTotalCount(total).WithLink(paging.Link(params.HTTPRequest, pg, total))
}

func (h Handlers) IssuePostIssueReaction(ctx context.Context, params issue.IssuePostIssueReactionParams) middleware.Responder {
	p, err := auth.RequireUser(ctx)
	if err != nil {
		return h.Fail(err)
	}
	t, err := h.issueTarget(ctx, p, params.Owner, params.Repo, params.Index)
	if err != nil {
		return h.Fail(err)
	}
	out, created, err := h.react(ctx, app.BaseURL(params.HTTPRequest), p, t, params.Content)
	if err != nil {
		return h.Fail(err)
	}
	if created {
		return issue.NewIssuePostIssueReactionCreated().WithPayload(out)
	}
	return issue.NewIssuePostIssueReactionOK().WithPayload(out)
}

func (h Handlers) IssuePostCommentReaction(ctx context.Context, params issue.IssuePostCommentReactionParams) middleware.Responder {
	p, err := auth.RequireUser(ctx)
	if err != nil {
		return h.Fail(err)
	}
	t, err := h.commentTarget(ctx, p, params.Owner, params.Repo, params.ID)
	if err != nil {
		return h.Fail(err)
	}
	out, created, err := h.react(ctx, app.BaseURL(params.HTTPRequest), p, t, params.Content)
	if err != nil {
		return h.Fail(err)
	}
	if created {
		return issue.NewIssuePostCommentReactionCreated().WithPayload(out)
	}
	return issue.NewIssuePostCommentReactionOK().WithPayload(out)
}

func (h Handlers) IssueDeleteIssueReaction(ctx context.Context, params issue.IssueDeleteIssueReactionParams) middleware.Responder {
	p, err := auth.RequireUser(ctx)
	if err != nil {
		return h.Fail(err)
	}
	t, err := h.issueTarget(ctx, p, params.Owner, params.Repo, params.Index)
	if err != nil {
		return h.Fail(err)
	}
	if err := h.svc().Unreact(ctx, p.User, t.r, t.perm, t.issue, t.commentID, content(params.Content)); err != nil {
		return h.Fail(err)
	}
	return issue.NewIssueDeleteIssueReactionNoContent()
}

func (h Handlers) IssueDeleteCommentReaction(ctx context.Context, params issue.IssueDeleteCommentReactionParams) middleware.Responder {
	p, err := auth.RequireUser(ctx)
	if err != nil {
		return h.Fail(err)
	}
	t, err := h.commentTarget(ctx, p, params.Owner, params.Repo, params.ID)
	if err != nil {
		return h.Fail(err)
	}
	if err := h.svc().Unreact(ctx, p.User, t.r, t.perm, t.issue, t.commentID, content(params.Content)); err != nil {
		return h.Fail(err)
	}
	return issue.NewIssueDeleteCommentReactionNoContent()
}
