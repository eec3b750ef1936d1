package issue

import (
	"context"
	"time"

	"github.com/go-openapi/runtime/middleware"
	"github.com/go-openapi/strfmt"

	"repohost/impl/apierr"
	"repohost/impl/auth"
	"repohost/impl/convert"
	"repohost/impl/paging"
	"repohost/models"
	"repohost/restapi/operations/issue"
)

// milestoneDeadline is a milestone's due date as sent (the reference keeps
// a milestone's deadline to the second, unlike an issue's, which is a day);
// a zero time means none.
func milestoneDeadline(d *strfmt.DateTime) *time.Time {
	if d == nil || time.Time(*d).IsZero() {
		return nil
	}
	t := time.Time(*d).UTC()
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
	s := h.svc()
	p, r, perm, err := s.userTracker(ctx, params.Owner, params.Repo)
	if err != nil {
		return h.Fail(err)
	}
	o := orEmpty(params.Body)
	m, err := s.CreateMilestone(ctx, p.User, r, perm, MilestoneInput{Title: deref(o.Title), Description: deref(o.Description),
		Deadline: milestoneDeadline(o.Deadline), Closed: deref(o.State) == "closed"})
	if err != nil {
		return h.Fail(err)
	}
	return issue.NewIssueCreateMilestoneCreated().WithPayload(convert.Milestone(m))
}

func (h Handlers) IssueEditMilestone(ctx context.Context, params issue.IssueEditMilestoneParams) middleware.Responder {
	s := h.svc()
	p, r, perm, err := s.userTracker(ctx, params.Owner, params.Repo)
	if err != nil {
		return h.Fail(err)
	}
	o := orEmpty(params.Body)
	in := MilestoneEdit{Title: o.Title, Description: o.Description}
	// A zero due date clears it.
	if o.Deadline != nil {
		in.Deadline = milestoneDeadline(o.Deadline)
		in.UnsetDeadline = in.Deadline == nil
	}
	// An empty state leaves the state alone.
	if o.State != nil && *o.State != "" {
		closed := *o.State == "closed"
		in.Closed = &closed
	}
	m, err := s.EditMilestone(ctx, p.User, r, perm, params.ID, in)
	if err != nil {
		return h.Fail(err)
	}
	return issue.NewIssueEditMilestoneOK().WithPayload(convert.Milestone(m))
}

func (h Handlers) IssueDeleteMilestone(ctx context.Context, params issue.IssueDeleteMilestoneParams) middleware.Responder {
	s := h.svc()
	if err := remove(ctx, s, s.Tracker, params.Owner, params.Repo, params.ID, s.DeleteMilestone); err != nil {
		return h.Fail(err)
	}
	return issue.NewIssueDeleteMilestoneNoContent()
}
