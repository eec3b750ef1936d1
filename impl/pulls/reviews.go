package pulls

import (
	"context"
	"errors"
	"strings"

	"repohost/impl/access"
	"repohost/impl/apierr"
	"repohost/impl/auth"
	"repohost/impl/events"
	"repohost/store"
)

// reviewerRequest is a user or a team to request a review from.
type reviewerRequest struct {
	user *store.User
	team *store.Team
}

// resolveReviewers looks up the users (by name, or by address with "@")
// and, in an organization's repository, the teams to request reviews
// from, and checks each as the reference does: unknown → 404, a reviewer
// that may not be one → 422. is is nil for a pull request being created
// (doer is then its poster).
func (s Service) resolveReviewers(ctx context.Context, doer *store.User, r *store.Repository, perm access.Permission, is *store.Issue, names, teamNames []string) ([]*store.User, []*store.Team, error) {
	posterID := doer.ID
	if is != nil {
		posterID = is.PosterID
	}
	suffix := func(reason string) error {
		return apierr.Validation("%s [user_id: %d, repo_id: %d]", reason, doer.ID, r.ID)
	}
	var users []*store.User
	seen := map[int64]bool{}
	for _, name := range names {
		name = strings.TrimSpace(name)
		if name == "" {
			continue
		}
		u, err := s.findUser(ctx, name)
		if err != nil {
			return nil, nil, err
		}
		if seen[u.ID] {
			continue
		}
		seen[u.ID] = true
		if u.IsOrganization() {
			return nil, nil, suffix("Organization can't be added as reviewer")
		}
		if u.ID == posterID {
			return nil, nil, suffix("poster of pr can't be reviewer")
		}
		theirs, err := s.Access.Repo(ctx, &auth.Principal{User: u, Signer: u}, r)
		if err != nil {
			return nil, nil, err
		}
		if !theirs.CanRead(access.UnitPulls) {
			return nil, nil, suffix("Reviewer can't read")
		}
		users = append(users, u)
	}
	var teams []*store.Team
	if r.Owner.IsOrganization() {
		for _, name := range teamNames {
			name = strings.TrimSpace(name)
			if name == "" {
				continue
			}
			t, err := s.Store.Teams().FindByName(ctx, r.OwnerID, name)
			if errors.Is(err, store.ErrNotFound) {
				return nil, nil, apierr.NotFound("Team '%s' not exist", name)
			}
			if err != nil {
				return nil, nil, err
			}
			if r.IsPrivate {
				// The team's members must be able to read the pull
				// request through the team (impl/access: a team given
				// the repository or including all of them).
				theirs, err := s.Access.TeamRepo(ctx, t, r)
				if err != nil {
					return nil, nil, err
				}
				if !theirs.CanRead(access.UnitPulls) {
					return nil, nil, suffix("Reviewing team can't read repo")
				}
			}
			teams = append(teams, t)
		}
	}
	if (len(users) > 0 || len(teams) > 0) && is != nil && is.PosterID != doer.ID && !perm.CanRead(access.UnitPulls) {
		return nil, nil, suffix("Doer can't choose reviewer")
	}
	if (len(users) > 0 || len(teams) > 0) && is != nil && is.PosterID != doer.ID && !perm.CanWriteAny() && !r.Owner.IsOrganization() {
		return nil, nil, suffix("Doer can't choose reviewer")
	}
	return users, teams, nil
}

// findUser finds a reviewer by name or, with "@", by address.
func (s Service) findUser(ctx context.Context, name string) (*store.User, error) {
	if strings.Contains(name, "@") {
		e, err := s.Store.Emails().FindByEmail(ctx, name)
		if err == nil {
			return s.Store.Users().FindByID(ctx, e.UserID)
		}
		if !errors.Is(err, store.ErrNotFound) {
			return nil, err
		}
	} else {
		u, err := s.Store.Users().FindByName(ctx, name)
		if err == nil {
			return u, nil
		}
		if !errors.Is(err, store.ErrNotFound) {
			return nil, err
		}
	}
	return nil, apierr.NotFound("User '%s' not exist", name)
}

