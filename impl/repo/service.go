package repo

import (
	"context"
	"errors"

	"repohost/impl/access"
	"repohost/impl/apierr"
	"repohost/impl/app"
	"repohost/impl/auth"
	"repohost/impl/events"
	"repohost/impl/issue"
	"repohost/impl/refs"
	"repohost/impl/templates"
	"repohost/impl/webhook"
	"repohost/store"
	"repohost/store/gitstore"
	"repohost/store/objects"
)

// Service is the only place repositories are created, changed and deleted.
// Handlers (repository, organization and admin routes alike) check access,
// turn their parameters into the inputs below and call it. Every action
// records exactly one event in the transaction of its change.
type Service struct{ *app.Deps }

// Origin says where a new repository's content comes from.
type Origin int

const (
	// OriginNew is an empty repository, or one with a first commit of
	// generated files (CreateInput.AutoInit).
	OriginNew Origin = iota
	// OriginTemplate generates the repository from CreateInput.From.
	OriginTemplate
	// OriginAdopted takes over a directory already on disk whose
	// repository has no row (the admin's unadopted repositories).
	OriginAdopted
	// OriginFork is a fork of From: a fresh bare repository with From's
	// objects, its branches and tags, and the row pointing at From.
	OriginFork
)

// CreateInput is a new repository as its creator asked for it.
type CreateInput struct {
	Origin      Origin
	Name        string
	Description string
	Private     bool
	// IsTemplate marks the new repository as a template for others.
	IsTemplate bool
	// DefaultBranch "" means DefaultBranch, the template's default branch
	// when generating, and HEAD when adopting.
	DefaultBranch string
	// ObjectFormat "" means sha1; generated and adopted repositories keep
	// the format of their source.
	ObjectFormat string

	// AutoInit writes a first commit with a README and, when named, a
	// .gitignore and a LICENSE from impl/templates. The names are checked
	// even without AutoInit, so a typo is reported.
	AutoInit                    bool
	Readme, Gitignores, License string
	// IssueLabels names an issue-label set (impl/templates) whose labels
	// the repository starts with, auto-init or not.
	IssueLabels string

	// From is the repository the content comes from (the template when
	// generating); nil for new and adopted repositories.
	From *store.Repository
	// Items says what a generated repository takes from its template.
	Items TemplateItems
	// Migrating creates the repository empty and marked as being
	// migrated (store.RepoStatusBeingMigrated); Also then runs last in
	// the transaction that inserts the row (the migration's own row and
	// event).
	Migrating bool
	// OriginalURL is the address a migration brings the repository from,
	// without credentials.
	OriginalURL string
	Also        func(ctx context.Context, r *store.Repository) error
	// LinkBase is the server's address ("https://host/"), for the links a
	// template's (or a README template's) variables expand to; "" means
	// the configured root URL.
	LinkBase string
}

// TemplateItems are the parts of a template a generated repository copies.
type TemplateItems struct {
	GitContent, GitHooks, Topics, Labels, ProtectedBranches, Webhooks bool
	// Avatar is accepted; this server has no avatars, so a template has
	// none to give.
	Avatar bool
}

func (t TemplateItems) any() bool {
	return t.GitContent || t.GitHooks || t.Topics || t.Labels || t.ProtectedBranches || t.Webhooks || t.Avatar
}

// errPublicOnly refuses a private repository to a token limited to public
// data, with the reference's message for such a token on a private
// repository.
var errPublicOnly = apierr.Forbidden("token scope is limited to public repos")

// checkPrivate refuses to make a repository private on behalf of a request
// whose token is limited to public data (access.MayMakePrivate). It reads
// the request's credentials from ctx rather than trusting every caller to
// pass them, so no creation path (user, organization, admin, generate,
// adopt, and those to come) can forget it.
func checkPrivate(ctx context.Context, private bool) error {
	if private && !access.MayMakePrivate(auth.FromContext(ctx)) {
		return errPublicOnly
	}
	return nil
}

// ErrExists is the 409 for a name the owner already uses.
var ErrExists = apierr.Conflict("The repository with the same name already exists.")

