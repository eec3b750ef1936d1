package repo

import (
	"context"
	"errors"
	"net/url"
	"strings"
	"time"

	"github.com/go-openapi/runtime/middleware"

	"repohost/impl/apierr"
	"repohost/impl/app"
	"repohost/impl/convert"
	"repohost/impl/events"
	"repohost/impl/names"
	"repohost/models"
	"repohost/restapi/operations/repository"
	"repohost/store"
)

// The values the reference accepts for these settings; read-only tables.
var (
	projectsModes = []string{"repo", "owner", "all"}
	mergeStyles   = []string{"merge", "rebase", "rebase-merge", "squash", "fast-forward-only", "manually-merged"}
	trackerStyles = []string{"numeric", "alphanumeric", "regexp"}
)

func oneOf(field, v string, allowed []string) error {
	for _, a := range allowed {
		if v == a {
			return nil
		}
	}
	return apierr.Validation("[%s]: must be one of %s", field, strings.Join(allowed, ", "))
}

// checkURL accepts an absolute http(s) URL.
func checkURL(field, raw string) error {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return apierr.Validation("[%s]: invalid URL", field)
	}
	return nil
}

// EditInput is a change to a repository's settings; nil fields stay as
// they are.
type EditInput struct {
	// Name renames the repository (its directory moves with it).
	Name *string
	// MirrorInterval is a pull mirror's new interval (a Go duration).
	MirrorInterval       *string
	Description, Website *string
	Private, Template    *bool
	// Archived archives or unarchives it.
	Archived *bool
	// DefaultBranch must exist unless the repository is empty; HEAD moves
	// with it.
	DefaultBranch *string

	// Units.
	HasIssues, HasWiki, HasPullRequests, HasProjects *bool
	HasReleases, HasPackages, HasActions, HasCode    *bool
	ProjectsMode                                     *string

	// Pull request merging.
	IgnoreWhitespaceConflicts, AllowMerge, AllowRebase, AllowRebaseMerge *bool
	AllowSquash, AllowFastForwardOnly, AllowManualMerge                  *bool
	AutodetectManualMerge, AllowRebaseUpdate                             *bool
	DefaultDeleteBranchAfterMerge, DefaultAllowMaintainerEdit            *bool
	DefaultMergeStyle, DefaultTargetBranch                               *string

	// Sending one tracker selects it: an external tracker with a URL
	// replaces the built-in one; the built-in settings (or an external
	// tracker without URL) switch back to it.
	ExternalTracker *ExternalTracker
	InternalTracker *InternalTracker
	ExternalWikiURL *string
}

// ExternalTracker is an issue tracker outside this server.
type ExternalTracker struct{ URL, Format, Style, RegexpPattern string }

// InternalTracker is the settings of the built-in issue tracker.
type InternalTracker struct {
	EnableTimeTracker, AllowOnlyContributorsToTrackTime, EnableIssueDependencies bool
}

// checkEdit validates everything in o that does not need git or the
// database, before anything changes.
func checkEdit(o EditInput) error {
	if o.Name != nil {
		if err := names.CheckRepo("Name", *o.Name); err != nil {
			return err
		}
	}
	if o.DefaultBranch != nil {
		if err := names.CheckBranch("DefaultBranch", *o.DefaultBranch); err != nil {
			return err
		}
	}
	if o.DefaultTargetBranch != nil && *o.DefaultTargetBranch != "" {
		if err := names.CheckBranch("DefaultTargetBranch", *o.DefaultTargetBranch); err != nil {
			return err
		}
	}
	if o.ProjectsMode != nil {
		if err := oneOf("ProjectsMode", *o.ProjectsMode, projectsModes); err != nil {
			return err
		}
	}
	if o.DefaultMergeStyle != nil {
		if err := oneOf("DefaultMergeStyle", *o.DefaultMergeStyle, mergeStyles); err != nil {
			return err
		}
	}
	if t := o.ExternalTracker; t != nil && t.URL != "" {
		if err := checkURL("ExternalTrackerURL", t.URL); err != nil {
			return err
		}
		if t.Format != "" {
			// The placeholders stand for path segments; with sample values
			// in their place the format must be a URL.
			sample := strings.NewReplacer("{user}", "u", "{repo}", "r", "{index}", "1").Replace(t.Format)
			if err := checkURL("ExternalTrackerFormat", sample); err != nil {
				return err
			}
		}
		if t.Style != "" {
			if err := oneOf("ExternalTrackerStyle", t.Style, trackerStyles); err != nil {
				return err
			}
		}
	}
	if w := o.ExternalWikiURL; w != nil && *w != "" {
		if err := checkURL("ExternalWikiURL", *w); err != nil {
			return err
		}
	}
	return nil
}

