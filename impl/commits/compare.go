package commits

import (
	"context"
	"strings"

	"github.com/go-openapi/runtime/middleware"

	"repohost/impl/apierr"
	"repohost/impl/app"
	"repohost/impl/auth"
	"repohost/models"
	"repohost/restapi/operations/repository"
)

// maxCompareCommits bounds the commits a comparison renders (each with
// its files and line counts); total_commits still counts them all.
const maxCompareCommits = 250

// RepoCompareDiff lists the commits of head that base lacks: with three
// dots those since their merge base, with two those not reachable from
// base, as git reads the two notations.
func (h Handlers) RepoCompareDiff(ctx context.Context, params repository.RepoCompareDiffParams) middleware.Responder {
	p := auth.FromContext(ctx)
	r, g, err := h.CodeRepo(ctx, p, params.Owner, params.Repo)
	if err != nil {
		return h.Fail(err)
	}
	base, head, ok := strings.Cut(params.Basehead, "...")
	threeDots := ok
	if !ok {
		base, head, ok = strings.Cut(params.Basehead, "..")
	}
	if !ok || base == "" || head == "" {
		return h.Fail(apierr.Validation("basehead %q is not base...head or base..head", params.Basehead))
	}
	b, err := g.Resolve(base)
	if err != nil {
		return h.Fail(err)
	}
	hd, err := g.Resolve(head)
	if err != nil {
		return h.Fail(err)
	}
	from := b.Commit.Hash
	if threeDots {
		if from, err = g.MergeBase(ctx, b.Commit.Hash, hd.Commit.Hash); err != nil {
			return h.Fail(err)
		}
	}
	all, err := g.Between(ctx, from, hd.Commit.Hash, true)
	if err != nil {
		return h.Fail(err)
	}
	list := all
	if len(list) > maxCompareCommits {
		list = list[:maxCompareCommits]
	}
	out, err := h.render(ctx, app.BaseURL(params.HTTPRequest), p, r, g, list, optionsOf(nil, nil, nil))
	if err != nil {
		return h.Fail(err)
	}
	return repository.NewRepoCompareDiffOK().WithPayload(&models.Compare{TotalCommits: int64(len(all)), Commits: out})
}