// isOfficial tells whether reviews by u count for the protection of
// pr's base branch: on the rule's approvals whitelist when it has one,
// else write access to the code.
func (s Service) isOfficial(ctx context.Context, r *store.Repository, branch string, u *store.User) (bool, error) {
	rule, err := s.rule(ctx, r, branch)
	if err != nil {
		return false, err
	}
	if rule != nil && rule.EnableApprovalsWhitelist {
		for _, id := range rule.ApprovalsWhitelistUserIDs {
			if id == u.ID {
				return true, nil
			}
		}
		if len(rule.ApprovalsWhitelistTeamIDs) > 0 && r.Owner.IsOrganization() {
			mine, err := s.Store.Teams().UserTeamIDs(ctx, r.OwnerID, u.ID)
			if err != nil {
				return false, err
			}
			for _, id := range mine {
				for _, w := range rule.ApprovalsWhitelistTeamIDs {
					if id == w {
						return true, nil
					}
				}
			}
		}
		return false, nil
	}
	perm, err := s.Access.Repo(ctx, &auth.Principal{User: u, Signer: u}, r)
	if err != nil {
		return false, err
	}
	return perm.CanWrite(access.UnitCode), nil
}

// addRequests records review requests for users and teams on is (those
// already requested are skipped) in ctx's transaction, and returns the new
// ones.
func (s Service) addRequests(ctx context.Context, doer *store.User, is *store.Issue, users []*store.User, teams []*store.Team) ([]*store.Review, error) {
	if len(users) == 0 && len(teams) == 0 {
		return []*store.Review{}, nil
	}
	existing, err := s.Store.Pulls().AllReviews(ctx, is.ID)
	if err != nil {
		return nil, err
	}
	pr, err := s.Store.Pulls().FindByIssueID(ctx, is.ID)
	if err != nil {
		return nil, err
	}
	r, err := s.Store.Repos().FindByID(ctx, is.RepoID)
	if err != nil {
		return nil, err
	}
	requested := func(userID, teamID int64) bool {
		for _, rv := range existing {
			if rv.State == store.ReviewRequest && rv.ReviewerID == userID && rv.ReviewerTeamID == teamID {
				return true
			}
		}
		return false
	}
	t := s.Clock.Now()
	var out []*store.Review
	add := func(userID, teamID int64, official bool) error {
		if requested(userID, teamID) {
			return nil
		}
		rv := &store.Review{IssueID: is.ID, ReviewerID: userID, ReviewerTeamID: teamID, State: store.ReviewRequest,
			Official: official, CreatedAt: t, UpdatedAt: t}
		if err := s.Store.Pulls().CreateReview(ctx, rv); err != nil {
			return err
		}
		out = append(out, rv)
		ev := reviewEvent(is, rv)
		if teamID != 0 {
			// Its members as they are now: hooks hear of each.
			members, err := s.Store.Teams().MemberIDs(ctx, teamID)
			if err != nil {
				return err
			}
			ev.TeamMembers = members
		}
		if err := s.issues().Record(ctx, doer, is, &store.IssueEvent{Type: store.EventReviewRequest, AssigneeID: userID, AssigneeTeamID: teamID}); err != nil {
			return err
		}
		return s.Events.Emit(ctx, events.PullReviewRequested, is.RepoID, doer.ID, ev)
	}
	for _, u := range users {
		official, err := s.isOfficial(ctx, r, pr.BaseBranch, u)
		if err != nil {
			return nil, err
		}
		if err := add(u.ID, 0, official); err != nil {
			return nil, err
		}
	}
	for _, tm := range teams {
		if err := add(0, tm.ID, true); err != nil {
			return nil, err
		}
	}
	if out == nil {
		out = []*store.Review{}
	}
	return out, nil
}

