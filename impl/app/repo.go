package app

import (
	"context"
	"time"

	"github.com/go-git/go-git/v6/plumbing/object"

	"repohost/impl/access"
	"repohost/impl/apierr"
	"repohost/impl/auth"
	"repohost/impl/convert"
	"repohost/store"
	"repohost/store/gitstore"
)

// The repository loaders every area under /repos/{owner}/{repo} shares
// (repository, branches, contents, releases), each with the reference's
// order of refusals: 401, 404, 403, then 423 when archived.

// The reference's refusals for repository routes.
const (
	MsgNeedAdmin = "user should be an owner or a collaborator with admin write of a repository"
	MsgNeedWrite = "user should have a permission to write to a repo"
	MsgUnitRead  = "user should have specific read permission or be a repo admin or a site admin"
)

// Unit names the repository unit a route touches; the permission model of
// impl/access answers per unit.
type Unit = access.Unit

// The units, by the names the loaders' callers use.
var (
	CodeUnit     = access.UnitCode
	IssuesUnit   = access.UnitIssues
	PullsUnit    = access.UnitPulls
	ReleasesUnit = access.UnitReleases
	WikiUnit     = access.UnitWiki
	ProjectsUnit = access.UnitProjects
	ActionsUnit  = access.UnitActions
	PackagesUnit = access.UnitPackages
)

// UnitRepo loads a repository for reading one of its units: 404 when p may
// not see the repository or the unit is switched off on it, 403 when p may
// not read the unit (repository admins may).
func (d *Deps) UnitRepo(ctx context.Context, p *auth.Principal, owner, name string, unit Unit) (*store.Repository, access.Permission, error) {
	r, perm, err := d.Repo(ctx, p, owner, name)
	if err != nil {
		return nil, access.None, err
	}
	if !access.Enabled(r, unit) {
		return nil, access.None, apierr.NotFound("not found")
	}
	if !perm.CanRead(unit) && !perm.IsAdmin() {
		return nil, access.None, apierr.Forbidden(MsgUnitRead)
	}
	return r, perm, nil
}

// CodeRepo loads a repository for reading its code, with its git
// repository opened.
func (d *Deps) CodeRepo(ctx context.Context, p *auth.Principal, owner, name string) (*store.Repository, *gitstore.GitRepo, error) {
	r, _, err := d.UnitRepo(ctx, p, owner, name, CodeUnit)
	if err != nil {
		return nil, nil, err
	}
	g, err := d.OpenGit(r)
	if err != nil {
		return nil, nil, err
	}
	return r, g, nil
}

// UnitWriteRepo loads a repository for changing one of its units: 401, 404
// (also for a unit switched off), 403 (no write access to the unit), then
// 423 when archived.
func (d *Deps) UnitWriteRepo(ctx context.Context, owner, name string, unit Unit) (*auth.Principal, *store.Repository, error) {
	p, err := auth.RequireUser(ctx)
	if err != nil {
		return nil, nil, err
	}
	r, perm, err := d.UnitRepo(ctx, p, owner, name, unit)
	if err != nil {
		return nil, nil, err
	}
	if !perm.CanWrite(unit) {
		return nil, nil, apierr.Forbidden(MsgNeedWrite)
	}
	if r.IsArchived {
		return nil, nil, apierr.RepoArchived()
	}
	return p, r, nil
}

// SignedInRepo loads owner/name for a signed-in caller, with the caller's
// permission on it: 401, then 404.
func (d *Deps) SignedInRepo(ctx context.Context, owner, name string) (*auth.Principal, *store.Repository, access.Permission, error) {
	p, err := auth.RequireUser(ctx)
	if err != nil {
		return nil, nil, access.None, err
	}
	r, perm, err := d.Repo(ctx, p, owner, name)
	if err != nil {
		return nil, nil, access.None, err
	}
	return p, r, perm, nil
}

// WriterRepo loads the repository for a signed-in writer of its code
// (branches, tags and the like): 401, 404, 403, then 423 for an archived
// repository.
func (d *Deps) WriterRepo(ctx context.Context, owner, name string) (*auth.Principal, *store.Repository, access.Permission, error) {
	p, r, perm, err := d.SignedInRepo(ctx, owner, name)
	if err != nil {
		return nil, nil, access.None, err
	}
	if !perm.CanWrite(access.UnitCode) {
		return nil, nil, access.None, apierr.Forbidden(MsgNeedWrite)
	}
	if r.IsArchived {
		return nil, nil, access.None, apierr.RepoArchived()
	}
	return p, r, perm, nil
}

// RepoAdmin loads the repository for a signed-in repository admin.
func (d *Deps) RepoAdmin(ctx context.Context, owner, name string) (*auth.Principal, *store.Repository, error) {
	p, r, perm, err := d.SignedInRepo(ctx, owner, name)
	if err != nil {
		return nil, nil, err
	}
	if !perm.IsAdmin() {
		return nil, nil, apierr.Forbidden(MsgNeedAdmin)
	}
	return p, r, nil
}

// AdminWriteRepo is RepoAdmin for a change: an archived repository answers
// 423 (for topics that is the service spec's rule, stricter than the
// reference).
func (d *Deps) AdminWriteRepo(ctx context.Context, owner, name string) (*store.Repository, error) {
	_, r, err := d.RepoAdmin(ctx, owner, name)
	if err != nil {
		return nil, err
	}
	if r.IsArchived {
		return nil, apierr.RepoArchived()
	}
	return r, nil
}

// OpenGit opens r's repository; a repository row whose directory is gone
// is reported, not hidden.
func (d *Deps) OpenGit(r *store.Repository) (*gitstore.GitRepo, error) {
	return d.Git.OpenGit(r.Owner.Name, r.Name)
}

// Signature is doer as the author of a commit the server writes for them;
// a hidden address is replaced by the placeholder the API shows.
func Signature(doer *store.User, when time.Time) object.Signature {
	name := doer.FullName
	if name == "" {
		name = doer.Name
	}
	email := doer.Email
	if email == "" || doer.KeepEmailPrivate {
		email = doer.LowerName + "@" + convert.NoReplyDomain
	}
	return object.Signature{Name: name, Email: email, When: when}
}
