package issue

import (
	"context"
	"slices"
	"strings"

	"repohost/impl/access"
	"repohost/impl/apierr"
	"repohost/impl/auth"
	"repohost/impl/events"
	"repohost/store"
)

// MaxPinned is how many issues and pull requests of one repository may be
// pinned together, the reference's default.
const MaxPinned = 3

// Record adds events to is's timeline in the caller's transaction, made
// by doer now (for the pull requests' reviews).
func (s Service) Record(ctx context.Context, doer *store.User, is *store.Issue, evs ...*store.IssueEvent) error {
	return s.record(ctx, doer, is, evs...)
}

// record adds events to is's timeline in the caller's transaction, made by
// doer now.
func (s Service) record(ctx context.Context, doer *store.User, is *store.Issue, evs ...*store.IssueEvent) error {
	if len(evs) == 0 {
		return nil
	}
	t := s.Clock.Now()
	for _, e := range evs {
		e.IssueID, e.RepoID, e.PosterID, e.CreatedAt, e.UpdatedAt = is.ID, is.RepoID, actorID(doer), t, t
	}
	return s.Store.Timeline().Add(ctx, evs...)
}

// stateEvent is the timeline event of closing (or reopening) an issue.
func stateEvent(closed bool) *store.IssueEvent {
	if closed {
		return &store.IssueEvent{Type: store.EventClose}
	}
	return &store.IssueEvent{Type: store.EventReopen}
}

// assigneeEvents are the timeline events of assigning and unassigning users.
func assigneeEvents(assigned, unassigned []int64) []*store.IssueEvent {
	var out []*store.IssueEvent
	for _, id := range unassigned {
		out = append(out, &store.IssueEvent{Type: store.EventAssignees, AssigneeID: id, Removed: true})
	}
	for _, id := range assigned {
		out = append(out, &store.IssueEvent{Type: store.EventAssignees, AssigneeID: id})
	}
	return out
}

// labelEvents are the timeline events of labels added and removed.
func labelEvents(added, removed []int64) []*store.IssueEvent {
	var out []*store.IssueEvent
	for _, id := range removed {
		out = append(out, &store.IssueEvent{Type: store.EventLabel, LabelID: id, Removed: true})
	}
	for _, id := range added {
		out = append(out, &store.IssueEvent{Type: store.EventLabel, LabelID: id})
	}
	return out
}

// editEvents are the timeline events of an edit, in the order the
// reference shows them: title, state, milestone, assignees.
func editEvents(is *store.Issue, edit events.Issue, oldMilestone int64, ch issueChanges) []*store.IssueEvent {
	var out []*store.IssueEvent
	if edit.TitleFrom != nil {
		out = append(out, &store.IssueEvent{Type: store.EventChangeTitle, OldTitle: *edit.TitleFrom, NewTitle: is.Title})
	}
	if ch.closed || ch.reopened {
		out = append(out, stateEvent(ch.closed))
	}
	if ch.milestone {
		out = append(out, &store.IssueEvent{Type: store.EventMilestone, MilestoneID: is.MilestoneID, OldMilestoneID: oldMilestone})
	}
	return append(out, assigneeEvents(edit.Assigned, edit.Unassigned)...)
}

// refuseOpenDependencies refuses to close is while an issue it depends on
// is open (the reference's 412).
func (s Service) refuseOpenDependencies(ctx context.Context, is *store.Issue) error {
	n, err := s.Store.Dependencies().OpenDependencies(ctx, is.ID)
	if err != nil {
		return err
	}
	if n > 0 {
		return apierr.PreconditionFailed("cannot close this issue because it still has open dependencies")
	}
	return nil
}

// OpenDependencies counts the open issues is depends on (a pull request
// with some may not be merged).
func (s Service) OpenDependencies(ctx context.Context, is *store.Issue) (int64, error) {
	return s.Store.Dependencies().OpenDependencies(ctx, is.ID)
}

