// Package events is the one way a service tells the rest of the program
// that something changed. A service emits inside the transaction of its
// change: the event is written to the outbox (store.EventStore) in that
// transaction and handed to the subscribed consumers only after it commits,
// so a rolled-back change is never announced and a committed one always is.
// Webhooks, actions triggers and notifications subscribe here instead of
// being called from handlers.
package events

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"repohost/store"
)

// Kind names what happened, as "<subject>.<action>".
type Kind string

// The kinds services emit. Each names its payload type.
const (
	RepoCreated Kind = "repository.created" // Repo
	RepoEdited  Kind = "repository.edited"  // Repo
	RepoDeleted Kind = "repository.deleted" // Repo
	// RefsChanged is emitted by the one ref-change path for every set of
	// refs it moved together (a push, a branch or tag change, a commit of
	// the contents API, a published release, a generated repository).
	RefsChanged Kind = "refs.changed" // Refs

	IssueOpened        Kind = "issue.opened"         // Issue
	IssueEdited        Kind = "issue.edited"         // Issue
	IssueClosed        Kind = "issue.closed"         // Issue
	IssueReopened      Kind = "issue.reopened"       // Issue
	IssueDeleted       Kind = "issue.deleted"        // Issue
	IssueLabelsChanged Kind = "issue.label_updated"  // Issue
	IssueMilestoned    Kind = "issue.milestoned"     // Issue
	IssueAssigned      Kind = "issue.assigned"       // Issue
	IssueReacted       Kind = "issue.reaction_added" // Issue
	IssueTimeTracked   Kind = "issue.time_tracked"   // Issue
	// The conversation locked or unlocked, the issue pinned, unpinned or
	// moved among the pinned, a dependency added or removed (the issue
	// that depends on the other); the reference sends no webhook for them.
	IssueLocked            Kind = "issue.locked"             // Issue
	IssueUnlocked          Kind = "issue.unlocked"           // Issue
	IssuePinned            Kind = "issue.pinned"             // Issue
	IssueUnpinned          Kind = "issue.unpinned"           // Issue
	IssuePinMoved          Kind = "issue.pin_moved"          // Issue
	IssueDependencyAdded   Kind = "issue.dependency_added"   // Issue
	IssueDependencyRemoved Kind = "issue.dependency_removed" // Issue
	// A user's subscription to an issue chosen (Subscriber names the
	// user, the actor who chose: the user, or a site admin).
	IssueSubscribed   Kind = "issue.subscribed"   // Issue
	IssueUnsubscribed Kind = "issue.unsubscribed" // Issue

	CommentCreated Kind = "comment.created" // Comment
	CommentEdited  Kind = "comment.edited"  // Comment
	CommentDeleted Kind = "comment.deleted" // Comment

	LabelCreated     Kind = "label.created"     // Named
	LabelEdited      Kind = "label.edited"      // Named
	LabelDeleted     Kind = "label.deleted"     // Named
	MilestoneCreated Kind = "milestone.created" // Named
	MilestoneEdited  Kind = "milestone.edited"  // Named
	MilestoneDeleted Kind = "milestone.deleted" // Named
	ProjectCreated   Kind = "project.created"   // Named
	ProjectEdited    Kind = "project.edited"    // Named
	ProjectDeleted   Kind = "project.deleted"   // Named

	ReleasePublished Kind = "release.published" // Named
	ReleaseEdited    Kind = "release.edited"    // Named
	ReleaseDeleted   Kind = "release.deleted"   // Named

	UserCreated Kind = "user.created" // Named
	UserEdited  Kind = "user.edited"  // Named
	UserDeleted Kind = "user.deleted" // Named
	OrgCreated  Kind = "org.created"  // Named
	OrgEdited   Kind = "org.edited"   // Named
	OrgDeleted  Kind = "org.deleted"  // Named

	CommentReacted      Kind = "comment.reaction_added"          // Comment
	IssueTimeDeleted    Kind = "issue.time_deleted"              // Issue
	UserRenamed         Kind = "user.renamed"                    // Renamed
	UserEmailsAdded     Kind = "user.emails_added"               // Named (the user)
	UserEmailsDeleted   Kind = "user.emails_deleted"             // Named (the user)
	TokenCreated        Kind = "token.created"                   // Token
	TokenDeleted        Kind = "token.deleted"                   // Token
	OrgMemberAdded      Kind = "org.member_added"                // Member
	OrgMemberRemoved    Kind = "org.member_removed"              // Member
	OrgMemberPublicized Kind = "org.member_publicized"           // Member
	OrgMemberConcealed  Kind = "org.member_concealed"            // Member
	TeamCreated         Kind = "team.created"                    // Named
	TeamEdited          Kind = "team.edited"                     // Named
	TeamDeleted         Kind = "team.deleted"                    // Named
	TeamMemberAdded     Kind = "team.member_added"               // TeamGrant (User set)
	TeamMemberRemoved   Kind = "team.member_removed"             // TeamGrant (User set)
	TeamRepoAdded       Kind = "team.repo_added"                 // TeamGrant (Repo set)
	TeamRepoRemoved     Kind = "team.repo_removed"               // TeamGrant (Repo set)
	CollaboratorSet     Kind = "repository.collaborator_set"     // Collaborator
	CollaboratorRemoved Kind = "repository.collaborator_removed" // Collaborator
	RepoTransferStarted Kind = "repository.transfer_started"     // Repo
	RepoTransferred     Kind = "repository.transferred"          // Repo (OldOwner set)
	RepoTransferDropped Kind = "repository.transfer_dropped"     // Repo
	// RepoMigrateRequested asks the repo_migrate consumer to fill a
	// repository being migrated.
	RepoMigrateRequested Kind = "repository.migrate_requested" // Repo
	// RepoMirrorSyncRequested asks the mirror_sync consumer to bring a
	// pull mirror up to date with its remote (the first time, to fill
	// it).
	RepoMirrorSyncRequested Kind = "repository.mirror_sync_requested" // Repo
	// PushMirrorSyncRequested asks the push_mirror consumer to push a
	// repository to its push mirrors.
	PushMirrorSyncRequested Kind = "repository.push_mirror_sync_requested" // PushMirrorSync
	// PushMirrorDeleted: a push mirror was removed (RemoteName set).
	PushMirrorDeleted Kind = "repository.push_mirror_deleted" // PushMirrorSync
	KeyAdded          Kind = "key.added"                      // Key
	KeyDeleted        Kind = "key.deleted"                    // Key
	// OAuth2 applications a user registers, and the grants users give
	// them (a grant goes when it is revoked, or when an old refresh
	// token is presented again).
	OAuth2AppCreated   Kind = "oauth2_application.created" // OAuth2App
	OAuth2AppEdited    Kind = "oauth2_application.edited"  // OAuth2App
	OAuth2AppDeleted   Kind = "oauth2_application.deleted" // OAuth2App
	OAuth2GrantCreated Kind = "oauth2_grant.created"       // OAuth2Grant
	OAuth2GrantRevoked Kind = "oauth2_grant.revoked"       // OAuth2Grant

	// A user starred a repository or took the star back (RepoID is the
	// repository, the actor the user).
	RepoStarred   Kind = "repository.starred"   // Repo
	RepoUnstarred Kind = "repository.unstarred" // Repo
	// A user began or stopped watching a repository (the actor is the
	// user).
	RepoWatched   Kind = "repository.watched"   // Repo
	RepoUnwatched Kind = "repository.unwatched" // Repo
	// The actor followed a user, stopped following one, blocked one or
	// unblocked one (the payload names that user; Org, when set, is the
	// organization that blocks).
	UserFollowed   Kind = "user.followed"   // Named (the user followed)
	UserUnfollowed Kind = "user.unfollowed" // Named (the user no longer followed)
	UserBlocked    Kind = "user.blocked"    // Block
	UserUnblocked  Kind = "user.unblocked"  // Block

	// A package version appears with its first file and goes with its
	// deletion (or its package's).
	// Pull requests. The issue kinds above name a pull request's
	// changes too; emitted about a pull request they become these
	// (PullKind).
	PullOpened          Kind = "pull_request.opened"                 // Issue
	PullEdited          Kind = "pull_request.edited"                 // Issue
	PullClosed          Kind = "pull_request.closed"                 // Issue
	PullReopened        Kind = "pull_request.reopened"               // Issue
	PullLabelsChanged   Kind = "pull_request.label_updated"          // Issue
	PullMilestoned      Kind = "pull_request.milestoned"             // Issue
	PullAssigned        Kind = "pull_request.assigned"               // Issue
	PullMerged          Kind = "pull_request.merged"                 // Issue
	PullSynchronized    Kind = "pull_request.synchronized"           // Issue: the head moved
	PullReviewed        Kind = "pull_request.reviewed"               // Review
	PullReviewRequested Kind = "pull_request.review_requested"       // Review
	PullReviewUnrequest Kind = "pull_request.review_request_removed" // Review
	PullReviewDismissed Kind = "pull_request.review_dismissed"       // Review

	PackageCreated Kind = "package.created" // Package
	PackageDeleted Kind = "package.deleted" // Package
	// PackageLinked is a package linked to a repository or unlinked
	// (RepoID 0) from one.
	PackageLinked Kind = "package.linked" // Named (the package)
	// PackageTagged is a tag (npm's dist-tags) set or removed.
	PackageTagged Kind = "package.tagged" // Named (the package)

	// A workflow run was created, and a run or one of its jobs changed
	// status (the workflow_run and workflow_job webhooks map these).
	ActionsRunCreated Kind = "actions.run_created" // ActionsRun
	ActionsRunStatus  Kind = "actions.run_status"  // ActionsRun
	ActionsJobStatus  Kind = "actions.job_status"  // ActionsJob

	// An Actions secret or variable of a repository, organization or user
	// was written or removed; a secret's value is never part of it.
	ActionsSecretSet       Kind = "actions.secret_set"       // ActionsSetting
	ActionsSecretDeleted   Kind = "actions.secret_deleted"   // ActionsSetting
	ActionsVariableSet     Kind = "actions.variable_set"     // ActionsSetting
	ActionsVariableDeleted Kind = "actions.variable_deleted" // ActionsSetting

	// StatusCreated is a commit status reported (the status webhook,
	// merges scheduled for when checks succeed).
	StatusCreated Kind = "commit_status.created" // Status
)

