package webhook

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"time"

	"github.com/go-git/go-git/v6/plumbing"
	"github.com/go-git/go-git/v6/plumbing/object"
	"github.com/go-openapi/strfmt"

	"repohost/impl/access"
	"repohost/impl/auth"
	"repohost/impl/convert"
	"repohost/impl/events"
	"repohost/impl/issue"
	"repohost/impl/rooturl"
	"repohost/models"
	"repohost/store"
	"repohost/store/gitstore"
)

// The payloads, field for field the reference's (modules/structs/hook.go).
// Pull request and fork payloads are in payloads_pulls.go.

type createPayload struct {
	Sha     string             `json:"sha"`
	Ref     string             `json:"ref"`
	RefType string             `json:"ref_type"`
	Repo    *models.Repository `json:"repository"`
	Sender  *models.User       `json:"sender"`
}

type deletePayload struct {
	Ref        string             `json:"ref"`
	RefType    string             `json:"ref_type"`
	PusherType string             `json:"pusher_type"`
	Repo       *models.Repository `json:"repository"`
	Sender     *models.User       `json:"sender"`
}

type pushPayload struct {
	Ref          string                  `json:"ref"`
	Before       string                  `json:"before"`
	After        string                  `json:"after"`
	CompareURL   string                  `json:"compare_url"`
	Commits      []*models.PayloadCommit `json:"commits"`
	TotalCommits int                     `json:"total_commits"`
	HeadCommit   *models.PayloadCommit   `json:"head_commit"`
	Repo         *models.Repository      `json:"repository"`
	Pusher       *models.User            `json:"pusher"`
	Sender       *models.User            `json:"sender"`
}

type issuePayload struct {
	Action     string             `json:"action"`
	Index      int64              `json:"number"`
	Changes    *changesPayload    `json:"changes,omitempty"`
	Issue      *models.Issue      `json:"issue"`
	Repository *models.Repository `json:"repository"`
	Sender     *models.User       `json:"sender"`
	CommitID   string             `json:"commit_id"`
}

type changesPayload struct {
	Title *changeFrom `json:"title,omitempty"`
	Body  *changeFrom `json:"body,omitempty"`
	Ref   *changeFrom `json:"ref,omitempty"`
}

type changeFrom struct {
	From string `json:"from"`
}

type issueCommentPayload struct {
	Action     string             `json:"action"`
	Issue      *models.Issue      `json:"issue"`
	Comment    *models.Comment    `json:"comment"`
	Changes    *changesPayload    `json:"changes,omitempty"`
	Repository *models.Repository `json:"repository"`
	Sender     *models.User       `json:"sender"`
	IsPull     bool               `json:"is_pull"`
}

type releasePayload struct {
	Action     string             `json:"action"`
	Release    *models.Release    `json:"release"`
	Repository *models.Repository `json:"repository"`
	Sender     *models.User       `json:"sender"`
}

type repositoryPayload struct {
	Action       string             `json:"action"`
	Repository   *models.Repository `json:"repository"`
	Organization *models.User       `json:"organization"`
	Sender       *models.User       `json:"sender"`
}

// packagePayload is the reference's: its repository stays null even for
// a linked package (the package's own repository field names it).
type packagePayload struct {
	Action       string               `json:"action"`
	Repository   *models.Repository   `json:"repository"`
	Package      *models.Package      `json:"package"`
	Organization *models.Organization `json:"organization"`
	Sender       *models.User         `json:"sender"`
}

// statusPayload is the reference's CommitStatusPayload.
type statusPayload struct {
	Commit      *models.PayloadCommit `json:"commit"`
	Context     string                `json:"context"`
	CreatedAt   strfmt.DateTime       `json:"created_at"`
	Description string                `json:"description"`
	ID          int64                 `json:"id"`
	Repo        *models.Repository    `json:"repository"`
	Sender      *models.User          `json:"sender"`
	SHA         string                `json:"sha"`
	State       string                `json:"state"`
	TargetURL   string                `json:"target_url"`
	UpdatedAt   *strfmt.DateTime      `json:"updated_at"`
}

