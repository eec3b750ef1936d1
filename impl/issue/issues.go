package issue

import (
	"context"
	"strconv"
	"time"

	"github.com/go-openapi/runtime/middleware"

	"repohost/impl/access"
	"repohost/impl/apierr"
	"repohost/impl/app"
	"repohost/impl/auth"
	"repohost/impl/convert"
	"repohost/impl/paging"
	"repohost/models"
	"repohost/restapi/operations/issue"
	"repohost/store"
)

func (h Handlers) IssueCreateIssue(ctx context.Context, params issue.IssueCreateIssueParams) middleware.Responder {
	// Nothing here shows the repository's counters, which every issue
	// created moves: its cached row serves however they moved.
	p, r, perm, err := h.svc().userTracker(store.CountersMayLag(ctx), params.Owner, params.Repo)
	if err != nil {
		return h.Fail(err)
	}
	o := orEmpty(params.Body)
	in := CreateInput{Title: deref(o.Title), Body: deref(o.Body), Ref: deref(o.Ref), Closed: o.Closed != nil && *o.Closed,
		LabelIDs: o.Labels, Assignees: o.Assignees, ProjectIDs: o.Projects}
	if o.Assignee != nil && *o.Assignee != "" {
		in.Assignees = append([]string{*o.Assignee}, in.Assignees...)
	}
	if o.Milestone != nil {
		in.MilestoneID = *o.Milestone
	}
	if o.Deadline != nil && !time.Time(*o.Deadline).IsZero() {
		d := dueDate(*o.Deadline)
		in.Deadline = &d
	}
	is, err := h.svc().Create(ctx, p.User, r, perm, in)
	if err != nil {
		return h.Fail(err)
	}
	out, err := h.svc().renderCreated(ctx, app.BaseURL(params.HTTPRequest), p.User, r, is, in)
	if err != nil {
		return h.Fail(err)
	}
	return issue.NewIssueCreateIssueCreated().WithPayload(out)
}

func (h Handlers) IssueGetIssue(ctx context.Context, params issue.IssueGetIssueParams) middleware.Responder {
	p := auth.FromContext(ctx)
	r, _, err := h.svc().Tracker(ctx, p, params.Owner, params.Repo)
	if err != nil {
		return h.Fail(err)
	}
	is, err := h.svc().issue(ctx, r, params.Index)
	if err != nil {
		return h.Fail(err)
	}
	out, err := h.svc().renderOne(ctx, app.BaseURL(params.HTTPRequest), app.Viewer(p), r, is)
	if err != nil {
		return h.Fail(err)
	}
	return issue.NewIssueGetIssueOK().WithPayload(out)
}

func (h Handlers) IssueEditIssue(ctx context.Context, params issue.IssueEditIssueParams) middleware.Responder {
	p, r, perm, err := h.svc().userTracker(ctx, params.Owner, params.Repo)
	if err != nil {
		return h.Fail(err)
	}
	o := orEmpty(params.Body)
	in := EditInput{Title: o.Title, Body: o.Body, Ref: o.Ref, ContentVersion: o.ContentVersion, Milestone: o.Milestone, State: o.State,
		UnsetDeadline: o.RemoveDeadline != nil && *o.RemoveDeadline}
	if o.Deadline != nil && !time.Time(*o.Deadline).IsZero() {
		d := dueDate(*o.Deadline)
		in.Deadline = &d
	}
	// Either field present replaces the assignees; [] clears them.
	if o.Assignees != nil || o.Assignee != nil {
		in.SetAssignees = true
		in.Assignees = o.Assignees
		if o.Assignee != nil && *o.Assignee != "" {
			in.Assignees = append([]string{*o.Assignee}, in.Assignees...)
		}
	}
	if o.Projects != nil {
		in.SetProjects, in.Projects = true, o.Projects
	}
	is, err := h.svc().Edit(ctx, p.User, r, perm, params.Index, in)
	if err != nil {
		return h.Fail(err)
	}
	out, err := h.svc().renderOne(ctx, app.BaseURL(params.HTTPRequest), p.User, r, is)
	if err != nil {
		return h.Fail(err)
	}
	// 201, not 200: what the reference (and its SDK's tests) answer.
	return issue.NewIssueEditIssueCreated().WithPayload(out)
}

func (h Handlers) IssueDelete(ctx context.Context, params issue.IssueDeleteParams) middleware.Responder {
	s := h.svc()
	if err := remove(ctx, s, s.Tracker, params.Owner, params.Repo, params.Index, s.Delete); err != nil {
		return h.Fail(err)
	}
	return issue.NewIssueDeleteNoContent()
}

