package pulls

import (
	"context"

	"repohost/impl/app"
	"repohost/impl/auth"
	"repohost/impl/convert"
	"repohost/models"
	"repohost/store"
)

// render renders a page of r's pull requests in a fixed number of
// statements: the issues' own (impl/issue), then the review requests, the
// teams among them, the head repositories and the caller's permissions on
// the repositories shown.
func (h Handlers) render(ctx context.Context, p *auth.Principal, base string, r *store.Repository, list []*store.PullRequest, issues map[int64]*store.Issue) ([]*models.PullRequest, error) {
	out := make([]*models.PullRequest, 0, len(list))
	if len(list) == 0 {
		return out, nil
	}
	viewer := app.Viewer(p)
	ordered := make([]*store.Issue, 0, len(list))
	issueIDs := make([]int64, 0, len(list))
	for _, pr := range list {
		ordered = append(ordered, issues[pr.IssueID])
		issueIDs = append(issueIDs, pr.IssueID)
	}
	reviews, err := h.Store.Pulls().ReviewsForIssues(ctx, issueIDs)
	if err != nil {
		return nil, err
	}
	var extra, teamIDs, reviewIDs []int64
	for _, pr := range list {
		if pr.MergerID != 0 {
			extra = append(extra, pr.MergerID)
		}
		for _, rv := range reviews[pr.IssueID] {
			reviewIDs = append(reviewIDs, rv.ID)
			if rv.State != store.ReviewRequest {
				continue
			}
			if rv.ReviewerTeamID != 0 {
				teamIDs = append(teamIDs, rv.ReviewerTeamID)
			} else {
				extra = append(extra, rv.ReviewerID)
			}
		}
	}
	rendered, users, err := h.svc().issues().Render(ctx, base, viewer, ordered, map[int64]*store.Repository{r.ID: r}, extra)
	if err != nil {
		return nil, err
	}
	byID := make(map[int64]*models.Issue, len(rendered))
	for _, m := range rendered {
		byID[m.ID] = m
	}
	teams, err := h.Store.Teams().FindByIDs(ctx, teamIDs)
	if err != nil {
		return nil, err
	}
	counts, err := h.Store.Pulls().CountReviewComments(ctx, reviewIDs)
	if err != nil {
		return nil, err
	}
	repos, err := h.sides(ctx, p, base, r, list)
	if err != nil {
		return nil, err
	}
	user := func(id int64) *models.User {
		if u := users[id]; u != nil {
			return convert.User(base, u, viewer)
		}
		return convert.User(base, convert.Ghost(), viewer)
	}
	baseShas, err := h.branchTips(r, list)
	if err != nil {
		return nil, err
	}
	for _, pr := range list {
		m := byID[pr.IssueID]
		if m == nil {
			continue
		}
		baseSha := baseShas[pr.BaseBranch]
		if baseSha == "" {
			baseSha = pr.BaseCommitID
		}
		a := convert.PullAttrs{
			Base: convert.PullSide{Repo: repos[pr.BaseRepoID], Branch: pr.BaseBranch, Sha: baseSha},
			Head: convert.PullSide{Repo: repos[pr.HeadRepoID], Branch: pr.HeadBranch, Sha: pr.HeadCommitID},
		}
		if pr.MergerID != 0 {
			a.MergedBy = user(pr.MergerID)
		}
		for _, rv := range reviews[pr.IssueID] {
			a.ReviewComments += counts[rv.ID]
			if rv.State != store.ReviewRequest {
				continue
			}
			if t := teams[rv.ReviewerTeamID]; rv.ReviewerTeamID != 0 && t != nil {
				a.RequestedTeams = append(a.RequestedTeams, convert.Team(base, t, false))
			} else if rv.ReviewerID != 0 {
				a.RequestedReviewers = append(a.RequestedReviewers, user(rv.ReviewerID))
			}
		}
		out = append(out, convert.Pull(base, r, m, pr, a))
	}
	return out, nil
}

