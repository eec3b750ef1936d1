package issue

import (
	"context"
	"fmt"
	"html"
	"net/url"
	"regexp"
	"strconv"
	"strings"

	"github.com/go-git/go-git/v6/plumbing"
	"github.com/go-git/go-git/v6/plumbing/object"

	"repohost/impl/access"
	"repohost/impl/app"
	"repohost/impl/auth"
	"repohost/impl/events"
	"repohost/store"
	"repohost/store/gitstore"
)

// issueRefRe finds the issues a text refers to: #N of its own repository,
// or owner/repo#N, standing apart from the words around it.
var issueRefRe = regexp.MustCompile(`(?:^|[\s(\[])(?:([0-9A-Za-z_.-]+)/([0-9A-Za-z_.-]+))?#([0-9]+)(?:$|[\s)\]]|[:;,.?!](?:\s|$))`)

// closeKeywords and reopenKeywords are the reference's default words
// that, right before a reference ("fixes #3", "Reopens: #4"), ask for
// the issue to be closed or reopened.
var (
	closeKeywords  = regexp.MustCompile(`(?i)(?:\s|^|\(|\[)(?:close|closes|closed|fix|fixes|fixed|resolve|resolves|resolved):? $`)
	reopenKeywords = regexp.MustCompile(`(?i)(?:\s|^|\(|\[)(?:reopen|reopens|reopened):? $`)
)

// refAction is the action the words before a reference ask for.
func refAction(before string) int {
	switch {
	case closeKeywords.MatchString(before):
		return store.RefCloses
	case reopenKeywords.MatchString(before):
		return store.RefReopens
	}
	return store.RefNone
}

// IssueRefs are the issues text refers to, each once, in order, each with
// the action a keyword before it asks for (the last such one of an issue
// named twice).
func IssueRefs(text string) []IssueRef {
	var out []IssueRef
	// Each match may end on the separator the next one starts with.
	for i := 0; i < len(text); {
		loc := issueRefRe.FindStringSubmatchIndex(text[i:])
		if loc == nil {
			break
		}
		m := func(k int) string {
			if loc[2*k] < 0 {
				return ""
			}
			return text[i+loc[2*k] : i+loc[2*k+1]]
		}
		start := i + loc[2*3] - 1 // the '#'
		if loc[2] >= 0 {
			start = i + loc[2]
		}
		if n, err := strconv.ParseInt(m(3), 10, 64); err == nil && n > 0 {
			ref := IssueRef{Owner: m(1), Repo: m(2), Index: n, Action: refAction(text[:start])}
			dup := false
			for k, o := range out {
				if strings.EqualFold(o.Owner, ref.Owner) && strings.EqualFold(o.Repo, ref.Repo) && o.Index == ref.Index {
					dup = true
					if ref.Action != store.RefNone {
						out[k].Action = ref.Action
					}
				}
			}
			if !dup {
				out = append(out, ref)
			}
		}
		i += loc[2*3+1] // past the number
	}
	return out
}

// maxNewBranchCommits is how many of a new branch's newest commits are
// read for references, as the reference reads.
const maxNewBranchCommits = 10

// CommitRefsConsumer is the outbox consumer that gives each issue a pushed
// commit refers to (#N in its message) a commit_ref timeline event, once
// per issue and commit whichever branches bring it, when the pusher may
// read that issue.
func (s Service) CommitRefsConsumer() events.Consumer {
	return events.Consumer{Name: "commit_refs", Kinds: []events.Kind{events.RefsChanged}, Ordered: true, Workers: 2, Handle: s.onRefsChanged}
}

func (s Service) onRefsChanged(ctx context.Context, e events.Event) error {
	ch, ok := e.Payload.(events.Refs)
	if !ok || e.ActorID == 0 {
		return nil
	}
	r, err := s.Store.Repos().FindByID(ctx, e.RepoID)
	if err != nil {
		if app.IsNotFound(err) {
			return nil
		}
		return err
	}
	doer, err := s.Store.Users().FindByID(ctx, e.ActorID)
	if err != nil {
		if app.IsNotFound(err) {
			return nil
		}
		return err
	}
	g, err := s.OpenGit(r)
	if err != nil {
		return err
	}
	var commits []*object.Commit
	var branches []string // each commit's branch
	for _, c := range ch.Changes {
		if !plumbing.ReferenceName(c.Name).IsBranch() || c.New == "" || plumbing.NewHash(c.New).IsZero() {
			continue
		}
		list, err := brought(ctx, g, c)
		if err != nil {
			return err
		}
		commits = append(commits, list...)
		for range list {
			branches = append(branches, plumbing.ReferenceName(c.Name).Short())
		}
	}
	if len(commits) == 0 {
		return nil
	}
	p := &auth.Principal{User: doer, Signer: doer}
	perm, err := s.Access.Repo(ctx, p, r)
	if err != nil {
		return err
	}
	// Git is read above; the events are written together below.
	return s.Store.WithTx(ctx, func(ctx context.Context) error {
		for i, c := range commits {
			for _, ref := range IssueRefs(c.Message) {
				if err := s.commitRef(ctx, p, r, perm, ref, c, branches[i]); err != nil {
					return err
				}
			}
		}
		return nil
	})
}

// brought lists the commits a ref change brings: those the old tip lacked,
// or for a new branch its newest few.
func brought(ctx context.Context, g *gitstore.GitRepo, c events.RefChange) ([]*object.Commit, error) {
	head := plumbing.NewHash(c.New)
	if c.Old == "" || plumbing.NewHash(c.Old).IsZero() {
		list, _, err := g.Log(ctx, gitstore.LogQuery{From: head}, 0, maxNewBranchCommits)
		return list, err
	}
	return g.Between(ctx, plumbing.NewHash(c.Old), head, true)
}

