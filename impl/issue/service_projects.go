package issue

import (
	"context"

	"repohost/impl/access"
	"repohost/impl/events"
	"repohost/store"
)

// ProjectInput is a new project as the caller asked for it; empty card
// and template types take the defaults.
type ProjectInput struct {
	Title, Description     string
	CardType, TemplateType string
}

// ProjectEdit is a change to a project; nil fields stay as they are.
type ProjectEdit struct {
	Title, Description, CardType *string
	Closed                       *bool
}

// CreateProject adds a project to r for doer (writers only).
func (s Service) CreateProject(ctx context.Context, doer *store.User, r *store.Repository, perm access.Permission, in ProjectInput) (*store.Project, error) {
	if err := canManageProjects(r, perm); err != nil {
		return nil, err
	}
	if err := checkRequired("Title", in.Title, 0); err != nil {
		return nil, err
	}
	t := s.Clock.Now()
	pr := &store.Project{RepoID: r.ID, CreatorID: doer.ID, Title: in.Title, Description: in.Description,
		CardType: "text_only", TemplateType: "none", CreatedAt: t, UpdatedAt: t}
	if in.CardType != "" {
		pr.CardType = in.CardType
	}
	if in.TemplateType != "" {
		pr.TemplateType = in.TemplateType
	}
	err := s.Store.WithTx(store.ConfinedTo(ctx, r.ID), func(ctx context.Context) error {
		if err := s.Store.Projects().Create(ctx, pr); err != nil {
			return err
		}
		return s.emitNamed(ctx, events.ProjectCreated, doer, r, pr.ID, pr.Title)
	})
	if err != nil {
		return nil, err
	}
	return pr, nil
}

// EditProject changes project id of r (writers only).
func (s Service) EditProject(ctx context.Context, doer *store.User, r *store.Repository, perm access.Permission, id int64, in ProjectEdit) (*store.Project, error) {
	if err := canManageProjects(r, perm); err != nil {
		return nil, err
	}
	if in.Title != nil {
		if err := checkRequired("Title", *in.Title, 0); err != nil {
			return nil, err
		}
	}
	var pr *store.Project
	err := s.Store.WithTx(store.ConfinedTo(ctx, r.ID), func(ctx context.Context) error {
		var err error
		if pr, err = s.Store.Projects().Find(ctx, r.ID, id); err != nil {
			return err
		}
		t := s.Clock.Now()
		var changed bool
		apply(&changed, &pr.Title, in.Title)
		apply(&changed, &pr.Description, in.Description)
		apply(&changed, &pr.CardType, in.CardType)
		setClosed(&changed, &pr.IsClosed, &pr.ClosedAt, in.Closed, t)
		pr.UpdatedAt = t
		if err := s.Store.Projects().Update(ctx, pr); err != nil || !changed {
			return err
		}
		return s.emitNamed(ctx, events.ProjectEdited, doer, r, pr.ID, pr.Title)
	})
	if err != nil {
		return nil, err
	}
	return pr, nil
}

// DeleteProject removes project id of r (writers only); its issues stay.
func (s Service) DeleteProject(ctx context.Context, doer *store.User, r *store.Repository, perm access.Permission, id int64) error {
	if err := canManageProjects(r, perm); err != nil {
		return err
	}
	return s.Store.WithTx(store.ConfinedTo(ctx, r.ID), func(ctx context.Context) error {
		pr, err := s.Store.Projects().Find(ctx, r.ID, id)
		if err != nil {
			return err
		}
		// The links go with the project (ON DELETE CASCADE).
		if err := s.Store.Projects().Delete(ctx, pr.ID); err != nil {
			return err
		}
		return s.emitNamed(ctx, events.ProjectDeleted, doer, r, pr.ID, pr.Title)
	})
}
