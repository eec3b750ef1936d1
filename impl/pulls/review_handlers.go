package pulls

import (
	"context"
	"net/http"

	"github.com/go-openapi/runtime/middleware"
	"github.com/go-openapi/swag/conv"

	"repohost/impl/apierr"
	"repohost/impl/app"
	"repohost/impl/auth"
	"repohost/impl/convert"
	"repohost/impl/paging"
	"repohost/models"
	"repohost/restapi/operations/repository"
	"repohost/store"
)

// review loads review id of pull request l; others' pending reviews are
// hidden from all but site admins, as in the reference.
func (h Handlers) review(ctx context.Context, l *pull, id int64) (*store.Review, error) {
	rv, err := h.Store.Pulls().FindReview(ctx, l.is.ID, id)
	if err != nil {
		return nil, err
	}
	if rv.State == store.ReviewPending && rv.ReviewerID != l.p.UserID() && !l.p.IsAdmin() {
		return nil, store.ErrNotFound
	}
	return rv, nil
}

func (h Handlers) RepoListPullReviews(ctx context.Context, params repository.RepoListPullReviewsParams) middleware.Responder {
	l, err := h.load(ctx, params.Owner, params.Repo, params.Index)
	if err != nil {
		return h.Fail(err)
	}
	pg := h.Page(params.Page, params.Limit)
	list, total, err := h.Store.Pulls().Reviews(ctx, l.is.ID, l.p.UserID(), pg.Store())
	if err != nil {
		return h.Fail(err)
	}
	out, err := h.renderReviews(ctx, app.BaseURL(params.HTTPRequest), l, list)
	if err != nil {
		return h.Fail(err)
	}
	return repository.NewRepoListPullReviewsOK().WithPayload(out).WithXTotalCount(total).
		WithLink(paging.Link(params.HTTPRequest, pg, total))
}

func (h Handlers) oneReview(ctx context.Context, params *reviewParams, l *pull, rv *store.Review) (*models.PullReview, error) {
	out, err := h.renderReviews(ctx, app.BaseURL(params.req), l, []*store.Review{rv})
	if err != nil {
		return nil, err
	}
	return out[0], nil
}

func (h Handlers) RepoCreatePullReview(ctx context.Context, params repository.RepoCreatePullReviewParams) middleware.Responder {
	l, err := h.loadSignedIn(ctx, params.Owner, params.Repo, params.Index)
	if err != nil {
		return h.Fail(err)
	}
	in := ReviewInput{}
	if o := params.Body; o != nil {
		in.State, in.Body, in.CommitID = conv.Value(o.Event), conv.Value(o.Body), conv.Value(o.CommitID)
		for _, c := range o.Comments {
			if c == nil {
				continue
			}
			in.Comments = append(in.Comments, CommentInput{Path: conv.Value(c.Path), Body: conv.Value(c.Body),
				NewLine: conv.Value(c.NewLineNum), OldLine: conv.Value(c.OldLineNum)})
		}
	}
	rv, err := h.svc().CreateReview(ctx, l.p.User, l.r, l.is, l.pr, in)
	if err != nil {
		return h.Fail(err)
	}
	out, err := h.oneReview(ctx, &reviewParams{params.HTTPRequest}, l, rv)
	if err != nil {
		return h.Fail(err)
	}
	return repository.NewRepoCreatePullReviewOK().WithPayload(out)
}

func (h Handlers) RepoGetPullReview(ctx context.Context, params repository.RepoGetPullReviewParams) middleware.Responder {
	l, err := h.load(ctx, params.Owner, params.Repo, params.Index)
	if err != nil {
		return h.Fail(err)
	}
	rv, err := h.review(ctx, l, params.ID)
	if err != nil {
		return h.Fail(err)
	}
	out, err := h.oneReview(ctx, &reviewParams{params.HTTPRequest}, l, rv)
	if err != nil {
		return h.Fail(err)
	}
	return repository.NewRepoGetPullReviewOK().WithPayload(out)
}

func (h Handlers) RepoSubmitPullReview(ctx context.Context, params repository.RepoSubmitPullReviewParams) middleware.Responder {
	l, err := h.loadSignedIn(ctx, params.Owner, params.Repo, params.Index)
	if err != nil {
		return h.Fail(err)
	}
	rv, err := h.review(ctx, l, params.ID)
	if err != nil {
		return h.Fail(err)
	}
	var state, body string
	if o := params.Body; o != nil {
		state, body = conv.Value(o.Event), conv.Value(o.Body)
	}
	if rv, err = h.svc().SubmitReview(ctx, l.p.User, l.r, l.is, l.pr, rv, state, body); err != nil {
		return h.Fail(err)
	}
	out, err := h.oneReview(ctx, &reviewParams{params.HTTPRequest}, l, rv)
	if err != nil {
		return h.Fail(err)
	}
	return repository.NewRepoSubmitPullReviewOK().WithPayload(out)
}

