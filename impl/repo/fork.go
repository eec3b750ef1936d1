package repo

import (
	"context"
	"errors"

	"github.com/go-openapi/runtime/middleware"
	"github.com/go-openapi/swag/conv"

	"repohost/impl/access"
	"repohost/impl/apierr"
	"repohost/impl/app"
	"repohost/impl/auth"
	"repohost/impl/convert"
	"repohost/impl/paging"
	"repohost/models"
	"repohost/restapi/operations/repository"
	"repohost/store"
	"repohost/store/gitstore"
)

// forkRefs are the ref creations that give a fork of parent its parent's
// branches and tags, read once before the objects are copied so the copy
// holds everything they point at. It also completes the fork's row.
func (s Service) forkRefs(r, parent *store.Repository) ([]*gitstore.RefUpdate, error) {
	g, err := s.OpenGit(parent)
	if err != nil {
		return nil, err
	}
	list, err := g.BranchAndTagRefs()
	if err != nil {
		return nil, err
	}
	updates := make([]*gitstore.RefUpdate, 0, len(list))
	branches := 0
	for _, ref := range list {
		updates = append(updates, &gitstore.RefUpdate{Name: ref.Name(), New: ref.Hash()})
		if ref.Name().IsBranch() {
			branches++
		}
	}
	r.IsFork, r.ForkID, r.IsEmpty = true, parent.ID, branches == 0
	r.Description = parent.Description
	return updates, nil
}

// ErrAlreadyForked is the 409 for an owner that already has a fork of the
// repository.
var ErrAlreadyForked = apierr.Conflict("the owner already has a fork of this repository")

// Fork makes owner's fork of parent, named name ("" keeps the parent's
// name), on behalf of doer. Callers check that doer may read parent and
// create repositories for owner.
func (s Service) Fork(ctx context.Context, doer, owner *store.User, parent *store.Repository, name string) (*store.Repository, error) {
	if name == "" {
		name = parent.Name
	}
	if owner.ID == parent.OwnerID && name == parent.Name {
		return nil, apierr.Conflict("a repository cannot be forked into itself")
	}
	mine, _, err := s.Store.Repos().Search(ctx, store.RepoSearch{Viewer: store.RepoViewer{IsAdmin: true},
		OwnerID: owner.ID, ForkOf: parent.ID}, store.Page{Limit: 1})
	if err != nil {
		return nil, err
	}
	if len(mine) > 0 {
		return nil, ErrAlreadyForked
	}
	return s.Create(ctx, doer, owner, CreateInput{Origin: OriginFork, From: parent, Name: name, Private: parent.IsPrivate})
}

func (h Handlers) CreateFork(ctx context.Context, params repository.CreateForkParams) middleware.Responder {
	p, err := auth.RequireUser(ctx)
	if err != nil {
		return h.Fail(err)
	}
	parent, _, err := h.UnitRepo(ctx, p, params.Owner, params.Repo, app.CodeUnit)
	if err != nil {
		return h.Fail(err)
	}
	var o models.CreateForkOption
	if params.Body != nil {
		o = *params.Body
	}
	owner := p.User
	if org := conv.Value(o.Organization); org != "" {
		if owner, err = h.forkOwner(ctx, p, org); err != nil {
			return h.Fail(err)
		}
	}
	r, err := h.svc().Fork(ctx, p.User, owner, parent, conv.Value(o.Name))
	if err != nil {
		return h.Fail(err)
	}
	perm, err := h.Access.Repo(ctx, p, r)
	if err != nil {
		return h.Fail(err)
	}
	base := app.BaseURL(params.HTTPRequest)
	out := convert.Repo(h.Links(base), r, perm, p.User)
	if err := h.addParent(ctx, p, base, r, out); err != nil {
		return h.Fail(err)
	}
	return repository.NewCreateForkAccepted().WithPayload(out)
}

// forkOwner loads the organization a fork goes to, which p must be allowed
// to create repositories in.
func (h Handlers) forkOwner(ctx context.Context, p *auth.Principal, name string) (*store.User, error) {
	org, err := h.VisibleUser(ctx, p, name)
	if app.IsNotFound(err) || err == nil && !org.IsOrganization() {
		return nil, apierr.Validation("organization %s does not exist", name)
	}
	if err != nil {
		return nil, err
	}
	ok, err := h.Access.CanCreateIn(ctx, p, org)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, apierr.Forbidden("User is no Member of Organisation")
	}
	return org, nil
}

func (h Handlers) ListForks(ctx context.Context, params repository.ListForksParams) middleware.Responder {
	p := auth.FromContext(ctx)
	parent, _, err := h.Repo(ctx, p, params.Owner, params.Repo)
	if err != nil {
		return h.Fail(err)
	}
	pg := h.Page(params.Page, params.Limit)
	list, total, err := h.Store.Repos().Search(ctx, store.RepoSearch{Viewer: access.Viewer(p), ForkOf: parent.ID,
		OrderBy: "repositories.id ASC"}, pg.Store())
	if err != nil {
		return h.Fail(err)
	}
	base := app.BaseURL(params.HTTPRequest)
	data, err := Models(ctx, h.Deps, p, base, list)
	if err != nil {
		return h.Fail(err)
	}
	// Every fork listed has the parent the caller just read.
	perm, err := h.Access.Repo(ctx, p, parent)
	if err != nil {
		return h.Fail(err)
	}
	parentOut := convert.Repo(h.Links(base), parent, perm, app.Viewer(p))
	for _, m := range data {
		m.Parent = parentOut
	}
	return repository.NewListForksOK().WithPayload(data).WithXTotalCount(total).
		WithLink(paging.Link(params.HTTPRequest, pg, total))
}

// addParent fills in the parent of a fork when p may see it.
func (h Handlers) addParent(ctx context.Context, p *auth.Principal, base string, r *store.Repository, out *models.Repository) error {
	if !r.IsFork || r.ForkID == 0 {
		return nil
	}
	parent, err := h.Store.Repos().FindByID(ctx, r.ForkID)
	if errors.Is(err, store.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	perm, err := h.Access.Repo(ctx, p, parent)
	if err != nil {
		return err
	}
	if !perm.Pull {
		return nil
	}
	out.Parent = convert.Repo(h.Links(base), parent, perm, app.Viewer(p))
	return nil
}
