package issue

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/go-openapi/runtime/middleware"
	"github.com/go-openapi/strfmt"

	"repohost/impl/apierr"
	"repohost/impl/auth"
	"repohost/impl/convert"
	"repohost/impl/paging"
	"repohost/models"
	"repohost/restapi/operations/issue"
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

func checkMilestoneTitle(title string) error {
	switch {
	case strings.TrimSpace(title) == "":
		return apierr.Validation("[Title]: Required")
	case len(title) > MaxMilestoneTitleLength:
		return apierr.Validation("[Title]: MaxSize")
	}
	return nil
}

// milestoneDeadline keeps the date of a due date, like issue due dates;
// a zero time means none.
func milestoneDeadline(d *strfmt.DateTime) *time.Time {
	if d == nil || time.Time(*d).IsZero() {
		return nil
	}
	t := dueDate(*d)
	return &t
}

func (h Handlers) IssueGetMilestonesList(ctx context.Context, params issue.IssueGetMilestonesListParams) middleware.Responder {
	r, _, err := h.svc().Tracker(ctx, auth.FromContext(ctx), params.Owner, params.Repo)
	if err != nil {
		return h.Fail(err)
	}
	var closed *bool
	switch deref(params.State) {
	case "", "open":
		closed = new(bool)
	case "closed":
		closed = new(bool)
		*closed = true
	case "all":
	default:
		return h.Fail(apierr.Validation("[State]: must be open, closed or all"))
	}
	pg := h.Page(params.Page, params.Limit)
	list, total, err := h.Store.Milestones().List(ctx, r.ID, closed, deref(params.Name), pg.Store())
	if err != nil {
		return h.Fail(err)
	}
	out := make([]*models.Milestone, 0, len(list))
	for _, m := range list {
		out = append(out, convert.Milestone(m))
	}
	return issue.NewIssueGetMilestonesListOK().WithPayload(out).WithXTotalCount(total).WithLink(paging.Link(params.HTTPRequest, pg, total))
}

func (h Handlers) IssueGetMilestone(ctx context.Context, params issue.IssueGetMilestoneParams) middleware.Responder {
	s := h.svc()
	r, _, err := s.Tracker(ctx, auth.FromContext(ctx), params.Owner, params.Repo)
	if err != nil {
		return h.Fail(err)
	}
	m, err := s.milestone(ctx, r, params.ID)
	if err != nil {
		return h.Fail(err)
	}
	return issue.NewIssueGetMilestoneOK().WithPayload(convert.Milestone(m))
}

func (h Handlers) IssueCreateMilestone(ctx context.Context, params issue.IssueCreateMilestoneParams) middleware.Responder {
	r, err := h.trackerWriter(ctx, params.Owner, params.Repo)
	if err != nil {
		return h.Fail(err)
	}
	o := params.Body
	if o == nil {
		o = &models.CreateMilestoneOption{}
	}
	if err := checkMilestoneTitle(deref(o.Title)); err != nil {
		return h.Fail(err)
	}
	t := h.Clock.Now()
	m := &store.Milestone{RepoID: r.ID, Title: deref(o.Title), Description: deref(o.Description),
		Deadline: milestoneDeadline(o.Deadline), CreatedAt: t, UpdatedAt: t}
	if deref(o.State) == "closed" {
		m.IsClosed, m.ClosedAt = true, &t
	}
	if err := h.Store.Milestones().Create(ctx, m); err != nil {
		return h.Fail(err)
	}
	return issue.NewIssueCreateMilestoneCreated().WithPayload(convert.Milestone(m))
}

func (h Handlers) IssueEditMilestone(ctx context.Context, params issue.IssueEditMilestoneParams) middleware.Responder {
	r, err := h.trackerWriter(ctx, params.Owner, params.Repo)
	if err != nil {
		return h.Fail(err)
	}
	o := params.Body
	if o == nil {
		o = &models.EditMilestoneOption{}
	}
	// As in the reference, an empty title leaves the title alone (the SDK
	// always sends the field).
	if o.Title != nil && strings.TrimSpace(*o.Title) == "" {
		o.Title = nil
	}
	if o.Title != nil {
		if err := checkMilestoneTitle(*o.Title); err != nil {
			return h.Fail(err)
		}
	}
	s := h.svc()
	var m *store.Milestone
	err = h.Store.WithTx(ctx, func(ctx context.Context) error {
		if m, err = s.milestone(ctx, r, params.ID); err != nil {
			return err
		}
		t := h.Clock.Now()
		if o.Title != nil {
			m.Title = *o.Title
		}
		if o.Description != nil {
			m.Description = *o.Description
		}
		if o.Deadline != nil {
			m.Deadline = milestoneDeadline(o.Deadline)
		}
		if o.State != nil && *o.State != "" && (*o.State == "closed") != m.IsClosed {
			m.IsClosed = *o.State == "closed"
			m.ClosedAt = nil
			if m.IsClosed {
				m.ClosedAt = &t
			}
		}
		m.UpdatedAt = t
		if err := h.Store.Milestones().Update(ctx, m); err != nil {
			return err
		}
		// Re-read for the counters, which Update leaves alone.
		m, err = h.Store.Milestones().Find(ctx, r.ID, m.ID)
		return err
	})
	if err != nil {
		return h.Fail(err)
	}
	return issue.NewIssueEditMilestoneOK().WithPayload(convert.Milestone(m))
}

func (h Handlers) IssueDeleteMilestone(ctx context.Context, params issue.IssueDeleteMilestoneParams) middleware.Responder {
	r, err := h.trackerWriter(ctx, params.Owner, params.Repo)
	if err != nil {
		return h.Fail(err)
	}
	s := h.svc()
	err = h.Store.WithTx(ctx, func(ctx context.Context) error {
		m, err := s.milestone(ctx, r, params.ID)
		if err != nil {
			return err
		}
		return h.Store.Milestones().Delete(ctx, m.ID)
	})
	if err != nil {
		return h.Fail(err)
	}
	return issue.NewIssueDeleteMilestoneNoContent()
}
