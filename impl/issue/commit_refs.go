package issue

import (
	"context"
	"fmt"
	"html"
	"net/url"
	"regexp"
	"strconv"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"

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

// IssueRefs are the issues text refers to, each once, in order.
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
		if n, err := strconv.ParseInt(m(3), 10, 64); err == nil && n > 0 {
			ref := IssueRef{Owner: m(1), Repo: m(2), Index: n}
			dup := false
			for _, o := range out {
				dup = dup || (strings.EqualFold(o.Owner, ref.Owner) && strings.EqualFold(o.Repo, ref.Repo) && o.Index == ref.Index)
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
	for _, c := range ch.Changes {
		if !plumbing.ReferenceName(c.Name).IsBranch() || c.New == "" || plumbing.NewHash(c.New).IsZero() {
			continue
		}
		list, err := brought(ctx, g, c)
		if err != nil {
			return err
		}
		commits = append(commits, list...)
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
		for _, c := range commits {
			for _, ref := range IssueRefs(c.Message) {
				if err := s.commitRef(ctx, p, r, perm, ref, c); err != nil {
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
// may not read it or it has it already.
func (s Service) commitRef(ctx context.Context, p *auth.Principal, r *store.Repository, perm access.Permission, ref IssueRef, c *object.Commit) error {
	is, _, _, err := s.otherIssue(ctx, p, r, perm, ref)
	if err != nil {
		if app.IsNotFound(err) {
			return nil
		}
		return err
	}
	title, _, _ := strings.Cut(c.Message, "\n")
	t := s.Clock.Now()
	_, err = s.Store.Timeline().AddOnce(ctx, &store.IssueEvent{
		IssueID: is.ID, RepoID: is.RepoID, PosterID: p.User.ID, Type: store.EventCommitRef, CommitSHA: c.Hash.String(),
		Body:      fmt.Sprintf(`<a href="/%s/commit/%s">%s</a>`, html.EscapeString(r.FullName()), url.PathEscape(c.Hash.String()), html.EscapeString(title)),
		CreatedAt: t, UpdatedAt: t,
	})
	return err
}

// recordIssueRefs gives each issue text (the body of origin, or of its
// comment commentID) refers to a timeline event pointing back, in the
// caller's transaction: issue_ref (pull_ref from a pull request's
// description, comment_ref from a comment), once per referring text,
// only for issues doer may read, never for origin itself.
func (s Service) recordIssueRefs(ctx context.Context, doer *store.User, r *store.Repository, perm access.Permission, origin *store.Issue, commentID int64, text string) error {
	refs := IssueRefs(text)
	if len(refs) == 0 || doer == nil {
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
	for _, ref := range refs {
		target, _, _, err := s.otherIssue(ctx, p, r, perm, ref)
		if err != nil {
			if app.IsNotFound(err) {
				continue
			}
			return err
		}
		if target.ID == origin.ID {
			continue
		}
		t := s.Clock.Now()
		if _, err := s.Store.Timeline().AddOnce(ctx, &store.IssueEvent{
			IssueID: target.ID, RepoID: target.RepoID, PosterID: doer.ID, Type: typ,
			RefIssueID: origin.ID, RefCommentID: commentID, CreatedAt: t, UpdatedAt: t,
		}); err != nil {
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
