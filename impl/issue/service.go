package issue

import (
	"context"
	"slices"
	"strings"
	"time"

	"repohost/impl/access"
	"repohost/impl/apierr"
	"repohost/impl/auth"
	"repohost/impl/events"
	"repohost/store"
)

// CreateInput is a new issue as the caller asked for it.
type CreateInput struct {
	Title, Body, Ref string
	Closed           bool
	LabelIDs         []int64
	MilestoneID      int64
	Assignees        []string
	Deadline         *time.Time
	ProjectIDs       []int64
	// Pull makes the new issue a pull request: this row is inserted
	// with it (IssueID set) in its transaction, and the repository's pull
	// counters move instead of its issue counters.
	Pull *store.PullRequest
	// Also runs in the creating transaction after everything else (the
	// pull request's review requests).
	Also func(ctx context.Context, is *store.Issue) error
}

// Create opens an issue in r for doer. Fields only writers may set
// (labels, milestone, assignees, due date, projects) are dropped for other
// callers, as the reference does. The number is allocated in the same
// transaction that inserts the issue and updates every counter.
func (s Service) Create(ctx context.Context, doer *store.User, r *store.Repository, perm access.Permission, in CreateInput) (*store.Issue, error) {
	if err := writable(r); err != nil {
		return nil, err
	}
	unit := access.UnitIssues
	if in.Pull != nil {
		unit = access.UnitPulls
	} else if !IssuesEnabled(r) {
		return nil, apierr.Forbidden(msgReader)
	}
	if err := checkRequired("Title", in.Title, MaxTitleLength); err != nil {
		return nil, err
	}
	if !perm.IsAdmin() {
		// A user the owner blocks cannot open issues or pull requests.
		if err := s.RefuseBlocked(ctx, doer, r.OwnerID); err != nil {
			return nil, err
		}
	}
	if !perm.CanWrite(unit) {
		in.LabelIDs, in.MilestoneID, in.Assignees, in.Deadline, in.ProjectIDs = nil, 0, nil, nil, nil
	}
	// Everything that can be refused is resolved before the transaction,
	// so a refused request does not even use up an issue number.
	assignees, err := s.resolveAssignees(ctx, r, in.Assignees)
	if err != nil {
		return nil, err
	}
	labels, err := s.Store.Labels().FindByIDs(ctx, r.ID, in.LabelIDs)
	if err != nil {
		return nil, err
	}
	labels = keepLastOfScope(labels)
	if in.MilestoneID != 0 {
		if err := s.checkMilestone(ctx, r, in.MilestoneID); err != nil {
			return nil, err
		}
	}
	projects, err := s.resolveProjects(ctx, r, in.ProjectIDs)
	if err != nil {
		return nil, err
	}
	t := s.Clock.Now()
	is := &store.Issue{
		RepoID: r.ID, PosterID: doer.ID, Title: in.Title, Body: in.Body, Ref: in.Ref,
		MilestoneID: in.MilestoneID, Deadline: in.Deadline, CreatedAt: t, UpdatedAt: t,
		IsPull: in.Pull != nil,
	}
	var closed int64
	if in.Closed {
		is.IsClosed, is.ClosedAt, closed = true, &t, 1
	}
	// The events are encoded before the transaction and appended by the
	// statement that takes the number (their payloads get the issue's id
	// and number there): every creator in the repository waits for that
	// number until this transaction commits.
	ch := issueChanges{opened: true, closed: in.Closed, labels: len(labels) > 0,
		milestone: is.MilestoneID != 0, assignees: len(assignees) > 0}
	evs := issueEvents(is, events.Issue{Assigned: setDiff(nil, assignees)}, ch.kinds())
	rows := make([]*store.Event, len(evs))
	for i, e := range evs {
		if rows[i], err = s.Events.Prepare(e.kind, r.ID, actorID(doer), e.payload); err != nil {
			return nil, err
		}
	}
	appended := func(ctx context.Context) {
		for i := range evs {
			s.Events.Appended(ctx, rows[i])
		}
	}
	mentioned := mentions(is.Title + "\n" + is.Body)
	if !is.IsPull && !is.IsClosed && is.MilestoneID == 0 && len(labels) == 0 && len(assignees) == 0 && len(projects) == 0 &&
		len(mentioned) == 0 && in.Also == nil && len(IssueRefs(is.Body)) == 0 {
		// Nothing is written with the issue: no transaction is held open
		// around its statement (see CreateNumberedAlone).
		if err := s.Store.Issues().CreateNumberedAlone(ctx, is, 1, closed, rows...); err != nil {
			return nil, err
		}
		appended(ctx)
		return is, nil
	}
	err = s.Store.WithTx(store.ConfinedTo(ctx, r.ID), func(ctx context.Context) error {
		st := s.Store
		total := int64(1)
		if is.IsPull {
			total, closed = 0, 0
		}
		if err := st.Issues().CreateNumbered(ctx, is, total, closed, rows...); err != nil {
			return err
		}
		appended(ctx)
		c := counts{milestones: map[int64]counterDelta{}, pull: is.IsPull}
		if is.IsPull {
			c.repoTotal, c.repoClosed = 1, b2i(is.IsClosed)
			in.Pull.IssueID = is.ID
			if err := st.Pulls().Create(ctx, in.Pull); err != nil {
				return err
			}
		}
		if is.MilestoneID != 0 {
			c.add(is.MilestoneID, 1, closed)
		}
		if err := s.applyCounts(ctx, r, c, is.MilestoneID); err != nil {
			return err
		}
		// A new issue has no links to clear: only those asked for are
		// written (every statement here runs under the locks taken by
		// NextIndex and applyCounts, which all creators in the repository
		// wait for).
		if err := st.Labels().AddToIssue(ctx, is.ID, labelIDs(labels)); err != nil {
			return err
		}
		if len(assignees) > 0 {
			if err := st.Issues().SetAssignees(ctx, is.ID, assignees); err != nil {
				return err
			}
		}
		if len(projects) > 0 {
			if err := st.Projects().SetIssueProjects(ctx, is.ID, projects); err != nil {
				return projectGone(err)
			}
		}
		if err := st.Issues().AddMentions(ctx, is.ID, mentioned); err != nil {
			return err
		}
		// The timeline of a new issue shows what it was created with,
		// as the reference's does.
		evs := labelEvents(labelIDs(labels), nil)
		if is.MilestoneID != 0 {
			evs = append(evs, &store.IssueEvent{Type: store.EventMilestone, MilestoneID: is.MilestoneID})
		}
		evs = append(evs, assigneeEvents(assignees, nil)...)
		if is.IsClosed {
			evs = append(evs, stateEvent(true))
		}
		if err := s.record(ctx, doer, is, evs...); err != nil {
			return err
		}
		if err := s.recordIssueRefs(ctx, doer, r, perm, is, 0, is.Title+"\n"+is.Body); err != nil {
			return err
		}
		if in.Also != nil {
			return in.Also(ctx, is)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return is, nil
}

// EditInput is a change to an issue; nil fields stay as they are.
type EditInput struct {
	Title, Body, Ref *string
	ContentVersion   *int64
	Deadline         *time.Time
	UnsetDeadline    bool
	// Assignees replaces the assignees when SetAssignees is true.
	Assignees    []string
	SetAssignees bool
	Milestone    *int64
	State        *string
	// Projects replaces the projects when SetProjects is true.
	Projects    []int64
	SetProjects bool
	// Also runs in the edit's transaction, on the locked issue, after
	// its own fields are written (a pull request's base and settings);
	// it reports whether it changed anything (issue.edited).
	Also func(ctx context.Context, is *store.Issue) (bool, error)
}

// Edit changes issue number index of r. Only its poster or a writer may
// edit it, and only writers may change the due date, assignees, milestone
// and projects (these are silently kept for others, as in the reference).
// A content_version that is not the current one refuses the whole edit
// with 409 before anything is written.
func (s Service) Edit(ctx context.Context, doer *store.User, r *store.Repository, perm access.Permission, index int64, in EditInput) (*store.Issue, error) {
	plan, err := s.planEdit(ctx, doer, r, perm, index, &in)
	if err != nil {
		return nil, err
	}
	var out *store.Issue
	err = s.inLockedIssue(ctx, r, index, func(ctx context.Context, is *store.Issue) error {
		// Checked on the locked row, before any write: a stale version
		// changes nothing at all, not even the title.
		if in.ContentVersion != nil && *in.ContentVersion != is.ContentVersion {
			return apierr.Conflict("the issue is already changed")
		}
		t := s.Clock.Now()
		oldMilestone, oldClosed := is.MilestoneID, is.IsClosed
		edit := events.Issue{ID: is.ID, Index: is.Index}
		if oldTitle := is.Title; in.Title != nil && *in.Title != oldTitle {
			edit.TitleFrom = &oldTitle
		}
		if oldBody := is.Body; in.Body != nil && *in.Body != oldBody {
			edit.BodyFrom = &oldBody
		}
		if plan.closeTo != nil && *plan.closeTo && !is.IsClosed && r.EnableIssueDependencies {
			if err := s.refuseOpenDependencies(ctx, is); err != nil {
				return err
			}
		}
		cols, ch := applyOwnFields(is, in, t)
		if err := s.Store.Issues().Update(ctx, is, cols...); err != nil {
			return err
		}
		if err := s.moveState(ctx, r, is, oldMilestone, oldClosed, plan.closeTo, t, &ch); err != nil {
			return err
		}
		if err := s.replaceLinks(ctx, is, in, plan, &ch, &edit); err != nil {
			return err
		}
		if err := s.record(ctx, doer, is, editEvents(is, edit, oldMilestone, ch)...); err != nil {
			return err
		}
		if edit.BodyFrom != nil || edit.TitleFrom != nil {
			if err := s.recordIssueRefs(ctx, doer, r, perm, is, 0, is.Title+"\n"+is.Body); err != nil {
				return err
			}
		}
		if in.Also != nil {
			edited, err := in.Also(ctx, is)
			if err != nil {
				return err
			}
			ch.edited = ch.edited || edited
		}
		if in.Body != nil || in.Title != nil {
			if err := s.Store.Issues().AddMentions(ctx, is.ID, mentions(is.Title+"\n"+is.Body)); err != nil {
				return err
			}
		}
		var err error
		if out, err = s.Store.Issues().FindByID(ctx, is.ID); err != nil {
			return err
		}
		return s.emitIssueEdit(ctx, doer, out, edit, ch.kinds()...)
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// editPlan is what an edit resolved before its transaction: the state to
// move to (nil: unchanged) and the ids its assignees and projects name.
type editPlan struct {
	closeTo             *bool
	assignees, projects []int64
}

// planEdit checks an edit and resolves what it names, before any lock is
// taken; it drops (in in) what only writers may change when doer is not one.
func (s Service) planEdit(ctx context.Context, doer *store.User, r *store.Repository, perm access.Permission, index int64, in *EditInput) (editPlan, error) {
	var plan editPlan
	if err := writable(r); err != nil {
		return plan, err
	}
	cur, err := s.issue(ctx, r, index)
	if err != nil {
		return plan, err
	}
	if cur.PosterID != doer.ID && !writer(perm, cur.IsPull) {
		return plan, apierr.Forbidden("only the poster of the issue or a writer may change it")
	}
	if in.State != nil {
		switch *in.State {
		case "open", "closed":
			c := *in.State == "closed"
			plan.closeTo = &c
		default:
			return plan, apierr.PreconditionFailed("unknown state: %s", *in.State)
		}
	}
	// The reference ignores an empty title rather than refusing it (its
	// SDK always sends the field).
	if in.Title != nil && strings.TrimSpace(*in.Title) == "" {
		in.Title = nil
	}
	if in.Title != nil {
		if err := checkRequired("Title", *in.Title, MaxTitleLength); err != nil {
			return plan, err
		}
	}
	if !writer(perm, cur.IsPull) {
		in.Deadline, in.UnsetDeadline, in.SetAssignees, in.Milestone, in.SetProjects = nil, false, false, nil, false
	}
	if in.SetAssignees {
		if plan.assignees, err = s.resolveAssignees(ctx, r, in.Assignees); err != nil {
			return plan, err
		}
	}
	if in.Milestone != nil && *in.Milestone != 0 {
		if err := s.checkMilestone(ctx, r, *in.Milestone); err != nil {
			return plan, err
		}
	}
	if in.SetProjects {
		if plan.projects, err = s.resolveProjects(ctx, r, in.Projects); err != nil {
			return plan, err
		}
	}
	return plan, nil
}

// applyOwnFields sets the fields an edit changes on the issue row itself and
// returns the columns to write and which events they make.
func applyOwnFields(is *store.Issue, in EditInput, t time.Time) ([]string, issueChanges) {
	cols := []string{"updated_at"}
	is.UpdatedAt = t
	var ch issueChanges
	if in.Title != nil && *in.Title != is.Title {
		is.Title = *in.Title
		cols = append(cols, "title")
	}
	if in.Body != nil && *in.Body != is.Body {
		is.Body = *in.Body
		is.ContentVersion++
		cols = append(cols, "body", "content_version")
	}
	if in.Ref != nil && *in.Ref != is.Ref {
		is.Ref = *in.Ref
		cols = append(cols, "ref")
	}
	var moved bool
	if applyDeadline(&moved, &is.Deadline, in.Deadline, in.UnsetDeadline); moved {
		cols = append(cols, "deadline")
	}
	// Everything but updated_at and the milestone is the issue's own.
	ch.edited = len(cols) > 1
	if in.Milestone != nil && *in.Milestone != is.MilestoneID {
		is.MilestoneID = *in.Milestone
		cols = append(cols, "milestone_id")
		ch.milestone = true
	}
	return cols, ch
}

// moveState closes or reopens the issue when asked and moves the
// repository's and milestones' counters for the state and milestone change.
func (s Service) moveState(ctx context.Context, r *store.Repository, is *store.Issue, oldMilestone int64, oldClosed bool, closeTo *bool, t time.Time, ch *issueChanges) error {
	newClosed := oldClosed
	if closeTo != nil {
		changed, err := s.Store.Issues().SetClosed(ctx, is.ID, *closeTo, t)
		if err != nil {
			return err
		}
		if changed {
			newClosed = *closeTo
		}
		ch.setState(changed, *closeTo)
	}
	c := counts{repoClosed: b2i(newClosed) - b2i(oldClosed), milestones: map[int64]counterDelta{}, pull: is.IsPull}
	if oldMilestone != 0 {
		c.add(oldMilestone, -1, -b2i(oldClosed))
	}
	if is.MilestoneID != 0 {
		c.add(is.MilestoneID, 1, b2i(newClosed))
	}
	return s.applyCounts(ctx, r, c, is.MilestoneID)
}

// replaceLinks replaces the issue's assignees and projects when the edit
// names them.
func (s Service) replaceLinks(ctx context.Context, is *store.Issue, in EditInput, plan editPlan, ch *issueChanges, details *events.Issue) error {
	st := s.Store
	if !in.SetAssignees && !in.SetProjects {
		return nil
	}
	// The links as they were, both kinds in one statement.
	old, err := st.Issues().Links(ctx, []int64{is.ID})
	if err != nil {
		return err
	}
	if in.SetAssignees {
		was := old.Assignees[is.ID]
		ch.assignees = !sameSet(was, plan.assignees)
		details.Unassigned = setDiff(plan.assignees, was)
		details.Assigned = setDiff(was, plan.assignees)
		if err := st.Issues().SetAssignees(ctx, is.ID, plan.assignees); err != nil {
			return err
		}
	}
	if in.SetProjects {
		if !sameSet(old.Projects[is.ID], plan.projects) {
			ch.edited = true
		}
		if err := st.Projects().SetIssueProjects(ctx, is.ID, plan.projects); err != nil {
			return projectGone(err)
		}
	}
	return nil
}

// Unassign takes u off the assignees of issue number index of r, as a
// block does; the reference records it as u's own change. Nothing changes
// when u is not assigned.
func (s Service) Unassign(ctx context.Context, r *store.Repository, index int64, u *store.User) error {
	return s.inLockedIssue(ctx, r, index, func(ctx context.Context, is *store.Issue) error {
		links, err := s.Store.Issues().Links(ctx, []int64{is.ID})
		if err != nil {
			return err
		}
		was := links.Assignees[is.ID]
		if !slices.Contains(was, u.ID) {
			return nil
		}
		plan := editPlan{assignees: slices.DeleteFunc(slices.Clone(was), func(id int64) bool { return id == u.ID })}
		var ch issueChanges
		edit := events.Issue{ID: is.ID, Index: is.Index}
		if err := s.replaceLinks(ctx, is, EditInput{SetAssignees: true}, plan, &ch, &edit); err != nil {
			return err
		}
		if err := s.record(ctx, u, is, editEvents(is, edit, is.MilestoneID, ch)...); err != nil {
			return err
		}
		out, err := s.Store.Issues().FindByID(ctx, is.ID)
		if err != nil {
			return err
		}
		return s.emitIssueEdit(ctx, u, out, edit, ch.kinds()...)
	})
}

// SetState closes or reopens issue number index of r on its own for doer,
// for callers other than an edit (such as a future pull-request merge).
func (s Service) SetState(ctx context.Context, doer *store.User, r *store.Repository, index int64, closed bool) (*store.Issue, error) {
	if err := writable(r); err != nil {
		return nil, err
	}
	var out *store.Issue
	err := s.inLockedIssue(ctx, r, index, func(ctx context.Context, is *store.Issue) error {
		changed, err := s.setState(ctx, r, is.ID, closed)
		if err != nil {
			return err
		}
		if out, err = s.Store.Issues().FindByID(ctx, is.ID); err != nil {
			return err
		}
		var ch issueChanges
		ch.setState(changed, closed)
		if changed {
			if err := s.record(ctx, doer, out, stateEvent(closed)); err != nil {
				return err
			}
		}
		return s.emitIssue(ctx, doer, out, ch.kinds()...)
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// inLockedIssue runs fn in one transaction that first takes the row lock
// of issue number index of r, so that changes of one issue queue up, and
// hands fn the issue's fresh state.
func (s Service) inLockedIssue(ctx context.Context, r *store.Repository, index int64, fn func(ctx context.Context, is *store.Issue) error) error {
	return s.Store.WithTx(store.ConfinedTo(ctx, r.ID), func(ctx context.Context) error {
		is, err := s.Store.Issues().Lock(ctx, r.ID, index, s.Clock.Now())
		if err != nil {
			return err
		}
		return fn(ctx, is)
	})
}

// setState changes the state inside the caller's transaction and moves
// the repository's and the milestone's counters with it. The conditional
// update makes the transition (and so the counter change) happen once
// however many requests race for it.
func (s Service) setState(ctx context.Context, r *store.Repository, issueID int64, closed bool) (bool, error) {
	st := s.Store
	changed, err := st.Issues().SetClosed(ctx, issueID, closed, s.Clock.Now())
	if err != nil || !changed {
		return false, err
	}
	is, err := st.Issues().FindByID(ctx, issueID)
	if err != nil {
		return false, err
	}
	delta := int64(1)
	if !closed {
		delta = -1
	}
	c := counts{repoClosed: delta, milestones: map[int64]counterDelta{}, pull: is.IsPull}
	if is.MilestoneID != 0 {
		c.add(is.MilestoneID, 0, delta)
	}
	return true, s.applyCounts(ctx, r, c, 0)
}

// counterDelta is a change to a milestone's counters.
type counterDelta struct{ total, closed int64 }

// counts are the counter changes of one transaction.
type counts struct {
	repoTotal, repoClosed int64
	milestones            map[int64]counterDelta
	// pull moves the repository's pull request counters instead.
	pull bool
}

func (c *counts) add(milestoneID, total, closed int64) {
	d := c.milestones[milestoneID]
	d.total += total
	d.closed += closed
	c.milestones[milestoneID] = d
}

func b2i(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// applyCounts applies counter changes with atomic increments, always in
// one order (after the issue row: the repository, then milestones by id),
// so that transactions touching the same rows queue up instead of
// deadlocking on PostgreSQL. A milestone that is gone is skipped, unless
// it is mustExist, the one the issue now points at (then 422).
func (s Service) applyCounts(ctx context.Context, r *store.Repository, c counts, mustExist int64) error {
	adjust := s.Store.Issues().AdjustRepoCounts
	if c.pull {
		adjust = s.Store.Issues().AdjustRepoPullCounts
	}
	if err := adjust(ctx, r.ID, c.repoTotal, c.repoClosed); err != nil {
		return err
	}
	ids := make([]int64, 0, len(c.milestones))
	for id := range c.milestones {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		d := c.milestones[id]
		if d.total == 0 && d.closed == 0 {
			continue
		}
		err := s.Store.Milestones().AdjustCounts(ctx, id, d.total, d.closed)
		switch {
		case err != nil && id == mustExist:
			return milestoneGone(err, id)
		case err != nil && !isNotFound(err):
			return err
		}
	}
	return nil
}

// Delete removes issue number index of r (repository admins only) with
// everything attached to it; its number is never handed out again.
func (s Service) Delete(ctx context.Context, doer *store.User, r *store.Repository, perm access.Permission, index int64) error {
	if err := writable(r); err != nil {
		return err
	}
	if !perm.IsAdmin() {
		return apierr.Forbidden(msgAdmin)
	}
	if _, err := s.issue(ctx, r, index); err != nil {
		return err
	}
	return s.inLockedIssue(ctx, r, index, func(ctx context.Context, is *store.Issue) error {
		if err := s.Store.Issues().Delete(ctx, is.ID); err != nil {
			return err
		}
		c := counts{repoTotal: -1, repoClosed: -b2i(is.IsClosed), milestones: map[int64]counterDelta{}}
		if is.MilestoneID != 0 {
			c.add(is.MilestoneID, -1, -b2i(is.IsClosed))
		}
		if err := s.applyCounts(ctx, r, c, 0); err != nil {
			return err
		}
		return s.emitIssue(ctx, doer, is, events.IssueDeleted)
	})
}

// SetDeadline sets (or, with nil, clears) the due date (writers only).
func (s Service) SetDeadline(ctx context.Context, doer *store.User, r *store.Repository, perm access.Permission, index int64, due *time.Time) (*store.Issue, error) {
	if err := writable(r); err != nil {
		return nil, err
	}
	if err := requireWriter(perm); err != nil {
		return nil, err
	}
	if _, err := s.issue(ctx, r, index); err != nil {
		return nil, err
	}
	var out *store.Issue
	err := s.inLockedIssue(ctx, r, index, func(ctx context.Context, is *store.Issue) error {
		changed := !sameTime(is.Deadline, due)
		is.Deadline = due
		if err := s.Store.Issues().Update(ctx, is, "deadline"); err != nil {
			return err
		}
		out = is
		if !changed {
			return nil
		}
		return s.emitIssue(ctx, doer, is, events.IssueEdited)
	})
	return out, err
}

// Comment adds a comment to issue is of r and counts it on the issue.
func (s Service) Comment(ctx context.Context, doer *store.User, r *store.Repository, perm access.Permission, is *store.Issue, body string) (*store.Comment, error) {
	if err := writable(r); err != nil {
		return nil, err
	}
	if is.IsLocked && !writer(perm, is.IsPull) {
		return nil, apierr.Forbidden("the issue is locked")
	}
	if strings.TrimSpace(body) == "" {
		return nil, apierr.Validation("[Body]: Required")
	}
	if !perm.IsAdmin() {
		// Neither the owner's nor the issue's poster's blocked users may
		// comment (the repository's administrators still may).
		if err := s.RefuseBlocked(ctx, doer, r.OwnerID, is.PosterID); err != nil {
			return nil, err
		}
	}
	t := s.Clock.Now()
	c := &store.Comment{IssueID: is.ID, RepoID: is.RepoID, PosterID: doer.ID, Body: body, CreatedAt: t, UpdatedAt: t}
	// The event is encoded first and appended with the comment (its
	// payload gets the comment's id there).
	row, err := s.Events.Prepare(events.CommentCreated, is.RepoID, actorID(doer), events.Comment{IssueID: is.ID, IssueIndex: is.Index})
	if err != nil {
		return nil, err
	}
	ctx = store.ConfinedTo(ctx, r.ID)
	names := mentions(body)
	if len(names) == 0 && len(IssueRefs(body)) == 0 {
		// Nothing is written with the comment: no transaction is held
		// open around its statement (see CreateCounted).
		err = s.Store.Comments().CreateCounted(ctx, c, row)
	} else {
		err = s.Store.WithTx(ctx, func(ctx context.Context) error {
			if err := s.Store.Issues().AddMentions(ctx, is.ID, names); err != nil {
				return err
			}
			if err := s.Store.Comments().CreateCounted(ctx, c, row); err != nil {
				return err
			}
			return s.recordIssueRefs(ctx, doer, r, perm, is, c.ID, body)
		})
	}
	if err != nil {
		return nil, err
	}
	s.Events.Appended(ctx, row)
	return c, nil
}

// EditComment changes a comment's text (its poster or a writer).
func (s Service) EditComment(ctx context.Context, doer *store.User, r *store.Repository, perm access.Permission, id int64, body string) (*store.Comment, *store.Issue, error) {
	if err := writable(r); err != nil {
		return nil, nil, err
	}
	c, is, err := s.comment(ctx, r, id)
	if err != nil {
		return nil, nil, err
	}
	if c.PosterID != doer.ID && !trackerWriter(perm) {
		return nil, nil, apierr.Forbidden("only the poster of the comment or a writer may change it")
	}
	if strings.TrimSpace(body) == "" {
		return nil, nil, apierr.Validation("[Body]: Required")
	}
	changed, oldBody := body != c.Body, c.Body
	c.Body, c.UpdatedAt = body, s.Clock.Now()
	err = s.Store.WithTx(store.ConfinedTo(ctx, r.ID), func(ctx context.Context) error {
		if err := s.Store.Comments().Update(ctx, c); err != nil {
			return err
		}
		if err := s.Store.Issues().AddMentions(ctx, is.ID, mentions(body)); err != nil {
			return err
		}
		if !changed {
			return nil
		}
		if err := s.recordIssueRefs(ctx, doer, r, perm, is, c.ID, body); err != nil {
			return err
		}
		return s.Events.Emit(ctx, events.CommentEdited, is.RepoID, actorID(doer),
			events.Comment{ID: c.ID, IssueID: is.ID, IssueIndex: is.Index, BodyFrom: &oldBody})
	})
	if err != nil {
		return nil, nil, err
	}
	return c, is, nil
}

// DeleteComment removes a comment (its poster or a writer) and uncounts it.
func (s Service) DeleteComment(ctx context.Context, doer *store.User, r *store.Repository, perm access.Permission, id int64) error {
	if err := writable(r); err != nil {
		return err
	}
	c, is, err := s.comment(ctx, r, id)
	if err != nil {
		return err
	}
	if c.PosterID != doer.ID && !trackerWriter(perm) {
		return apierr.Forbidden("only the poster of the comment or a writer may delete it")
	}
	return s.Store.WithTx(store.ConfinedTo(ctx, r.ID), func(ctx context.Context) error {
		if err := s.Store.Reactions().DeleteByComment(ctx, c.ID); err != nil {
			return err
		}
		// Delete reports not-found when a concurrent delete won: then the
		// count was already taken down once, and must not be again.
		if err := s.Store.Comments().Delete(ctx, c.ID); err != nil {
			return err
		}
		if err := s.Store.Issues().AdjustComments(ctx, is.ID, -1, s.Clock.Now()); err != nil {
			return err
		}
		// Its references no longer close or reopen anything.
		if err := s.Store.Timeline().NeuterRefs(ctx, is.ID, c.ID, nil, s.Clock.Now()); err != nil {
			return err
		}
		return s.emitComment(ctx, events.CommentDeleted, doer, is, c.ID)
	})
}

// allowedReaction tells whether content is one of the server's reactions.
func (s Service) allowedReaction(content string) bool {
	return slices.Contains(s.Config.AllowedReactions, content)
}

// React records doer's reaction to issue is (commentID 0) or to one of its
// comments. It reports whether the reaction is new; an identical existing
// one is returned instead of a second row.
func (s Service) React(ctx context.Context, doer *store.User, r *store.Repository, perm access.Permission, is *store.Issue, commentID int64, content string) (*store.Reaction, bool, error) {
	if err := writable(r); err != nil {
		return nil, false, err
	}
	if is.IsLocked && !writer(perm, is.IsPull) {
		return nil, false, apierr.Forbidden("no permission to change reaction")
	}
	// The reference answers 403 here, not 422.
	if !s.allowedReaction(content) {
		return nil, false, apierr.Forbidden("'%s' is not an allowed reaction", content)
	}
	// Nor may a user react to the issue, or the comment, of one who
	// blocks them, or in a repository whose owner does.
	blockers := []int64{r.OwnerID, is.PosterID}
	if commentID != 0 {
		c, err := s.Store.Comments().FindByID(ctx, commentID)
		if err != nil {
			return nil, false, err
		}
		blockers = append(blockers, c.PosterID)
	}
	if err := s.RefuseBlocked(ctx, doer, blockers...); err != nil {
		return nil, false, err
	}
	rc := &store.Reaction{Type: content, IssueID: is.ID, CommentID: commentID, UserID: doer.ID, CreatedAt: s.Clock.Now()}
	var created bool
	err := s.Store.WithTx(store.ConfinedTo(ctx, r.ID), func(ctx context.Context) error {
		var err error
		if created, err = s.Store.Reactions().Create(ctx, rc); err != nil || !created {
			return err
		}
		if commentID != 0 {
			return s.emitComment(ctx, events.CommentReacted, doer, is, commentID)
		}
		return s.emitIssue(ctx, doer, is, events.IssueReacted)
	})
	if err != nil {
		return nil, false, err
	}
	return rc, created, nil
}

// Unreact removes doer's reaction, if any.
func (s Service) Unreact(ctx context.Context, doer *store.User, r *store.Repository, perm access.Permission, is *store.Issue, commentID int64, content string) error {
	if err := writable(r); err != nil {
		return err
	}
	if is.IsLocked && !writer(perm, is.IsPull) {
		return apierr.Forbidden("no permission to change reaction")
	}
	return s.Store.Reactions().Delete(store.ConfinedTo(ctx, r.ID), is.ID, commentID, doer.ID, content)
}

// canTrack applies the repository's time-tracker settings: tracking must
// be on, and when only contributors may track, doer must be a writer, the
// poster or an assignee of the issue.
func (s Service) canTrack(ctx context.Context, doer *store.User, r *store.Repository, perm access.Permission, is *store.Issue) error {
	if !TimeTrackerEnabled(r) {
		return apierr.BadRequest("time tracking disabled")
	}
	if !r.AllowOnlyContributorsToTrackTime || writer(perm, is.IsPull) || is.PosterID == doer.ID {
		return nil
	}
	assigned, err := s.Store.Issues().IsAssignee(ctx, is.ID, doer.ID)
	if err != nil {
		return err
	}
	if !assigned {
		return apierr.Forbidden("only contributors may track time in this repository")
	}
	return nil
}

// TrackTime adds seconds to issue is for doer, or, when a repository or
// site admin names another user, for that user. created backdates it.
func (s Service) TrackTime(ctx context.Context, doer *store.User, r *store.Repository, perm access.Permission, is *store.Issue,
	seconds int64, created *time.Time, userName string) (*store.TrackedTime, *store.User, error) {
	if err := writable(r); err != nil {
		return nil, nil, err
	}
	if err := s.canTrack(ctx, doer, r, perm, is); err != nil {
		return nil, nil, err
	}
	if seconds <= 0 {
		return nil, nil, apierr.Validation("[Time]: must be a positive number of seconds")
	}
	user := doer
	// As in the reference, a name is honoured only for repository admins
	// naming someone else, and for site admins; others track for
	// themselves.
	if userName != "" && ((perm.IsAdmin() && !strings.EqualFold(userName, doer.Name)) || doer.IsAdmin) {
		u, err := s.Store.Users().FindByName(ctx, userName)
		if isNotFound(err) || (err == nil && u.IsOrganization()) {
			return nil, nil, apierr.Validation("user does not exist [name: %s]", userName)
		}
		if err != nil {
			return nil, nil, err
		}
		user = u
	}
	t := &store.TrackedTime{IssueID: is.ID, UserID: user.ID, Time: seconds, CreatedAt: s.Clock.Now()}
	if created != nil && !created.IsZero() {
		t.CreatedAt = created.UTC().Truncate(time.Second)
	}
	err := s.Store.WithTx(store.ConfinedTo(ctx, r.ID), func(ctx context.Context) error {
		if err := s.Store.TrackedTimes().Create(ctx, t); err != nil {
			return err
		}
		return s.emitIssue(ctx, doer, is, events.IssueTimeTracked)
	})
	if err != nil {
		return nil, nil, err
	}
	return t, user, nil
}

// ResetTime deletes doer's time on issue is.
func (s Service) ResetTime(ctx context.Context, doer *store.User, r *store.Repository, perm access.Permission, is *store.Issue) error {
	if err := writable(r); err != nil {
		return err
	}
	if err := s.canTrack(ctx, doer, r, perm, is); err != nil {
		return err
	}
	return s.Store.WithTx(store.ConfinedTo(ctx, r.ID), func(ctx context.Context) error {
		// Counted first so that resetting nothing announces nothing.
		_, n, err := s.Store.TrackedTimes().List(ctx, store.TimeFilter{IssueID: is.ID, UserID: doer.ID}, store.Page{Limit: 1})
		if err != nil || n == 0 {
			return err
		}
		if err := s.Store.TrackedTimes().DeleteByIssueUser(ctx, is.ID, doer.ID); err != nil {
			return err
		}
		return s.emitIssue(ctx, doer, is, events.IssueTimeDeleted)
	})
}

// DeleteTime deletes one entry of issue is: one's own, or anyone's for a
// site admin.
func (s Service) DeleteTime(ctx context.Context, doer *store.User, r *store.Repository, perm access.Permission, is *store.Issue, id int64) error {
	if err := writable(r); err != nil {
		return err
	}
	if err := s.canTrack(ctx, doer, r, perm, is); err != nil {
		return err
	}
	t, err := s.Store.TrackedTimes().FindByID(ctx, id)
	if err != nil {
		return err
	}
	if t.IssueID != is.ID {
		return apierr.NotFound("not found")
	}
	if t.UserID != doer.ID && !doer.IsAdmin {
		return apierr.Forbidden("not allowed to delete another user's tracked time")
	}
	return s.Store.WithTx(store.ConfinedTo(ctx, r.ID), func(ctx context.Context) error {
		// Delete reports not-found when a concurrent delete won.
		if err := s.Store.TrackedTimes().Delete(ctx, id); err != nil {
			return err
		}
		return s.emitIssue(ctx, doer, is, events.IssueTimeDeleted)
	})
}

// resolveAssignees turns names into ids: each must be an existing user who
// may be assigned, that is who can write to r.
func (s Service) resolveAssignees(ctx context.Context, r *store.Repository, names []string) ([]int64, error) {
	ids := []int64{}
	seen := map[string]bool{}
	for _, name := range names {
		name = strings.TrimSpace(name)
		if name == "" || seen[strings.ToLower(name)] {
			continue
		}
		seen[strings.ToLower(name)] = true
		u, err := s.Store.Users().FindByName(ctx, name)
		if isNotFound(err) || (err == nil && u.IsOrganization()) {
			return nil, apierr.Validation("Assignee does not exist: [name: %s]", name)
		}
		if err != nil {
			return nil, err
		}
		perm, err := s.Access.Repo(ctx, &auth.Principal{User: u, Signer: u}, r)
		if err != nil {
			return nil, err
		}
		if !perm.CanWriteAny() {
			return nil, apierr.Validation("user %s cannot be assigned: no write access to the repository", u.Name)
		}
		ids = append(ids, u.ID)
	}
	return ids, nil
}

func (s Service) checkMilestone(ctx context.Context, r *store.Repository, id int64) error {
	if _, err := s.Store.Milestones().Find(ctx, r.ID, id); err != nil {
		return milestoneGone(err, id)
	}
	return nil
}

// resolveProjects checks that every id names a project of r.
func (s Service) resolveProjects(ctx context.Context, r *store.Repository, ids []int64) ([]int64, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	found, err := s.Store.Projects().FindByIDs(ctx, r.ID, ids)
	if err != nil {
		return nil, err
	}
	have := map[int64]bool{}
	for _, pr := range found {
		have[pr.ID] = true
	}
	out := make([]int64, 0, len(have))
	seen := map[int64]bool{}
	for _, id := range ids {
		if !have[id] {
			return nil, apierr.Validation("project does not exist [id: %d]", id)
		}
		if !seen[id] {
			seen[id] = true
			out = append(out, id)
		}
	}
	return out, nil
}

func milestoneGone(err error, id int64) error {
	if isNotFound(err) {
		return apierr.Validation("milestone does not exist [id: %d]", id)
	}
	return err
}

func projectGone(err error) error {
	if isNotFound(err) {
		return apierr.Validation("a project of the issue no longer exists")
	}
	return err
}

// keepLastOfScope drops every exclusive label that a later label of the
// same scope replaces, as the reference does: the last one named wins.
func keepLastOfScope(labels []*store.Label) []*store.Label {
	last := map[string]int{}
	for i, l := range labels {
		if scope := l.ExclusiveScope(); scope != "" {
			last[scope] = i
		}
	}
	out := make([]*store.Label, 0, len(labels))
	for i, l := range labels {
		if scope := l.ExclusiveScope(); scope != "" && last[scope] != i {
			continue
		}
		out = append(out, l)
	}
	return out
}

func labelIDs(labels []*store.Label) []int64 {
	return idsOf(labels, func(l *store.Label) int64 { return l.ID })
}

// idsOf lists the ids of rows, in order.
func idsOf[T any](rows []T, id func(T) int64) []int64 {
	out := make([]int64, 0, len(rows))
	for _, row := range rows {
		out = append(out, id(row))
	}
	return out
}
