package issue

import (
	"context"
	"strconv"
	"strings"
	"time"

	"repohost/impl/access"
	"repohost/impl/events"
	"repohost/store"
)

// MaxMilestoneTitleLength bounds milestone titles.
const MaxMilestoneTitleLength = 255

// milestone finds a milestone of r by id or, failing that, by title, as
// the reference's {id} segment allows.
func (s Service) milestone(ctx context.Context, r *store.Repository, ref string) (*store.Milestone, error) {
	if id, err := strconv.ParseInt(ref, 10, 64); err == nil && id > 0 {
		m, err := s.Store.Milestones().Find(ctx, r.ID, id)
		if err == nil || !isNotFound(err) {
			return m, err
		}
	}
	return s.Store.Milestones().FindByTitle(ctx, r.ID, ref)
}

// MilestoneInput is a new milestone as the caller asked for it.
type MilestoneInput struct {
	Title, Description string
	Deadline           *time.Time
	Closed             bool
}

// MilestoneEdit is a change to a milestone; nil fields stay as they are.
type MilestoneEdit struct {
	Title, Description *string
	// Deadline moves the due date; UnsetDeadline clears it.
	Deadline      *time.Time
	UnsetDeadline bool
	Closed        *bool
}

// CreateMilestone adds a milestone to r (writers only).
func (s Service) CreateMilestone(ctx context.Context, doer *store.User, r *store.Repository, perm access.Permission, in MilestoneInput) (*store.Milestone, error) {
	if err := canManage(r, perm); err != nil {
		return nil, err
	}
	if err := checkRequired("Title", in.Title, MaxMilestoneTitleLength); err != nil {
		return nil, err
	}
	t := s.Clock.Now()
	m := &store.Milestone{RepoID: r.ID, Title: in.Title, Description: in.Description,
		Deadline: in.Deadline, CreatedAt: t, UpdatedAt: t}
	if in.Closed {
		m.IsClosed, m.ClosedAt = true, &t
	}
	err := s.Store.WithTx(store.ConfinedTo(ctx, r.ID), func(ctx context.Context) error {
		if err := s.Store.Milestones().Create(ctx, m); err != nil {
			return err
		}
		return s.emitNamed(ctx, events.MilestoneCreated, doer, r, m.ID, m.Title)
	})
	if err != nil {
		return nil, err
	}
	return m, nil
}

// EditMilestone changes the milestone of r that ref names by id or title
// (writers only). As in the reference, an empty title leaves the title
// alone (its SDK always sends the field).
func (s Service) EditMilestone(ctx context.Context, doer *store.User, r *store.Repository, perm access.Permission, ref string, in MilestoneEdit) (*store.Milestone, error) {
	if err := canManage(r, perm); err != nil {
		return nil, err
	}
	if in.Title != nil && strings.TrimSpace(*in.Title) == "" {
		in.Title = nil
	}
	if in.Title != nil {
		if err := checkRequired("Title", *in.Title, MaxMilestoneTitleLength); err != nil {
			return nil, err
		}
	}
	var m *store.Milestone
	err := s.Store.WithTx(store.ConfinedTo(ctx, r.ID), func(ctx context.Context) error {
		var err error
		if m, err = s.milestone(ctx, r, ref); err != nil {
			return err
		}
		t := s.Clock.Now()
		var changed bool
		apply(&changed, &m.Title, in.Title)
		apply(&changed, &m.Description, in.Description)
		applyDeadline(&changed, &m.Deadline, in.Deadline, in.UnsetDeadline)
		setClosed(&changed, &m.IsClosed, &m.ClosedAt, in.Closed, t)
		m.UpdatedAt = t
		if err := s.Store.Milestones().Update(ctx, m); err != nil {
			return err
		}
		// Re-read for the counters, which Update leaves alone.
		if m, err = s.Store.Milestones().Find(ctx, r.ID, m.ID); err != nil || !changed {
			return err
		}
		return s.emitNamed(ctx, events.MilestoneEdited, doer, r, m.ID, m.Title)
	})
	if err != nil {
		return nil, err
	}
	return m, nil
}

// DeleteMilestone removes the milestone of r that ref names by id or title
// (writers only), taking its issues out of it.
func (s Service) DeleteMilestone(ctx context.Context, doer *store.User, r *store.Repository, perm access.Permission, ref string) error {
	if err := canManage(r, perm); err != nil {
		return err
	}
	return s.Store.WithTx(store.ConfinedTo(ctx, r.ID), func(ctx context.Context) error {
		m, err := s.milestone(ctx, r, ref)
		if err != nil {
			return err
		}
		if err := s.Store.Milestones().Delete(ctx, m.ID); err != nil {
			return err
		}
		return s.emitNamed(ctx, events.MilestoneDeleted, doer, r, m.ID, m.Title)
	})
}