// hookEvent is one event type a domain event turns into.
type hookEvent struct {
	Type   string // X-Gitea-Event-Type
	Action string
	// Branch is the branch the event is about, for branch filters; empty
	// when the event is about no branch.
	Branch  string
	Payload any
	// Hooks, when set, are the hooks this event goes to instead of those
	// of the repository the domain event is about (a fork's parent's).
	Hooks []*store.Hook
}

// builder renders the payloads of one domain event.
type builder struct {
	s      Service
	base   string
	repo   *store.Repository
	sender *store.User
}

// newBuilder is the builder of e's payloads about repository r (nil when
// the event is about none), sent by e's actor (the ghost when nobody in
// particular acted or the account is gone).
func (s Service) newBuilder(ctx context.Context, e *store.Event, r *store.Repository) (*builder, error) {
	b := &builder{s: s, base: rooturl.Normalize(s.Config.RootURL), repo: r, sender: convert.Ghost()}
	if e.ActorID > 0 {
		u, err := s.Store.Users().FindByID(ctx, e.ActorID)
		if err == nil {
			b.sender = u
		} else if !isNotFound(err) {
			return nil, err
		}
	}
	return b, nil
}

// senderPerm is the sender's permission on the builder's repository.
func (b *builder) senderPerm(ctx context.Context) (access.Permission, error) {
	if b.sender.ID <= 0 {
		return access.Permission{}, nil
	}
	return b.s.Access.Repo(ctx, &auth.Principal{User: b.sender}, b.repo)
}

func (b *builder) apiRepo(ctx context.Context) (*models.Repository, error) {
	perm, err := b.senderPerm(ctx)
	if err != nil {
		return nil, err
	}
	return convert.Repo(b.s.Links(b.base), b.repo, perm, b.sender), nil
}

func (b *builder) apiSender() *models.User { return b.apiUser(b.sender) }

func (b *builder) apiUser(u *store.User) *models.User { return convert.User(b.base, u, nil) }

// payloads renders the hook events of e about repository r.
func (s Service) payloads(ctx context.Context, e *store.Event, r *store.Repository) ([]hookEvent, error) {
	b, err := s.newBuilder(ctx, e, r)
	if err != nil {
		return nil, err
	}
	kind := events.Kind(e.Kind)
	switch kind {
	case events.RefsChanged:
		var p events.Refs
		if err := json.Unmarshal(e.Payload, &p); err != nil {
			return nil, err
		}
		return b.refs(ctx, p)
	case events.RepoCreated, events.RepoDeleted:
		action := map[events.Kind]string{events.RepoCreated: "created", events.RepoDeleted: "deleted"}[kind]
		repo, err := b.apiRepo(ctx)
		if err != nil {
			return nil, err
		}
		p := &repositoryPayload{Action: action, Repository: repo, Sender: b.apiSender()}
		if r.Owner.IsOrganization() {
			p.Organization = convert.User(b.base, r.Owner, nil)
		}
		return []hookEvent{{Type: "repository", Action: action, Payload: p}}, nil
	case events.IssueOpened, events.IssueEdited, events.IssueClosed, events.IssueReopened,
		events.IssueLabelsChanged, events.IssueMilestoned, events.IssueAssigned:
		var p events.Issue
		if err := json.Unmarshal(e.Payload, &p); err != nil {
			return nil, err
		}
		return b.issue(ctx, kind, p)
	case events.CommentCreated, events.CommentEdited, events.CommentDeleted:
		var p events.Comment
		if err := json.Unmarshal(e.Payload, &p); err != nil {
			return nil, err
		}
		return b.comment(ctx, kind, p)
	case events.ReleasePublished, events.ReleaseEdited, events.ReleaseDeleted:
		var p events.Named
		if err := json.Unmarshal(e.Payload, &p); err != nil {
			return nil, err
		}
		return b.release(ctx, kind, p)
	case events.ActionsRunCreated, events.ActionsRunStatus, events.ActionsJobStatus:
		return b.actionsEvent(ctx, e)
	case events.StatusCreated:
		var p events.Status
		if err := json.Unmarshal(e.Payload, &p); err != nil {
			return nil, err
		}
		return b.status(ctx, p)
	}
	if slices.Contains(pullKinds, kind) {
		return b.pullEvent(ctx, e)
	}
	return nil, nil
}

