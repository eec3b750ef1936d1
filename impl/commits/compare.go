package commits

import (
	"bytes"
	"context"
	"net/http"
	"strings"

	"github.com/go-openapi/runtime"
	"github.com/go-openapi/runtime/middleware"
	"github.com/go-openapi/swag/conv"

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
// base, as git reads the two notations. With output=diff it answers the
// unified diff from that point to head instead, with output=patch those
// commits as git format-patch writes them.
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
	if output := conv.Value(params.Output); output != "" {
		// The comparison as text, between the same two commits the JSON
		// lists the commits of.
		var buf bytes.Buffer
		if output == "patch" {
			err = g.WritePatch(ctx, &buf, from, hd.Commit.Hash)
		} else {
			err = g.WriteDiff(ctx, &buf, from, hd.Commit.Hash, false)
		}
		if err != nil {
			return h.Fail(err)
		}
		return middleware.ResponderFunc(func(w http.ResponseWriter, _ runtime.Producer) {
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
			w.WriteHeader(http.StatusOK)
			_, _ = w.Write(buf.Bytes())
		})
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
