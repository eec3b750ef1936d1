// Package notification keeps each user's notification threads: the
// notifications consumer turns the domain events of issues, pull requests,
// comments and releases into threads (one per user and issue, or per user
// and repository for releases, updated in place), and the notification
// routes list them and change their status. Whether a user may still see a
// thread's repository is decided when the thread is read (the access
// rule's SQL mirror), never when it was written.
package notification

import (
	"context"
	"errors"
	"slices"

	"repohost/impl/app"
	"repohost/impl/events"
	"repohost/store"
)

// Service writes notification threads.
type Service struct{ *app.Deps }

// ConsumerName names the consumer's jobs.
const ConsumerName = "notifications"

// Consumer is the durable consumer that records the threads. Its effect
// is an upsert on the thread's key with the event's time, so a retried job
// records nothing twice.
func (s Service) Consumer() events.Consumer {
	return events.Consumer{Name: ConsumerName, Workers: 2, Quick: true, Kinds: []events.Kind{
		events.IssueOpened, events.PullOpened, events.IssueClosed, events.IssueReopened,
		events.PullClosed, events.PullReopened, events.PullMerged,
		events.IssueAssigned, events.PullAssigned, events.PullReviewRequested, events.PullReviewed,
		events.CommentCreated, events.ReleasePublished,
	}, Handle: s.handle}
}

func (s Service) handle(ctx context.Context, e events.Event) error {
	switch p := e.Payload.(type) {
	case events.Issue:
		var only []int64
		if e.Kind == events.IssueAssigned || e.Kind == events.PullAssigned {
			// An assignment tells the assignees alone.
			if only = p.Assigned; len(only) == 0 {
				return nil
			}
		}
		return s.issueActivity(ctx, e, p.ID, 0, only)
	case events.Review:
		if e.Kind == events.PullReviewRequested {
			only := p.TeamMembers
			if p.ReviewerID != 0 {
				only = []int64{p.ReviewerID}
			}
			if len(only) == 0 {
				return nil
			}
			return s.issueActivity(ctx, e, p.IssueID, 0, only)
		}
		return s.issueActivity(ctx, e, p.IssueID, 0, nil)
	case events.Comment:
		return s.issueActivity(ctx, e, p.IssueID, p.ID, nil)
	case events.Named:
		return s.release(ctx, e, p.ID)
	}
	return nil
}

// issueActivity records activity on issue issueID (with comment commentID,
// or 0) for the users in only, or, when only is empty, for everyone
// subscribed to the issue and everyone watching its repository who did
// not unsubscribe from the issue; never for the actor.
func (s Service) issueActivity(ctx context.Context, e events.Event, issueID, commentID int64, only []int64) error {
	// The audience is read with the issue, in one statement, even when
	// only some are told: it is what most events need.
	a, err := s.Store.Watches().IssueAudience(ctx, issueID)
	if errors.Is(err, store.ErrNotFound) {
		return nil // deleted since
	}
	if err != nil {
		return err
	}
	users := only
	if len(users) == 0 {
		users = a.UserIDs
	}
	source := store.NotificationSourceIssue
	if a.IsPull {
		source = store.NotificationSourcePull
	}
	return s.notify(ctx, e, users, store.Notification{RepoID: a.RepoID, IssueID: issueID, Source: source, CommentID: commentID})
}

// release records a published release for the repository's watchers.
func (s Service) release(ctx context.Context, e events.Event, releaseID int64) error {
	if e.RepoID == 0 {
		return nil
	}
	watchers, err := s.Store.Watches().WatcherIDs(ctx, e.RepoID)
	if err != nil {
		return err
	}
	return s.notify(ctx, e, watchers, store.Notification{RepoID: e.RepoID, Source: store.NotificationSourceRepository, ReleaseID: releaseID})
}

// notify records thread t's activity for each of users but the actor.
func (s Service) notify(ctx context.Context, e events.Event, users []int64, t store.Notification) error {
	slices.Sort(users)
	users = slices.Compact(users)
	for _, u := range users {
		if u == e.ActorID || u <= 0 {
			continue
		}
		n := t
		n.UserID, n.Status, n.UpdatedBy = u, store.NotificationUnread, e.ActorID
		n.CreatedAt, n.UpdatedAt = e.At.UTC(), e.At.UTC()
		if err := s.Store.Notifications().Notify(ctx, &n); err != nil {
			return err
		}
	}
	return nil
}
