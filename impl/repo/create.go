package repo

import (
	"context"
	"errors"
	"slices"
	"strconv"

	"github.com/go-git/go-git/v6/plumbing"

	"repohost/impl/apierr"
	"repohost/impl/app"
	"repohost/impl/convert"
	"repohost/impl/names"
	"repohost/impl/templates"
	"repohost/store"
	"repohost/store/gitstore"
)

// DefaultBranch is the branch a new repository starts with unless the
// caller names another.
const DefaultBranch = "main"

// startWith is what a new repository starts with besides its row: the files
// of its first commit (auto-init only) and its issue labels.
type startWith struct {
	files  map[string]string
	labels []templates.Label
}

// checkCreate validates in and fills in its defaults, before anything is
// read or written, in the reference's order of refusals. It returns the
// files of the first commit when in asks for auto-init, and the labels of
// the issue-label set it names.
func (s Service) checkCreate(owner *store.User, in *CreateInput) (startWith, error) {
	if err := names.CheckRepo("Name", in.Name); err != nil {
		return startWith{}, err
	}
	// A default branch the client names follows the rule of every branch
	// a client names; one taken from a template may be any git allows.
	if in.DefaultBranch != "" && in.Origin != OriginAdopted && in.Origin != OriginFork {
		if err := names.CheckNewBranch("DefaultBranch", in.DefaultBranch); err != nil {
			return startWith{}, err
		}
	}
	if in.Origin == OriginTemplate {
		if !in.From.IsTemplate {
			return startWith{}, apierr.Validation("this is not a template repo")
		}
		if !in.Items.any() {
			return startWith{}, apierr.Validation("must select at least one template item")
		}
		if in.DefaultBranch == "" {
			in.DefaultBranch = in.From.DefaultBranch
		}
		in.ObjectFormat = in.From.ObjectFormat
	}
	if in.Origin == OriginAdopted {
		// Branch and format are the directory's own.
		return startWith{}, nil
	}
	if in.Origin == OriginFork {
		// A fork is its parent's content, in its parent's format.
		in.DefaultBranch, in.ObjectFormat = in.From.DefaultBranch, in.From.ObjectFormat
		return startWith{}, nil
	}
	if in.DefaultBranch == "" {
		in.DefaultBranch = DefaultBranch
	}
	if err := names.CheckBranch("DefaultBranch", in.DefaultBranch); err != nil {
		return startWith{}, err
	}
	if in.ObjectFormat == "" {
		in.ObjectFormat = "sha1"
	}
	if !s.Git.SupportsObjectFormat(in.ObjectFormat) {
		return startWith{}, apierr.Validation("object format %q is not supported by this server", in.ObjectFormat)
	}
	// Template names are checked even without auto-init, so a typo is
	// reported instead of silently ignored.
	files, err := s.initFiles(owner, *in)
	if err != nil {
		return startWith{}, err
	}
	labels, err := labelSet(in.IssueLabels)
	if err != nil {
		return startWith{}, err
	}
	if !in.AutoInit {
		files = nil
	}
	return startWith{files: files, labels: labels}, nil
}

// checkQuota enforces the owner's repository limit; site admins are exempt.
// MaxRepoCreation below 0 means the site default, which is unlimited.
func (s Service) checkQuota(ctx context.Context, doer, owner *store.User) error {
	if doer.IsAdmin || owner.MaxRepoCreation < 0 {
		return nil
	}
	n, err := s.Store.Repos().CountByOwner(ctx, owner.ID)
	if err != nil {
		return err
	}
	if n >= owner.MaxRepoCreation {
		return apierr.Forbidden("the owner has reached its limit of %d repositories", owner.MaxRepoCreation)
	}
	return nil
}

// newRow is the row of a new repository: what in asks for, over the
// settings every repository starts with. The row is written with every
// column, so the defaults must be explicit here.
func newRow(owner *store.User, in CreateInput) *store.Repository {
	status := store.RepoStatusReady
	if in.Migrating {
		status = store.RepoStatusBeingMigrated
	}
	return &store.Repository{Status: status, OriginalURL: in.OriginalURL,
		OwnerID: owner.ID, Owner: owner, Name: in.Name, Description: in.Description,
		DefaultBranch: in.DefaultBranch, ObjectFormat: in.ObjectFormat,
		IsPrivate: in.Private, IsTemplate: in.IsTemplate, IsEmpty: true,

		HasIssues: true, HasWiki: true, HasPullRequests: true, HasProjects: true,
		HasReleases: true, HasPackages: true, HasActions: true, HasCode: true,
		ProjectsMode: "all",

		AllowMerge: true, AllowRebase: true, AllowRebaseMerge: true, AllowSquash: true,
		AllowFastForwardOnly: true, AllowRebaseUpdate: true, DefaultMergeStyle: "merge",

		EnableTimeTracker: true, AllowOnlyContributorsToTrackTime: true, EnableIssueDependencies: true,
	}
}