// Status describes a commit status reported for a repository's commit.
type Status struct {
	ID      int64  `json:"id"`
	SHA     string `json:"sha"`
	Context string `json:"context"`
	State   string `json:"state"`
}

// TeamGrant describes a change of a team's members or repositories.
type TeamGrant struct {
	Team Named  `json:"team"`
	User *Named `json:"user,omitempty"`
	Repo *Repo  `json:"repo,omitempty"`
}

// Collaborator describes a change of a repository's collaborators.
type Collaborator struct {
	Repo Repo   `json:"repo"`
	User Named  `json:"user"`
	Mode string `json:"mode,omitempty"`
}

// Repo describes a repository event.
type Repo struct {
	ID       int64  `json:"id"`
	Owner    string `json:"owner"`
	Name     string `json:"name"`
	Private  bool   `json:"private"`
	OldOwner string `json:"old_owner,omitempty"` // set when a rename or transfer moved it
	OldName  string `json:"old_name,omitempty"`
}

// PushMirrorSync names the push mirror to push ("" every one of the
// repository's).
type PushMirrorSync struct {
	Repo       Repo   `json:"repo"`
	RemoteName string `json:"remote_name,omitempty"`
}

// RefChange is one moved ref; a zero Old is a creation, a zero New a
// deletion (hex object ids).
type RefChange struct {
	Name string `json:"name"`
	Old  string `json:"old"`
	New  string `json:"new"`
}

