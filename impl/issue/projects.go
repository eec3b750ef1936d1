package issue

import (
	"context"

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

// projectRepo loads the repository of a project route with p's
// permission: 404 when p may not see it or its projects are turned off.
func (s Service) projectRepo(ctx context.Context, p *auth.Principal, owner, name string) (*store.Repository, access.Permission, error) {
	r, perm, err := s.Repo(ctx, p, owner, name)
	if err != nil {
		return nil, perm, err
	}
	if !perm.CanRead(access.UnitProjects) {
		return nil, access.None, apierr.NotFound("not found")
	}
	return r, perm, nil
}

// renderProjects renders projects of r with their counts and creators in
// a fixed number of statements.
func (s Service) renderProjects(ctx context.Context, base string, viewer *store.User, r *store.Repository, list []*store.Project) ([]*models.Project, error) {
	ids := make([]int64, 0, len(list))
	creators := make([]int64, 0, len(list))
	for _, pr := range list {
		ids = append(ids, pr.ID)
		creators = append(creators, pr.CreatorID)
	}
	counts, err := s.Store.Projects().Counts(ctx, ids)
	if err != nil {
		return nil, err
	}
	users, err := s.Store.Users().FindByIDs(ctx, creators)
	if err != nil {
		return nil, err
	}
	out := make([]*models.Project, 0, len(list))
	for _, pr := range list {
		out = append(out, convert.Project(base, r, pr, counts[pr.ID], users[pr.CreatorID], viewer))
	}
	return out, nil
}

func (s Service) renderProject(ctx context.Context, base string, viewer *store.User, r *store.Repository, pr *store.Project) (*models.Project, error) {
	out, err := s.renderProjects(ctx, base, viewer, r, []*store.Project{pr})
	if err != nil {
		return nil, err
	}
	return out[0], nil
}

func (h Handlers) RepoListProjects(ctx context.Context, params issue.RepoListProjectsParams) middleware.Responder {
	p := auth.FromContext(ctx)
	r, _, err := h.svc().projectRepo(ctx, p, params.Owner, params.Repo)
	if err != nil {
		return h.Fail(err)
	}
	pg := h.Page(params.Page, params.Limit)
	list, total, err := h.Store.Projects().List(ctx, r.ID, stateFilter(params.State), pg.Store())
	if err != nil {
		return h.Fail(err)
	}
	out, err := h.svc().renderProjects(ctx, app.BaseURL(params.HTTPRequest), app.Viewer(p), r, list)
	if err != nil {
		return h.Fail(err)
	}
	return issue.NewRepoListProjectsOK().WithPayload(out).WithXTotalCount(total).WithLink(paging.Link(params.HTTPRequest, pg, total))
}

func (h Handlers) RepoGetProject(ctx context.Context, params issue.RepoGetProjectParams) middleware.Responder {
	p := auth.FromContext(ctx)
	r, _, err := h.svc().projectRepo(ctx, p, params.Owner, params.Repo)
	if err != nil {
		return h.Fail(err)
	}
	pr, err := h.Store.Projects().Find(ctx, r.ID, params.ID)
	if err != nil {
		return h.Fail(err)
	}
	out, err := h.svc().renderProject(ctx, app.BaseURL(params.HTTPRequest), app.Viewer(p), r, pr)
	if err != nil {
		return h.Fail(err)
	}
	return issue.NewRepoGetProjectOK().WithPayload(out)
}

func (h Handlers) RepoCreateProject(ctx context.Context, params issue.RepoCreateProjectParams) middleware.Responder {
	s := h.svc()
	p, r, perm, err := s.signedIn(ctx, s.projectRepo, params.Owner, params.Repo)
	if err != nil {
		return h.Fail(err)
	}
	o := orEmpty(params.Body)
	pr, err := s.CreateProject(ctx, p.User, r, perm, ProjectInput{Title: deref(o.Title), Description: deref(o.Description),
		CardType: deref(o.CardType), TemplateType: deref(o.TemplateType)})
	if err != nil {
		return h.Fail(err)
	}
	out, err := s.renderProject(ctx, app.BaseURL(params.HTTPRequest), p.User, r, pr)
	if err != nil {
		return h.Fail(err)
	}
	return issue.NewRepoCreateProjectCreated().WithPayload(out)
}

func (h Handlers) RepoEditProject(ctx context.Context, params issue.RepoEditProjectParams) middleware.Responder {
	s := h.svc()
	p, r, perm, err := s.signedIn(ctx, s.projectRepo, params.Owner, params.Repo)
	if err != nil {
		return h.Fail(err)
	}
	o := orEmpty(params.Body)
	in := ProjectEdit{Title: o.Title, Description: o.Description, CardType: o.CardType}
	if o.State != nil {
		closed := *o.State == "closed"
		in.Closed = &closed
	}
	pr, err := s.EditProject(ctx, p.User, r, perm, params.ID, in)
	if err != nil {
		return h.Fail(err)
	}
	out, err := s.renderProject(ctx, app.BaseURL(params.HTTPRequest), p.User, r, pr)
	if err != nil {
		return h.Fail(err)
	}
	return issue.NewRepoEditProjectOK().WithPayload(out)
}

func (h Handlers) RepoDeleteProject(ctx context.Context, params issue.RepoDeleteProjectParams) middleware.Responder {
	s := h.svc()
	if err := remove(ctx, s, s.projectRepo, params.Owner, params.Repo, params.ID, s.DeleteProject); err != nil {
		return h.Fail(err)
	}
	return issue.NewRepoDeleteProjectNoContent()
}
