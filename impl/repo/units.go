package repo

import (
	"context"

	"repohost/impl/access"
	"repohost/impl/apierr"
	"repohost/impl/auth"
	"repohost/store"
)

// unit tells whether a repository feature (code, releases, ...) is switched
// on; repository admins reach a switched-off unit all the same.
type unit func(*store.Repository) bool

var (
	codeUnit     unit = func(r *store.Repository) bool { return r.HasCode }
	releasesUnit unit = func(r *store.Repository) bool { return r.HasReleases }
)

// unitRepo loads a repository for reading one of its units: 404 when p may
// not see it, 403 when the unit is off.
func (h Handlers) unitRepo(ctx context.Context, p *auth.Principal, owner, name string, enabled unit) (*store.Repository, access.Permission, error) {
	r, perm, err := h.Repo(ctx, p, owner, name)
	if err != nil {
		return nil, access.None, err
	}
	if !enabled(r) && !perm.Admin {
		return nil, access.None, apierr.Forbidden(msgUnitRead)
	}
	return r, perm, nil
}

// unitWriteRepo loads a repository for changing one of its units, with the
// reference's order of refusals: 401, 404, 403 (unit off, or no write
// access), then 423 when archived.
func (h Handlers) unitWriteRepo(ctx context.Context, owner, name string, enabled unit) (*auth.Principal, *store.Repository, error) {
	p, err := auth.RequireUser(ctx)
	if err != nil {
		return nil, nil, err
	}
	r, perm, err := h.unitRepo(ctx, p, owner, name, enabled)
	if err != nil {
		return nil, nil, err
	}
	if !perm.Push {
		return nil, nil, apierr.Forbidden(msgRepoWrite)
	}
	if r.IsArchived {
		return nil, nil, apierr.RepoArchived()
	}
	return p, r, nil
}