// Create makes owner's repository on behalf of doer, whatever its origin:
// the git work first (a new bare repository, a copy of the template, or
// the adopted directory as it is; then its first refs through impl/refs'
// Seed), then the row in a transaction that also records RepoCreated and
// the refs (RefsChanged); when that transaction fails, files this call
// made are removed again. No git work runs inside the transaction. Callers check that doer may create repositories for
// owner; Create itself refuses a private one to a token limited to public
// data.
func (s Service) Create(ctx context.Context, doer, owner *store.User, in CreateInput) (*store.Repository, error) {
	if err := checkPrivate(ctx, in.Private); err != nil {
		return nil, err
	}
	start, err := s.checkCreate(owner, &in)
	if err != nil {
		return nil, err
	}
	if err := s.checkQuota(ctx, doer, owner); err != nil {
		return nil, err
	}
	if _, err := s.Store.Repos().FindByName(ctx, owner.ID, in.Name); err == nil {
		return nil, ErrExists
	} else if !errors.Is(err, store.ErrNotFound) {
		return nil, err
	}
	r := newRow(owner, in)
	var forkRefs []*gitstore.RefUpdate
	if in.Origin == OriginFork {
		if forkRefs, err = s.forkRefs(r, in.From); err != nil {
			return nil, err
		}
	}
	made, initial, err := s.createFiles(ctx, doer, owner, in, start.files, r, forkRefs)
	if err != nil {
		return nil, err
	}
	// The row starts with the size of what is on disk (an adopted
	// directory's whole history); the first branch or a fork's refs
	// recount it once they are published (the repo_size consumer).
	if r.Size, err = s.Git.Size(owner.Name, in.Name); err != nil {
		s.Log.ErrorContext(ctx, "read new repository's size", "repo", r.FullName(), "err", err)
	}
	// The first refs too are git work, done before the transaction (on
	// SQLite it holds the whole database's write lock).
	var seeded *refs.Seeded
	if in.Origin == OriginFork {
		seeded, err = refs.New(s.Deps).Seed(r, doer, forkRefs)
	} else {
		seeded, err = refs.New(s.Deps).InitialBranch(r, doer, initial)
	}
	if err == nil {
		err = s.Store.WithTx(ctx, func(ctx context.Context) error { return s.insert(ctx, doer, owner, r, in, start, seeded) })
	}
	if err != nil {
		// Compensate: a directory this call made is ours (the git store
		// refuses an existing one), so removing it destroys no one
		// else's data, the refs seeded in it included; an adopted one
		// stays as it was.
		if made {
			if rmErr := s.Git.Delete(owner.Name, in.Name); rmErr != nil {
				s.Log.ErrorContext(ctx, "remove repository directory after failed insert", "repo", r.FullName(), "err", rmErr)
			}
		}
		if errors.Is(err, store.ErrDuplicate) {
			return nil, ErrExists
		}
		return nil, err
	}
	if in.Origin == OriginTemplate {
		// The copies wrote columns of the row (topics); read it back so
		// the answer shows them.
		return s.Store.Repos().FindByID(ctx, r.ID)
	}
	return r, nil
}