// branchTips reads the commit each base branch of list points at now, once
// per distinct branch: the reference sends the base branch's current
// commit as base.sha (it moves when the pull request is merged), not the
// one seen when the pull request was last refreshed. A branch that no
// longer exists is left out.
func (h Handlers) branchTips(r *store.Repository, list []*store.PullRequest) (map[string]string, error) {
	out := map[string]string{}
	g, err := h.OpenGit(r)
	if err != nil {
		return nil, err
	}
	for _, pr := range list {
		if _, ok := out[pr.BaseBranch]; ok {
			continue
		}
		hash, err := g.BranchHash(pr.BaseBranch)
		if err != nil {
			return nil, err
		}
		out[pr.BaseBranch] = ""
		if !hash.IsZero() {
			out[pr.BaseBranch] = hash.String()
		}
	}
	return out, nil
}

// sides renders the base repository and the head repositories of list
// (a deleted head repository is left out), with p's permission on each.
func (h Handlers) sides(ctx context.Context, p *auth.Principal, base string, r *store.Repository, list []*store.PullRequest) (map[int64]*models.Repository, error) {
	var headIDs []int64
	seen := map[int64]bool{r.ID: true}
	for _, pr := range list {
		if !seen[pr.HeadRepoID] {
			seen[pr.HeadRepoID] = true
			headIDs = append(headIDs, pr.HeadRepoID)
		}
	}
	repoList := []*store.Repository{r}
	if len(headIDs) > 0 {
		heads, err := h.Store.Issues().Repos(ctx, headIDs)
		if err != nil {
			return nil, err
		}
		for _, id := range headIDs {
			if hr := heads[id]; hr != nil {
				repoList = append(repoList, hr)
			}
		}
	}
	perms, err := h.Access.Repos(ctx, p, repoList)
	if err != nil {
		return nil, err
	}
	links := h.Links(base)
	out := make(map[int64]*models.Repository, len(repoList))
	for i, rr := range repoList {
		if i > 0 && !perms[i].Pull {
			continue // a private fork the caller may not see
		}
		out[rr.ID] = convert.Repo(links, rr, perms[i], app.Viewer(p))
	}
	return out, nil
}

// renderOne renders one pull request of r.
func (h Handlers) renderOne(ctx context.Context, p *auth.Principal, base string, r *store.Repository, is *store.Issue, pr *store.PullRequest) (*models.PullRequest, error) {
	out, err := h.render(ctx, p, base, r, []*store.PullRequest{pr}, map[int64]*store.Issue{is.ID: is})
	if err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, store.ErrNotFound
	}
	return out[0], nil
}

// renderReviews renders reviews of pull request l in a fixed number of
// statements.
func (h Handlers) renderReviews(ctx context.Context, base string, l *pull, list []*store.Review) ([]*models.PullReview, error) {
	var userIDs, teamIDs, ids []int64
	for _, rv := range list {
		ids = append(ids, rv.ID)
		if rv.ReviewerID != 0 {
			userIDs = append(userIDs, rv.ReviewerID)
		}
		if rv.ReviewerTeamID != 0 {
			teamIDs = append(teamIDs, rv.ReviewerTeamID)
		}
	}
	users, err := h.Store.Users().FindByIDs(ctx, userIDs)
	if err != nil {
		return nil, err
	}
	teams, err := h.Store.Teams().FindByIDs(ctx, teamIDs)
	if err != nil {
		return nil, err
	}
	counts, err := h.Store.Pulls().CountReviewComments(ctx, ids)
	if err != nil {
		return nil, err
	}
	viewer := app.Viewer(l.p)
	out := make([]*models.PullReview, 0, len(list))
	for _, rv := range list {
		var reviewer *models.User
		if rv.ReviewerID != 0 {
			u := users[rv.ReviewerID]
			if u == nil {
				u = convert.Ghost()
			}
			reviewer = convert.User(base, u, viewer)
		}
		var team *models.Team
		if t := teams[rv.ReviewerTeamID]; t != nil {
			team = convert.Team(base, t, false)
		}
		out = append(out, convert.Review(base, l.r, l.is.Index, rv, reviewer, team, counts[rv.ID], l.pr.HeadCommitID))
	}
	return out, nil
}

// Render renders pull request pr of r as viewer p sees it (nil: anyone);
// webhook payloads carry pull requests in this form.
func (s Service) Render(ctx context.Context, p *auth.Principal, base string, r *store.Repository, is *store.Issue, pr *store.PullRequest) (*models.PullRequest, error) {
	return Handlers{s.Deps}.renderOne(ctx, p, base, r, is, pr)
}