func (h Handlers) RepoDeletePullReview(ctx context.Context, params repository.RepoDeletePullReviewParams) middleware.Responder {
	l, err := h.loadSignedIn(ctx, params.Owner, params.Repo, params.Index)
	if err != nil {
		return h.Fail(err)
	}
	rv, err := h.review(ctx, l, params.ID)
	if err != nil {
		return h.Fail(err)
	}
	if err := h.svc().DeleteReview(ctx, l.p.User, l.r, rv); err != nil {
		return h.Fail(err)
	}
	return repository.NewRepoDeletePullReviewNoContent()
}

func (h Handlers) RepoGetPullReviewComments(ctx context.Context, params repository.RepoGetPullReviewCommentsParams) middleware.Responder {
	l, err := h.load(ctx, params.Owner, params.Repo, params.Index)
	if err != nil {
		return h.Fail(err)
	}
	rv, err := h.review(ctx, l, params.ID)
	if err != nil {
		return h.Fail(err)
	}
	list, err := h.Store.Pulls().ReviewComments(ctx, rv.ID)
	if err != nil {
		return h.Fail(err)
	}
	out, err := h.renderReviewComments(ctx, app.BaseURL(params.HTTPRequest), l, list)
	if err != nil {
		return h.Fail(err)
	}
	return repository.NewRepoGetPullReviewCommentsOK().WithPayload(out)
}

// renderReviewComments renders line comments of pull request l with their
// posters and resolvers, looked up in one statement.
func (h Handlers) renderReviewComments(ctx context.Context, base string, l *pull, list []*store.ReviewComment) ([]*models.PullReviewComment, error) {
	ids := make([]int64, 0, 2*len(list))
	for _, c := range list {
		ids = append(ids, c.PosterID)
		if c.ResolverID != 0 {
			ids = append(ids, c.ResolverID)
		}
	}
	users, err := h.Store.Users().FindByIDs(ctx, ids)
	if err != nil {
		return nil, err
	}
	user := func(id int64) *models.User {
		u := users[id]
		if u == nil {
			u = convert.Ghost()
		}
		return convert.User(base, u, app.Viewer(l.p))
	}
	out := make([]*models.PullReviewComment, 0, len(list))
	for _, c := range list {
		m := convert.ReviewComment(base, l.r, l.is.Index, c, user(c.PosterID))
		if c.ResolverID != 0 {
			m.Resolver = user(c.ResolverID)
		}
		out = append(out, m)
	}
	return out, nil
}

// reviewComment loads line comment id of pull request l; a comment of a
// pending review is hidden like the review.
func (h Handlers) reviewComment(ctx context.Context, l *pull, id int64) (*store.ReviewComment, error) {
	c, err := h.Store.Pulls().FindReviewComment(ctx, id)
	if err != nil {
		return nil, err
	}
	if c.IssueID != l.is.ID {
		return nil, apierr.NotFound("review comment %d does not exist", id)
	}
	if _, err := h.review(ctx, l, c.ReviewID); err != nil {
		return nil, err
	}
	return c, nil
}

func (h Handlers) RepoCreatePullReviewCommentReply(ctx context.Context, params repository.RepoCreatePullReviewCommentReplyParams) middleware.Responder {
	l, err := h.loadSignedIn(ctx, params.Owner, params.Repo, params.Index)
	if err != nil {
		return h.Fail(err)
	}
	c, err := h.reviewComment(ctx, l, params.ID)
	if err != nil {
		return h.Fail(err)
	}
	var body string
	if params.Body != nil {
		body = conv.Value(params.Body.Body)
	}
	reply, err := h.svc().Reply(ctx, l.p.User, l.r, l.perm, l.is, c, body)
	if err != nil {
		return h.Fail(err)
	}
	out, err := h.renderReviewComments(ctx, app.BaseURL(params.HTTPRequest), l, []*store.ReviewComment{reply})
	if err != nil {
		return h.Fail(err)
	}
	return repository.NewRepoCreatePullReviewCommentReplyCreated().WithPayload(out[0])
}

func (h Handlers) RepoResolvePullReviewComment(ctx context.Context, params repository.RepoResolvePullReviewCommentParams) middleware.Responder {
	if err := h.resolve(ctx, params.Owner, params.Repo, params.ID, true); err != nil {
		return h.Fail(err)
	}
	return repository.NewRepoResolvePullReviewCommentNoContent()
}