func reviewEvent(is *store.Issue, rv *store.Review) events.Review {
	return events.Review{ID: rv.ID, IssueID: is.ID, IssueIndex: is.Index, State: rv.State, ReviewerID: rv.ReviewerID, TeamID: rv.ReviewerTeamID}
}

// RequestReviews requests reviews on pull request is for doer.
func (s Service) RequestReviews(ctx context.Context, doer *store.User, r *store.Repository, perm access.Permission, is *store.Issue, pr *store.PullRequest, names, teamNames []string) ([]*store.Review, error) {
	if r.IsArchived {
		return nil, apierr.RepoArchived()
	}
	if is.IsClosed || pr.HasMerged {
		return nil, apierr.Forbidden("review requests cannot change on a closed pull request")
	}
	users, teams, err := s.resolveReviewers(ctx, doer, r, perm, is, names, teamNames)
	if err != nil {
		return nil, err
	}
	var out []*store.Review
	err = s.Store.WithTx(store.ConfinedTo(ctx, r.ID), func(ctx context.Context) error {
		var err error
		out, err = s.addRequests(ctx, doer, is, users, teams)
		return err
	})
	return out, err
}

// CancelReviewRequests removes the pending review requests of the named
// users and teams.
func (s Service) CancelReviewRequests(ctx context.Context, doer *store.User, r *store.Repository, perm access.Permission, is *store.Issue, names, teamNames []string) error {
	if r.IsArchived {
		return apierr.RepoArchived()
	}
	users, teams, err := s.selfRemoval(ctx, doer, names, teamNames)
	if err != nil {
		return err
	}
	if users == nil {
		if users, teams, err = s.resolveReviewers(ctx, doer, r, perm, is, names, teamNames); err != nil {
			return err
		}
		if is.PosterID != doer.ID && !perm.CanWrite(access.UnitPulls) {
			return apierr.Validation("Doer can't choose reviewer [user_id: %d, repo_id: %d]", doer.ID, r.ID)
		}
	}
	return s.Store.WithTx(store.ConfinedTo(ctx, r.ID), func(ctx context.Context) error {
		existing, err := s.Store.Pulls().AllReviews(ctx, is.ID)
		if err != nil {
			return err
		}
		drop := func(userID, teamID int64) error {
			for _, rv := range existing {
				if rv.State == store.ReviewRequest && rv.ReviewerID == userID && rv.ReviewerTeamID == teamID {
					if err := s.Store.Pulls().DeleteReview(ctx, rv.ID); err != nil {
						return err
					}
					if err := s.issues().Record(ctx, doer, is, &store.IssueEvent{Type: store.EventReviewRequest,
						AssigneeID: userID, AssigneeTeamID: teamID, Removed: true}); err != nil {
						return err
					}
					if err := s.Events.Emit(ctx, events.PullReviewUnrequest, is.RepoID, doer.ID, reviewEvent(is, rv)); err != nil {
						return err
					}
				}
			}
			return nil
		}
		for _, u := range users {
			if err := drop(u.ID, 0); err != nil {
				return err
			}
		}
		for _, t := range teams {
			if err := drop(0, t.ID); err != nil {
				return err
			}
		}
		return nil
	})
}

// selfRemoval tells whether doer only withdraws the review requested from
// themselves, which anyone requested may do, as in the reference: it
// returns doer as the one user then, nil otherwise.
func (s Service) selfRemoval(ctx context.Context, doer *store.User, names, teamNames []string) ([]*store.User, []*store.Team, error) {
	for _, t := range teamNames {
		if strings.TrimSpace(t) != "" {
			return nil, nil, nil
		}
	}
	self := false
	for _, name := range names {
		if name = strings.TrimSpace(name); name == "" {
			continue
		}
		u, err := s.findUser(ctx, name)
		if err != nil {
			return nil, nil, err
		}
		if u.ID != doer.ID {
			return nil, nil, nil
		}
		self = true
	}
	if !self {
		return nil, nil, nil
	}
	return []*store.User{doer}, nil, nil
}