func (b *builder) issue(ctx context.Context, kind events.Kind, p events.Issue) ([]hookEvent, error) {
	is, err := b.s.Store.Issues().FindByID(ctx, p.ID)
	if isNotFound(err) {
		return nil, nil // deleted since; nothing left to describe
	}
	if err != nil {
		return nil, err
	}
	if is.IsPull {
		return nil, nil // pull requests have their own events (payloads_pulls.go)
	}
	apiIssue, err := issue.Service{Deps: b.s.Deps}.RenderIssue(ctx, b.base, nil, b.repo, is)
	if err != nil {
		return nil, err
	}
	repo, err := b.apiRepo(ctx)
	if err != nil {
		return nil, err
	}
	eventType, action := "issues", ""
	switch kind {
	case events.IssueOpened:
		action = "opened"
	case events.IssueEdited:
		action = "edited"
	case events.IssueClosed:
		action = "closed"
	case events.IssueReopened:
		action = "reopened"
	case events.IssueLabelsChanged:
		// As in the reference, label_cleared is the clear operation's;
		// taking labels off otherwise is label_updated, even the last.
		eventType, action = "issue_label", "label_updated"
		if p.Cleared {
			action = "label_cleared"
		}
	case events.IssueMilestoned:
		eventType, action = "issue_milestone", "milestoned"
		if is.MilestoneID == 0 {
			action = "demilestoned"
		}
	case events.IssueAssigned:
		out := []hookEvent{}
		for _, action := range assignActions(p, len(apiIssue.Assignees)) {
			out = append(out, hookEvent{Type: "issue_assign", Action: action, Payload: &issuePayload{
				Action: action, Index: is.Index, Issue: apiIssue, Repository: repo, Sender: b.apiSender()}})
		}
		return out, nil
	}
	return []hookEvent{{Type: eventType, Action: action, Payload: &issuePayload{
		Action: action, Index: is.Index, Changes: editChanges(p), Issue: apiIssue, Repository: repo, Sender: b.apiSender()}}}, nil
}

// assignActions are the actions of a change of assignees, one per user
// as the reference announces them: "unassigned" for each user taken off,
// then "assigned" for each user added. An event that does not name the
// users (recorded by an older version) is one action, by whether anyone
// is assigned now.
func assignActions(p events.Issue, assigned int) []string {
	if p.Assigned == nil && p.Unassigned == nil {
		if assigned == 0 {
			return []string{"unassigned"}
		}
		return []string{"assigned"}
	}
	var out []string
	for range p.Unassigned {
		out = append(out, "unassigned")
	}
	for range p.Assigned {
		out = append(out, "assigned")
	}
	return out
}

// editChanges is the "changes" of an edit: the title and body it
// replaced (nil when it replaced neither, or for other events).
func editChanges(p events.Issue) *changesPayload {
	if p.TitleFrom == nil && p.BodyFrom == nil {
		return nil
	}
	var c changesPayload
	if p.TitleFrom != nil {
		c.Title = &changeFrom{From: *p.TitleFrom}
	}
	if p.BodyFrom != nil {
		c.Body = &changeFrom{From: *p.BodyFrom}
	}
	return &c
}

