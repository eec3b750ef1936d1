// Package pulls is pull requests: opening them from a branch of the same
// repository or of a fork, keeping refs/pull/N/head and the stored
// mergeability in step with both branches, merging them in the styles of
// the reference, and their reviews and review requests. A pull request is
// an issue (impl/issue creates, edits and closes it) with a store.PullRequest
// row beside it; refs move only through impl/refs.
package pulls

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/go-git/go-git/v6/plumbing"
	"github.com/go-git/go-git/v6/plumbing/object"
	"golang.org/x/sync/errgroup"

	"repohost/impl/access"
	"repohost/impl/apierr"
	"repohost/impl/app"
	"repohost/impl/auth"
	"repohost/impl/events"
	"repohost/impl/issue"
	"repohost/impl/refs"
	"repohost/store"
	"repohost/store/gitstore"
)

// Service is the only place pull requests and reviews are written.
type Service struct{ *app.Deps }

func (s Service) issues() issue.Service { return issue.Service{Deps: s.Deps} }

// PullRef is the ref of pull request index in its base repository.
func PullRef(index int64) plumbing.ReferenceName {
	return plumbing.ReferenceName(fmt.Sprintf("refs/pull/%d/head", index))
}

// Head is where a new pull request comes from.
type Head struct {
	Repo   *store.Repository // with Owner
	Branch string
}

// ParseHead resolves the API's head ("branch", "owner:branch" or
// "owner/repo:branch") against base: another owner's head is that owner's
// fork of base.
func (s Service) ParseHead(ctx context.Context, p *auth.Principal, base *store.Repository, head string) (Head, error) {
	owner, branch, ok := strings.Cut(head, ":")
	if !ok {
		return Head{Repo: base, Branch: head}, nil
	}
	repoName := ""
	if o, n, ok := strings.Cut(owner, "/"); ok {
		owner, repoName = o, n
	}
	if strings.EqualFold(owner, base.Owner.Name) && (repoName == "" || strings.EqualFold(repoName, base.Name)) {
		return Head{Repo: base, Branch: branch}, nil
	}
	// An owner p may not see answers exactly like one that does not
	// exist, whichever step finds nothing.
	noOwner := apierr.NotFound("the head owner %s does not exist", owner)
	u, err := s.Store.Users().FindByName(ctx, owner)
	if errors.Is(err, store.ErrNotFound) {
		return Head{}, noOwner
	}
	if err != nil {
		return Head{}, err
	}
	noFork := func() error {
		seen, err := s.Access.CanSeeUser(ctx, p, u)
		if err != nil {
			return err
		}
		if !seen {
			return noOwner
		}
		return apierr.NotFound("%s has no fork of %s", owner, base.FullName())
	}
	var r *store.Repository
	if repoName != "" {
		r, err = s.Store.Repos().FindByName(ctx, u.ID, repoName)
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			return Head{}, err
		}
		if r != nil && r.ForkID != base.ID && base.ForkID != r.ID {
			r = nil
		}
	} else {
		forks, _, err := s.Store.Repos().Search(ctx, store.RepoSearch{Viewer: store.RepoViewer{IsAdmin: true},
			OwnerID: u.ID, ForkOf: base.ID}, store.Page{Limit: 1})
		if err != nil {
			return Head{}, err
		}
		if len(forks) > 0 {
			r = forks[0]
		}
	}
	if r == nil {
		return Head{}, noFork()
	}
	if r.Owner == nil {
		r.Owner = u
	}
	perm, err := s.Access.Repo(ctx, p, r)
	if err != nil {
		return Head{}, err
	}
	if !perm.CanRead(access.UnitCode) {
		// (A collaborator on the fork of an owner it may not see
		// reads it: impl/access decides, not the owner's visibility.)
		return Head{}, noFork()
	}
	return Head{Repo: r, Branch: branch}, nil
}

// CreateInput is a new pull request as its poster asked for it.
type CreateInput struct {
	Head                Head
	Base                string
	Title, Body         string
	Assignees           []string
	LabelIDs            []int64
	MilestoneID         int64
	Deadline            *time.Time
	AllowMaintainerEdit bool
	Reviewers           []string
	TeamReviewers       []string
}