func (h Handlers) RepoUnresolvePullReviewComment(ctx context.Context, params repository.RepoUnresolvePullReviewCommentParams) middleware.Responder {
	if err := h.resolve(ctx, params.Owner, params.Repo, params.ID, false); err != nil {
		return h.Fail(err)
	}
	return repository.NewRepoUnresolvePullReviewCommentNoContent()
}

// resolve finds review comment id among owner/name's pull requests (the
// route names no pull request) and resolves or reopens its conversation.
func (h Handlers) resolve(ctx context.Context, owner, name string, id int64, on bool) error {
	p, err := auth.RequireUser(ctx)
	if err != nil {
		return err
	}
	r, _, err := h.pullsRepo(ctx, p, owner, name)
	if err != nil {
		return err
	}
	c, err := h.Store.Pulls().FindReviewComment(ctx, id)
	if err != nil {
		return err
	}
	is, err := h.Store.Issues().FindByID(ctx, c.IssueID)
	if err != nil {
		return err
	}
	if is.RepoID != r.ID {
		return apierr.NotFound("review comment %d does not exist", id)
	}
	l, err := h.load(ctx, owner, name, is.Index)
	if err != nil {
		return err
	}
	if _, err := h.review(ctx, l, c.ReviewID); err != nil {
		return err
	}
	return h.svc().Resolve(ctx, p.User, l.r, l.perm, l.is, l.pr, c, on)
}

func (h Handlers) RepoDismissPullReview(ctx context.Context, params repository.RepoDismissPullReviewParams) middleware.Responder {
	return h.dismiss(ctx, params.Owner, params.Repo, params.Index, params.ID, true, &reviewParams{params.HTTPRequest},
		func(m *models.PullReview) middleware.Responder {
			return repository.NewRepoDismissPullReviewOK().WithPayload(m)
		})
}

func (h Handlers) RepoUnDismissPullReview(ctx context.Context, params repository.RepoUnDismissPullReviewParams) middleware.Responder {
	return h.dismiss(ctx, params.Owner, params.Repo, params.Index, params.ID, false, &reviewParams{params.HTTPRequest},
		func(m *models.PullReview) middleware.Responder {
			return repository.NewRepoUnDismissPullReviewOK().WithPayload(m)
		})
}

func (h Handlers) dismiss(ctx context.Context, owner, name string, index, id int64, on bool, params *reviewParams, ok func(*models.PullReview) middleware.Responder) middleware.Responder {
	l, err := h.loadSignedIn(ctx, owner, name, index)
	if err != nil {
		return h.Fail(err)
	}
	rv, err := h.review(ctx, l, id)
	if err != nil {
		return h.Fail(err)
	}
	if rv, err = h.svc().Dismiss(ctx, l.p.User, l.r, l.perm, l.is, l.pr, rv, on); err != nil {
		return h.Fail(err)
	}
	out, err := h.oneReview(ctx, params, l, rv)
	if err != nil {
		return h.Fail(err)
	}
	return ok(out)
}

func (h Handlers) RepoCreatePullReviewRequests(ctx context.Context, params repository.RepoCreatePullReviewRequestsParams) middleware.Responder {
	l, err := h.loadSignedIn(ctx, params.Owner, params.Repo, params.Index)
	if err != nil {
		return h.Fail(err)
	}
	var names, teams []string
	if o := params.Body; o != nil {
		names, teams = o.Reviewers, o.TeamReviewers
	}
	list, err := h.svc().RequestReviews(ctx, l.p.User, l.r, l.perm, l.is, l.pr, names, teams)
	if err != nil {
		return h.Fail(err)
	}
	out, err := h.renderReviews(ctx, app.BaseURL(params.HTTPRequest), l, list)
	if err != nil {
		return h.Fail(err)
	}
	return repository.NewRepoCreatePullReviewRequestsCreated().WithPayload(out)
}

func (h Handlers) RepoDeletePullReviewRequests(ctx context.Context, params repository.RepoDeletePullReviewRequestsParams) middleware.Responder {
	l, err := h.loadSignedIn(ctx, params.Owner, params.Repo, params.Index)
	if err != nil {
		return h.Fail(err)
	}
	var names, teams []string
	if o := params.Body; o != nil {
		names, teams = o.Reviewers, o.TeamReviewers
	}
	if err := h.svc().CancelReviewRequests(ctx, l.p.User, l.r, l.perm, l.is, names, teams); err != nil {
		return h.Fail(err)
	}
	return repository.NewRepoDeletePullReviewRequestsNoContent()
}

// reviewParams is what rendering a review needs of its request.
type reviewParams struct{ req *http.Request }
