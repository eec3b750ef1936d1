package issue

import (
	"context"
	"slices"
	"time"

	"repohost/impl/events"
	"repohost/store"
)

// The events of the issue tracker. Every service function emits inside the
// transaction of its change, so a refused or rolled-back change announces
// nothing, and a change that turns out to be a no-op (closing a closed
// issue, adding a label the issue already has, an edit that sets every
// field to what it was) emits nothing either.
//
// One action emits one event, except where the reference's webhooks send
// one per aspect of the issue that the action changed; then the events
// come in this fixed order:
//
//   - issue.opened (creating), or issue.edited when the issue's own fields
//     changed (title, body, ref, due date, and its projects, which have no
//     kind of their own);
//   - issue.closed or issue.reopened when the state changed (an issue
//     created closed is opened, then closed, as the reference notifies);
//   - issue.label_updated when its set of labels changed;
//   - issue.milestoned when its milestone changed (also when taken out of
//     one);
//   - issue.assigned when its assignees changed.
//
// So an edit of the title and the state is issue.edited then issue.closed,
// and an issue created with labels is issue.opened then
// issue.label_updated. Deleting a label, milestone or project announces
// only that deletion, not a change of each issue that lost it.
//
// Reactions: issue.reaction_added or comment.reaction_added when the
// reaction is new (not when it was already given). Tracked time:
// issue.time_tracked, and issue.time_deleted when an entry or a reset
// removed time. Taking a reaction back announces nothing yet: the store
// does not tell whether a reaction was there to take back.

// actorID is the id of doer, 0 when nobody in particular acted.
func actorID(doer *store.User) int64 {
	if doer == nil {
		return 0
	}
	return doer.ID
}

// emitIssue records kinds about is, in order, in ctx's transaction.
func (s Service) emitIssue(ctx context.Context, doer *store.User, is *store.Issue, kinds ...events.Kind) error {
	return s.emitIssueEdit(ctx, doer, is, events.Issue{ID: is.ID, Index: is.Index}, kinds...)
}

// emitIssueEdit is emitIssue with the details of what changed: the
// edited event carries the title and body replaced, the assigned event
// the users assigned and unassigned, the labels event whether all were
// cleared.
func (s Service) emitIssueEdit(ctx context.Context, doer *store.User, is *store.Issue, details events.Issue, kinds ...events.Kind) error {
	for _, e := range issueEvents(is, details, kinds) {
		if err := s.Events.Emit(ctx, e.kind, is.RepoID, actorID(doer), e.payload); err != nil {
			return err
		}
	}
	return nil
}

// issueEvent is one event emitIssueEdit records.
type issueEvent struct {
	kind    events.Kind
	payload events.Issue
}

// issueEvents is what emitIssueEdit records, in order: the kinds about is
// (those of a pull request when it is one), each payload with the details
// that kind carries.
func issueEvents(is *store.Issue, details events.Issue, kinds []events.Kind) []issueEvent {
	out := make([]issueEvent, 0, len(kinds))
	for _, k := range kinds {
		p := events.Issue{ID: is.ID, Index: is.Index}
		switch k {
		case events.IssueEdited:
			p.TitleFrom, p.BodyFrom = details.TitleFrom, details.BodyFrom
		case events.IssueAssigned:
			p.Assigned, p.Unassigned = details.Assigned, details.Unassigned
		case events.IssueLabelsChanged:
			p.Cleared = details.Cleared
		case events.IssueSubscribed, events.IssueUnsubscribed:
			p.Subscriber = details.Subscriber
		}
		if is.IsPull {
			k = events.PullKind(k)
		}
		out = append(out, issueEvent{k, p})
	}
	return out
}

// emitComment records kind about comment commentID of is in ctx's
// transaction.
func (s Service) emitComment(ctx context.Context, kind events.Kind, doer *store.User, is *store.Issue, commentID int64) error {
	return s.Events.Emit(ctx, kind, is.RepoID, actorID(doer), events.Comment{ID: commentID, IssueID: is.ID, IssueIndex: is.Index})
}

// emitNamed records kind about a label, milestone or project of r in ctx's
// transaction.
func (s Service) emitNamed(ctx context.Context, kind events.Kind, doer *store.User, r *store.Repository, id int64, name string) error {
	return s.Events.Emit(ctx, kind, r.ID, actorID(doer), events.Named{ID: id, Name: name})
}

// emitOrgLabel records a change to an organization's label l, an event
// of no repository.
func (s Service) emitOrgLabel(ctx context.Context, kind events.Kind, doer *store.User, l *store.Label) error {
	return s.Events.Emit(ctx, kind, 0, actorID(doer), events.Named{ID: l.ID, Name: l.Name})
}

// issueChanges collects the aspects of an issue one action changed, to be
// emitted in the order documented above.
type issueChanges struct {
	opened, edited, closed, reopened, labels, milestone, assignees bool
}

func (c issueChanges) kinds() []events.Kind {
	var out []events.Kind
	for _, k := range []struct {
		on   bool
		kind events.Kind
	}{
		{c.opened, events.IssueOpened}, {c.edited, events.IssueEdited},
		{c.closed, events.IssueClosed}, {c.reopened, events.IssueReopened},
		{c.labels, events.IssueLabelsChanged}, {c.milestone, events.IssueMilestoned},
		{c.assignees, events.IssueAssigned},
	} {
		if k.on {
			out = append(out, k.kind)
		}
	}
	return out
}

// setState records a state change (none when changed is false).
func (c *issueChanges) setState(changed, closed bool) {
	c.closed = changed && closed
	c.reopened = changed && !closed
}

// sameTime tells whether two optional times are the same instant.
func sameTime(a, b *time.Time) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Equal(*b)
}

// setDiff lists the ids of b that are not in a.
func setDiff(a, b []int64) []int64 {
	var out []int64
	for _, id := range b {
		if !slices.Contains(a, id) && !slices.Contains(out, id) {
			out = append(out, id)
		}
	}
	return out
}

// sameSet tells whether a and b hold the same ids, ignoring order and
// repetition.
func sameSet(a, b []int64) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(slices.Compact(a), slices.Compact(b))
}

// apply sets *dst to *v when v is given, and notes in changed whether that
// changed *dst.
func apply[T comparable](changed *bool, dst *T, v *T) {
	if v != nil && *v != *dst {
		*dst = *v
		*changed = true
	}
}

// stamp sets a "since when" column (archived_at, closed_at) to t when on
// is true and it is unset, clears it when on is false and it is set, and
// notes in changed whether it did either.
func stamp(changed *bool, at **time.Time, on *bool, t time.Time) {
	if on == nil || *on == (*at != nil) {
		return
	}
	*at = nil
	if *on {
		*at = &t
	}
	*changed = true
}

// applyDeadline sets *dst to due, or clears it when unset, and notes in
// changed whether the date moved; neither leaves it alone.
func applyDeadline(changed *bool, dst **time.Time, due *time.Time, unset bool) {
	to := *dst
	switch {
	case unset:
		to = nil
	case due != nil:
		to = due
	}
	if !sameTime(to, *dst) {
		*dst = to
		*changed = true
	}
}

// setClosed moves a closable row (milestone, project) to the state closed
// asks for, stamping or clearing its closing time, and notes in changed
// whether the state moved.
func setClosed(changed *bool, isClosed *bool, closedAt **time.Time, closed *bool, t time.Time) {
	if closed == nil || *closed == *isClosed {
		return
	}
	*isClosed, *closedAt, *changed = *closed, nil, true
	if *closed {
		*closedAt = &t
	}
}