// state is what git says about a pull request's two sides now.
type state struct {
	head, base, mergeBase plumbing.Hash
	merge                 gitstore.MergeResult
	files                 []gitstore.DiffFile
	// sameFiles says the merge base and the head are those of the
	// stored state, whose line counts and files then still hold: files
	// was not read.
	sameFiles bool
}

// inspect reads both sides of a pull request in the base repository g
// (fetching the head's objects from a fork first) and computes what the
// stored state holds: the merge base, the three-way merge and the diff.
// known is the pull request's stored state (nil for a new pull request or
// base): the diff is read only when its merge base or head moved.
func (s Service) inspect(ctx context.Context, g *gitstore.GitRepo, base *store.Repository, baseBranch string, head Head, known *store.PullRequest) (*state, error) {
	st := &state{}
	var err error
	if st.base, err = g.BranchHash(baseBranch); err != nil {
		return nil, err
	}
	if st.base.IsZero() {
		return nil, apierr.NotFound("the base branch %s does not exist", baseBranch)
	}
	hg := g
	if head.Repo.ID != base.ID {
		if hg, err = s.OpenGit(head.Repo); err != nil {
			return nil, err
		}
	}
	if st.head, err = hg.BranchHash(head.Branch); err != nil {
		return nil, err
	}
	if st.head.IsZero() {
		return nil, apierr.NotFound("the head branch %s does not exist", head.Branch)
	}
	if hg != g {
		if err := g.FetchObjects(ctx, hg, []plumbing.Hash{st.head}); err != nil {
			return nil, err
		}
	}
	if err := s.compute(ctx, g, st, known); err != nil {
		return nil, err
	}
	return st, nil
}

// compute fills in the merge base, the merge and the diff of st's sides
// (the diff only when it differs from known's).
func (s Service) compute(ctx context.Context, g *gitstore.GitRepo, st *state, known *store.PullRequest) error {
	var err error
	if st.mergeBase, err = g.MergeBase(ctx, st.base, st.head); err != nil {
		return err
	}
	if st.merge, err = g.MergeTree(ctx, st.base, st.head); err != nil {
		return err
	}
	if known != nil && !st.mergeBase.IsZero() && known.MergeBase == st.mergeBase.String() && known.HeadCommitID == st.head.String() {
		// Only the base moved: the diff from the merge base is the same.
		st.sameFiles = true
		return nil
	}
	st.files, err = g.DiffFiles(ctx, diffFrom(st), st.head)
	return err
}

// diffFrom is where a pull request's diff starts: the merge base, or the
// base itself for unrelated histories.
func diffFrom(st *state) plumbing.Hash {
	if st.mergeBase.IsZero() {
		return st.base
	}
	return st.mergeBase
}

// apply writes st into pr's stored state and returns the columns.
func apply(pr *store.PullRequest, st *state) []string {
	pr.HeadCommitID, pr.BaseCommitID, pr.MergeBase = st.head.String(), st.base.String(), st.mergeBase.String()
	if st.mergeBase.IsZero() {
		pr.MergeBase = ""
	}
	pr.Status, pr.ConflictedFiles = store.PullMergeable, ""
	if st.merge.Conflicts != nil {
		pr.Status, pr.ConflictedFiles = store.PullConflict, strings.Join(st.merge.Conflicts, "\n")
	}
	if !st.sameFiles {
		pr.Additions, pr.Deletions, pr.ChangedFiles = 0, 0, int64(len(st.files))
		for _, f := range st.files {
			pr.Additions += f.Additions
			pr.Deletions += f.Deletions
		}
	}
	return []string{"head_commit_id", "base_commit_id", "merge_base", "status", "conflicted_files",
		"additions", "deletions", "changed_files", "updated_at"}
}

