package packages

import (
	"context"
	"errors"
	"net/http"

	"github.com/go-openapi/runtime/middleware"
	"github.com/go-openapi/swag/conv"

	"repohost/impl/access"
	"repohost/impl/apierr"
	"repohost/impl/app"
	"repohost/impl/auth"
	"repohost/impl/convert"
	"repohost/impl/paging"
	"repohost/models"
	"repohost/restapi/operations/package_operations"
	"repohost/store"
)

// Handlers implements the package tag of the API and, outside it, the
// registries' own protocols.
type Handlers struct {
	*app.Deps
	Packages Service
}

// readOwner loads the owner whose packages p wants to see: 404 when it does
// not exist or p may not see it.
func (h Handlers) readOwner(ctx context.Context, p *auth.Principal, name string) (*store.User, error) {
	return h.VisibleUser(ctx, p, name)
}

// writeOwner loads the owner whose packages p wants to change: 401 when
// anonymous, 404 when p may not see it, 403 when p may see but not write.
func (h Handlers) writeOwner(ctx context.Context, p *auth.Principal, name string) (*store.User, error) {
	if p == nil {
		return nil, apierr.Unauthorized("token is required")
	}
	owner, err := h.readOwner(ctx, p, name)
	if err != nil {
		return nil, err
	}
	ok, err := h.Access.CanWritePackages(ctx, p, owner)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, apierr.Forbidden("user should have specific permission or be a site admin")
	}
	return owner, nil
}

// findPackage loads owner's package; an unknown type is as missing as an
// unknown name.
func (h Handlers) findPackage(ctx context.Context, owner *store.User, typ, name string) (*store.Package, error) {
	if !KnownType(typ) {
		return nil, apierr.NotFound("package does not exist")
	}
	return h.Store.Packages().Find(ctx, owner.ID, typ, name)
}

func (h Handlers) findVersion(ctx context.Context, owner *store.User, typ, name, version string) (*store.PackageVersion, error) {
	pkg, err := h.findPackage(ctx, owner, typ, name)
	if err != nil {
		return nil, err
	}
	return h.Store.Packages().FindVersion(ctx, pkg.ID, version)
}

// RepoPerms is p's permission on the repository linked to each version,
// by repository id, from one page-wide permission load (access.Checker.Repos)
// whatever the number of versions.
func RepoPerms(ctx context.Context, d *app.Deps, p *auth.Principal, vs []*store.PackageVersion) (map[int64]access.Permission, error) {
	var repos []*store.Repository
	for _, v := range vs {
		if v.Repo != nil {
			repos = append(repos, v.Repo)
		}
	}
	perms := map[int64]access.Permission{}
	if len(repos) == 0 {
		return perms, nil
	}
	list, err := d.Access.Repos(ctx, p, repos)
	if err != nil {
		return nil, err
	}
	for i, r := range repos {
		perms[r.ID] = list[i]
	}
	return perms, nil
}

// Render renders a page of versions for p.
func Render(ctx context.Context, d *app.Deps, r *http.Request, p *auth.Principal, vs []*store.PackageVersion) ([]*models.Package, error) {
	perms, err := RepoPerms(ctx, d, p, vs)
	if err != nil {
		return nil, err
	}
	links := d.Links(app.BaseURL(r))
	out := make([]*models.Package, 0, len(vs))
	for _, v := range vs {
		var perm access.Permission
		if v.Repo != nil {
			perm = perms[v.Repo.ID]
		}
		out = append(out, convert.Package(links, v, perm, app.Viewer(p)))
	}
	return out, nil
}

func (h Handlers) renderOne(ctx context.Context, r *http.Request, p *auth.Principal, v *store.PackageVersion) (*models.Package, error) {
	out, err := Render(ctx, h.Deps, r, p, []*store.PackageVersion{v})
	if err != nil {
		return nil, err
	}
	return out[0], nil
}