// ReviewInput is a new review.
type ReviewInput struct {
	State    string // "" is PENDING
	Body     string
	CommitID string
	Comments []CommentInput
}

// CommentInput is a line comment of a new review.
type CommentInput struct {
	Path             string
	Body             string
	NewLine, OldLine int64
}

// reviewState is the state a new or submitted review takes for the
// event asked: APPROVED, REQUEST_CHANGES and COMMENT as sent; anything else
// ("", PENDING, REQUEST_REVIEW) keeps the review pending, as the reference
// reads it.
func reviewState(event string) string {
	switch event {
	case store.ReviewApproved, store.ReviewRequestChanges, store.ReviewCommented:
		return event
	}
	return store.ReviewPending
}

// checkEvent checks a review's state for submission by doer on is, with
// the reference's rules: no approving or rejecting one's own pull request;
// a rejection and a pending review need a body, a comment review a body or
// a line comment. event is what the client sent, for the message.
func checkEvent(doer *store.User, is *store.Issue, event, state, body string, comments int) error {
	hasBody := strings.TrimSpace(body) != ""
	switch state {
	case store.ReviewApproved:
		if is.PosterID == doer.ID {
			return apierr.Validation("approve your own pull is not allowed")
		}
		return nil
	case store.ReviewRequestChanges:
		if is.PosterID == doer.ID {
			return apierr.Validation("reject your own pull is not allowed")
		}
	case store.ReviewCommented:
		if !hasBody && comments == 0 {
			return apierr.Validation("review event %s requires a body or a comment", event)
		}
		return nil
	}
	if !hasBody {
		return apierr.Validation("review event %s requires a body", event)
	}
	return nil
}

// CreateReview records doer's review of pull request is. As in the
// reference, a reviewer has at most one pending review per pull request: a
// new review while one is pending adds its line comments to it and takes
// its place (same id), submitted or still pending as event says.
func (s Service) CreateReview(ctx context.Context, doer *store.User, r *store.Repository, is *store.Issue, pr *store.PullRequest, in ReviewInput) (*store.Review, error) {
	if r.IsArchived {
		return nil, apierr.RepoArchived()
	}
	state := reviewState(in.State)
	if err := checkEvent(doer, is, in.State, state, in.Body, len(in.Comments)); err != nil {
		return nil, err
	}
	for _, c := range in.Comments {
		if strings.TrimSpace(c.Path) == "" || strings.TrimSpace(c.Body) == "" {
			return nil, apierr.Validation("a review comment needs a path and a body")
		}
	}
	commit := in.CommitID
	if commit == "" {
		commit = pr.HeadCommitID
	}
	official, err := s.isOfficial(ctx, r, pr.BaseBranch, doer)
	if err != nil {
		return nil, err
	}
	hunks, err := s.diffHunks(ctx, r, pr, in.Comments)
	if err != nil {
		return nil, err
	}
	t := s.Clock.Now()
	var rv *store.Review
	err = s.Store.WithTx(store.ConfinedTo(ctx, r.ID), func(ctx context.Context) error {
		existing, err := s.Store.Pulls().AllReviews(ctx, is.ID)
		if err != nil {
			return err
		}
		for _, old := range existing {
			if old.State == store.ReviewPending && old.ReviewerID == doer.ID {
				rv = old
			}
		}
		if rv == nil {
			rv = &store.Review{IssueID: is.ID, ReviewerID: doer.ID, CreatedAt: t}
		}
		rv.State, rv.Body, rv.CommitID, rv.UpdatedAt = state, in.Body, commit, t
		rv.Official = official && state != store.ReviewPending
		if state != store.ReviewPending {
			rv.SubmittedAt = &t
		}
		if rv.ID == 0 {
			err = s.Store.Pulls().CreateReview(ctx, rv)
		} else {
			err = s.Store.Pulls().UpdateReview(ctx, rv, "state", "body", "commit_id", "official", "submitted_at", "updated_at")
		}
		if err != nil {
			return err
		}
		cs := make([]*store.ReviewComment, 0, len(in.Comments))
		for i, c := range in.Comments {
			cs = append(cs, &store.ReviewComment{ReviewID: rv.ID, IssueID: is.ID, PosterID: doer.ID, Path: c.Path, Body: c.Body,
				Line: c.NewLine, OldLine: c.OldLine, CommitID: commit, OriginalCommitID: commit, DiffHunk: hunks[i],
				CreatedAt: t, UpdatedAt: t})
		}
		if err := s.Store.Pulls().CreateReviewComments(ctx, cs); err != nil {
			return err
		}
		if rv.State == store.ReviewPending {
			return nil
		}
		return s.submitted(ctx, doer, is, rv)
	})
	if err != nil {
		return nil, err
	}
	return rv, nil
}