// Create opens a pull request in base for p: 404 for a missing branch,
// 422 when head and base are the same branch or head brings nothing, 409
// when an open pull request from head into base exists. Its number comes
// from the issue counter; refs/pull/N/head is written once the pull
// request exists.
func (s Service) Create(ctx context.Context, p *auth.Principal, base *store.Repository, perm access.Permission, in CreateInput) (*store.Issue, *store.PullRequest, error) {
	if base.IsArchived {
		return nil, nil, apierr.RepoArchived()
	}
	if in.Head.Repo.ID == base.ID && in.Head.Branch == in.Base {
		return nil, nil, apierr.Validation("Invalid PullRequest: There are no changes between the head and the base")
	}
	g, err := s.OpenGit(base)
	if err != nil {
		return nil, nil, err
	}
	st, err := s.inspect(ctx, g, base, in.Base, in.Head, nil)
	if err != nil {
		return nil, nil, err
	}
	if st.head == st.base || st.head == st.mergeBase {
		return nil, nil, apierr.Validation("Invalid PullRequest: There are no changes between the head and the base")
	}
	if _, err := s.Store.Pulls().FindOpen(ctx, in.Head.Repo.ID, in.Head.Branch, base.ID, in.Base); err == nil {
		return nil, nil, apierr.Conflict("pull request already exists for these targets")
	} else if !errors.Is(err, store.ErrNotFound) {
		return nil, nil, err
	}
	reviewers, teams, err := s.resolveReviewers(ctx, p.User, base, perm, nil, in.Reviewers, in.TeamReviewers)
	if err != nil {
		return nil, nil, err
	}
	t := s.Clock.Now()
	pr := &store.PullRequest{BaseRepoID: base.ID, BaseBranch: in.Base, HeadRepoID: in.Head.Repo.ID, HeadBranch: in.Head.Branch,
		AllowMaintainerEdit: in.AllowMaintainerEdit, CreatedAt: t, UpdatedAt: t}
	apply(pr, st)
	is, err := s.issues().Create(ctx, p.User, base, perm, issue.CreateInput{
		Title: in.Title, Body: in.Body, LabelIDs: in.LabelIDs, MilestoneID: in.MilestoneID, Assignees: in.Assignees,
		Deadline: in.Deadline, Pull: pr,
		Also: func(ctx context.Context, is *store.Issue) error {
			_, err := s.addRequests(ctx, p.User, is, reviewers, teams)
			return err
		},
	})
	if err != nil {
		return nil, nil, err
	}
	// Outside the transaction (no git I/O in one): a failure leaves the
	// pull request without its ref until the head next moves.
	if err := s.writePullRef(ctx, base, g, is.Index, st.head); err != nil {
		s.Log.ErrorContext(ctx, "write the pull request's ref", "repo", base.FullName(), "index", is.Index, "err", err)
	}
	return is, pr, nil
}

// writePullRef points refs/pull/index/head of base at head through the
// one ref-change path.
func (s Service) writePullRef(ctx context.Context, base *store.Repository, g *gitstore.GitRepo, index int64, head plumbing.Hash) error {
	name := PullRef(index)
	old, err := g.RefHash(name)
	if err != nil || old == head {
		return err
	}
	_, err = refs.New(s.Deps).Apply(ctx, refs.Change{Repo: base, Git: g, Atomic: true,
		Updates: []*gitstore.RefUpdate{{Name: name, Old: old, New: head}}})
	return err
}

// RefreshConsumer is the outbox consumer of committed ref changes: every
// open pull request whose head or base branch moved gets its
// refs/pull/N/head and its stored state recomputed (pull_request.synchronized
// when the head moved; stale approvals dismissed where the base branch's
// rule says so). Refreshing reads both branches as they are now, so doing
// it twice changes nothing the first did not.
func (s Service) RefreshConsumer() events.Consumer {
	return events.Consumer{Name: "pull_refresh", Kinds: []events.Kind{events.RefsChanged}, Ordered: true, Workers: 2,
		Handle: s.onRefsChanged}
}

// refreshWorkers is how many pull requests of one moved branch are
// refreshed at once (each is a merge-base and a merge-tree in git).
const refreshWorkers = 4

func (s Service) onRefsChanged(ctx context.Context, e events.Event) error {
	ch, ok := e.Payload.(events.Refs)
	if !ok {
		return nil
	}
	var prs []*store.PullRequest
	for _, c := range ch.Changes {
		name := plumbing.ReferenceName(c.Name)
		if !name.IsBranch() {
			continue
		}
		found, err := s.Store.Pulls().OpenWithBranch(ctx, e.RepoID, name.Short())
		if err != nil {
			return err
		}
		for _, pr := range found {
			// A pull request between two branches that both moved is
			// refreshed once.
			if !slices.ContainsFunc(prs, func(p *store.PullRequest) bool { return p.ID == pr.ID }) {
				prs = append(prs, pr)
			}
		}
	}
	g, ctx := errgroup.WithContext(ctx)
	g.SetLimit(refreshWorkers)
	for _, pr := range prs {
		g.Go(func() error {
			if err := s.Refresh(ctx, pr, e.ActorID); err != nil {
				return fmt.Errorf("refresh pull request %d: %w", pr.ID, err)
			}
			return nil
		})
	}
	return g.Wait()
}

