// Package refs is the one path by which anything moves a ref. Every writer
// goes through Service.Apply: a push over smart HTTP, the contents API,
// branch create/update/delete/rename, tag create/delete, publishing a
// release (its tag), and the first branch of a new repository (auto_init,
// template generation). Apply judges each update with the one PushPolicy,
// moves the refs by compare-and-swap through gitstore.Repos.UpdateRefs
// (which nothing else calls), keeps the repository row in step (a first
// branch makes it non-empty and, when the default branch is missing,
// the default) and emits one events.RefsChanged for what it moved.
package refs

import (
	"context"
	"errors"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"

	"repohost/impl/app"
	"repohost/impl/auth"
	"repohost/impl/events"
	"repohost/store"
	"repohost/store/gitstore"
)

// Service applies ref changes.
type Service struct {
	d *app.Deps
}

// New returns the service over d.
func New(d *app.Deps) *Service { return &Service{d: d} }

// Change is the set of ref updates one action makes.
type Change struct {
	Repo *store.Repository // with Owner loaded
	Doer *auth.Principal
	// Git is Repo's opened repository, when the caller has it; nil opens it.
	Git *gitstore.GitRepo
	// Updates are applied in order; Old zero creates, New zero deletes.
	// Each one's Err tells afterwards why it was not made.
	Updates []*gitstore.RefUpdate
	// Atomic makes the change all or nothing: when one update is refused
	// none is made and Apply returns that refusal. The API's writers set
	// it; a push is not atomic (git's default), its refusals are reported
	// per ref.
	Atomic bool
	// Rename marks a branch rename: Updates are exactly the creation of
	// the new name and the deletion of the old one at the same commit.
	// It is judged by access.PushPolicy.CheckRename and is always atomic.
	Rename bool
	// DeployKey marks a push by a read-write deploy key (Doer is nil):
	// branch rules let it through by their deploy-key allowances.
	DeployKey bool
	// Merge marks the merge of a pull request into its base branch: the
	// branch rules' merge whitelists decide instead of their push lists.
	Merge bool
	// Also, when set, runs inside the transaction that records the change
	// and its event: database writes that must happen together with the
	// ref change. If it fails, the updates are taken back and Apply
	// returns its error.
	Also func(ctx context.Context) error
}

// errNotApplied refuses the other updates of an atomic change one of whose
// updates was refused.
var errNotApplied = &gitstore.RefError{Reason: "atomic change failed: another update was refused", Kind: store.ErrConflict}

// Apply makes c's updates that the repository and access.PushPolicy allow and
// returns those it made. It emits exactly one events.RefsChanged listing
// them, nothing when none was made. With ctx carrying a transaction (a new
// repository's row), the records join it; without, they get their own.
//
// An error is either an atomic change's refusal (the update's Err: an
// *access.Refusal wrapping gitstore.ErrRefused, or a *gitstore.RefError whose
// Kind is a store or gitstore sentinel) or a failure to record the change,
// after which nothing stays applied.
func (s *Service) Apply(ctx context.Context, c Change) (applied []*gitstore.RefUpdate, err error) {
	defer func() {
		// Whatever failed, no update may look applied unless it is.
		if err != nil {
			for _, u := range c.Updates {
				if u.Err == nil {
					u.Err = &gitstore.RefError{Reason: "failed to update the reference", Kind: err}
				}
			}
		}
	}()
	atomic := c.Atomic || c.Rename
	if c.Rename && (len(c.Updates) != 2 || !c.Updates[0].IsCreate() || !c.Updates[1].IsDelete() ||
		c.Updates[0].Branch() == "" || c.Updates[1].Branch() == "") {
		return nil, errors.New("refs: a rename is the creation of one branch and the deletion of another")
	}
	g := c.Git
	if g == nil {
		if g, err = s.d.Git.OpenGit(c.Repo.Owner.Name, c.Repo.Name); err != nil {
			return nil, err
		}
	}
	pp, err := s.d.Access.PushPolicy(ctx, c.Repo, c.Doer)
	if err != nil {
		return nil, err
	}
	// Rules on files and signatures read what the updates bring; the
	// signatures are judged as the commits API shows them.
	pp.WithContent(g).WithSignatureCheck(func(commits []*object.Commit) ([]bool, error) {
		vs, err := s.d.Verifier().Verify(ctx, commits)
		if err != nil {
			return nil, err
		}
		ok := make([]bool, len(vs))
		for i, v := range vs {
			ok[i] = v.Verified
		}
		return ok, nil
	})
	if c.DeployKey {
		pp.AsDeployKey()
	}
	if c.Merge {
		pp.AsMerge()
	}
	if c.Rename {
		perm, err := s.d.Access.Repo(ctx, c.Doer, c.Repo)
		if err != nil {
			return nil, err
		}
		pp.WithAdmin(perm.IsAdmin())
	}
	s.d.Git.UpdateRefs(g, c.Updates, func(open []*gitstore.RefUpdate) {
		for _, u := range open {
			if c.Rename {
				if u.IsDelete() {
					u.Err = pp.CheckRename(u.Branch())
				}
			} else {
				u.Err = pp.Check(u)
			}
		}
		if atomic && firstErr(c.Updates) != nil {
			for _, u := range open {
				if u.Err == nil {
					u.Err = errNotApplied
				}
			}
		}
	})
	for _, u := range c.Updates {
		if u.Err == nil {
			applied = append(applied, u)
		}
	}
	if atomic && len(applied) < len(c.Updates) {
		// Refused before anything moved, or one update lost a race
		// after another was made: either way nothing stays.
		s.undo(g, c.Repo, applied, errNotApplied)
		if err := firstErr(c.Updates); err != nil {
			return nil, err
		}
		return nil, errNotApplied
	}
	if len(applied) == 0 {
		return nil, nil
	}
	if err := s.record(ctx, g, c, applied); err != nil {
		s.undo(g, c.Repo, applied, &gitstore.RefError{Reason: "failed to record the update", Kind: err})
		return nil, err
	}
	// The objects the change brought are on disk by now; the stored size
	// follows once the change has committed (after a new repository's
	// transaction, when that is the one ctx carries). The callback's
	// context carries no transaction (ctx may carry one that has ended by
	// then) and outlives a client that hung up.
	owner, name, id := c.Repo.Owner.Name, c.Repo.Name, c.Repo.ID
	s.d.Store.AfterCommit(ctx, func() { s.UpdateSize(context.Background(), id, owner, name) })
	return applied, nil
}