// Refs describes the refs one action moved together.
type Refs struct {
	Repo    Repo        `json:"repo"`
	Changes []RefChange `json:"changes"`
	// PushOptions are the options of the git push that made the change
	// (git push -o ci.skip), in the client's order; none for other
	// changes.
	PushOptions []string `json:"push_options,omitempty"`
}

// Issue describes an issue event. An edit names the title and body it
// replaced (TitleFrom, BodyFrom), when it changed them; a change of
// assignees names the users it assigned and those it unassigned; a change
// of labels tells whether it was the clear operation.
type Issue struct {
	ID         int64   `json:"id"`
	Index      int64   `json:"index"`
	TitleFrom  *string `json:"title_from,omitempty"`
	BodyFrom   *string `json:"body_from,omitempty"`
	Assigned   []int64 `json:"assigned,omitempty"`
	Unassigned []int64 `json:"unassigned,omitempty"`
	Cleared    bool    `json:"cleared,omitempty"`
	// HeadSHA is, for pull_request.synchronized, the head commit the
	// pull request moved to (a later move may follow before a consumer
	// reads the pull request).
	HeadSHA string `json:"head_sha,omitempty"`
	// Subscriber is, for issue.subscribed and issue.unsubscribed, the
	// user whose subscription changed.
	Subscriber int64 `json:"subscriber,omitempty"`
}