// applyEdit copies the fields present in o onto r; absent ones stay.
func applyEdit(r *store.Repository, o EditInput, now time.Time) {
	app.Set(&r.Name, o.Name)
	app.Set(&r.Description, o.Description)
	app.Set(&r.Website, o.Website)
	app.Set(&r.IsPrivate, o.Private)
	app.Set(&r.IsTemplate, o.Template)
	app.Set(&r.DefaultBranch, o.DefaultBranch)
	if o.Archived != nil && *o.Archived != r.IsArchived {
		r.IsArchived = *o.Archived
		r.ArchivedAt = nil
		if r.IsArchived {
			r.ArchivedAt = &now
		}
	}
	app.Set(&r.HasIssues, o.HasIssues)
	app.Set(&r.HasWiki, o.HasWiki)
	app.Set(&r.HasPullRequests, o.HasPullRequests)
	app.Set(&r.HasProjects, o.HasProjects)
	app.Set(&r.HasReleases, o.HasReleases)
	app.Set(&r.HasPackages, o.HasPackages)
	app.Set(&r.HasActions, o.HasActions)
	app.Set(&r.HasCode, o.HasCode)
	app.Set(&r.ProjectsMode, o.ProjectsMode)
	app.Set(&r.IgnoreWhitespaceConflicts, o.IgnoreWhitespaceConflicts)
	app.Set(&r.AllowMerge, o.AllowMerge)
	app.Set(&r.AllowRebase, o.AllowRebase)
	app.Set(&r.AllowRebaseMerge, o.AllowRebaseMerge)
	app.Set(&r.AllowSquash, o.AllowSquash)
	app.Set(&r.AllowFastForwardOnly, o.AllowFastForwardOnly)
	app.Set(&r.AllowManualMerge, o.AllowManualMerge)
	app.Set(&r.AutodetectManualMerge, o.AutodetectManualMerge)
	app.Set(&r.AllowRebaseUpdate, o.AllowRebaseUpdate)
	app.Set(&r.DefaultMergeStyle, o.DefaultMergeStyle)
	app.Set(&r.DefaultDeleteBranchAfterMerge, o.DefaultDeleteBranchAfterMerge)
	app.Set(&r.DefaultAllowMaintainerEdit, o.DefaultAllowMaintainerEdit)
	app.Set(&r.DefaultTargetBranch, o.DefaultTargetBranch)
	if t := o.ExternalTracker; t != nil {
		r.ExternalTrackerURL = t.URL
		r.ExternalTrackerFormat = t.Format
		r.ExternalTrackerStyle = t.Style
		r.ExternalTrackerRegexpPattern = t.RegexpPattern
		if t.URL == "" {
			r.ExternalTrackerFormat, r.ExternalTrackerStyle, r.ExternalTrackerRegexpPattern = "", "", ""
		} else if r.ExternalTrackerStyle == "" {
			r.ExternalTrackerStyle = "numeric"
		}
	}
	if t := o.InternalTracker; t != nil {
		r.EnableTimeTracker = t.EnableTimeTracker
		r.AllowOnlyContributorsToTrackTime = t.AllowOnlyContributorsToTrackTime
		r.EnableIssueDependencies = t.EnableIssueDependencies
		if o.ExternalTracker == nil {
			r.ExternalTrackerURL, r.ExternalTrackerFormat, r.ExternalTrackerStyle, r.ExternalTrackerRegexpPattern = "", "", "", ""
		}
	}
	app.Set(&r.ExternalWikiURL, o.ExternalWikiURL)
}