func (b *builder) comment(ctx context.Context, kind events.Kind, p events.Comment) ([]hookEvent, error) {
	is, err := b.s.Store.Issues().FindByID(ctx, p.IssueID)
	if isNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	action := map[events.Kind]string{events.CommentCreated: "created", events.CommentEdited: "edited", events.CommentDeleted: "deleted"}[kind]
	var apiComment *models.Comment
	c, err := b.s.Store.Comments().FindByID(ctx, p.ID)
	switch {
	case err == nil:
		poster, err := b.s.Store.Users().FindByID(ctx, c.PosterID)
		if err != nil && !isNotFound(err) {
			return nil, err
		}
		apiComment = convert.Comment(b.base, b.repo, is, c, poster, nil)
	case isNotFound(err):
		// Deleted: the id is all that is left.
		apiComment = &models.Comment{ID: p.ID, IssueURL: convert.IssueHTMLURL(b.base, b.repo, is.Index), Attachments: []*models.Attachment{}}
	default:
		return nil, err
	}
	apiIssue, err := issue.Service{Deps: b.s.Deps}.RenderIssue(ctx, b.base, nil, b.repo, is)
	if err != nil {
		return nil, err
	}
	repo, err := b.apiRepo(ctx)
	if err != nil {
		return nil, err
	}
	// A pull request's conversation travels as pull_request_comment
	// (X-Gitea-Event issue_comment), as in the reference.
	eventType := "issue_comment"
	if is.IsPull {
		eventType = "pull_request_comment"
	}
	var changes *changesPayload
	if p.BodyFrom != nil {
		changes = &changesPayload{Body: &changeFrom{From: *p.BodyFrom}}
	}
	return []hookEvent{{Type: eventType, Action: action, Payload: &issueCommentPayload{
		Action: action, Issue: apiIssue, Comment: apiComment, Changes: changes, Repository: repo, Sender: b.apiSender(), IsPull: is.IsPull}}}, nil
}

// status is the status event of a reported commit status, shown as it
// was stored (statuses never change).
func (b *builder) status(ctx context.Context, p events.Status) ([]hookEvent, error) {
	st, err := b.s.Store.Statuses().FindByID(ctx, b.repo.ID, p.ID)
	if isNotFound(err) {
		return nil, nil // gone with its repository
	}
	if err != nil {
		return nil, err
	}
	commit, err := b.commit(ctx, p.SHA)
	if err != nil {
		return nil, err
	}
	repo, err := b.apiRepo(ctx)
	if err != nil {
		return nil, err
	}
	updated := strfmt.DateTime(st.UpdatedAt.UTC())
	return []hookEvent{{Type: "status", Payload: &statusPayload{Commit: commit, Context: st.Context,
		CreatedAt: strfmt.DateTime(st.CreatedAt.UTC()), Description: st.Description, ID: st.ID, Repo: repo,
		Sender: b.apiSender(), SHA: p.SHA, State: st.State, TargetURL: st.TargetURL, UpdatedAt: &updated}}}, nil
}

func (b *builder) release(ctx context.Context, kind events.Kind, p events.Named) ([]hookEvent, error) {
	action := map[events.Kind]string{events.ReleasePublished: "published", events.ReleaseEdited: "updated", events.ReleaseDeleted: "deleted"}[kind]
	var apiRelease *models.Release
	rel, err := b.s.Store.Releases().FindByID(ctx, b.repo.ID, p.ID)
	switch {
	case err == nil:
		if rel.IsDraft {
			return nil, nil // drafts are announced when published
		}
		apiRelease = convert.Release(b.base, b.repo, rel)
	case isNotFound(err) && kind == events.ReleaseDeleted:
		apiRelease = &models.Release{ID: p.ID, TagName: p.Name, Attachments: []*models.Attachment{}}
	case isNotFound(err):
		return nil, nil
	default:
		return nil, err
	}
	repo, err := b.apiRepo(ctx)
	if err != nil {
		return nil, err
	}
	return []hookEvent{{Type: "release", Action: action, Payload: &releasePayload{
		Action: action, Release: apiRelease, Repository: repo, Sender: b.apiSender()}}}, nil
}

