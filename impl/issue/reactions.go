package issue

import (
	"context"
	"net/http"

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

// reactionRoute names what a reaction route is about: issue number index,
// or, on the comment routes, comment id.
type reactionRoute struct {
	owner, name string
	comment     bool
	id          int64
}

func issueReactions(owner, name string, index int64) reactionRoute {
	return reactionRoute{owner: owner, name: name, id: index}
}

func commentReactions(owner, name string, id int64) reactionRoute {
	return reactionRoute{owner: owner, name: name, comment: true, id: id}
}

// target resolves the issue or comment a reaction route names for p.
func (h Handlers) target(ctx context.Context, p *auth.Principal, rt reactionRoute) (*reactionTarget, error) {
	s := h.svc()
	r, perm, err := s.Tracker(ctx, p, rt.owner, rt.name)
	if err != nil {
		return nil, err
	}
	t := &reactionTarget{r: r, perm: perm}
	if !rt.comment {
		t.issue, err = s.issue(ctx, r, rt.id)
		return t, err
	}
	c, is, err := s.comment(ctx, r, rt.id)
	if err != nil {
		return nil, err
	}
	t.issue, t.commentID = is, c.ID
	return t, nil
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
		user := users[rc.UserID]
		if rc.OriginalAuthor != "" {
			user = convert.MigratedUser(rc.OriginalAuthor)
		}
		out = append(out, convert.Reaction(base, rc, user, viewer))
	}
	return out, total, nil
}

// reactions renders one page of the reactions of what rt names.
func (h Handlers) reactions(ctx context.Context, req *http.Request, rt reactionRoute, page, limit *int64) ([]*models.Reaction, int64, paging.Params, error) {
	p := auth.FromContext(ctx)
	pg := h.Page(page, limit)
	t, err := h.target(ctx, p, rt)
	if err != nil {
		return nil, 0, pg, err
	}
	out, total, err := h.svc().listReactions(ctx, app.BaseURL(req), app.Viewer(p), t, pg)
	return out, total, pg, err
}

// react adds the caller's reaction to what rt names and renders it;
// created tells a new reaction (201) from one given before (200).
func (h Handlers) react(ctx context.Context, req *http.Request, rt reactionRoute, o *models.EditReactionOption) (*models.Reaction, bool, error) {
	p, err := auth.RequireUser(ctx)
	if err != nil {
		return nil, false, err
	}
	t, err := h.target(ctx, p, rt)
	if err != nil {
		return nil, false, err
	}
	rc, created, err := h.svc().React(ctx, p.User, t.r, t.perm, t.issue, t.commentID, content(o))
	if err != nil {
		return nil, false, err
	}
	return convert.Reaction(app.BaseURL(req), rc, p.User, p.User), created, nil
}

// unreact takes the caller's reaction off what rt names.
func (h Handlers) unreact(ctx context.Context, rt reactionRoute, o *models.EditReactionOption) error {
	p, err := auth.RequireUser(ctx)
	if err != nil {
		return err
	}
	t, err := h.target(ctx, p, rt)
	if err != nil {
		return err
	}
	return h.svc().Unreact(ctx, p.User, t.r, t.perm, t.issue, t.commentID, content(o))
}

func content(o *models.EditReactionOption) string {
	if o == nil {
		return ""
	}
	return deref(o.Reaction)
}

func (h Handlers) IssueGetIssueReactions(ctx context.Context, params issue.IssueGetIssueReactionsParams) middleware.Responder {
	out, total, pg, err := h.reactions(ctx, params.HTTPRequest, issueReactions(params.Owner, params.Repo, params.Index), params.Page, params.Limit)
	if err != nil {
		return h.Fail(err)
	}
	return issue.NewIssueGetIssueReactionsOK().WithPayload(out).WithXTotalCount(total).WithLink(paging.Link(params.HTTPRequest, pg, total))
}

func (h Handlers) IssueGetCommentReactions(ctx context.Context, params issue.IssueGetCommentReactionsParams) middleware.Responder {
	out, total, pg, err := h.reactions(ctx, params.HTTPRequest, commentReactions(params.Owner, params.Repo, params.ID), params.Page, params.Limit)
	if err != nil {
		return h.Fail(err)
	}
	return issue.NewIssueGetCommentReactionsOK().WithPayload(out).WithXTotalCount(total).WithLink(paging.Link(params.HTTPRequest, pg, total))
}

func (h Handlers) IssuePostIssueReaction(ctx context.Context, params issue.IssuePostIssueReactionParams) middleware.Responder {
	out, created, err := h.react(ctx, params.HTTPRequest, issueReactions(params.Owner, params.Repo, params.Index), params.Content)
	switch {
	case err != nil:
		return h.Fail(err)
	case created:
		return issue.NewIssuePostIssueReactionCreated().WithPayload(out)
	}
	return issue.NewIssuePostIssueReactionOK().WithPayload(out)
}

func (h Handlers) IssuePostCommentReaction(ctx context.Context, params issue.IssuePostCommentReactionParams) middleware.Responder {
	out, created, err := h.react(ctx, params.HTTPRequest, commentReactions(params.Owner, params.Repo, params.ID), params.Content)
	switch {
	case err != nil:
		return h.Fail(err)
	case created:
		return issue.NewIssuePostCommentReactionCreated().WithPayload(out)
	}
	return issue.NewIssuePostCommentReactionOK().WithPayload(out)
}

func (h Handlers) IssueDeleteIssueReaction(ctx context.Context, params issue.IssueDeleteIssueReactionParams) middleware.Responder {
	if err := h.unreact(ctx, issueReactions(params.Owner, params.Repo, params.Index), params.Content); err != nil {
		return h.Fail(err)
	}
	return issue.NewIssueDeleteIssueReactionNoContent()
}

func (h Handlers) IssueDeleteCommentReaction(ctx context.Context, params issue.IssueDeleteCommentReactionParams) middleware.Responder {
	if err := h.unreact(ctx, commentReactions(params.Owner, params.Repo, params.ID), params.Content); err != nil {
		return h.Fail(err)
	}
	return issue.NewIssueDeleteCommentReactionNoContent()
}
