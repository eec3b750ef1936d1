package webhook

import (
	"context"
	"encoding/json"
	"slices"

	"repohost/impl/events"
	"repohost/impl/pulls"
	"repohost/models"
	"repohost/store"
)

// pullRequestPayload is the reference's PullRequestPayload.
type pullRequestPayload struct {
	Action            string              `json:"action"`
	Index             int64               `json:"number"`
	Changes           *changesPayload     `json:"changes,omitempty"`
	PullRequest       *models.PullRequest `json:"pull_request"`
	RequestedReviewer *models.User        `json:"requested_reviewer"`
	Repository        *models.Repository  `json:"repository"`
	Sender            *models.User        `json:"sender"`
	CommitID          string              `json:"commit_id"`
	Review            *reviewPayload      `json:"review"`
}

// reviewPayload is the reference's ReviewPayload: the review's event type
// and its body.
type reviewPayload struct {
	Type    string `json:"type"`
	Content string `json:"content"`
}

// forkPayload is the reference's ForkPayload, sent to the parent's hooks:
// forkee is the parent, repository the new fork.
type forkPayload struct {
	Forkee *models.Repository `json:"forkee"`
	Repo   *models.Repository `json:"repository"`
	Sender *models.User       `json:"sender"`
}

// pullKinds are the pull request events that become hook events.
var pullKinds = []events.Kind{
	events.PullOpened, events.PullEdited, events.PullClosed, events.PullReopened,
	events.PullLabelsChanged, events.PullMilestoned, events.PullAssigned,
	events.PullMerged, events.PullSynchronized,
	events.PullReviewed, events.PullReviewRequested, events.PullReviewUnrequest,
}

// reviewEventTypes are the event types of a submitted review's states.
var reviewEventTypes = map[string]string{
	store.ReviewApproved:       "pull_request_review_approved",
	store.ReviewRequestChanges: "pull_request_review_rejected",
	store.ReviewCommented:      "pull_request_review_comment",
}

// loadPull loads the pull request of issue id; nil when it is gone.
func (b *builder) loadPull(ctx context.Context, issueID int64) (*store.Issue, *store.PullRequest, error) {
	is, err := b.s.Store.Issues().FindByID(ctx, issueID)
	if isNotFound(err) {
		return nil, nil, nil
	} else if err != nil {
		return nil, nil, err
	}
	pr, err := b.s.Store.Pulls().FindByIssueID(ctx, is.ID)
	if isNotFound(err) {
		return nil, nil, nil
	} else if err != nil {
		return nil, nil, err
	}
	return is, pr, nil
}

// pullPayload is the payload about pull request pr with action; the
// caller fills in what only some events carry.
func (b *builder) pullPayload(ctx context.Context, action string, is *store.Issue, pr *store.PullRequest) (*pullRequestPayload, error) {
	apiPull, err := pulls.Service{Deps: b.s.Deps}.Render(ctx, nil, b.base, b.repo, is, pr)
	if err != nil {
		return nil, err
	}
	repo, err := b.apiRepo(ctx)
	if err != nil {
		return nil, err
	}
	return &pullRequestPayload{Action: action, Index: is.Index, PullRequest: apiPull,
		Repository: repo, Sender: b.apiSender()}, nil
}

// pullEvent renders a pull request event.
func (b *builder) pullEvent(ctx context.Context, e *store.Event) ([]hookEvent, error) {
	kind := events.Kind(e.Kind)
	switch kind {
	case events.PullReviewed, events.PullReviewRequested, events.PullReviewUnrequest:
		var p events.Review
		if err := json.Unmarshal(e.Payload, &p); err != nil {
			return nil, err
		}
		return b.review(ctx, kind, p)
	}
	var p events.Issue
	if err := json.Unmarshal(e.Payload, &p); err != nil {
		return nil, err
	}
	is, pr, err := b.loadPull(ctx, p.ID)
	if err != nil || pr == nil {
		return nil, err
	}
	if kind == events.PullClosed && pr.HasMerged {
		return nil, nil // the merge announced it (PullMerged)
	}
	payload, err := b.pullPayload(ctx, "", is, pr)
	if err != nil {
		return nil, err
	}
	eventType, action := "pull_request", ""
	switch kind {
	case events.PullOpened:
		action = "opened"
	case events.PullEdited:
		action = "edited"
		payload.Changes = editChanges(p)
	case events.PullClosed, events.PullMerged:
		action = "closed"
	case events.PullReopened:
		action = "reopened"
	case events.PullSynchronized:
		eventType, action = "pull_request_sync", "synchronized"
		payload.CommitID = pr.HeadCommitID
	case events.PullLabelsChanged:
		eventType, action = "pull_request_label", "label_updated"
		if p.Cleared {
			action = "label_cleared"
		}
	case events.PullMilestoned:
		eventType, action = "pull_request_milestone", "milestoned"
		if is.MilestoneID == 0 {
			action = "demilestoned"
		}
	case events.PullAssigned:
		var out []hookEvent
		for _, action := range assignActions(p, len(payload.PullRequest.Assignees)) {
			each := *payload
			each.Action = action
			out = append(out, hookEvent{Type: "pull_request_assign", Action: action, Branch: pr.BaseBranch, Payload: &each})
		}
		return out, nil
	}
	payload.Action = action
	return []hookEvent{{Type: eventType, Action: action, Branch: pr.BaseBranch, Payload: payload}}, nil
}