// refs turns moved refs into create, delete and push events: a new
// branch or tag is a create and a push, a removed one a delete, a moved
// branch a push.
func (b *builder) refs(ctx context.Context, p events.Refs) ([]hookEvent, error) {
	repo, err := b.apiRepo(ctx)
	if err != nil {
		return nil, err
	}
	sender := b.apiSender()
	var out []hookEvent
	for _, ch := range p.Changes {
		refType, short := "", ""
		switch {
		case strings.HasPrefix(ch.Name, "refs/heads/"):
			refType, short = "branch", strings.TrimPrefix(ch.Name, "refs/heads/")
		case strings.HasPrefix(ch.Name, "refs/tags/"):
			refType, short = "tag", strings.TrimPrefix(ch.Name, "refs/tags/")
		default:
			continue
		}
		branch := ""
		if refType == "branch" {
			branch = short
		}
		created, deleted := isZero(ch.Old), isZero(ch.New)
		if deleted {
			out = append(out, hookEvent{Type: "delete", Branch: branch, Payload: &deletePayload{
				Ref: short, RefType: refType, PusherType: "user", Repo: repo, Sender: sender}})
			continue
		}
		if created {
			out = append(out, hookEvent{Type: "create", Branch: branch, Payload: &createPayload{
				Sha: ch.New, Ref: short, RefType: refType, Repo: repo, Sender: sender}})
		}
		push, err := b.push(ctx, ch, repo, sender)
		if err != nil {
			return nil, err
		}
		out = append(out, hookEvent{Type: "push", Branch: branch, Payload: push})
	}
	return out, nil
}

func isZero(sha string) bool { return sha == "" || strings.Trim(sha, "0") == "" }

// maxPushCommits is how many commits a push payload lists, newest first
// (total_commits counts them all).
const maxPushCommits = 20

func (b *builder) push(ctx context.Context, ch events.RefChange, repo *models.Repository, sender *models.User) (*pushPayload, error) {
	before := ch.Old
	if isZero(before) {
		before = gitstore.ZeroID(repo.ObjectFormatName)
	}
	p := &pushPayload{Ref: ch.Name, Before: before, After: ch.New, Commits: []*models.PayloadCommit{},
		Repo: repo, Pusher: sender, Sender: sender}
	commits, total, err := b.commits(ctx, ch)
	if err != nil {
		return nil, err
	}
	p.Commits, p.TotalCommits = commits, total
	if len(commits) > 0 {
		p.HeadCommit = commits[0]
		if !isZero(ch.Old) {
			p.CompareURL = b.base + b.repo.FullName() + "/compare/" + ch.Old + "..." + ch.New
		}
	}
	return p, nil
}

// commits lists the commits a ref change brought (those of a new ref not
// on any other branch), with the files each added, removed and modified,
// read with git itself.
func (b *builder) commits(ctx context.Context, ch events.RefChange) ([]*models.PayloadCommit, int, error) {
	dir, err := b.s.Git.Path(b.repo.Owner.Name, b.repo.Name)
	if err != nil {
		return nil, 0, err
	}
	revs := []string{ch.New}
	if isZero(ch.Old) {
		revs = append(revs, "--not", "--exclude="+ch.Name, "--branches")
	} else {
		revs = append(revs, "^"+ch.Old)
	}
	count, err := runGit(ctx, dir, append([]string{"rev-list", "--count"}, revs...)...)
	if err != nil {
		return nil, 0, err
	}
	var total int
	fmt.Sscan(string(count), &total)
	if total == 0 && strings.HasPrefix(ch.Name, "refs/tags/") {
		return nil, 0, nil
	}
	args := append([]string{"log", "--no-renames", "--name-status", "-n", fmt.Sprint(maxPushCommits),
		logFormat}, revs...)
	if total == 0 {
		// A branch made at a commit other branches have: the head alone.
		args = []string{"log", "--no-renames", "--name-status", "-n", "1",
			logFormat, ch.New}
	}
	out, err := runGit(ctx, dir, args...)
	if err != nil {
		return nil, 0, err
	}
	list := b.parseLog(out)
	if total == 0 {
		total = len(list)
	}
	if err := b.nameAccounts(ctx, list); err != nil {
		return nil, 0, err
	}
	if err := b.verify(ctx, list); err != nil {
		return nil, 0, err
	}
	return list, total, nil
}