// insert is the database part of Create, in its transaction: the row, the
// default hooks, RepoCreated, the creator's teams, the seeded refs'
// record, then what the origin adds.
func (s Service) insert(ctx context.Context, doer, owner *store.User, r *store.Repository, in CreateInput, start startWith, seeded *refs.Seeded) error {
	if err := s.Store.Repos().Create(ctx, r); err != nil {
		return err
	}
	// Default hooks are copied in with the repository, so they hear
	// its first events.
	if err := (webhook.Service{Deps: s.Deps}).CopyDefaultHooks(ctx, r); err != nil {
		return err
	}
	if err := s.Events.Emit(ctx, events.RepoCreated, r.ID, events.ActorID(doer), EventOf(r)); err != nil {
		return err
	}
	if err := s.giveCreatorTeams(ctx, doer, owner, r); err != nil {
		return err
	}
	// The creator watches it, and for an organization's repository the
	// members of its teams that include all repositories, as the
	// reference's auto-watch of new repositories (forks included).
	if err := s.watchNew(ctx, doer, owner, r); err != nil {
		return err
	}
	// The first refs (the fork's, or the first commit of auto-init
	// or template content as the default branch) are recorded
	// before a template's protection rules are copied in.
	if err := seeded.Record(ctx); err != nil {
		return err
	}
	if in.Origin == OriginFork {
		// Counted on its parent.
		return s.Store.Repos().AdjustForks(ctx, in.From.ID, 1)
	}
	// The issue-label set's labels belong to the creation: no events
	// of their own, as with a template's labels.
	if err := (issue.Service{Deps: s.Deps}).InitLabels(ctx, r, labelInputs(start.labels)); err != nil {
		return err
	}
	if in.Origin == OriginTemplate {
		if err := s.copyTemplateRows(ctx, in, r); err != nil {
			return err
		}
	}
	if in.Also != nil {
		return in.Also(ctx, r)
	}
	return nil
}

// labelInputs are the issue service's inputs for a label set's labels.
func labelInputs(labels []templates.Label) []issue.LabelInput {
	out := make([]issue.LabelInput, 0, len(labels))
	for _, l := range labels {
		out = append(out, issue.LabelInput{Name: l.Name, Color: l.Color, Description: l.Description, Exclusive: l.Exclusive})
	}
	return out
}

// Delete removes r (its Owner loaded): the rows in a transaction that
// records RepoDeleted (issues, releases and the rest go with the row;
// topic counts are corrected), then, once the outermost transaction has
// committed, its git directory and release files. Inside a larger
// transaction (deleting the owner) the files wait for that one.
func (s Service) Delete(ctx context.Context, doer *store.User, r *store.Repository) error {
	return s.Store.WithTx(ctx, func(ctx context.Context) error {
		if err := s.Store.Repos().Delete(ctx, r.ID); err != nil {
			return err
		}
		if r.IsFork && r.ForkID != 0 {
			if err := s.Store.Repos().AdjustForks(ctx, r.ForkID, -1); err != nil {
				return err
			}
		}
		if err := s.Events.Emit(ctx, events.RepoDeleted, r.ID, events.ActorID(doer), EventOf(r)); err != nil {
			return err
		}
		owner, name, id := r.Owner.Name, r.Name, r.ID
		s.Store.AfterCommit(ctx, func() { s.removeFiles(owner, name, id) })
		return nil
	})
}

// DeleteAllOf deletes every repository of owner, each through Delete; the
// user and organization services call it when the owner itself goes.
func (s Service) DeleteAllOf(ctx context.Context, doer, owner *store.User) error {
	repos, err := s.Store.Repos().ListByOwner(ctx, owner.ID)
	if err != nil {
		return err
	}
	for _, r := range repos {
		r.Owner = owner
		if err := s.Delete(ctx, doer, r); err != nil {
			return err
		}
	}
	return nil
}

// removeFiles deletes what a repository keeps on disk once its row is
// gone. The repository no longer exists for anyone then, so a failure is
// only logged: what is left is stray data, which a later create refuses
// to overwrite.
func (s Service) removeFiles(owner, name string, id int64) {
	if err := s.Git.Delete(owner, name); err != nil {
		s.Log.Error("remove repository directory", "repo", owner+"/"+name, "err", err)
	}
	ctx := context.Background() // the row is gone: finish whatever the request does
	if err := objects.DeletePrefix(ctx, s.Objects.Attachments, app.RepoKeyPrefix(id)); err != nil {
		s.Log.Error("remove release files", "repo", owner+"/"+name, "err", err)
	}
	if err := objects.DeletePrefix(ctx, s.Objects.Archives, app.RepoKeyPrefix(id)); err != nil {
		s.Log.Error("remove repository archives", "repo", owner+"/"+name, "err", err)
	}
}

// EventOf is the payload of r's events (r.Owner loaded).
func EventOf(r *store.Repository) events.Repo {
	return events.Repo{ID: r.ID, Owner: r.Owner.Name, Name: r.Name, Private: r.IsPrivate}
}