// Refresh recomputes pr's state from both branches as they are now.
func (s Service) Refresh(ctx context.Context, pr *store.PullRequest, actorID int64) error {
	base, err := s.Store.Repos().FindByID(ctx, pr.BaseRepoID)
	if err != nil {
		return err
	}
	head := base
	if pr.HeadRepoID != pr.BaseRepoID {
		if head, err = s.Store.Repos().FindByID(ctx, pr.HeadRepoID); err != nil {
			return err
		}
	}
	is, err := s.Store.Issues().FindByID(ctx, pr.IssueID)
	if err != nil {
		return err
	}
	g, err := s.OpenGit(base)
	if err != nil {
		return err
	}
	st, err := s.inspect(ctx, g, base, pr.BaseBranch, Head{Repo: head, Branch: pr.HeadBranch}, pr)
	if err != nil {
		var apiErr *apierr.Error
		if errors.As(err, &apiErr) {
			return nil // a branch is gone: the stored state stays as it was
		}
		return err
	}
	oldHead := pr.HeadCommitID
	headMoved := st.head.String() != oldHead
	var push *store.IssueEvent
	if headMoved {
		if push, err = pushEvent(ctx, g, oldHead, st); err != nil {
			return err
		}
	}
	if err := s.writePullRef(ctx, base, g, is.Index, st.head); err != nil {
		return err
	}
	pr.UpdatedAt = s.Clock.Now()
	cols := apply(pr, st)
	// Every row written is one of the base repository's.
	return s.Store.WithTx(store.ConfinedTo(ctx, base.ID), func(ctx context.Context) error {
		if err := s.Store.Pulls().UpdateState(ctx, pr, cols...); err != nil {
			return err
		}
		if !headMoved {
			return nil
		}
		if err := s.dismissStale(ctx, base, pr); err != nil {
			return err
		}
		// The head moves in this transaction with the event that shows it,
		// so a retry finds it moved already and records nothing twice.
		if push != nil {
			if err := s.issues().Record(ctx, &store.User{ID: actorID}, is, push); err != nil {
				return err
			}
		}
		return s.Events.Emit(ctx, events.PullSynchronized, base.ID, actorID, events.Issue{ID: is.ID, Index: is.Index, HeadSHA: pr.HeadCommitID})
	})
}

// pushContent is the body of a pull_push timeline event, as the
// reference writes it.
type pushContent struct {
	IsForcePush bool     `json:"is_force_push"`
	CommitIDs   []string `json:"commit_ids"`
}

// pushEvent is the timeline event of a pull request's head moving from
// oldHead to st.head: the commits it brought that the base branch lacks,
// oldest first, or on a force push the old and the new head. It is nil
// when there is nothing to show (no old head, or no new commits).
func pushEvent(ctx context.Context, g *gitstore.GitRepo, oldHead string, st *state) (*store.IssueEvent, error) {
	if oldHead == "" {
		return nil, nil
	}
	old := plumbing.NewHash(oldHead)
	ff, err := g.IsAncestor(old, st.head)
	if err != nil {
		return nil, err
	}
	c := pushContent{IsForcePush: !ff, CommitIDs: []string{oldHead, st.head.String()}}
	if ff {
		brought, err := g.Between(ctx, old, st.head, true)
		if err != nil {
			return nil, err
		}
		notInBase, err := g.Between(ctx, st.base, st.head, true)
		if err != nil {
			return nil, err
		}
		c.CommitIDs = c.CommitIDs[:0]
		for _, b := range brought {
			if slices.ContainsFunc(notInBase, func(n *object.Commit) bool { return n.Hash == b.Hash }) {
				c.CommitIDs = append(c.CommitIDs, b.Hash.String())
			}
		}
		if len(c.CommitIDs) == 0 {
			return nil, nil
		}
	}
	body, err := json.Marshal(c)
	if err != nil {
		return nil, err
	}
	return &store.IssueEvent{Type: store.EventPullPush, Body: string(body)}, nil
}