// SetLocked locks (with a reason) or unlocks the conversation of issue
// number index of r: writers of its unit only. Locking a locked issue (or
// unlocking an unlocked one) changes nothing.
func (s Service) SetLocked(ctx context.Context, doer *store.User, r *store.Repository, perm access.Permission, index int64, locked bool, reason string) error {
	if err := writable(r); err != nil {
		return err
	}
	cur, err := s.issue(ctx, r, index)
	if err != nil {
		return err
	}
	if !writer(perm, cur.IsPull) {
		return apierr.Forbidden(msgWriter)
	}
	return s.inLockedIssue(ctx, r, index, func(ctx context.Context, is *store.Issue) error {
		if is.IsLocked == locked {
			return nil
		}
		is.IsLocked = locked
		if err := s.Store.Issues().Update(ctx, is, "is_locked"); err != nil {
			return err
		}
		ev, kind := &store.IssueEvent{Type: store.EventLock, Body: strings.TrimSpace(reason)}, events.IssueLocked
		if !locked {
			ev, kind = &store.IssueEvent{Type: store.EventUnlock}, events.IssueUnlocked
		}
		if err := s.record(ctx, doer, is, ev); err != nil {
			return err
		}
		return s.emitIssue(ctx, doer, is, kind)
	})
}

// Pin pins issue number index of r (repository admins only), after the
// pinned ones of its kind; at most MaxPinned may be pinned in r.
func (s Service) Pin(ctx context.Context, doer *store.User, r *store.Repository, perm access.Permission, index int64) error {
	return s.changePin(ctx, doer, r, perm, index, func(ctx context.Context, is *store.Issue) (bool, error) {
		if is.PinOrder != 0 {
			return false, nil
		}
		n, err := s.Store.Pins().CountPinned(ctx, r.ID)
		if err != nil {
			return false, err
		}
		if n >= MaxPinned {
			return false, apierr.BadRequest("you can pin at most %d issues and pull requests", MaxPinned)
		}
		if err := s.Store.Pins().Pin(ctx, is); err != nil {
			return false, err
		}
		if err := s.record(ctx, doer, is, &store.IssueEvent{Type: store.EventPin}); err != nil {
			return false, err
		}
		return true, s.emitIssue(ctx, doer, is, events.IssuePinned)
	})
}

// Unpin unpins issue number index of r (repository admins only).
func (s Service) Unpin(ctx context.Context, doer *store.User, r *store.Repository, perm access.Permission, index int64) error {
	return s.changePin(ctx, doer, r, perm, index, func(ctx context.Context, is *store.Issue) (bool, error) {
		if is.PinOrder == 0 {
			return false, nil
		}
		if err := s.Store.Pins().Unpin(ctx, is); err != nil {
			return false, err
		}
		if err := s.record(ctx, doer, is, &store.IssueEvent{Type: store.EventUnpin}); err != nil {
			return false, err
		}
		return true, s.emitIssue(ctx, doer, is, events.IssueUnpinned)
	})
}

// MovePin moves pinned issue number index of r to position pos
// (repository admins only); an issue that is not pinned stays as it is.
func (s Service) MovePin(ctx context.Context, doer *store.User, r *store.Repository, perm access.Permission, index, pos int64) error {
	if pos < 1 {
		return apierr.Validation("[Position]: must be at least 1")
	}
	return s.changePin(ctx, doer, r, perm, index, func(ctx context.Context, is *store.Issue) (bool, error) {
		if is.PinOrder == 0 || is.PinOrder == pos {
			return false, nil
		}
		if err := s.Store.Pins().Move(ctx, is, pos); err != nil {
			return false, err
		}
		return true, s.emitIssue(ctx, doer, is, events.IssuePinMoved)
	})
}