// logFormat is the git log format parseLog reads, with --name-status.
const logFormat = "--format=%x1e%H%x1f%an%x1f%ae%x1f%cn%x1f%ce%x1f%cI%x1f%B%x1f"

// parseLog reads the commits of a git log in logFormat with their files.
func (b *builder) parseLog(out []byte) []*models.PayloadCommit {
	var list []*models.PayloadCommit
	for _, rec := range strings.Split(string(out), "\x1e") {
		f := strings.SplitN(rec, "\x1f", 8)
		if len(f) < 8 {
			continue
		}
		when, _ := time.Parse(time.RFC3339, f[5])
		ts := strfmt.DateTime(when)
		c := &models.PayloadCommit{
			ID: f[0], Message: f[6], URL: b.base + b.repo.FullName() + "/commit/" + f[0],
			Author:    &models.PayloadUser{Name: f[1], Email: strfmt.Email(f[2])},
			Committer: &models.PayloadUser{Name: f[3], Email: strfmt.Email(f[4])},
			Timestamp: &ts,
			Added:     []string{}, Removed: []string{}, Modified: []string{},
		}
		for _, line := range strings.Split(f[7], "\n") {
			status, path, ok := strings.Cut(strings.TrimSpace(line), "\t")
			if !ok {
				continue
			}
			switch status[:1] {
			case "A":
				c.Added = append(c.Added, path)
			case "D":
				c.Removed = append(c.Removed, path)
			default:
				c.Modified = append(c.Modified, path)
			}
		}
		list = append(list, c)
	}
	return list
}

// commit is one commit as payloads show it (without the files it
// changed), with its accounts and signature verdict.
func (b *builder) commit(ctx context.Context, sha string) (*models.PayloadCommit, error) {
	dir, err := b.s.Git.Path(b.repo.Owner.Name, b.repo.Name)
	if err != nil {
		return nil, err
	}
	out, err := runGit(ctx, dir, "log", "-n", "1", logFormat, sha, "--")
	if err != nil {
		return nil, err
	}
	list := b.parseLog(out)
	if len(list) == 0 {
		return nil, nil
	}
	if err := b.nameAccounts(ctx, list); err != nil {
		return nil, err
	}
	if err := b.verify(ctx, list); err != nil {
		return nil, err
	}
	return list[0], nil
}

// verify sets each commit's signature verdict, as the commits API gives
// it, from one verification of the whole list.
func (b *builder) verify(ctx context.Context, list []*models.PayloadCommit) error {
	if len(list) == 0 {
		return nil
	}
	g, err := b.s.OpenGit(b.repo)
	if err != nil {
		return err
	}
	commits := make([]*object.Commit, len(list))
	for i, c := range list {
		if commits[i], err = g.Commit(plumbing.NewHash(c.ID)); err != nil {
			return err
		}
	}
	verdicts, err := b.s.Verifier().Verify(ctx, commits)
	if err != nil {
		return err
	}
	for i, c := range list {
		c.Verification = convert.Verification(b.base, verdicts[i], b.sender)
	}
	return nil
}

