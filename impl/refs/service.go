// Package refs is the one path by which anything moves a ref. Every writer
// goes through Service.Apply: a push over smart HTTP, the contents API,
// branch create/update/delete/rename, tag create/delete, publishing a
// release (its tag), a pull mirror's sync (Change.Mirror, the only writer
// a mirror takes). Apply judges each update with the one PushPolicy,
// moves the refs by compare-and-swap through gitstore.Repos.UpdateRefs
// (which nothing else calls), keeps the repository row in step (a first
// branch makes it non-empty and, when the default branch is missing,
// the default) and emits one events.RefsChanged for what it moved. The
// first refs of a repository being created (auto_init, template
// generation, a fork's branches and tags) go through Seed instead: created
// before the row exists, when no rule can apply, and recorded the same way
// in the transaction that inserts it.
package refs

import (
	"context"
	"errors"

	"github.com/go-git/go-git/v6/plumbing"
	"github.com/go-git/go-git/v6/plumbing/object"

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
	// Mirror marks a pull mirror's sync: the refs become the remote's,
	// whatever the push rules say. Nothing else moves a mirror's refs:
	// any other change of one is refused (ErrMirror).
	Mirror bool
	// PushOptions are the options a git push carried (git push -o),
	// passed on in the event for its consumers.
	PushOptions []string
	// Also, when set, runs inside the transaction that records the change
	// and its event: database writes that must happen together with the
	// ref change. If it fails, the updates are taken back and Apply
	// returns its error.
	Also func(ctx context.Context) error
}