// changePin runs fn on the locked issue for a repository admin; fn
// reports whether it changed anything.
func (s Service) changePin(ctx context.Context, doer *store.User, r *store.Repository, perm access.Permission, index int64,
	fn func(ctx context.Context, is *store.Issue) (bool, error)) error {
	if err := writable(r); err != nil {
		return err
	}
	if _, err := s.issue(ctx, r, index); err != nil {
		return err
	}
	if !perm.IsAdmin() {
		return apierr.Forbidden(msgAdmin)
	}
	return s.inLockedIssue(ctx, r, index, func(ctx context.Context, is *store.Issue) error {
		_, err := fn(ctx, is)
		return err
	})
}

// Pinned lists r's pinned issues (isPull false) or pull requests, in pin
// order, for a caller with perm; nothing when the unit is not readable.
func (s Service) Pinned(ctx context.Context, r *store.Repository, perm access.Permission, isPull bool) ([]*store.Issue, error) {
	unit := access.UnitIssues
	if isPull {
		unit = access.UnitPulls
	}
	if !perm.CanRead(unit) || (!isPull && !IssuesEnabled(r)) {
		return []*store.Issue{}, nil
	}
	return s.Store.Pins().Pinned(ctx, r.ID, isPull)
}

// IssueRef names an issue by its repository and number (the reference's
// IssueMeta).
type IssueRef struct {
	Owner, Repo string
	Index       int64
	// Action is what a keyword before the reference asks of the issue
	// (store.RefCloses, store.RefReopens), or store.RefNone.
	Action int
}

// otherIssue loads the issue ref names as p sees it, with p's permission
// on its repository: 404 when p may not read it. An empty owner or
// repository name means r.
func (s Service) otherIssue(ctx context.Context, p *auth.Principal, r *store.Repository, perm access.Permission, ref IssueRef) (*store.Issue, *store.Repository, access.Permission, error) {
	or, operm := r, perm
	if (ref.Owner != "" && !strings.EqualFold(ref.Owner, r.Owner.Name)) || (ref.Repo != "" && !strings.EqualFold(ref.Repo, r.Name)) {
		owner, name := ref.Owner, ref.Repo
		if owner == "" {
			owner = r.Owner.Name
		}
		if name == "" {
			name = r.Name
		}
		var err error
		if or, operm, err = s.Tracker(ctx, p, owner, name); err != nil {
			return nil, nil, access.None, err
		}
	}
	is, err := s.issue(ctx, or, ref.Index)
	if err != nil {
		return nil, nil, access.None, err
	}
	if !readable(operm, is) {
		return nil, nil, access.None, apierr.NotFound("not found")
	}
	return is, or, operm, nil
}

// readable tells whether perm may read is (its issues or pulls unit).
func readable(perm access.Permission, is *store.Issue) bool {
	if is.IsPull {
		return perm.CanRead(access.UnitPulls)
	}
	return perm.CanRead(access.UnitIssues)
}