func (h Handlers) ListPackages(ctx context.Context, params package_operations.ListPackagesParams) middleware.Responder {
	p := auth.FromContext(ctx)
	owner, err := h.readOwner(ctx, p, params.Owner)
	if err != nil {
		return h.Fail(err)
	}
	pg := h.Page(params.Page, params.Limit)
	q := store.PackageSearch{OwnerID: owner.ID, Type: conv.Value(params.Type), Query: conv.Value(params.Q)}
	vs, total, err := h.Store.Packages().SearchVersions(ctx, q, pg.Store())
	if err != nil {
		return h.Fail(err)
	}
	out, err := Render(ctx, h.Deps, params.HTTPRequest, p, vs)
	if err != nil {
		return h.Fail(err)
	}
	return package_operations.NewListPackagesOK().WithPayload(out).
		WithXTotalCount(total).WithLink(paging.Link(params.HTTPRequest, pg, total))
}

func (h Handlers) ListPackageVersions(ctx context.Context, params package_operations.ListPackageVersionsParams) middleware.Responder {
	p := auth.FromContext(ctx)
	owner, err := h.readOwner(ctx, p, params.Owner)
	if err != nil {
		return h.Fail(err)
	}
	pkg, err := h.findPackage(ctx, owner, params.Type, params.Name)
	if err != nil {
		return h.Fail(err)
	}
	pg := h.Page(params.Page, params.Limit)
	vs, total, err := h.Store.Packages().SearchVersions(ctx, store.PackageSearch{PackageID: pkg.ID}, pg.Store())
	if err != nil {
		return h.Fail(err)
	}
	out, err := Render(ctx, h.Deps, params.HTTPRequest, p, vs)
	if err != nil {
		return h.Fail(err)
	}
	return package_operations.NewListPackageVersionsOK().WithPayload(out).
		WithXTotalCount(total).WithLink(paging.Link(params.HTTPRequest, pg, total))
}

func (h Handlers) GetLatestPackageVersion(ctx context.Context, params package_operations.GetLatestPackageVersionParams) middleware.Responder {
	p := auth.FromContext(ctx)
	owner, err := h.readOwner(ctx, p, params.Owner)
	if err != nil {
		return h.Fail(err)
	}
	pkg, err := h.findPackage(ctx, owner, params.Type, params.Name)
	if err != nil {
		return h.Fail(err)
	}
	v, err := h.Store.Packages().FindLatestVersion(ctx, pkg.ID)
	if err != nil {
		return h.Fail(err)
	}
	out, err := h.renderOne(ctx, params.HTTPRequest, p, v)
	if err != nil {
		return h.Fail(err)
	}
	return package_operations.NewGetLatestPackageVersionOK().WithPayload(out)
}

func (h Handlers) GetPackage(ctx context.Context, params package_operations.GetPackageParams) middleware.Responder {
	p := auth.FromContext(ctx)
	owner, err := h.readOwner(ctx, p, params.Owner)
	if err != nil {
		return h.Fail(err)
	}
	v, err := h.findVersion(ctx, owner, params.Type, params.Name, params.Version)
	if err != nil {
		return h.Fail(err)
	}
	out, err := h.renderOne(ctx, params.HTTPRequest, p, v)
	if err != nil {
		return h.Fail(err)
	}
	return package_operations.NewGetPackageOK().WithPayload(out)
}

func (h Handlers) ListPackageFiles(ctx context.Context, params package_operations.ListPackageFilesParams) middleware.Responder {
	owner, err := h.readOwner(ctx, auth.FromContext(ctx), params.Owner)
	if err != nil {
		return h.Fail(err)
	}
	v, err := h.findVersion(ctx, owner, params.Type, params.Name, params.Version)
	if err != nil {
		return h.Fail(err)
	}
	fs, err := h.Store.Packages().ListFiles(ctx, v.ID)
	if err != nil {
		return h.Fail(err)
	}
	out := make([]*models.PackageFile, 0, len(fs))
	for _, f := range fs {
		out = append(out, convert.PackageFile(f))
	}
	return package_operations.NewListPackageFilesOK().WithPayload(out)
}

