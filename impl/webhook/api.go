package webhook

import (
	"context"
	"net/http"

	"github.com/go-openapi/swag/conv"

	"repohost/impl/apierr"
	"repohost/impl/app"
	"repohost/impl/auth"
	"repohost/impl/convert"
	"repohost/impl/paging"
	"repohost/models"
)

// The operations every scope shares, for the handlers of each tag (the
// admin tag's live in impl/admin): each takes the scope its handler
// resolved and answers with models or an error.

// InputFrom reads a CreateHookOption.
func InputFrom(o *models.CreateHookOption) Input {
	if o == nil {
		return Input{}
	}
	return Input{Type: conv.Value(o.Type), Config: o.Config, Events: o.Events, BranchFilter: o.BranchFilter,
		AuthorizationHeader: o.AuthorizationHeader, Active: conv.Value(o.Active), Name: o.Name, IsSystem: o.IsSystemWebhook}
}

// EditFrom reads an EditHookOption (absent: change nothing but what the
// reference always replaces).
func EditFrom(o *models.EditHookOption) Edit {
	if o == nil {
		return Edit{}
	}
	return Edit{Config: o.Config, Events: o.Events, BranchFilter: o.BranchFilter,
		AuthorizationHeader: o.AuthorizationHeader, Active: o.Active, Name: o.Name}
}

// Page is one page of a list with its paging headers.
type Page[T any] struct {
	Items []T
	Total int64
	Link  string
}

// ListHooks pages the hooks of sc.
func (s Service) ListHooks(ctx context.Context, r *http.Request, sc Scope, system *bool, page, limit *int64) (Page[*models.Hook], error) {
	pg := s.Page(page, limit)
	hs, total, err := s.List(ctx, sc, system, pg.Store())
	if err != nil {
		return Page[*models.Hook]{}, err
	}
	return Page[*models.Hook]{Items: convert.Hooks(hs), Total: total, Link: paging.Link(r, pg, total)}, nil
}

// CreateHook creates a hook of sc from o.
func (s Service) CreateHook(ctx context.Context, sc Scope, o *models.CreateHookOption) (*models.Hook, error) {
	h, err := s.Create(ctx, sc, InputFrom(o))
	if err != nil {
		return nil, err
	}
	return convert.Hook(h), nil
}

// GetHook renders hook id of sc.
func (s Service) GetHook(ctx context.Context, sc Scope, id int64) (*models.Hook, error) {
	h, err := s.Get(ctx, sc, id)
	if err != nil {
		return nil, err
	}
	return convert.Hook(h), nil
}

// ChangeHook edits hook id of sc with o.
func (s Service) ChangeHook(ctx context.Context, sc Scope, id int64, o *models.EditHookOption) (*models.Hook, error) {
	h, err := s.EditHook(ctx, sc, id, EditFrom(o))
	if err != nil {
		return nil, err
	}
	return convert.Hook(h), nil
}

// ListDeliveries pages the deliveries of hook id of sc.
func (s Service) ListDeliveries(ctx context.Context, r *http.Request, sc Scope, id int64, page, limit *int64) (Page[*models.HookDelivery], error) {
	pg := s.Page(page, limit)
	ds, total, err := s.Deliveries(ctx, sc, id, pg.Store())
	if err != nil {
		return Page[*models.HookDelivery]{}, err
	}
	return Page[*models.HookDelivery]{Items: convert.HookDeliveries(ds), Total: total, Link: paging.Link(r, pg, total)}, nil
}

// GetDelivery renders one delivery with the request as the hook sends it.
func (s Service) GetDelivery(ctx context.Context, sc Scope, id, deliveryID int64) (*models.HookDelivery, error) {
	h, err := s.Get(ctx, sc, id)
	if err != nil {
		return nil, err
	}
	d, err := s.Store.Hooks().FindDelivery(ctx, h.ID, deliveryID)
	if err != nil {
		return nil, err
	}
	body, err := renderBody(h, d)
	if err != nil {
		return nil, err
	}
	return convert.HookDelivery(d, true, string(body)), nil
}

// RedeliverHook queues a delivery again.
func (s Service) RedeliverHook(ctx context.Context, sc Scope, id, deliveryID int64) (*models.HookDelivery, error) {
	d, err := s.Redeliver(ctx, sc, id, deliveryID)
	if err != nil {
		return nil, err
	}
	return convert.HookDelivery(d, false, ""), nil
}

// SiteScope resolves the site-wide scope for a site admin.
func SiteScope(ctx context.Context) (Scope, error) {
	if _, err := auth.RequireAdmin(ctx); err != nil {
		return Scope{}, err
	}
	return Scope{}, nil
}

// repoScope resolves a repository's scope for one of its admins.
func repoScope(ctx context.Context, d *app.Deps, owner, name string) (Scope, error) {
	_, r, err := d.RepoAdmin(ctx, owner, name)
	if err != nil {
		return Scope{}, err
	}
	return Scope{RepoID: r.ID}, nil
}

// orgScope resolves an organization's scope for one of its owners.
func orgScope(ctx context.Context, d *app.Deps, name string) (Scope, error) {
	p, err := auth.RequireUser(ctx)
	if err != nil {
		return Scope{}, err
	}
	o, err := d.VisibleOrg(ctx, p, name)
	if err != nil {
		return Scope{}, err
	}
	owner, err := d.Access.IsOrgOwner(ctx, p, o)
	if err != nil {
		return Scope{}, err
	}
	if !owner {
		return Scope{}, apierr.Forbidden("Must be an organization owner")
	}
	return Scope{OwnerID: o.ID}, nil
}

// userScope is the signed-in user's own scope.
func userScope(ctx context.Context) (Scope, error) {
	p, err := auth.RequireUser(ctx)
	if err != nil {
		return Scope{}, err
	}
	return Scope{OwnerID: p.User.ID}, nil
}
