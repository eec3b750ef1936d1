package repo

import (
	"context"
	"errors"

	"repohost/impl/apierr"
	"repohost/impl/app"
	"repohost/impl/names"
	"repohost/impl/refs"
	"repohost/models"
	"repohost/store"
	"repohost/store/gitstore"

	"github.com/go-openapi/swag/conv"
)

// DefaultBranch is the branch a new repository starts with unless the
// caller names another.
const DefaultBranch = "main"

// errRepoExists is the 409 for a name the owner already uses.
func errRepoExists() error {
	return apierr.Conflict("The repository with the same name already exists.")
}

// Create makes a repository owned by owner on behalf of doer: the bare git
// repository first (with a first commit when auto_init is set), then the
// database row; if the row cannot be written the new directory is removed
// again. Callers check that doer may create repositories for owner.
func Create(ctx context.Context, d *app.Deps, doer, owner *store.User, opt *models.CreateRepoOption) (*store.Repository, error) {
	if opt == nil || opt.Name == nil {
		return nil, apierr.Validation("[Name]: Required")
	}
	name := *opt.Name
	if err := names.CheckRepo("Name", name); err != nil {
		return nil, err
	}
	branch := conv.Value(opt.DefaultBranch)
	if branch == "" {
		branch = DefaultBranch
	}
	if err := names.CheckBranch("DefaultBranch", branch); err != nil {
		return nil, err
	}
	format := conv.Value(opt.ObjectFormatName)
	if format == "" {
		format = "sha1"
	}
	if !d.Git.SupportsObjectFormat(format) {
		return nil, apierr.Validation("object format %q is not supported by this server", format)
	}
	autoInit := conv.Value(opt.AutoInit)
	description := conv.Value(opt.Description)
	// Template names are checked even without auto_init, so a typo is
	// reported instead of silently ignored.
	if err := checkReadme(conv.Value(opt.Readme)); err != nil {
		return nil, err
	}
	ignore, err := gitignore(conv.Value(opt.Gitignores))
	if err != nil {
		return nil, err
	}
	holder := owner.FullName
	if holder == "" {
		holder = owner.Name
	}
	lic, err := license(conv.Value(opt.License), holder, d.Clock.Now())
	if err != nil {
		return nil, err
	}
	if err := checkQuota(ctx, d, doer, owner); err != nil {
		return nil, err
	}
	if _, err := d.Store.Repos().FindByName(ctx, owner.ID, name); err == nil {
		return nil, errRepoExists()
	} else if !errors.Is(err, store.ErrNotFound) {
		return nil, err
	}

	gitOpts := gitstore.InitOptions{DefaultBranch: branch, ObjectFormat: format}
	if autoInit {
		gitOpts.Files = map[string]string{"README.md": readme(name, description)}
		if ignore != "" {
			gitOpts.Files[".gitignore"] = ignore
		}
		if lic != "" {
			gitOpts.Files["LICENSE"] = lic
		}
		gitOpts.CommitMessage = "Initial commit\n"
		gitOpts.Author = app.Signature(doer, d.Clock.Now())
	}
	initial, err := d.Git.Create(owner.Name, name, gitOpts)
	if err != nil {
		return nil, createError(ctx, d, owner, name, err)
	}

	r := &store.Repository{
		OwnerID:       owner.ID,
		Name:          name,
		Description:   description,
		DefaultBranch: branch,
		IsPrivate:     conv.Value(opt.Private),
		IsTemplate:    conv.Value(opt.Template),
		IsEmpty:       !autoInit,
		ObjectFormat:  format,
	}
	applyDefaults(r)
	r.Owner = owner
	err = d.Store.WithTx(ctx, func(ctx context.Context) error {
		if err := d.Store.Repos().Create(ctx, r); err != nil {
			return err
		}
		// The auto_init commit becomes the default branch, a ref change
		// like any other.
		return refs.New(d).InitialBranch(ctx, r, doer, initial)
	})
	if err != nil {
		// Compensate: the directory is ours (Create refuses an existing
		// one), so removing it cannot destroy anyone else's data.
		if rmErr := d.Git.Delete(owner.Name, name); rmErr != nil {
			d.Log.Error("remove repository directory after failed insert", "repo", owner.Name+"/"+name, "err", rmErr)
		}
		if errors.Is(err, store.ErrDuplicate) {
			return nil, errRepoExists()
		}
		return nil, err
	}
	r.Owner = owner
	return r, nil
}

// createError explains a failed git create: an existing directory is either
// a repository created concurrently under the same name or stray files that
// are never deleted on the caller's behalf.
func createError(ctx context.Context, d *app.Deps, owner *store.User, name string, err error) error {
	switch {
	case errors.Is(err, store.ErrDuplicate):
		if _, findErr := d.Store.Repos().FindByName(ctx, owner.ID, name); findErr == nil {
			return errRepoExists()
		}
		return apierr.Conflict("The repository files already exist on disk; a site admin must adopt or delete them first.")
	case errors.Is(err, gitstore.ErrUnsupported):
		return apierr.Validation("%s", err.Error())
	case errors.Is(err, gitstore.ErrBadName):
		return apierr.Validation("[Name]: invalid repository name")
	}
	return err
}

// checkQuota enforces the owner's repository limit; site admins are exempt.
// MaxRepoCreation below 0 means the site default, which is unlimited.
func checkQuota(ctx context.Context, d *app.Deps, doer, owner *store.User) error {
	if doer.IsAdmin || owner.MaxRepoCreation < 0 {
		return nil
	}
	n, err := d.Store.Repos().CountByOwner(ctx, owner.ID)
	if err != nil {
		return err
	}
	if n >= owner.MaxRepoCreation {
		return apierr.Forbidden("the owner has reached its limit of %d repositories", owner.MaxRepoCreation)
	}
	return nil
}

// applyDefaults sets the settings a new repository starts with. The row is
// written with every column, so the defaults must be explicit here.
func applyDefaults(r *store.Repository) {
	r.HasIssues = true
	r.HasWiki = true
	r.HasPullRequests = true
	r.HasProjects = true
	r.HasReleases = true
	r.HasPackages = true
	r.HasActions = true
	r.HasCode = true
	r.ProjectsMode = "all"
	r.AllowMerge = true
	r.AllowRebase = true
	r.AllowRebaseMerge = true
	r.AllowSquash = true
	r.AllowFastForwardOnly = true
	r.AllowRebaseUpdate = true
	r.DefaultMergeStyle = "merge"
	r.EnableTimeTracker = true
	r.AllowOnlyContributorsToTrackTime = true
	r.EnableIssueDependencies = true
}