// UpdateSize stores the disk use of repository id (owner/name), as the
// reference does after every push: the size is read from disk once per
// change instead of on every request that shows it. It walks the
// directory, so it runs outside any transaction. A failure only
// leaves the previous size, so it is logged, not returned.
func (s *Service) UpdateSize(ctx context.Context, id int64, owner, name string) {
	size, err := s.d.Git.Size(owner, name)
	if err == nil {
		err = s.d.Store.GitRepos().SetSize(ctx, id, size)
	}
	if err != nil {
		s.d.Log.ErrorContext(ctx, "update repository size", "repo", owner+"/"+name, "err", err)
	}
}

// InitialBranch creates the first branch of a new repository,
// r.DefaultBranch at commit (the commit gitstore's Create or
// CreateFromTemplate wrote); a zero commit, an empty repository, changes
// nothing. Call it in the transaction that inserts r's row (ctx carries
// it) and before any protection rule is copied into the repository: the
// event then commits with the row, and the branch is judged by the rules
// the repository has when its content appears, none.
func (s *Service) InitialBranch(ctx context.Context, r *store.Repository, doer *store.User, commit plumbing.Hash) error {
	if commit.IsZero() {
		return nil
	}
	_, err := s.Apply(ctx, Change{Repo: r, Doer: &auth.Principal{User: doer, Signer: doer}, Atomic: true,
		Updates: []*gitstore.RefUpdate{{Name: plumbing.NewBranchReferenceName(r.DefaultBranch), New: commit}}})
	return err
}

// firstErr is the first refusal among updates that is not the collateral
// refusal of an atomic change.
func firstErr(updates []*gitstore.RefUpdate) error {
	for _, u := range updates {
		if u.Err != nil && u.Err != errNotApplied {
			return u.Err
		}
	}
	return nil
}

// record writes what the change means for the database in one transaction
// (c.Also, the repository row, the event), then points HEAD at a new
// default branch.
func (s *Service) record(ctx context.Context, g *gitstore.GitRepo, c Change, applied []*gitstore.RefUpdate) error {
	// The first branch written becomes the default when the default
	// branch does not exist (a first push to another branch, a rename
	// of the default branch); a repository that had no branch has one.
	var written []string
	changes := make([]events.RefChange, 0, len(applied))
	for _, u := range applied {
		changes = append(changes, events.RefChange{Name: u.Name.String(), Old: u.Old.String(), New: u.New.String()})
		if b := u.Branch(); b != "" && !u.IsDelete() {
			written = append(written, b)
		}
	}
	newDefault := ""
	if len(written) > 0 {
		at, err := g.BranchHash(c.Repo.DefaultBranch)
		if err != nil {
			return err
		}
		if at.IsZero() {
			newDefault = written[0]
		}
	}
	r := c.Repo
	err := s.d.Store.WithTx(ctx, func(ctx context.Context) error {
		if c.Also != nil {
			if err := c.Also(ctx); err != nil {
				return err
			}
		}
		if newDefault != "" || (r.IsEmpty && len(written) > 0) {
			if err := s.d.Store.GitRepos().MarkPushed(ctx, r.ID, newDefault); err != nil {
				return err
			}
		}
		return s.d.Events.Emit(ctx, events.RefsChanged, r.ID, c.Doer.UserID(), events.Refs{
			Repo:    events.Repo{ID: r.ID, Owner: r.Owner.Name, Name: r.Name, Private: r.IsPrivate},
			Changes: changes,
		})
	})
	if err != nil {
		return err
	}
	if newDefault != "" {
		if err := s.d.Git.SetDefaultBranch(r.Owner.Name, r.Name, newDefault); err != nil {
			s.d.Log.ErrorContext(ctx, "point HEAD at the new default branch", "repo", r.FullName(), "branch", newDefault, "err", err)
		}
	}
	return nil
}

// undo takes back applied updates (newest first), each by compare-and-swap
// so a concurrent writer's later change stays, and marks them with why.
func (s *Service) undo(g *gitstore.GitRepo, r *store.Repository, applied []*gitstore.RefUpdate, why error) {
	if len(applied) == 0 {
		return
	}
	back := make([]*gitstore.RefUpdate, 0, len(applied))
	for i := len(applied) - 1; i >= 0; i-- {
		u := applied[i]
		back = append(back, &gitstore.RefUpdate{Name: u.Name, Old: u.New, New: u.Old})
	}
	s.d.Git.UpdateRefs(g, back, nil)
	for _, b := range back {
		if b.Err != nil {
			s.d.Log.Error("take back a ref update", "repo", r.FullName(), "ref", b.Name.String(), "err", b.Err)
		}
	}
	for _, u := range applied {
		u.Err = why
	}
}