// SetDependency makes issue number index of r depend on the issue ref
// names (blocks false), or makes that issue depend on this one (blocks
// true), or, with add false, undoes that. The dependent issue's
// repository must enable dependencies and p must write to its unit; p
// must be able to read the other issue; anything else answers 404 as the
// reference does. It returns the dependent issue (blocks false) or the
// blocking one (blocks true), as the reference answers.
func (s Service) SetDependency(ctx context.Context, p *auth.Principal, r *store.Repository, perm access.Permission, index int64, ref IssueRef, blocks, add bool) (*store.Issue, *store.Repository, error) {
	if err := writable(r); err != nil {
		return nil, nil, err
	}
	here, err := s.issue(ctx, r, index)
	if err != nil {
		return nil, nil, err
	}
	if !readable(perm, here) {
		return nil, nil, apierr.NotFound("not found")
	}
	there, tr, tperm, err := s.otherIssue(ctx, p, r, perm, ref)
	if err != nil {
		return nil, nil, err
	}
	// dependent depends on dependency.
	dependent, dr, dperm, dependency := here, r, perm, there
	if blocks {
		dependent, dr, dperm, dependency = there, tr, tperm, here
	}
	if err := writable(dr); err != nil {
		return nil, nil, err
	}
	if !dr.EnableIssueDependencies || !writer(dperm, dependent.IsPull) {
		return nil, nil, apierr.NotFound("not found")
	}
	if dependent.ID == dependency.ID {
		return nil, nil, apierr.Validation("an issue cannot depend on itself")
	}
	err = s.Store.WithTx(ctx, func(ctx context.Context) error {
		deps := s.Store.Dependencies()
		var changed bool
		var err error
		typ, kind := store.EventAddDependency, events.IssueDependencyAdded
		if add {
			// A dependency the other way round would make a cycle.
			if back, err := deps.Dependencies(ctx, dependency.ID); err != nil {
				return err
			} else {
				for _, b := range back {
					if b.ID == dependent.ID {
						return apierr.Validation("circular dependencies are not allowed")
					}
				}
			}
			changed, err = deps.Add(ctx, dependent.ID, dependency.ID, s.Clock.Now())
		} else {
			typ, kind = store.EventRemoveDependency, events.IssueDependencyRemoved
			changed, err = deps.Remove(ctx, dependent.ID, dependency.ID)
		}
		if err != nil || !changed {
			return err
		}
		// Both issues' timelines show the change, each naming the other.
		if err := s.record(ctx, p.User, dependent, &store.IssueEvent{Type: typ, DependentIssueID: dependency.ID}); err != nil {
			return err
		}
		if err := s.record(ctx, p.User, dependency, &store.IssueEvent{Type: typ, DependentIssueID: dependent.ID}); err != nil {
			return err
		}
		return s.emitIssue(ctx, p.User, dependent, kind)
	})
	if err != nil {
		return nil, nil, err
	}
	return here, r, nil
}

// Dependencies lists the issues issue number index of r depends on
// (blocks false) or that depend on it (blocks true), keeping those p may
// read. The dependencies of a repository without them are not found, as
// in the reference.
func (s Service) Dependencies(ctx context.Context, p *auth.Principal, r *store.Repository, perm access.Permission, index int64, blocks bool) ([]*store.Issue, map[int64]*store.Repository, error) {
	if !blocks && !r.EnableIssueDependencies {
		return nil, nil, apierr.NotFound("not found")
	}
	is, err := s.issue(ctx, r, index)
	if err != nil {
		return nil, nil, err
	}
	if !readable(perm, is) {
		return nil, nil, apierr.NotFound("not found")
	}
	var list []*store.Issue
	if blocks {
		list, err = s.Store.Dependencies().Blocks(ctx, is.ID)
	} else {
		list, err = s.Store.Dependencies().Dependencies(ctx, is.ID)
	}
	if err != nil {
		return nil, nil, err
	}
	return s.visibleIssues(ctx, p, r, perm, list)
}

// visibleIssues keeps the issues of list p may read, with their
// repositories; each other repository's permission is looked up once.
func (s Service) visibleIssues(ctx context.Context, p *auth.Principal, r *store.Repository, perm access.Permission, list []*store.Issue) ([]*store.Issue, map[int64]*store.Repository, error) {
	repos := map[int64]*store.Repository{r.ID: r}
	perms := map[int64]access.Permission{r.ID: perm}
	var missing []int64
	for _, is := range list {
		if repos[is.RepoID] == nil && !slices.Contains(missing, is.RepoID) {
			missing = append(missing, is.RepoID)
		}
	}
	if len(missing) > 0 {
		more, err := s.Store.Issues().Repos(ctx, missing)
		if err != nil {
			return nil, nil, err
		}
		for id, or := range more {
			op, err := s.Access.Repo(ctx, p, or)
			if err != nil {
				return nil, nil, err
			}
			repos[id], perms[id] = or, op
		}
	}
	out := make([]*store.Issue, 0, len(list))
	for _, is := range list {
		or := repos[is.RepoID]
		if or == nil || !readable(perms[is.RepoID], is) || (!is.IsPull && !IssuesEnabled(or)) {
			continue
		}
		out = append(out, is)
	}
	return out, repos, nil
}