func (h Handlers) RepoEdit(ctx context.Context, params repository.RepoEditParams) middleware.Responder {
	p, r, perm, err := h.SignedInRepo(ctx, params.Owner, params.Repo)
	if err != nil {
		return h.Fail(err)
	}
	if !perm.IsAdmin() {
		return h.Fail(apierr.Forbidden(app.MsgNeedAdmin))
	}
	updated, err := h.svc().Edit(ctx, p.User, r, editInput(params.Body))
	if err != nil {
		return h.Fail(err)
	}
	// The answer shows the permission on the repository as it is now: a
	// unit switched on or off changes it.
	if perm, err = h.Access.Repo(ctx, p, updated); err != nil {
		return h.Fail(err)
	}
	return repository.NewRepoEditOK().WithPayload(convert.Repo(h.Links(app.BaseURL(params.HTTPRequest)), updated, perm, app.Viewer(p)))
}

// Edit applies o to r (its Owner loaded): checks first, then the git
// changes (rename, HEAD), then the row in a transaction that re-reads it
// locked, so concurrent edits of different fields wait for each other
// instead of writing back each other's old values, and records RepoEdited.
// A failed write undoes the git changes. Making r private is refused to a
// token limited to public data, as creating a private repository is.
func (s Service) Edit(ctx context.Context, doer *store.User, r *store.Repository, o EditInput) (*store.Repository, error) {
	if err := checkPrivate(ctx, o.Private != nil && *o.Private); err != nil {
		return nil, err
	}
	if err := checkEdit(o); err != nil {
		return nil, err
	}
	var mirrorInterval *time.Duration
	if o.MirrorInterval != nil {
		if !r.IsMirror {
			return nil, apierr.Validation("repo is not a mirror, can not change mirror interval")
		}
		d, err := s.mirrorInterval(*o.MirrorInterval, r.MirrorInterval)
		if err != nil {
			return nil, apierr.Validation("%v", err)
		}
		mirrorInterval = &d
	}
	owner := r.Owner.Name
	oldName, newName := r.Name, r.Name
	if o.Name != nil && *o.Name != r.Name {
		newName = *o.Name
		other, err := s.Store.Repos().FindByName(ctx, r.OwnerID, newName)
		switch {
		case err == nil && other.ID != r.ID:
			return nil, apierr.Validation("The repository with the same name already exists.")
		case err != nil && !errors.Is(err, store.ErrNotFound):
			return nil, err
		}
	}
	oldBranch, newBranch := r.DefaultBranch, r.DefaultBranch
	if o.DefaultBranch != nil && *o.DefaultBranch != r.DefaultBranch {
		newBranch = *o.DefaultBranch
		if !r.IsEmpty {
			ok, err := s.Git.HasBranch(owner, oldName, newBranch)
			if err != nil {
				return nil, err
			}
			if !ok {
				return nil, apierr.Validation("[DefaultBranch]: branch %q does not exist", newBranch)
			}
		}
	}

	renamed := false
	if newName != oldName {
		if err := s.Git.Rename(owner, oldName, owner, newName); err != nil {
			if errors.Is(err, store.ErrDuplicate) {
				return nil, apierr.Validation("repository files named %q already exist on disk", newName)
			}
			return nil, err
		}
		renamed = true
	}
	undo := func() {
		if newBranch != oldBranch {
			if err := s.Git.SetDefaultBranch(owner, newName, oldBranch); err != nil {
				s.Log.ErrorContext(ctx, "restore default branch", "repo", owner+"/"+newName, "err", err)
			}
		}
		if renamed {
			if err := s.Git.Rename(owner, newName, owner, oldName); err != nil {
				s.Log.ErrorContext(ctx, "undo repository rename", "repo", owner+"/"+newName, "err", err)
			}
		}
	}
	if newBranch != oldBranch {
		// An empty repository gets its HEAD moved too, so the first push
		// to the new default branch is what clones check out.
		if err := s.Git.SetDefaultBranch(owner, newName, newBranch); err != nil {
			oldBranch = newBranch // nothing to restore
			undo()
			return nil, err
		}
	}

	var updated *store.Repository
	err := s.Store.WithTx(ctx, func(ctx context.Context) error {
		fresh, err := s.Store.Repos().FindByIDForUpdate(ctx, r.ID)
		if err != nil {
			return err
		}
		applyEdit(fresh, o, s.Clock.Now())
		if mirrorInterval != nil {
			fresh.MirrorInterval = *mirrorInterval
			if err := s.setMirrorInterval(ctx, fresh); err != nil {
				return err
			}
		}
		if err := s.Store.Repos().Update(ctx, fresh); err != nil {
			return err
		}
		updated = fresh
		ev := EventOf(fresh)
		if fresh.Name != oldName {
			ev.OldName = oldName
		}
		return s.Events.Emit(ctx, events.RepoEdited, fresh.ID, events.ActorID(doer), ev)
	})
	if err != nil {
		undo()
		if errors.Is(err, store.ErrDuplicate) {
			return nil, apierr.Validation("The repository with the same name already exists.")
		}
		return nil, err
	}
	return updated, nil
}