func (h Handlers) IssueEditIssueDeadline(ctx context.Context, params issue.IssueEditIssueDeadlineParams) middleware.Responder {
	p, r, perm, err := h.svc().userTracker(ctx, params.Owner, params.Repo)
	if err != nil {
		return h.Fail(err)
	}
	// A zero time clears the due date, as in the reference.
	var due *time.Time
	if params.Body != nil && params.Body.Deadline != nil && !time.Time(*params.Body.Deadline).IsZero() {
		d := dueDate(*params.Body.Deadline)
		due = &d
	}
	is, err := h.svc().SetDeadline(ctx, p.User, r, perm, params.Index, due)
	if err != nil {
		return h.Fail(err)
	}
	return issue.NewIssueEditIssueDeadlineCreated().WithPayload(&models.IssueDeadline{Deadline: convert.Time(is.Deadline)})
}

// stateFilter reads the state parameter of issue lists: open unless told.
func stateFilter(s *string) *bool {
	v := "open"
	if s != nil && *s != "" {
		v = *s
	}
	switch v {
	case "all":
		return nil
	case "closed":
		t := true
		return &t
	}
	f := false
	return &f
}

// typeFilter reads the type parameter: issues, pulls or both.
func typeFilter(s *string) *bool {
	if s == nil || *s == "" {
		return nil
	}
	pull := *s == "pulls"
	return &pull
}

// filterUser resolves a user named by a filter parameter; the reference
// answers 404 for a name that does not exist.
func (s Service) filterUser(ctx context.Context, p *auth.Principal, name *string) (int64, error) {
	if name == nil || *name == "" {
		return 0, nil
	}
	u, err := s.VisibleUser(ctx, p, *name)
	if err != nil {
		return 0, err
	}
	return u.ID, nil
}

func (h Handlers) IssueListIssues(ctx context.Context, params issue.IssueListIssuesParams) middleware.Responder {
	p := auth.FromContext(ctx)
	s := h.svc()
	// Before anything the answer is read from, access included; the
	// repository's own part is taken once it is known (repoList).
	shared := h.IssueLists.Shared(ctx)
	r, _, err := s.Tracker(ctx, p, params.Owner, params.Repo)
	if err != nil {
		return h.Fail(err)
	}
	f := store.IssueFilter{RepoID: r.ID, IsClosed: stateFilter(params.State), IsPull: typeFilter(params.Type),
		Keyword: deref(params.Q), UpdatedSince: QueryTime(params.Since), UpdatedBefore: QueryTime(params.Before)}
	if !IssuesEnabled(r) {
		// Only pull requests can be listed then.
		pull := true
		if f.IsPull != nil && !*f.IsPull {
			f.None = true
		}
		f.IsPull = &pull
	}
	for _, uf := range []struct {
		name *string
		dst  *int64
	}{{params.CreatedBy, &f.PosterID}, {params.AssignedBy, &f.AssigneeID}, {params.MentionedBy, &f.MentionedID}} {
		if *uf.dst, err = s.filterUser(ctx, p, uf.name); err != nil {
			return h.Fail(err)
		}
	}
	pg := h.Page(params.Page, params.Limit)
	base, viewer := app.BaseURL(params.HTTPRequest), app.Viewer(p)
	// Label and milestone names are looked up with the list, as kept lists
	// follow their tables; users named by filters are looked up on every
	// request, as whether the caller may see them is not in the key.
	query := struct {
		Filter             store.IssueFilter
		Labels, Milestones *string
	}{f, params.Labels, params.Milestones}
	return s.repoList(params.HTTPRequest, shared, r.ID, base, viewer, query, pg, func() ([]*models.Issue, int64, error) {
		if err := s.labelFilter(ctx, r, params.Labels, &f); err != nil {
			return nil, 0, err
		}
		if err := s.milestoneFilter(ctx, r, params.Milestones, &f); err != nil {
			return nil, 0, err
		}
		list, total, err := h.Store.Issues().List(ctx, f, pg.Store())
		if err != nil {
			return nil, 0, err
		}
		out, _, err := s.render(ctx, base, viewer, list, map[int64]*store.Repository{r.ID: r}, nil)
		return out, total, err
	})
}

// labelFilter keeps issues carrying every named label; names of no label
// of r are discarded, as the reference documents.
func (s Service) labelFilter(ctx context.Context, r *store.Repository, param *string, f *store.IssueFilter) error {
	names := splitList(param)
	if len(names) == 0 {
		return nil
	}
	found, err := s.Store.Labels().FindByNames(ctx, r.ID, names)
	if err != nil {
		return err
	}
	// One group of ids per name: the store then tests the issue's links
	// by id, through the link table's key, without reading labels.
	group := map[string]int{}
	for _, l := range found {
		i, ok := group[l.Name]
		if !ok {
			i = len(f.LabelIDs)
			group[l.Name] = i
			f.LabelIDs = append(f.LabelIDs, nil)
		}
		f.LabelIDs[i] = append(f.LabelIDs[i], l.ID)
	}
	return nil
}

