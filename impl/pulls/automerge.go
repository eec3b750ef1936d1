package pulls

import (
	"context"
	"errors"

	"repohost/impl/apierr"
	"repohost/impl/auth"
	"repohost/impl/events"
	"repohost/impl/statuses"
	"repohost/store"
)

// Merges scheduled for when the checks succeed ("merge when checks
// succeed"): Merge stores the schedule when the head's checks are not all
// green yet; the auto_merge consumer (AutoMergeConsumer) merges through
// Merge, as the scheduler, once they are. The schedule survives new
// commits on the head (the new head's checks then decide), as in the
// reference, and goes with the merge, in its transaction.

// checksState is the state of head's statuses for merging into a branch
// under rule (nil when unprotected): the required contexts' when the rule
// names some, else every context's combined state.
func (s Service) checksState(ctx context.Context, repoID int64, rule *store.ProtectedBranch, head string) (string, error) {
	latest, err := statuses.Service{Deps: s.Deps}.Latest(ctx, repoID, head)
	if err != nil {
		return "", err
	}
	var required []string
	if rule != nil {
		required = rule.StatusCheckContexts
	}
	return statuses.RequiredState(latest, required), nil
}

// schedule stores the merge of is/pr of base for doer as in asks, for when
// its checks succeed; 409 when one is already scheduled.
func (s Service) schedule(ctx context.Context, doer *store.User, base *store.Repository, is *store.Issue, in MergeInput) error {
	err := s.Store.Statuses().ScheduleMerge(ctx, &store.AutoMerge{IssueID: is.ID, RepoID: base.ID, DoerID: doer.ID,
		Style: in.Style, Title: in.Title, Message: in.Message, DeleteBranch: in.DeleteBranch, CreatedAt: s.Clock.Now()})
	if errors.Is(err, store.ErrDuplicate) {
		return apierr.Conflict("pull request is already scheduled to auto merge when checks succeed")
	}
	return err
}

// CancelScheduledMerge drops the scheduled merge of is, for its scheduler
// or a repository admin (isAdmin): 404 when none is scheduled, 403 for
// anyone else.
func (s Service) CancelScheduledMerge(ctx context.Context, doer *store.User, isAdmin bool, is *store.Issue) error {
	m, err := s.Store.Statuses().FindScheduledMerge(ctx, is.ID)
	if errors.Is(err, store.ErrNotFound) {
		return apierr.NotFound("no merge is scheduled for this pull request")
	}
	if err != nil {
		return err
	}
	if m.DoerID != doer.ID && !isAdmin {
		return apierr.Forbidden("user has no permission to cancel the scheduled auto merge")
	}
	_, err = s.Store.Statuses().DeleteScheduledMerge(ctx, is.ID)
	return err
}

// AutoMergeConsumer merges the scheduled pull requests of a repository
// whose checks turned green: on a new status, on new commits on a head
// (its checks may be green already) and on a review (the other rules of
// the branch may have held the merge back). Ordered, so one repository's
// merges are tried one event at a time.
func (s Service) AutoMergeConsumer() events.Consumer {
	return events.Consumer{Name: "auto_merge", Kinds: []events.Kind{events.StatusCreated, events.PullSynchronized, events.PullReviewed},
		Ordered: true, Handle: s.onChecksMayPass}
}

func (s Service) onChecksMayPass(ctx context.Context, e events.Event) error {
	if st, ok := e.Payload.(events.Status); ok && st.State != statuses.Success && st.State != statuses.Skipped {
		return nil // only a green status can complete the checks
	}
	scheduled, err := s.Store.Statuses().ScheduledMerges(ctx, e.RepoID)
	if err != nil {
		return err
	}
	for _, m := range scheduled {
		if err := s.tryScheduled(ctx, m); err != nil {
			return err
		}
	}
	return nil
}

// tryScheduled merges m's pull request if its checks are green, as the
// scheduler, through Merge and every rule it applies. A merge those rules
// refuse stays scheduled (a later event may allow it); one that can never
// happen (merged, closed, the scheduler gone) is dropped.
func (s Service) tryScheduled(ctx context.Context, m *store.AutoMerge) error {
	drop := func() error {
		_, err := s.Store.Statuses().DeleteScheduledMerge(ctx, m.IssueID)
		return err
	}
	is, err := s.Store.Issues().FindByID(ctx, m.IssueID)
	if errors.Is(err, store.ErrNotFound) {
		return drop()
	}
	if err != nil {
		return err
	}
	pr, err := s.Store.Pulls().FindByIssueID(ctx, is.ID)
	if err != nil {
		return err
	}
	if pr.HasMerged || is.IsClosed {
		return drop()
	}
	doer, err := s.Store.Users().FindByID(ctx, m.DoerID)
	if errors.Is(err, store.ErrNotFound) {
		return drop()
	}
	if err != nil {
		return err
	}
	base, err := s.Store.Repos().FindByID(ctx, m.RepoID)
	if errors.Is(err, store.ErrNotFound) {
		return drop()
	}
	if err != nil {
		return err
	}
	p := &auth.Principal{User: doer}
	head, err := s.headRepo(ctx, base, pr)
	if err != nil {
		return s.keep(ctx, m, err)
	}
	g, err := s.OpenGit(head)
	if err != nil {
		return err
	}
	ref, err := g.Resolve(pr.HeadBranch)
	if err != nil {
		return s.keep(ctx, m, err)
	}
	headSHA := ref.Commit.Hash.String()
	pp, err := s.Access.PushPolicy(ctx, base, p)
	if err != nil {
		return err
	}
	state, err := s.checksState(ctx, base.ID, pp.Rule(pr.BaseBranch), headSHA)
	if err != nil || state != statuses.Success {
		return err
	}
	perm, err := s.Access.Repo(ctx, p, base)
	if err != nil {
		return err
	}
	// The head that was checked is the one merged: a push since makes
	// Merge refuse, and that push's own event tries again.
	_, err = s.Merge(ctx, p, base, perm, is, pr, MergeInput{Style: m.Style, Title: m.Title, Message: m.Message,
		DeleteBranch: m.DeleteBranch, HeadCommitID: headSHA})
	return s.keep(ctx, m, err)
}

// keep treats a refusal of a scheduled merge as the reference does: the
// schedule stays and the refusal is logged; other errors are retried.
func (s Service) keep(ctx context.Context, m *store.AutoMerge, err error) error {
	var refusal *apierr.Error
	if errors.As(err, &refusal) || errors.Is(err, store.ErrNotFound) {
		s.Log.InfoContext(ctx, "scheduled merge not done", "issue", m.IssueID, "reason", err)
		return nil
	}
	return err
}