// Review describes a review event: a review submitted or dismissed, or a
// review requested from (or no longer from) a user or a team.
type Review struct {
	ID         int64  `json:"id"`
	IssueID    int64  `json:"issue_id"`
	IssueIndex int64  `json:"issue_index"`
	State      string `json:"state"`
	ReviewerID int64  `json:"reviewer_id,omitempty"`
	TeamID     int64  `json:"team_id,omitempty"`
	// TeamMembers are the team's members when its review was requested:
	// each is told of the request as the reference does.
	TeamMembers []int64 `json:"team_members,omitempty"`
}

// pullKinds are the pull request kinds of the issue kinds.
var pullKinds = map[Kind]Kind{
	IssueOpened: PullOpened, IssueEdited: PullEdited, IssueClosed: PullClosed, IssueReopened: PullReopened,
	IssueLabelsChanged: PullLabelsChanged, IssueMilestoned: PullMilestoned, IssueAssigned: PullAssigned,
}

// PullKind is the kind an issue kind becomes about a pull request; kinds
// without a pull request form (reactions, tracked time) stay as they are.
func PullKind(k Kind) Kind {
	if p, ok := pullKinds[k]; ok {
		return p
	}
	return k
}

// Comment describes a comment event.
type Comment struct {
	ID         int64 `json:"id"`
	IssueID    int64 `json:"issue_id"`
	IssueIndex int64 `json:"issue_index"`
	// BodyFrom is the body an edit replaced.
	BodyFrom *string `json:"body_from,omitempty"`
}

// Block describes a block: Blocker blocks User.
type Block struct {
	Blocker Named `json:"blocker"`
	User    Named `json:"user"`
}

// Named describes an event about a thing identified by id and name
// (labels, milestones, releases, users, organizations).
type Named struct {
	ID   int64  `json:"id"`
	Name string `json:"name"`
}

// Renamed describes a rename of a user or organization.
type Renamed struct {
	ID      int64  `json:"id"`
	Name    string `json:"name"`
	OldName string `json:"old_name"`
}

// ActionsSetting names an Actions secret or variable: its scope (RepoID,
// else OwnerID) and name, never its value.
type ActionsSetting struct {
	OwnerID int64  `json:"owner_id,omitempty"`
	RepoID  int64  `json:"repo_id,omitempty"`
	Name    string `json:"name"`
	// OldName is a renamed variable's previous name.
	OldName string `json:"old_name,omitempty"`
}

// Token describes an access token event; the secret is never part of it.
type Token struct {
	ID    int64  `json:"id"`
	Name  string `json:"name"`
	Owner Named  `json:"owner"`
}

// OAuth2App describes an OAuth2 application being registered, changed
// or removed.
type OAuth2App struct {
	ID       int64  `json:"id"`
	Name     string `json:"name"`
	ClientID string `json:"client_id"`
	Owner    Named  `json:"owner"`
}

// OAuth2Grant describes a user's consent to an OAuth2 application.
type OAuth2Grant struct {
	ID    int64  `json:"id"`
	Scope string `json:"scope"`
	App   Named  `json:"application"`
	User  Named  `json:"user"`
}

// Key describes an SSH, deploy or GPG key being added or removed.
type Key struct {
	ID int64 `json:"id"`
	// Type is "ssh", "deploy" or "gpg".
	Type string `json:"type"`
	// Name is an SSH key's title or a GPG key's key id.
	Name        string `json:"name"`
	Fingerprint string `json:"fingerprint,omitempty"`
	OwnerID     int64  `json:"owner_id,omitempty"`
}

// Member describes a change of one organization membership.
type Member struct {
	Org  Named `json:"org"`
	User Named `json:"user"`
}