// submitted takes back doer's pending request on is (the review answers
// it) and announces the review.
func (s Service) submitted(ctx context.Context, doer *store.User, is *store.Issue, rv *store.Review) error {
	existing, err := s.Store.Pulls().AllReviews(ctx, is.ID)
	if err != nil {
		return err
	}
	for _, old := range existing {
		if old.State == store.ReviewRequest && old.ReviewerID == doer.ID {
			if err := s.Store.Pulls().DeleteReview(ctx, old.ID); err != nil {
				return err
			}
		}
	}
	if err := s.issues().Record(ctx, doer, is, &store.IssueEvent{Type: store.EventReview, ReviewID: rv.ID, Body: rv.Body}); err != nil {
		return err
	}
	return s.Events.Emit(ctx, events.PullReviewed, is.RepoID, doer.ID, reviewEvent(is, rv))
}

// SubmitReview submits doer's pending review rv with state.
func (s Service) SubmitReview(ctx context.Context, doer *store.User, r *store.Repository, is *store.Issue, pr *store.PullRequest, rv *store.Review, state, body string) (*store.Review, error) {
	if r.IsArchived {
		return nil, apierr.RepoArchived()
	}
	if rv.ReviewerID != doer.ID {
		return nil, apierr.Forbidden("only the reviewer may submit a pending review")
	}
	if rv.State != store.ReviewPending {
		return nil, apierr.Validation("only a pending review can be submitted")
	}
	event := state
	if state = reviewState(event); state == store.ReviewPending {
		return nil, apierr.Validation("review stay pending")
	}
	if body == "" {
		body = rv.Body
	}
	comments, err := s.Store.Pulls().CountReviewComments(ctx, []int64{rv.ID})
	if err != nil {
		return nil, err
	}
	if err := checkEvent(doer, is, event, state, body, int(comments[rv.ID])); err != nil {
		return nil, err
	}
	official, err := s.isOfficial(ctx, r, pr.BaseBranch, doer)
	if err != nil {
		return nil, err
	}
	t := s.Clock.Now()
	rv.State, rv.Body, rv.Official, rv.SubmittedAt, rv.UpdatedAt = state, body, official, &t, t
	rv.CommitID = pr.HeadCommitID
	err = s.Store.WithTx(store.ConfinedTo(ctx, r.ID), func(ctx context.Context) error {
		if err := s.Store.Pulls().UpdateReview(ctx, rv, "state", "body", "official", "submitted_at", "updated_at", "commit_id"); err != nil {
			return err
		}
		return s.submitted(ctx, doer, is, rv)
	})
	if err != nil {
		return nil, err
	}
	return rv, nil
}

// DeleteReview deletes a review: only its reviewer, or a site admin, may
// (the reference's rule; a repository admin may dismiss others' reviews
// but not delete them).
func (s Service) DeleteReview(ctx context.Context, doer *store.User, r *store.Repository, rv *store.Review) error {
	if r.IsArchived {
		return apierr.RepoArchived()
	}
	if rv.ReviewerID != doer.ID && !doer.IsAdmin {
		return apierr.Forbidden("only the reviewer or a site admin may delete a review")
	}
	return s.Store.Pulls().DeleteReview(ctx, rv.ID)
}