// commitRef records commit c's reference to the issue ref names, unless p
// may not read it or it has it already. A commit pushed to the default branch
// of its repository that closes or reopens the issue with a keyword does so
// when p may write to its issues, as the reference does.
func (s Service) commitRef(ctx context.Context, p *auth.Principal, r *store.Repository, perm access.Permission, ref IssueRef, c *object.Commit, branch string) error {
	is, ir, iperm, err := s.otherIssue(ctx, p, r, perm, ref)
	if err != nil {
		if app.IsNotFound(err) {
			return nil
		}
		return err
	}
	title, _, _ := strings.Cut(c.Message, "\n")
	t := s.Clock.Now()
	if _, err = s.Store.Timeline().AddOnce(ctx, &store.IssueEvent{
		IssueID: is.ID, RepoID: is.RepoID, PosterID: p.User.ID, Type: store.EventCommitRef, CommitSHA: c.Hash.String(),
		Body:      fmt.Sprintf(`<a href="/%s/commit/%s">%s</a>`, html.EscapeString(r.FullName()), url.PathEscape(c.Hash.String()), html.EscapeString(title)),
		CreatedAt: t, UpdatedAt: t,
	}); err != nil {
		return err
	}
	if ref.Action == store.RefNone || is.IsPull || branch != r.DefaultBranch || !writer(iperm, false) {
		return nil
	}
	closed := ref.Action == store.RefCloses
	if is.IsClosed == closed || ir.IsArchived {
		return nil
	}
	if closed {
		if n, err := s.OpenDependencies(ctx, is); err != nil || n > 0 {
			return err
		}
	}
	_, err = s.SetState(ctx, p.User, ir, is.Index, closed)
	return err
}

// recordIssueRefs gives each issue text (the title and body of origin, or
// its comment commentID) refers to a timeline event pointing back, in the
// caller's transaction: issue_ref (pull_ref from a pull request,
// comment_ref from a comment), one per referring text, only for issues
// doer may read, never for origin itself. Each records the action its
// keyword asks for where the reference allows one: only a pull request
// closes or reopens, only issues, and only when doer posted the issue,
// may write to it, or names it from the pull request's own description in
// its repository (whoever merges then answers for it). The references the
// text no longer makes are neutered, as the reference does on an edit.
func (s Service) recordIssueRefs(ctx context.Context, doer *store.User, r *store.Repository, perm access.Permission, origin *store.Issue, commentID int64, text string) error {
	if doer == nil {
		return nil
	}
	typ := store.EventIssueRef
	switch {
	case commentID != 0:
		typ = store.EventCommentRef
	case origin.IsPull:
		typ = store.EventPullRef
	}
	p := actingAs(ctx, doer)
	var kept []int64
	for _, ref := range IssueRefs(text) {
		target, _, tperm, err := s.otherIssue(ctx, p, r, perm, ref)
		if err != nil {
			if app.IsNotFound(err) {
				continue
			}
			return err
		}
		if target.ID == origin.ID {
			continue
		}
		action := ref.Action
		if target.IsPull || !origin.IsPull {
			action = store.RefNone
		}
		if action != store.RefNone && doer.ID != target.PosterID && !writer(tperm, target.IsPull) &&
			(target.RepoID != origin.RepoID || commentID != 0) {
			action = store.RefNone
		}
		t := s.Clock.Now()
		if err := s.Store.Timeline().Reference(ctx, &store.IssueEvent{
			IssueID: target.ID, RepoID: target.RepoID, PosterID: doer.ID, Type: typ,
			RefIssueID: origin.ID, RefCommentID: commentID, RefAction: action, CreatedAt: t, UpdatedAt: t,
		}); err != nil {
			return err
		}
		kept = append(kept, target.ID)
	}
	return s.Store.Timeline().NeuterRefs(ctx, origin.ID, commentID, kept, s.Clock.Now())
}

// ResolveRefs closes or reopens, as doer, the issues merged pull request
// pr (its issue) asked to in its description or comments: the newest
// such reference to each issue decides. An issue that cannot change (open
// dependencies, an archived repository) stays as it is, as the reference
// leaves it.
func (s Service) ResolveRefs(ctx context.Context, doer *store.User, pr *store.Issue) error {
	refs, err := s.Store.Timeline().ResolvingRefs(ctx, pr.ID)
	if err != nil {
		return err
	}
	for _, ref := range refs {
		target, err := s.Store.Issues().FindByID(ctx, ref.IssueID)
		if err != nil {
			if app.IsNotFound(err) {
				continue
			}
			return err
		}
		closed := ref.RefAction == store.RefCloses
		if target.IsPull || target.IsClosed == closed {
			continue
		}
		r, err := s.Store.Repos().FindByID(ctx, target.RepoID)
		if err != nil {
			return err
		}
		if closed {
			if n, err := s.OpenDependencies(ctx, target); err != nil {
				return err
			} else if n > 0 {
				continue
			}
		}
		if r.IsArchived {
			continue
		}
		if _, err := s.SetState(ctx, doer, r, target.Index, closed); err != nil {
			return err
		}
	}
	return nil
}

// actingAs is the principal doer acts through: the request's own when doer
// is its user, so that its token's scope bounds what doer may read as in
// every other access question; otherwise (a consumer acting for a pusher)
// doer as signed in.
func actingAs(ctx context.Context, doer *store.User) *auth.Principal {
	if p := auth.FromContext(ctx); p != nil && p.User != nil && p.User.ID == doer.ID {
		return p
	}
	return &auth.Principal{User: doer, Signer: doer}
}