// Package describes a package version event. It carries all a
// description of the version needs, since after a deletion commits the
// rows are gone.
type Package struct {
	ID        int64  `json:"id"` // the version's
	PackageID int64  `json:"package_id"`
	Owner     Named  `json:"owner"`
	Type      string `json:"type"`
	Name      string `json:"name"`
	Version   string `json:"version"`
	// RepoID is the repository the package is linked to, 0 when none
	// (also the event's repository).
	RepoID    int64     `json:"repo_id,omitempty"`
	CreatorID int64     `json:"creator_id,omitempty"`
	CreatedAt time.Time `json:"created_at"`
}

// ActionsRun describes a workflow run event; Status is the API's status
// ("waiting", "queued", "in_progress", "completed") and Conclusion is set
// once completed.
type ActionsRun struct {
	ID         int64  `json:"id"`
	Number     int64  `json:"number"`
	WorkflowID string `json:"workflow_id"`
	Event      string `json:"event"`
	Ref        string `json:"ref"`
	CommitSHA  string `json:"commit_sha"`
	Status     string `json:"status"`
	Conclusion string `json:"conclusion,omitempty"`
}

// ActionsJob describes a change of a workflow job's status.
type ActionsJob struct {
	ID         int64  `json:"id"`
	RunID      int64  `json:"run_id"`
	Name       string `json:"name"`
	RunnerID   int64  `json:"runner_id,omitempty"`
	Status     string `json:"status"`
	Conclusion string `json:"conclusion,omitempty"`
}

// ActorID is the id an event records for doer: 0 when nobody in
// particular acted (the command line, the first start).
func ActorID(doer *store.User) int64 {
	if doer == nil {
		return 0
	}
	return doer.ID
}

// Event is what consumers receive.
type Event struct {
	ID      int64
	Kind    Kind
	RepoID  int64 // 0 when the event is not about one repository
	ActorID int64 // 0 when nobody in particular caused it
	At      time.Time
	// Payload is the kind's payload value (see the kinds above).
	Payload any
}

// Emit records an event of kind in the transaction carried by ctx (or in
// one of its own when ctx carries none), with a job for each consumer of
// kind, and wakes those consumers once that transaction commits. An error
// means the event, and with it the change of a surrounding transaction,
// must not be committed.
func (b *Bus) Emit(ctx context.Context, kind Kind, repoID, actorID int64, payload any) error {
	row, err := b.Prepare(kind, repoID, actorID, payload)
	if err != nil {
		return err
	}
	return b.store.WithTx(ctx, func(ctx context.Context) error {
		if err := b.store.Events().Append(ctx, row); err != nil {
			return err
		}
		b.Appended(ctx, row)
		return nil
	})
}

// Prepare is the first half of Emit for a change whose store statement
// appends the outbox row itself (with the change, in one statement): it
// returns the row to append, naming the consumers that get a job. Once the
// statement has appended it, Appended must be called in the same
// transaction.
func (b *Bus) Prepare(kind Kind, repoID, actorID int64, payload any) (*store.Event, error) {
	data, err := json.Marshal(payload)
	if err != nil {
		return nil, fmt.Errorf("encode %s event: %w", kind, err)
	}
	return &store.Event{Kind: string(kind), RepoID: repoID, ActorID: actorID, Payload: data,
		CreatedAt: b.clock.Now(), Consumers: b.routes[kind]}, nil
}

// Appended wakes this process's workers of row's consumers once the
// transaction carried by ctx commits, so the jobs written with the event
// are taken at once rather than at the next poll.
func (b *Bus) Appended(ctx context.Context, row *store.Event) {
	if len(row.Consumers) == 0 {
		return
	}
	b.store.AfterCommit(ctx, func() {
		// Once per worker: the quick consumers share one, and it counts
		// the commits that woke it.
		woken := make([]*worker, 0, len(row.Consumers))
		for _, name := range row.Consumers {
			if w := b.workers[name]; w != nil && !slices.Contains(woken, w) {
				woken = append(woken, w)
				w.wake()
			}
		}
	})
}

// Logger is the consumer that writes one log line per committed event.
func Logger(log *slog.Logger) Consumer {
	return Consumer{Name: "log", Kinds: AllKinds(), Workers: 1, Quick: true,
		Handle: func(_ context.Context, e Event) error {
			log.Info("event", "id", e.ID, "kind", string(e.Kind), "repo_id", e.RepoID, "actor_id", e.ActorID)
			return nil
		}}
}