// createFiles is the one place a repository's files come into being: a
// new bare repository (with a first commit when auto-initialised), a copy
// of the template, or, for an adopted one, the directory already there,
// read for its default branch and format. It completes r from what is on
// disk, tells whether it made the directory (and so may remove it) and
// returns the first commit it wrote, which no branch points at yet: Create
// publishes it through impl/refs.
func (s Service) createFiles(ctx context.Context, doer, owner *store.User, in CreateInput, files map[string]string, r *store.Repository, forkRefs []*gitstore.RefUpdate) (made bool, initial plumbing.Hash, err error) {
	if in.Origin == OriginAdopted {
		return false, plumbing.ZeroHash, s.readAdopted(owner, r)
	}
	opts := gitstore.InitOptions{DefaultBranch: in.DefaultBranch, ObjectFormat: in.ObjectFormat,
		CommitMessage: "Initial commit\n", Author: app.Signature(doer, s.Clock.Now()), Signer: s.CommitSigner()}
	switch in.Origin {
	case OriginFork:
		src, err := s.OpenGit(in.From)
		if err != nil {
			return false, plumbing.ZeroHash, err
		}
		tips := make([]plumbing.Hash, 0, len(forkRefs))
		for _, u := range forkRefs {
			tips = append(tips, u.New)
		}
		if err := s.Git.CreateFork(ctx, src, owner.Name, in.Name, opts, tips); err != nil {
			return false, plumbing.ZeroHash, s.createError(ctx, owner, in.Name, err)
		}
		return true, plumbing.ZeroHash, nil
	case OriginTemplate:
		src, content, err := s.templateContent(owner, in)
		if err != nil {
			return false, plumbing.ZeroHash, err
		}
		initial, err = s.Git.CreateFromTemplate(src, owner.Name, in.Name, opts, content)
		if err != nil {
			return false, plumbing.ZeroHash, s.createError(ctx, owner, in.Name, err)
		}
	default:
		opts.Files = files
		if initial, err = s.Git.Create(owner.Name, in.Name, opts); err != nil {
			return false, plumbing.ZeroHash, s.createError(ctx, owner, in.Name, err)
		}
	}
	r.IsEmpty = initial.IsZero()
	return true, initial, nil
}

// initFiles are the files of an auto-initialised repository's first
// commit, from the templates in names.
func (s Service) initFiles(owner *store.User, in CreateInput) (map[string]string, error) {
	text, err := readmeText(in.Readme)
	if err != nil {
		return nil, err
	}
	base := in.LinkBase
	if base == "" {
		base = s.Config.RootURL
	}
	files := map[string]string{"README.md": readme(text, base, owner, in.Name, in.Description)}
	ignore, err := gitignore(in.Gitignores)
	if err != nil {
		return nil, err
	}
	if ignore != "" {
		files[".gitignore"] = ignore
	}
	lic, err := license(in.License, templates.LicenseValues{
		Owner: owner.Name, Email: commitEmail(owner), Repo: in.Name, Year: strconv.Itoa(s.Clock.Now().Year()),
	})
	if err != nil {
		return nil, err
	}
	if lic != "" {
		files["LICENSE"] = lic
	}
	return files, nil
}

// commitEmail is the address the reference signs an owner's commits with:
// the placeholder when the owner keeps its address private.
func commitEmail(owner *store.User) string {
	if owner.KeepEmailPrivate {
		return owner.LowerName + "@" + convert.NoReplyDomain
	}
	return owner.Email
}

// readAdopted completes the row of an adopted directory: the default
// branch is where HEAD points, or the first existing branch when HEAD
// points at a missing one, as the reference does.
func (s Service) readAdopted(owner *store.User, r *store.Repository) error {
	h, err := s.Git.ReadHeads(owner.LowerName, r.Name)
	if err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return apierr.Validation("%s/%s is not a git repository", owner.LowerName, r.Name)
		}
		return err
	}
	branch := h.DefaultBranch
	if len(h.Branches) > 0 && !slices.Contains(h.Branches, branch) {
		branch = h.Branches[0]
	}
	if branch == "" {
		branch = DefaultBranch
	}
	r.DefaultBranch = branch
	r.IsEmpty = len(h.Branches) == 0
	r.ObjectFormat = h.ObjectFormat
	return nil
}

// createError explains a failed git create: an existing directory is either
// a repository created concurrently under the same name or stray files that
// are never deleted on the caller's behalf.
func (s Service) createError(ctx context.Context, owner *store.User, name string, err error) error {
	switch {
	case errors.Is(err, store.ErrDuplicate):
		if _, findErr := s.Store.Repos().FindByName(ctx, owner.ID, name); findErr == nil {
			return ErrExists
		}
		return apierr.Conflict("The repository files already exist on disk; a site admin must adopt or delete them first.")
	case errors.Is(err, gitstore.ErrBadName):
		return apierr.Validation("[Name]: invalid repository name")
	}
	return err
}
