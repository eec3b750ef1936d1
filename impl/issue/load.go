package issue

import (
	"context"

	"repohost/impl/convert"
	"repohost/models"
	"repohost/store"
)

// render turns a page of issues (of any repositories) into API issues in a
// fixed number of statements whatever the page size: each kind of related
// row (labels, assignees, milestones, projects and their counts, users,
// repositories not already known) is loaded once for the whole page.
// extraUsers are loaded with the rest, for callers that render other
// people beside the issues (tracked-time owners); the users map holds them.
func (s Service) render(ctx context.Context, base string, viewer *store.User, issues []*store.Issue,
	repos map[int64]*store.Repository, extraUsers []int64) ([]*models.Issue, map[int64]*store.User, error) {
	out := make([]*models.Issue, 0, len(issues))
	ids := make([]int64, 0, len(issues))
	var milestoneIDs, missingRepos []int64
	userSet := map[int64]bool{}
	for _, id := range extraUsers {
		userSet[id] = true
	}
	if repos == nil {
		repos = map[int64]*store.Repository{}
	}
	seenRepo := map[int64]bool{}
	for _, is := range issues {
		ids = append(ids, is.ID)
		userSet[is.PosterID] = true
		if is.MilestoneID != 0 {
			milestoneIDs = append(milestoneIDs, is.MilestoneID)
		}
		if repos[is.RepoID] == nil && !seenRepo[is.RepoID] {
			seenRepo[is.RepoID] = true
			missingRepos = append(missingRepos, is.RepoID)
		}
	}
	if len(issues) == 0 && len(extraUsers) == 0 {
		return out, map[int64]*store.User{}, nil
	}
	st := s.Store
	a := &convert.IssueAttrs{Repos: repos}
	var err error
	if len(missingRepos) > 0 {
		// An issue names its repository and shows none of its counters.
		more, err := st.Issues().Repos(store.CountersMayLag(ctx), missingRepos)
		if err != nil {
			return nil, nil, err
		}
		for id, r := range more {
			repos[id] = r
		}
	}
	var pullIDs []int64
	for _, is := range issues {
		if is.IsPull {
			pullIDs = append(pullIDs, is.ID)
		}
	}
	if len(pullIDs) > 0 {
		if a.Pulls, err = st.Pulls().ForIssues(ctx, pullIDs); err != nil {
			return nil, nil, err
		}
	}
	// The links of every kind come in one statement, and the labels,
	// projects and milestones they name by id, which the read cache
	// mostly holds: a render reads few rows besides the links.
	links, err := st.Issues().Links(ctx, ids)
	if err != nil {
		return nil, nil, err
	}
	a.Assignees = links.Assignees
	if a.Labels, err = linked(ctx, links.Labels, st.Labels().ByIDs); err != nil {
		return nil, nil, err
	}
	if a.Projects, err = linked(ctx, links.Projects, st.Projects().ByIDs); err != nil {
		return nil, nil, err
	}
	if a.Milestones, err = st.Milestones().FindByIDs(ctx, milestoneIDs); err != nil {
		return nil, nil, err
	}
	var projectIDs []int64
	seenProject := map[int64]bool{}
	for _, prs := range a.Projects {
		for _, pr := range prs {
			userSet[pr.CreatorID] = true
			if !seenProject[pr.ID] {
				seenProject[pr.ID] = true
				projectIDs = append(projectIDs, pr.ID)
			}
		}
	}
	if a.ProjectCounts, err = st.Projects().Counts(ctx, projectIDs); err != nil {
		return nil, nil, err
	}
	for _, list := range a.Assignees {
		for _, id := range list {
			userSet[id] = true
		}
	}
	userIDs := make([]int64, 0, len(userSet))
	for id := range userSet {
		userIDs = append(userIDs, id)
	}
	if a.Users, err = st.Users().FindByIDs(ctx, userIDs); err != nil {
		return nil, nil, err
	}
	for _, is := range issues {
		if repos[is.RepoID] == nil {
			continue // its repository vanished meanwhile
		}
		out = append(out, convert.Issue(base, is, a, viewer))
	}
	return out, a.Users, nil
}

// linked looks up, in one call of byIDs, the rows each issue is linked to
// (ids by issue, in the order to show) and lists them per issue in that
// order. A row gone since its link was read is left out, as a join would
// have. Issues share the rows they have in common: the renderer only reads
// them.
func linked[T any](ctx context.Context, ids map[int64][]int64,
	byIDs func(context.Context, []int64) (map[int64]T, error)) (map[int64][]T, error) {
	out := make(map[int64][]T, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	var all []int64
	seen := map[int64]bool{}
	for _, list := range ids {
		for _, id := range list {
			if !seen[id] {
				seen[id] = true
				all = append(all, id)
			}
		}
	}
	rows, err := byIDs(ctx, all)
	if err != nil {
		return nil, err
	}
	for issue, list := range ids {
		for _, id := range list {
			if row, ok := rows[id]; ok {
				out[issue] = append(out[issue], row)
			}
		}
	}
	return out, nil
}

// Render renders issues (those of pull requests too) as viewer sees them,
// with the users named by extraUsers loaded in the same statement as the
// issues' own; repos may already hold some of their repositories.
func (s Service) Render(ctx context.Context, base string, viewer *store.User, issues []*store.Issue,
	repos map[int64]*store.Repository, extraUsers []int64) ([]*models.Issue, map[int64]*store.User, error) {
	return s.render(ctx, base, viewer, issues, repos, extraUsers)
}

// renderCreated renders an issue doer has just created from in. One asked
// for without labels, assignees, projects or milestone has none, and its
// poster is doer: it is rendered from what is known, without reading
// anything back.
func (s Service) renderCreated(ctx context.Context, base string, doer *store.User, r *store.Repository, is *store.Issue, in CreateInput) (*models.Issue, error) {
	if len(in.LabelIDs) > 0 || len(in.Assignees) > 0 || len(in.ProjectIDs) > 0 || is.MilestoneID != 0 || is.PosterID != doer.ID {
		return s.renderOne(ctx, base, doer, r, is)
	}
	a := &convert.IssueAttrs{Repos: map[int64]*store.Repository{r.ID: r}, Users: map[int64]*store.User{doer.ID: doer}}
	return convert.Issue(base, is, a, doer), nil
}

// renderOne renders a single issue of r.
func (s Service) renderOne(ctx context.Context, base string, viewer *store.User, r *store.Repository, is *store.Issue) (*models.Issue, error) {
	list, _, err := s.render(ctx, base, viewer, []*store.Issue{is}, map[int64]*store.Repository{r.ID: r}, nil)
	if err != nil {
		return nil, err
	}
	if len(list) == 0 {
		return nil, store.ErrNotFound
	}
	return list[0], nil
}

// RenderIssue renders one issue of r as viewer sees it, with its labels,
// assignees, milestone and projects: the issue of a webhook payload.
func (s Service) RenderIssue(ctx context.Context, base string, viewer *store.User, r *store.Repository, is *store.Issue) (*models.Issue, error) {
	return s.renderOne(ctx, base, viewer, r, is)
}