func (h Handlers) DeletePackageVersion(ctx context.Context, params package_operations.DeletePackageVersionParams) middleware.Responder {
	p := auth.FromContext(ctx)
	owner, err := h.writeOwner(ctx, p, params.Owner)
	if err != nil {
		return h.Fail(err)
	}
	v, err := h.findVersion(ctx, owner, params.Type, params.Name, params.Version)
	if err != nil {
		return h.Fail(err)
	}
	if err := h.Packages.DeleteVersion(ctx, p.User, v); err != nil {
		return h.Fail(err)
	}
	return package_operations.NewDeletePackageVersionNoContent()
}

func (h Handlers) DeletePackage(ctx context.Context, params package_operations.DeletePackageParams) middleware.Responder {
	p := auth.FromContext(ctx)
	owner, err := h.writeOwner(ctx, p, params.Owner)
	if err != nil {
		return h.Fail(err)
	}
	pkg, err := h.findPackage(ctx, owner, params.Type, params.Name)
	if err != nil {
		return h.Fail(err)
	}
	if err := h.Packages.DeletePackage(ctx, p.User, pkg); err != nil {
		return h.Fail(err)
	}
	return package_operations.NewDeletePackageNoContent()
}

func (h Handlers) LinkPackage(ctx context.Context, params package_operations.LinkPackageParams) middleware.Responder {
	p := auth.FromContext(ctx)
	owner, err := h.writeOwner(ctx, p, params.Owner)
	if err != nil {
		return h.Fail(err)
	}
	pkg, err := h.findPackage(ctx, owner, params.Type, params.Name)
	if err != nil {
		return h.Fail(err)
	}
	// Only a repository of the package's own owner, as the reference.
	r, err := h.Store.Repos().FindByName(ctx, owner.ID, params.RepoName)
	if err != nil {
		return h.Fail(err)
	}
	if err := h.mayLink(ctx, p, r); err != nil {
		return h.Fail(err)
	}
	if err := h.Packages.Link(ctx, p.User, pkg, r.ID); err != nil {
		return h.Fail(err)
	}
	return package_operations.NewLinkPackageCreated()
}

func (h Handlers) UnlinkPackage(ctx context.Context, params package_operations.UnlinkPackageParams) middleware.Responder {
	p := auth.FromContext(ctx)
	owner, err := h.writeOwner(ctx, p, params.Owner)
	if err != nil {
		return h.Fail(err)
	}
	pkg, err := h.findPackage(ctx, owner, params.Type, params.Name)
	if err != nil {
		return h.Fail(err)
	}
	if pkg.RepoID != 0 {
		// A link to a repository that is gone may be dropped by any
		// writer of the packages: nothing is left to protect.
		r, err := h.Store.Repos().FindByID(ctx, pkg.RepoID)
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			return h.Fail(err)
		}
		if err == nil {
			if err := h.mayLink(ctx, p, r); err != nil {
				return h.Fail(err)
			}
		}
	}
	if err := h.Packages.Link(ctx, p.User, pkg, 0); err != nil {
		return h.Fail(err)
	}
	return package_operations.NewUnlinkPackageCreated()
}

// mayLink checks that p may link packages to r or unlink them from it:
// writing the owner's packages is not enough, the reference also wants
// write access to r's packages unit. A repository p may not see answers
// 404 exactly like a missing one, so the answer tells nothing of which
// private repositories exist.
func (h Handlers) mayLink(ctx context.Context, p *auth.Principal, r *store.Repository) error {
	perm, err := h.Access.Repo(ctx, p, r)
	if err != nil {
		return err
	}
	if !perm.Pull {
		return apierr.NotFound("not found")
	}
	if !perm.CanWrite(access.UnitPackages) {
		return apierr.Forbidden(app.MsgNeedWrite)
	}
	return nil
}
