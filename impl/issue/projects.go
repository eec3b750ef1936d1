package issue

import (
	"context"
	"strings"

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

// projectRepo loads the repository of a project route: 404 when the caller
// may not see it or its projects are turned off.
func (h Handlers) projectRepo(ctx context.Context, p *auth.Principal, owner, name string) (*store.Repository, access.Permission, error) {
	r, perm, err := h.Repo(ctx, p, owner, name)
	if err != nil {
		return nil, perm, err
	}
	if !r.HasProjects {
		return nil, access.None, apierr.NotFound("not found")
	}
	return r, perm, nil
}

// projectWriter is projectRepo for changes: signed in, not archived, writer.
func (h Handlers) projectWriter(ctx context.Context, owner, name string) (*auth.Principal, *store.Repository, error) {
	p, err := auth.RequireUser(ctx)
	if err != nil {
		return nil, nil, err
	}
	r, perm, err := h.projectRepo(ctx, p, owner, name)
	if err != nil {
		return nil, nil, err
	}
	if err := writable(r); err != nil {
		return nil, nil, err
	}
	return p, r, requireWriter(perm)
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

func checkProjectTitle(title string) error {
	if strings.TrimSpace(title) == "" {
		return apierr.Validation("[Title]: Required")
	}
	return nil
}

func (h Handlers) RepoListProjects(ctx context.Context, params issue.RepoListProjectsParams) middleware.Responder {
	p := auth.FromContext(ctx)
	r, _, err := h.projectRepo(ctx, p, params.Owner, params.Repo)
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
	r, _, err := h.projectRepo(ctx, p, params.Owner, params.Repo)
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
	p, r, err := h.projectWriter(ctx, params.Owner, params.Repo)
	if err != nil {
		return h.Fail(err)
	}
	o := params.Body
	if o == nil {
		o = &models.CreateProjectOption{}
	}
	if err := checkProjectTitle(deref(o.Title)); err != nil {
		return h.Fail(err)
	}
	t := h.Clock.Now()
	pr := &store.Project{RepoID: r.ID, CreatorID: p.UserID(), Title: deref(o.Title), Description: deref(o.Description),
		CardType: "text_only", TemplateType: "none", CreatedAt: t, UpdatedAt: t}
	if v := deref(o.CardType); v != "" {
		pr.CardType = v
	}
	if v := deref(o.TemplateType); v != "" {
		pr.TemplateType = v
	}
	if err := h.Store.Projects().Create(ctx, pr); err != nil {
		return h.Fail(err)
	}
	out, err := h.svc().renderProject(ctx, app.BaseURL(params.HTTPRequest), p.User, r, pr)
	if err != nil {
		return h.Fail(err)
	}
	return issue.NewRepoCreateProjectCreated().WithPayload(out)
}

func (h Handlers) RepoEditProject(ctx context.Context, params issue.RepoEditProjectParams) middleware.Responder {
	p, r, err := h.projectWriter(ctx, params.Owner, params.Repo)
	if err != nil {
		return h.Fail(err)
	}
	o := params.Body
	if o == nil {
		o = &models.EditProjectOption{}
	}
	if o.Title != nil {
		if err := checkProjectTitle(*o.Title); err != nil {
			return h.Fail(err)
		}
	}
	var pr *store.Project
	err = h.Store.WithTx(ctx, func(ctx context.Context) error {
		if pr, err = h.Store.Projects().Find(ctx, r.ID, params.ID); err != nil {
			return err
		}
		t := h.Clock.Now()
		if o.Title != nil {
			pr.Title = *o.Title
		}
		if o.Description != nil {
			pr.Description = *o.Description
		}
		if o.CardType != nil {
			pr.CardType = *o.CardType
		}
		if o.State != nil && (*o.State == "closed") != pr.IsClosed {
			pr.IsClosed = *o.State == "closed"
			pr.ClosedAt = nil
			if pr.IsClosed {
				pr.ClosedAt = &t
			}
		}
		pr.UpdatedAt = t
		return h.Store.Projects().Update(ctx, pr)
	})
	if err != nil {
		return h.Fail(err)
	}
	out, err := h.svc().renderProject(ctx, app.BaseURL(params.HTTPRequest), p.User, r, pr)
	if err != nil {
		return h.Fail(err)
	}
	return issue.NewRepoEditProjectOK().WithPayload(out)
}

func (h Handlers) RepoDeleteProject(ctx context.Context, params issue.RepoDeleteProjectParams) middleware.Responder {
	_, r, err := h.projectWriter(ctx, params.Owner, params.Repo)
	if err != nil {
		return h.Fail(err)
	}
	if _, err := h.Store.Projects().Find(ctx, r.ID, params.ID); err != nil {
		return h.Fail(err)
	}
	// The links go with the project (ON DELETE CASCADE); the issues stay.
	if err := h.Store.Projects().Delete(ctx, params.ID); err != nil {
		return h.Fail(err)
	}
	return issue.NewRepoDeleteProjectNoContent()
}