// ErrMirror refuses a change of a pull mirror's refs by anything but its
// sync, as the reference refuses writes to a mirror.
var ErrMirror = &gitstore.RefError{Reason: "Git Repository is a mirror.", Kind: gitstore.ErrRefused}

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
	if c.Repo.IsMirror != c.Mirror {
		if !c.Repo.IsMirror {
			return nil, errors.New("refs: a mirror sync of a repository that is not a mirror")
		}
		for _, u := range c.Updates {
			u.Err = ErrMirror
		}
		if atomic {
			return nil, ErrMirror
		}
		return nil, nil
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
	// Maintenance (git gc) of the repository waits for the change, which
	// waits for it (see Hold).
	release, err := s.Hold(ctx, c.Repo)
	if err != nil {
		return nil, err
	}
	defer release()
	s.d.Git.UpdateRefs(g, c.Updates, func(open []*gitstore.RefUpdate) {
		for _, u := range open {
			if c.Mirror {
				continue
			}
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
	return applied, nil
}

// SizeConsumer is the outbox consumer that keeps a repository's stored
// size (its git directory's disk use, as the reference reports it) after
// every committed ref change: the directory is walked once per change,
// off the request, instead of on every request that shows the size.
// Recounting is idempotent.
func (s *Service) SizeConsumer() events.Consumer {
	return events.Consumer{Name: "repo_size", Kinds: []events.Kind{events.RefsChanged}, Handle: func(ctx context.Context, e events.Event) error {
		r, err := s.d.Store.Repos().FindByID(ctx, e.RepoID)
		if errors.Is(err, store.ErrNotFound) {
			return nil // deleted since
		}
		if err != nil {
			return err
		}
		size, err := s.d.Git.Size(r.Owner.Name, r.Name)
		if err != nil {
			return err
		}
		return s.d.Store.GitRepos().SetSize(ctx, r.ID, size)
	}}
}

// Hold takes r's repository lock in its shared mode, as every ref change
// does (Apply takes it itself), and returns its release. Writers whose
// objects arrive before their refs move (a push) hold it from the first
// object to the last ref, so maintenance never runs between them: git gc
// could otherwise prune an old unreachable object a push relies on, or
// pack refs under a compare-and-swap. Ref changes hold it together;
// Maintain excludes them all, across processes (gitstore.Repos.LockRepo).
func (s *Service) Hold(ctx context.Context, r *store.Repository) (release func(), err error) {
	return s.d.Git.LockRepo(ctx, r.Owner.Name, r.Name, false)
}

// Maintain runs fn (git gc, say) on r's repository with no ref change
// under way and none starting until fn returns: Hold's lock, exclusive.
func (s *Service) Maintain(ctx context.Context, r *store.Repository, fn func() error) error {
	release, err := s.d.Git.LockRepo(ctx, r.Owner.Name, r.Name, true)
	if err != nil {
		return err
	}
	defer release()
	return fn()
}

// Seeded is the first refs of a repository being created, moved in git
// by Seed and recorded by Record.
type Seeded struct {
	s       *Service
	repo    *store.Repository
	doer    *auth.Principal
	applied []*gitstore.RefUpdate
	plan    recordPlan
}

// InitialBranch seeds a new repository's first branch, r.DefaultBranch at
// commit (the commit gitstore's Create or CreateFromTemplate wrote); a
// zero commit, an empty repository, seeds nothing. See Seed.
func (s *Service) InitialBranch(r *store.Repository, doer *store.User, commit plumbing.Hash) (*Seeded, error) {
	var updates []*gitstore.RefUpdate
	if !commit.IsZero() {
		updates = []*gitstore.RefUpdate{{Name: plumbing.NewBranchReferenceName(r.DefaultBranch), New: commit}}
	}
	return s.Seed(r, doer, updates)
}

// Seed gives a repository being created its first refs (its first branch,
// or a fork's branches and tags), all or nothing. It runs before the
// transaction that inserts r's row, so no git work holds the database's
// write lock (DESIGN.md: git first, then the database, then compensate).
// r's directory was made by this creation and r has no row yet, so nobody
// else reaches these refs and no branch rule exists to judge them: they
// are created by compare-and-swap without a policy. The caller records
// them with Record in the transaction that inserts the row (before any
// protection rule is copied in) and, when that fails, removes the
// directory, which takes the refs with it.
func (s *Service) Seed(r *store.Repository, doer *store.User, updates []*gitstore.RefUpdate) (*Seeded, error) {
	sd := &Seeded{s: s, repo: r, doer: &auth.Principal{User: doer, Signer: doer}}
	if len(updates) == 0 {
		return sd, nil
	}
	g, err := s.d.Git.OpenGit(r.Owner.Name, r.Name)
	if err != nil {
		return nil, err
	}
	s.d.Git.UpdateRefs(g, updates, nil)
	for _, u := range updates {
		if u.Err == nil {
			sd.applied = append(sd.applied, u)
		}
	}
	if len(sd.applied) < len(updates) {
		s.undo(g, r, sd.applied, errNotApplied)
		return nil, firstErr(updates)
	}
	if sd.plan, err = s.plan(g, r, sd.applied); err != nil {
		return nil, err
	}
	s.pointHEAD(context.Background(), r, sd.plan.newDefault)
	return sd, nil
}

// Record writes what Seed did to the database: the row's state and one
// events.RefsChanged, in the transaction ctx carries, which inserted the
// row. It does no git work.
func (sd *Seeded) Record(ctx context.Context) error {
	if len(sd.applied) == 0 {
		return nil
	}
	return sd.s.write(ctx, sd.repo, sd.doer, nil, sd.plan)
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

// recordPlan is what a change means for the database, read from git
// before any transaction.
type recordPlan struct {
	changes []events.RefChange
	// written are the branches created or moved.
	written []string
	// newDefault is the branch that becomes the default ("" for none).
	newDefault string
	// pushOptions are the change's push options, for the event.
	pushOptions []string
}

// plan reads what applied means for the database: the event's changes and,
// when the default branch does not exist (a first push to another branch,
// a rename of the default branch), the first branch written, which
// becomes the default.
func (s *Service) plan(g *gitstore.GitRepo, r *store.Repository, applied []*gitstore.RefUpdate) (recordPlan, error) {
	var p recordPlan
	p.changes = make([]events.RefChange, 0, len(applied))
	for _, u := range applied {
		p.changes = append(p.changes, events.RefChange{Name: u.Name.String(), Old: refID(g, u.Old), New: refID(g, u.New)})
		if b := u.Branch(); b != "" && !u.IsDelete() {
			p.written = append(p.written, b)
		}
	}
	if len(p.written) > 0 {
		at, err := g.BranchHash(r.DefaultBranch)
		if err != nil {
			return p, err
		}
		if at.IsZero() {
			p.newDefault = p.written[0]
		}
	}
	return p, nil
}

// write records a planned change in one transaction (ctx's, when it
// carries one): also, the repository row (a repository that had no branch
// has one), the event.
func (s *Service) write(ctx context.Context, r *store.Repository, doer *auth.Principal, also func(context.Context) error, p recordPlan) error {
	return s.d.Store.WithTx(ctx, func(ctx context.Context) error {
		if also != nil {
			if err := also(ctx); err != nil {
				return err
			}
		}
		if p.newDefault != "" || (r.IsEmpty && len(p.written) > 0) {
			if err := s.d.Store.GitRepos().MarkPushed(ctx, r.ID, p.newDefault); err != nil {
				return err
			}
		}
		return s.d.Events.Emit(ctx, events.RefsChanged, r.ID, doer.UserID(), events.Refs{
			Repo:        events.Repo{ID: r.ID, Owner: r.Owner.Name, Name: r.Name, Private: r.IsPrivate},
			Changes:     p.changes,
			PushOptions: p.pushOptions,
		})
	})
}

// pointHEAD points HEAD at a new default branch ("" leaves it).
func (s *Service) pointHEAD(ctx context.Context, r *store.Repository, branch string) {
	if branch == "" {
		return
	}
	if err := s.d.Git.SetDefaultBranch(r.Owner.Name, r.Name, branch); err != nil {
		s.d.Log.ErrorContext(ctx, "point HEAD at the new default branch", "repo", r.FullName(), "branch", branch, "err", err)
	}
}

// record writes what the change means for the database in one transaction
// (c.Also, the repository row, the event), then points HEAD at a new
// default branch.
func (s *Service) record(ctx context.Context, g *gitstore.GitRepo, c Change, applied []*gitstore.RefUpdate) error {
	p, err := s.plan(g, c.Repo, applied)
	if err != nil {
		return err
	}
	p.pushOptions = c.PushOptions
	if err := s.write(ctx, c.Repo, c.Doer, c.Also, p); err != nil {
		return err
	}
	s.pointHEAD(ctx, c.Repo, p.newDefault)
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

// refID is h in hex, the zero id written in the repository's object
// format (64 digits in a SHA-256 repository).
func refID(g *gitstore.GitRepo, h plumbing.Hash) string {
	if h.IsZero() {
		return gitstore.ZeroID(g.ObjectFormat())
	}
	return h.String()
}