// dismissStale dismisses the approvals of pr when its base branch's rule
// dismisses stale approvals (the head just moved).
func (s Service) dismissStale(ctx context.Context, base *store.Repository, pr *store.PullRequest) error {
	rule, err := s.rule(ctx, base, pr.BaseBranch)
	if err != nil || rule == nil || !rule.DismissStaleApprovals {
		return err
	}
	reviews, err := s.Store.Pulls().AllReviews(ctx, pr.IssueID)
	if err != nil {
		return err
	}
	for _, rv := range reviews {
		if rv.State == store.ReviewApproved && !rv.Dismissed && rv.CommitID != pr.HeadCommitID {
			rv.Dismissed = true
			if err := s.Store.Pulls().UpdateReview(ctx, rv, "dismissed"); err != nil {
				return err
			}
		}
	}
	return nil
}

// rule is the protection rule of branch in r, nil when unprotected.
func (s Service) rule(ctx context.Context, r *store.Repository, branch string) (*store.ProtectedBranch, error) {
	rules, err := s.Store.Protections().ListAll(ctx, r.ID)
	if err != nil {
		return nil, err
	}
	return store.MatchRule(rules, branch), nil
}

// EditInput is a change to a pull request; nil fields stay.
type EditInput struct {
	issue.EditInput
	Base                *string
	AllowMaintainerEdit *bool
}

// Edit changes pull request index of base. Changing the base branch
// recomputes the stored state (409 when an open pull request from the same
// head into the new base exists); a merged pull request cannot change
// state (412).
func (s Service) Edit(ctx context.Context, p *auth.Principal, base *store.Repository, perm access.Permission, is *store.Issue, pr *store.PullRequest, in EditInput) (*store.Issue, error) {
	if in.State != nil && pr.HasMerged {
		return nil, apierr.PreconditionFailed("cannot change state of this pull request, it was already merged")
	}
	var moved *state
	if in.Base != nil && *in.Base != pr.BaseBranch {
		if !perm.CanWrite(access.UnitPulls) {
			return nil, apierr.Forbidden("only writers may change the base branch")
		}
		if pr.HasMerged || is.IsClosed {
			return nil, apierr.Validation("the base branch of a closed or merged pull request cannot change")
		}
		head, err := s.headRepo(ctx, base, pr)
		if err != nil {
			return nil, err
		}
		if _, err := s.Store.Pulls().FindOpen(ctx, pr.HeadRepoID, pr.HeadBranch, base.ID, *in.Base); err == nil {
			return nil, apierr.Conflict("pull request already exists for these targets")
		} else if !errors.Is(err, store.ErrNotFound) {
			return nil, err
		}
		g, err := s.OpenGit(base)
		if err != nil {
			return nil, err
		}
		if moved, err = s.inspect(ctx, g, base, *in.Base, Head{Repo: head, Branch: pr.HeadBranch}, nil); err != nil {
			return nil, err
		}
	}
	in.EditInput.Also = func(ctx context.Context, is *store.Issue) (bool, error) {
		var cols []string
		if moved != nil {
			pr.BaseBranch = *in.Base
			cols = append(apply(pr, moved), "base_branch")
		}
		if in.AllowMaintainerEdit != nil && *in.AllowMaintainerEdit != pr.AllowMaintainerEdit &&
			(is.PosterID == p.UserID() || perm.CanWrite(access.UnitPulls)) {
			pr.AllowMaintainerEdit = *in.AllowMaintainerEdit
			cols = append(cols, "allow_maintainer_edit")
		}
		if len(cols) == 0 {
			return false, nil
		}
		pr.UpdatedAt = s.Clock.Now()
		return true, s.Store.Pulls().Update(ctx, pr, append(cols, "updated_at")...)
	}
	return s.issues().Edit(ctx, p.User, base, perm, is.Index, in.EditInput)
}

// headRepo loads the repository pr comes from; 404 once it is deleted.
func (s Service) headRepo(ctx context.Context, base *store.Repository, pr *store.PullRequest) (*store.Repository, error) {
	if pr.HeadRepoID == base.ID {
		return base, nil
	}
	r, err := s.Store.Repos().FindByID(ctx, pr.HeadRepoID)
	if errors.Is(err, store.ErrNotFound) {
		return nil, apierr.NotFound("the head repository of the pull request was deleted")
	}
	return r, err
}