// editInput is the service's input for a PATCH body.
func editInput(o *models.EditRepoOption) EditInput {
	if o == nil {
		return EditInput{}
	}
	in := EditInput{
		Name: o.Name, MirrorInterval: o.MirrorInterval, Description: o.Description, Website: o.Website,
		Private: o.Private, Template: o.Template, Archived: o.Archived, DefaultBranch: o.DefaultBranch,

		HasIssues: o.HasIssues, HasWiki: o.HasWiki, HasPullRequests: o.HasPullRequests, HasProjects: o.HasProjects,
		HasReleases: o.HasReleases, HasPackages: o.HasPackages, HasActions: o.HasActions, HasCode: o.HasCode,
		ProjectsMode: o.ProjectsMode,

		IgnoreWhitespaceConflicts: o.IgnoreWhitespaceConflicts, AllowMerge: o.AllowMerge,
		AllowRebase: o.AllowRebase, AllowRebaseMerge: o.AllowRebaseMerge, AllowSquash: o.AllowSquash,
		AllowFastForwardOnly: o.AllowFastForwardOnly, AllowManualMerge: o.AllowManualMerge,
		AutodetectManualMerge: o.AutodetectManualMerge, AllowRebaseUpdate: o.AllowRebaseUpdate,
		DefaultDeleteBranchAfterMerge: o.DefaultDeleteBranchAfterMerge,
		DefaultAllowMaintainerEdit:    o.DefaultAllowMaintainerEdit,
		DefaultMergeStyle:             o.DefaultMergeStyle, DefaultTargetBranch: o.DefaultTargetBranch,
	}
	if t := o.ExternalTracker; t != nil {
		in.ExternalTracker = &ExternalTracker{URL: t.ExternalTrackerURL, Format: t.ExternalTrackerFormat,
			Style: t.ExternalTrackerStyle, RegexpPattern: t.ExternalTrackerRegexpPattern}
	}
	if t := o.InternalTracker; t != nil {
		in.InternalTracker = &InternalTracker{EnableTimeTracker: t.EnableTimeTracker,
			AllowOnlyContributorsToTrackTime: t.AllowOnlyContributorsToTrackTime,
			EnableIssueDependencies:          t.EnableIssueDependencies}
	}
	if w := o.ExternalWiki; w != nil {
		in.ExternalWikiURL = &w.ExternalWikiURL
	}
	return in
}