// Dismiss dismisses (or takes back the dismissal of) an approval or a
// rejection; repository admins only.
func (s Service) Dismiss(ctx context.Context, doer *store.User, r *store.Repository, perm access.Permission, is *store.Issue, pr *store.PullRequest, rv *store.Review, dismiss bool) (*store.Review, error) {
	if r.IsArchived {
		return nil, apierr.RepoArchived()
	}
	if !perm.IsAdmin() {
		return nil, apierr.Forbidden("Must be repo admin")
	}
	if rv.State != store.ReviewApproved && rv.State != store.ReviewRequestChanges {
		return nil, apierr.Validation("not allowed to dismiss a review of state %s", rv.State)
	}
	if pr.HasMerged || is.IsClosed {
		return nil, apierr.Validation("cannot dismiss a review of a closed pull request")
	}
	if rv.Dismissed == dismiss {
		return rv, nil
	}
	rv.Dismissed, rv.UpdatedAt = dismiss, s.Clock.Now()
	err := s.Store.WithTx(store.ConfinedTo(ctx, r.ID), func(ctx context.Context) error {
		if err := s.Store.Pulls().UpdateReview(ctx, rv, "dismissed", "updated_at"); err != nil {
			return err
		}
		if !dismiss {
			return nil
		}
		return s.Events.Emit(ctx, events.PullReviewDismissed, r.ID, doer.ID, reviewEvent(is, rv))
	})
	if err != nil {
		return nil, err
	}
	return rv, nil
}

// Reply adds doer's reply to review comment c of pull request is: the
// reply joins c's review, on c's file and line, submitted at once (the
// reference's reply to a conversation).
func (s Service) Reply(ctx context.Context, doer *store.User, r *store.Repository, perm access.Permission, is *store.Issue, c *store.ReviewComment, body string) (*store.ReviewComment, error) {
	if r.IsArchived {
		return nil, apierr.RepoArchived()
	}
	if is.IsLocked && !perm.CanWrite(access.UnitPulls) {
		return nil, apierr.Forbidden("the pull request is locked")
	}
	if strings.TrimSpace(body) == "" {
		return nil, apierr.Validation("[Body]: Required")
	}
	t := s.Clock.Now()
	reply := &store.ReviewComment{ReviewID: c.ReviewID, IssueID: is.ID, PosterID: doer.ID, Path: c.Path, Body: body,
		Line: c.Line, OldLine: c.OldLine, CommitID: c.CommitID, OriginalCommitID: c.OriginalCommitID, DiffHunk: c.DiffHunk,
		CreatedAt: t, UpdatedAt: t}
	if err := s.Store.Pulls().CreateReviewComments(ctx, []*store.ReviewComment{reply}); err != nil {
		return nil, err
	}
	return reply, nil
}

// Resolve marks the conversation of review comment c resolved by doer (or
// open again): the pull request's poster, a writer of its pull requests or
// an official reviewer may, as in the reference. Resolving a resolved
// conversation, or reopening an open one, changes nothing.
func (s Service) Resolve(ctx context.Context, doer *store.User, r *store.Repository, perm access.Permission, is *store.Issue, pr *store.PullRequest, c *store.ReviewComment, resolve bool) error {
	if r.IsArchived {
		return apierr.RepoArchived()
	}
	if is.PosterID != doer.ID && !perm.CanWrite(access.UnitPulls) {
		official, err := s.isOfficial(ctx, r, pr.BaseBranch, doer)
		if err != nil {
			return err
		}
		if !official {
			return apierr.Forbidden("only the poster, a writer or an official reviewer may resolve a conversation")
		}
	}
	if (c.ResolverID != 0) == resolve {
		return nil
	}
	c.ResolverID, c.UpdatedAt = 0, s.Clock.Now()
	if resolve {
		c.ResolverID = doer.ID
	}
	return s.Store.Pulls().UpdateReviewComment(ctx, c, "resolver_id", "updated_at")
}
