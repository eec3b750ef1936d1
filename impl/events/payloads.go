package events

import (
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"

	"repohost/store"
)

// payloadOf makes the payload value of a kind, for decoding what the
// outbox keeps; every kind above is here (TestEveryKindDecodes).
var payloadOf = map[Kind]func() any{}

func init() {
	register := func(make func() any, kinds ...Kind) {
		for _, k := range kinds {
			payloadOf[k] = make
		}
	}
	register(func() any { return &Repo{} }, RepoCreated, RepoEdited, RepoDeleted,
		RepoTransferStarted, RepoTransferred, RepoTransferDropped, RepoStarred, RepoUnstarred, RepoWatched, RepoUnwatched, RepoMigrateRequested,
		RepoMirrorSyncRequested)
	register(func() any { return &PushMirrorSync{} }, PushMirrorSyncRequested, PushMirrorDeleted)
	register(func() any { return &Block{} }, UserBlocked, UserUnblocked)
	register(func() any { return &Refs{} }, RefsChanged)
	register(func() any { return &Issue{} }, IssueOpened, IssueEdited, IssueClosed, IssueReopened, IssueDeleted,
		IssueLabelsChanged, IssueMilestoned, IssueAssigned, IssueReacted, IssueTimeTracked, IssueTimeDeleted,
		IssueLocked, IssueUnlocked, IssuePinned, IssueUnpinned, IssuePinMoved, IssueDependencyAdded, IssueDependencyRemoved,
		IssueSubscribed, IssueUnsubscribed,
		PullOpened, PullEdited, PullClosed, PullReopened, PullLabelsChanged, PullMilestoned, PullAssigned,
		PullMerged, PullSynchronized)
	register(func() any { return &Comment{} }, CommentCreated, CommentEdited, CommentDeleted, CommentReacted)
	register(func() any { return &Named{} }, LabelCreated, LabelEdited, LabelDeleted,
		MilestoneCreated, MilestoneEdited, MilestoneDeleted, ProjectCreated, ProjectEdited, ProjectDeleted,
		ReleasePublished, ReleaseEdited, ReleaseDeleted, UserCreated, UserEdited, UserDeleted,
		OrgCreated, OrgEdited, OrgDeleted, UserEmailsAdded, UserEmailsDeleted, TeamCreated, TeamEdited, TeamDeleted,
		PackageLinked, PackageTagged, UserFollowed, UserUnfollowed)
	register(func() any { return &Renamed{} }, UserRenamed)
	register(func() any { return &Status{} }, StatusCreated)
	register(func() any { return &Token{} }, TokenCreated, TokenDeleted)
	register(func() any { return &Member{} }, OrgMemberAdded, OrgMemberRemoved, OrgMemberPublicized, OrgMemberConcealed)
	register(func() any { return &TeamGrant{} }, TeamMemberAdded, TeamMemberRemoved, TeamRepoAdded, TeamRepoRemoved)
	register(func() any { return &Collaborator{} }, CollaboratorSet, CollaboratorRemoved)
	register(func() any { return &Key{} }, KeyAdded, KeyDeleted)
	register(func() any { return &OAuth2App{} }, OAuth2AppCreated, OAuth2AppEdited, OAuth2AppDeleted)
	register(func() any { return &OAuth2Grant{} }, OAuth2GrantCreated, OAuth2GrantRevoked)
	register(func() any { return &Review{} }, PullReviewed, PullReviewRequested, PullReviewUnrequest, PullReviewDismissed)
	register(func() any { return &Package{} }, PackageCreated, PackageDeleted)
	register(func() any { return &ActionsRun{} }, ActionsRunCreated, ActionsRunStatus)
	register(func() any { return &ActionsJob{} }, ActionsJobStatus)
	register(func() any { return &ActionsSetting{} }, ActionsSecretSet, ActionsSecretDeleted, ActionsVariableSet, ActionsVariableDeleted)
}

// AllKinds are every kind there is, in name order.
func AllKinds() []Kind {
	return slices.Sorted(maps.Keys(payloadOf))
}

// Decode turns an outbox row into the event consumers receive, with the
// payload as its kind's value (not a pointer), as it was emitted.
func Decode(row *store.Event) (Event, error) {
	ev := Event{ID: row.ID, Kind: Kind(row.Kind), RepoID: row.RepoID, ActorID: row.ActorID, At: row.CreatedAt}
	make, ok := payloadOf[ev.Kind]
	if !ok {
		return ev, fmt.Errorf("event %d: unknown kind %q", row.ID, row.Kind)
	}
	p := make()
	if err := json.Unmarshal(row.Payload, p); err != nil {
		return ev, fmt.Errorf("event %d (%s): %w", row.ID, row.Kind, err)
	}
	// Consumers switch on the value types the services emit, not on
	// pointers to them.
	ev.Payload = reflect.ValueOf(p).Elem().Interface()
	return ev, nil
}