// nameAccounts sets the login of the account behind each commit's author
// and committer address (a primary or activated address, as the commits
// API matches them), in two statements for the whole list.
func (b *builder) nameAccounts(ctx context.Context, list []*models.PayloadCommit) error {
	var emails []string
	for _, c := range list {
		emails = append(emails, string(c.Author.Email), string(c.Committer.Email))
	}
	owners, err := b.s.Store.Emails().OwnerIDs(ctx, emails)
	if err != nil || len(owners) == 0 {
		return err
	}
	ids := make([]int64, 0, len(owners))
	for _, id := range owners {
		ids = append(ids, id)
	}
	users, err := b.s.Store.Users().FindByIDs(ctx, ids)
	if err != nil {
		return err
	}
	login := func(email strfmt.Email) string {
		if u := users[owners[strings.ToLower(string(email))]]; u != nil {
			return u.Name
		}
		return ""
	}
	for _, c := range list {
		c.Author.UserName, c.Committer.UserName = login(c.Author.Email), login(c.Committer.Email)
	}
	return nil
}

func runGit(ctx context.Context, dir string, args ...string) ([]byte, error) {
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, "git", append([]string{"--git-dir", dir}, args...)...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, errors.Join(err, fmt.Errorf("git %s: %s", args[0], strings.TrimSpace(stderr.String())))
	}
	return stdout.Bytes(), nil
}

// packageEvent is what a package event reaches, as the reference sends
// it: the hooks of the package's owner, of the repository it is linked to
// and the system hooks, and the payload, rendered from the event alone
// (a deleted version's rows are gone, and a created one may be by now).
func (s Service) packageEvent(ctx context.Context, e *store.Event) ([]*store.Hook, []hookEvent, error) {
	var p events.Package
	if err := json.Unmarshal(e.Payload, &p); err != nil {
		return nil, nil, err
	}
	owner, err := s.Store.Users().FindByID(ctx, p.Owner.ID)
	if isNotFound(err) {
		return nil, nil, nil // the owner's hooks went with it
	} else if err != nil {
		return nil, nil, err
	}
	var repo *store.Repository
	if p.RepoID != 0 {
		repo, err = s.Store.Repos().FindByID(ctx, p.RepoID)
		if isNotFound(err) {
			repo = nil
		} else if err != nil {
			return nil, nil, err
		}
	}
	repoID := int64(0)
	if repo != nil {
		repoID = repo.ID
	}
	hooks, err := s.Store.Hooks().ForRepo(ctx, repoID, owner.ID)
	if err != nil || len(hooks) == 0 {
		return nil, nil, err
	}
	b, err := s.newBuilder(ctx, e, repo)
	if err != nil {
		return nil, nil, err
	}
	creator, err := s.Store.Users().FindByID(ctx, p.CreatorID)
	if isNotFound(err) {
		creator = nil // rendered as the ghost
	} else if err != nil {
		return nil, nil, err
	}
	var perm access.Permission
	if repo != nil {
		if perm, err = b.senderPerm(ctx); err != nil {
			return nil, nil, err
		}
	}
	// Lower-cased as the store keys names and versions.
	v := &store.PackageVersion{ID: p.ID, PackageID: p.PackageID, OwnerID: owner.ID, Type: p.Type, CreatorID: p.CreatorID,
		Version: p.Version, LowerVersion: strings.ToLower(p.Version), CreatedAt: p.CreatedAt,
		Package: &store.Package{ID: p.PackageID, OwnerID: owner.ID, RepoID: p.RepoID, Type: p.Type, Name: p.Name, LowerName: strings.ToLower(p.Name)},
		Owner:   owner, Creator: creator, Repo: repo}
	action := map[events.Kind]string{events.PackageCreated: "created", events.PackageDeleted: "deleted"}[events.Kind(e.Kind)]
	payload := &packagePayload{Action: action, Package: convert.Package(s.Links(b.base), v, perm, b.sender), Sender: b.apiSender()}
	if owner.IsOrganization() {
		payload.Organization = convert.Org(b.base, owner)
	}
	return hooks, []hookEvent{{Type: "package", Action: action, Payload: payload}}, nil
}