// milestoneFilter keeps issues in any of the named milestones: each entry
// is a title, or else an id; entries naming nothing are discarded.
func (s Service) milestoneFilter(ctx context.Context, r *store.Repository, param *string, f *store.IssueFilter) error {
	for _, part := range splitList(param) {
		m, err := s.Store.Milestones().FindByTitle(ctx, r.ID, part)
		switch {
		case err == nil:
			f.MilestoneIDs = append(f.MilestoneIDs, m.ID)
			continue
		case !isNotFound(err):
			return err
		}
		if id, perr := strconv.ParseInt(part, 10, 64); perr == nil {
			if m, err := s.Store.Milestones().Find(ctx, r.ID, id); err == nil {
				f.MilestoneIDs = append(f.MilestoneIDs, m.ID)
			} else if !isNotFound(err) {
				return err
			}
		}
	}
	return nil
}

func (h Handlers) IssueSearchIssues(ctx context.Context, params issue.IssueSearchIssuesParams) middleware.Responder {
	// Taken before anything the answer is read from (the owner, the
	// caller's grants): see listcache.
	gen := h.IssueSearches.Generation(ctx)
	p := auth.FromContext(ctx)
	s := h.svc()
	f := store.IssueFilter{AcrossRepos: true, Viewer: access.Viewer(p), IsClosed: stateFilter(params.State), IsPull: typeFilter(params.Type),
		Keyword: deref(params.Q), UpdatedSince: QueryTime(params.Since), UpdatedBefore: QueryTime(params.Before),
		LabelNames: splitList(params.Labels), MilestoneNames: splitList(params.Milestones)}
	if owner := deref(params.Owner); owner != "" {
		u, err := h.VisibleUser(ctx, p, owner)
		if app.IsNotFound(err) {
			return h.Fail(apierr.BadRequest("owner %q does not exist", owner))
		}
		if err != nil {
			return h.Fail(err)
		}
		f.OwnerID = u.ID
	}
	if deref(params.Team) != "" {
		// Teams belong to another area of this server; until they can be
		// matched here, a team filter matches nothing rather than
		// everything.
		if f.OwnerID == 0 {
			return h.Fail(apierr.BadRequest("owner organisation is required for filtering on team"))
		}
		f.None = true
	}
	var err error
	if f.PosterID, err = s.filterUser(ctx, p, params.CreatedBy); err != nil {
		return h.Fail(err)
	}
	if me := p.UserID(); me != 0 {
		if flag(params.Created) {
			f.PosterID = me
		}
		if flag(params.Assigned) {
			f.AssigneeID = me
		}
		if flag(params.Mentioned) {
			f.MentionedID = me
		}
	}
	// Review filters select the caller's pull requests to review or
	// reviewed; an anonymous caller has none.
	if flag(params.ReviewRequested) || flag(params.Reviewed) {
		if p.UserID() == 0 {
			f.None = true
		}
		yes := true
		f.IsPull = &yes
		if flag(params.ReviewRequested) {
			f.ReviewRequestedID = p.UserID()
		}
		if flag(params.Reviewed) {
			f.ReviewedID = p.UserID()
		}
	}
	pg := h.Page(params.Page, params.Limit)
	// The answer is kept while nothing it was read from changes: the key
	// holds the filter (the caller's facts that decide what it sees among
	// them, f.Viewer), the page, the root URL and the caller (what each
	// issue shows of users depends on who asks).
	base := app.BaseURL(params.HTTPRequest)
	link := func(total int64) string { return paging.Link(params.HTTPRequest, pg, total) }
	r, err := h.IssueSearches.Serve(listKey(base, app.Viewer(p), f, pg), gen, link, func() (middleware.Responder, int64, error) {
		list, total, err := h.Store.Issues().List(ctx, f, pg.Store())
		if err != nil {
			return nil, 0, err
		}
		out, _, err := s.render(ctx, base, app.Viewer(p), list, nil, nil)
		if err != nil {
			return nil, 0, err
		}
		return issue.NewIssueSearchIssuesOK().WithPayload(out).WithXTotalCount(total).WithLink(link(total)), total, nil
	})
	if err != nil {
		return h.Fail(err)
	}
	return r
}

func deref[T any](v *T) T {
	var zero T
	if v == nil {
		return zero
	}
	return *v
}

func flag(b *bool) bool { return b != nil && *b }

// orEmpty stands in an empty body for a missing one.
func orEmpty[T any](body *T) *T {
	if body == nil {
		return new(T)
	}
	return body
}