// review renders a submitted review or a review request (made or taken
// back); a pending review announces nothing.
func (b *builder) review(ctx context.Context, kind events.Kind, p events.Review) ([]hookEvent, error) {
	is, pr, err := b.loadPull(ctx, p.IssueID)
	if err != nil || pr == nil {
		return nil, err
	}
	if kind == events.PullReviewed {
		eventType, ok := reviewEventTypes[p.State]
		if !ok {
			return nil, nil
		}
		payload, err := b.pullPayload(ctx, "reviewed", is, pr)
		if err != nil {
			return nil, err
		}
		rv, err := b.s.Store.Pulls().FindReview(ctx, is.ID, p.ID)
		switch {
		case err == nil:
			payload.Review = &reviewPayload{Type: eventType, Content: rv.Body}
			payload.CommitID = rv.CommitID
		case isNotFound(err):
			payload.Review = &reviewPayload{Type: eventType}
		default:
			return nil, err
		}
		return []hookEvent{{Type: eventType, Action: "reviewed", Branch: pr.BaseBranch, Payload: payload}}, nil
	}
	action := "review_requested"
	if kind == events.PullReviewUnrequest {
		action = "review_request_removed"
	}
	reviewers := []int64{p.ReviewerID}
	if p.ReviewerID == 0 {
		// A team's request is announced as the reference does: once per
		// member of the team, the pull request's author left out, and
		// only when made (taking it back announces nothing).
		if kind == events.PullReviewUnrequest {
			return nil, nil
		}
		reviewers = slices.DeleteFunc(slices.Clone(p.TeamMembers), func(id int64) bool { return id == is.PosterID })
	}
	if len(reviewers) == 0 {
		return nil, nil
	}
	// Rendered once; each member's payload differs only in the reviewer.
	shared, err := b.pullPayload(ctx, action, is, pr)
	if err != nil {
		return nil, err
	}
	// One statement for every reviewer; one deleted meanwhile is left out.
	users, err := b.s.Store.Users().FindByIDs(ctx, reviewers)
	if err != nil {
		return nil, err
	}
	var out []hookEvent
	for _, id := range reviewers {
		reviewer := users[id]
		if reviewer == nil {
			continue
		}
		payload := *shared
		payload.RequestedReviewer = b.apiUser(reviewer)
		out = append(out, hookEvent{Type: "pull_request_review_request", Action: action, Branch: pr.BaseBranch, Payload: &payload})
	}
	return out, nil
}

// forkEvent renders the creation of fork for its parent's hooks.
func (s Service) forkEvent(ctx context.Context, e *store.Event, fork *store.Repository) ([]*store.Hook, []hookEvent, error) {
	parent, err := s.Store.Repos().FindByID(ctx, fork.ForkID)
	if isNotFound(err) {
		return nil, nil, nil
	} else if err != nil {
		return nil, nil, err
	}
	hooks, err := s.Store.Hooks().ForRepo(ctx, parent.ID, parent.OwnerID)
	if err != nil || len(hooks) == 0 {
		return nil, nil, err
	}
	b, err := s.newBuilder(ctx, e, parent)
	if err != nil {
		return nil, nil, err
	}
	forkee, err := b.apiRepo(ctx)
	if err != nil {
		return nil, nil, err
	}
	b.repo = fork
	repo, err := b.apiRepo(ctx)
	if err != nil {
		return nil, nil, err
	}
	return hooks, []hookEvent{{Type: "fork", Payload: &forkPayload{Forkee: forkee, Repo: repo, Sender: b.apiSender()}}}, nil
}
