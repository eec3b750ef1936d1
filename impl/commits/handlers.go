// Package commits serves a repository's history: the commit list and one
// commit, each with the accounts behind its addresses, the files it
// changes, its line counts and the verdict on its signature.
package commits

import (
	"context"
	"strings"
	"time"

	"github.com/go-git/go-git/v6/plumbing"
	"github.com/go-git/go-git/v6/plumbing/object"
	"github.com/go-openapi/runtime/middleware"
	"github.com/go-openapi/strfmt"
	"github.com/go-openapi/swag/conv"

	"repohost/impl/apierr"
	"repohost/impl/app"
	"repohost/impl/auth"
	"repohost/impl/convert"
	"repohost/impl/paging"
	"repohost/models"
	"repohost/restapi/operations/repository"
	"repohost/store"
	"repohost/store/gitstore"
)

// The reference's refusals.
const (
	msgRepoEmpty = "Git Repository is empty."
	msgBadRef    = "no valid ref or sha"
)

// Handlers implements the commit operations of the repository tag.
type Handlers struct {
	*app.Deps
}

// options are the parts of a commit the caller asked for; each is on
// unless turned off, as in the reference.
type options struct {
	stat, verification, files bool
}

func optionsOf(stat, verification, files *bool) options {
	on := func(b *bool) bool { return b == nil || *b }
	return options{stat: on(stat), verification: on(verification), files: on(files)}
}

func (h Handlers) RepoGetAllCommits(ctx context.Context, params repository.RepoGetAllCommitsParams) middleware.Responder {
	p := auth.FromContext(ctx)
	r, g, err := h.CodeRepo(ctx, p, params.Owner, params.Repo)
	if err != nil {
		return h.Fail(err)
	}
	if empty, err := g.IsEmpty(); err != nil || empty {
		if err == nil {
			err = apierr.Conflict(msgRepoEmpty)
		}
		return h.Fail(err)
	}
	from, err := g.Resolve(conv.Value(params.Sha))
	if err != nil {
		return h.Fail(err)
	}
	q := gitstore.LogQuery{From: from.Commit.Hash, Since: timeOf(params.Since), Until: timeOf(params.Until)}
	if path := strings.Trim(conv.Value(params.Path), "/"); path != "" {
		if q.Path, err = gitstore.CleanTreePath(path); err != nil {
			return h.Fail(apierr.Validation("invalid path %q", conv.Value(params.Path)))
		}
	}
	if not := conv.Value(params.Not); not != "" {
		excluded, err := g.Resolve(not)
		if err != nil {
			return h.Fail(err)
		}
		q.Not = []plumbing.Hash{excluded.Commit.Hash}
	}
	pg := h.Page(params.Page, params.Limit)
	win := pg.Store()
	list, total, err := g.Log(ctx, q, win.Offset, win.Limit)
	if err != nil {
		return h.Fail(err)
	}
	out, err := h.render(ctx, app.BaseURL(params.HTTPRequest), p, r, g, list,
		optionsOf(params.Stat, params.Verification, params.Files))
	if err != nil {
		return h.Fail(err)
	}
	pageCount := (total + int64(pg.Limit) - 1) / int64(pg.Limit)
	return repository.NewRepoGetAllCommitsOK().WithPayload(out).
		WithXTotalCount(total).WithLink(paging.Link(params.HTTPRequest, pg, total)).
		WithXTotal(total).WithXPage(int64(pg.Page)).WithXPerPage(int64(pg.Limit)).
		WithXPageCount(pageCount).WithXHasMore(int64(pg.Page) < pageCount)
}

func (h Handlers) RepoGetSingleCommit(ctx context.Context, params repository.RepoGetSingleCommitParams) middleware.Responder {
	p := auth.FromContext(ctx)
	r, g, err := h.CodeRepo(ctx, p, params.Owner, params.Repo)
	if err != nil {
		return h.Fail(err)
	}
	if gitstore.ValidRefName(plumbing.NewBranchReferenceName(params.Sha)) != nil {
		return h.Fail(apierr.Validation(msgBadRef))
	}
	c, err := g.Resolve(params.Sha)
	if err != nil {
		return h.Fail(err)
	}
	out, err := h.render(ctx, app.BaseURL(params.HTTPRequest), p, r, g, []*object.Commit{c.Commit},
		optionsOf(params.Stat, params.Verification, params.Files))
	if err != nil {
		return h.Fail(err)
	}
	return repository.NewRepoGetSingleCommitOK().WithPayload(out[0])
}

func timeOf(t *strfmt.DateTime) *time.Time {
	if t == nil {
		return nil
	}
	v := time.Time(*t)
	return &v
}

// render converts a page of commits with what o asks for: the accounts
// behind their addresses and the signature verdicts in a fixed number of
// statements for the whole page, the files and line counts from git.
func (h Handlers) render(ctx context.Context, base string, p *auth.Principal, r *store.Repository, g *gitstore.GitRepo,
	list []*object.Commit, o options) ([]*models.Commit, error) {
	accounts, err := h.accounts(ctx, p, list)
	if err != nil {
		return nil, err
	}
	extras := make([]convert.CommitExtras, len(list))
	if o.verification {
		vs, err := h.Verifier().Verify(ctx, list)
		if err != nil {
			return nil, err
		}
		for i := range list {
			extras[i].Verification = vs[i]
		}
	}
	out := make([]*models.Commit, 0, len(list))
	for i, c := range list {
		x := &extras[i]
		x.Author = accounts[strings.ToLower(c.Author.Email)]
		x.Committer = accounts[strings.ToLower(c.Committer.Email)]
		if o.files {
			if x.Files, err = g.CommitFiles(c); err != nil {
				return nil, err
			}
		}
		if o.stat {
			add, del, err := g.CommitStats(ctx, c)
			if err != nil {
				return nil, err
			}
			x.Stats = &models.CommitStats{Additions: add, Deletions: del, Total: add + del}
		}
		out = append(out, convert.Commit(base, r, c, *x, app.Viewer(p)))
	}
	return out, nil
}

// accounts maps the commits' author and committer addresses (lower-cased)
// to the accounts that own them and p may see, in two statements.
func (h Handlers) accounts(ctx context.Context, p *auth.Principal, list []*object.Commit) (map[string]*store.User, error) {
	seen := map[string]bool{}
	var emails []string
	for _, c := range list {
		for _, e := range []string{c.Author.Email, c.Committer.Email} {
			if e = strings.ToLower(e); e != "" && !seen[e] {
				seen[e] = true
				emails = append(emails, e)
			}
		}
	}
	owners, err := h.Store.Emails().OwnerIDs(ctx, emails)
	if err != nil {
		return nil, err
	}
	ids := make([]int64, 0, len(owners))
	for _, id := range owners {
		ids = append(ids, id)
	}
	users, err := h.Store.Users().FindByIDs(ctx, ids)
	if err != nil {
		return nil, err
	}
	out := make(map[string]*store.User, len(owners))
	for email, id := range owners {
		u := users[id]
		if u == nil {
			continue
		}
		ok, err := h.Access.CanSeeUser(ctx, p, u)
		if err != nil {
			return nil, err
		}
		if ok {
			out[email] = u
		}
	}
	return out, nil
}

// Render renders commits of r as the commit list does, for other areas (a
// pull request's commits); nil options are on.
func Render(ctx context.Context, d *app.Deps, base string, p *auth.Principal, r *store.Repository, g *gitstore.GitRepo,
	list []*object.Commit, stat, verification, files *bool) ([]*models.Commit, error) {
	return Handlers{Deps: d}.render(ctx, base, p, r, g, list, optionsOf(stat, verification, files))
}
