package release

import (
	"context"
	"errors"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-openapi/runtime/middleware"
	"github.com/go-openapi/swag/conv"

	"repohost/impl/apierr"
	"repohost/impl/app"
	"repohost/impl/auth"
	"repohost/impl/convert"
	"repohost/impl/paging"
	"repohost/impl/refs"
	"repohost/restapi/operations/repository"
	"repohost/store"
	"repohost/store/gitstore"
)

// checkTagName validates a tag name as git does for refs/tags/<name>.
func checkTagName(field, name string) error {
	if name == "" {
		return apierr.Validation("[%s]: Required", field)
	}
	if len(name) > 255 || plumbing.NewTagReferenceName(name).Validate() != nil {
		return apierr.Validation("[%s]: invalid tag name %q", field, name)
	}
	return nil
}

func (h Handlers) RepoListTags(ctx context.Context, params repository.RepoListTagsParams) middleware.Responder {
	p := auth.FromContext(ctx)
	r, g, err := h.CodeRepo(ctx, p, params.Owner, params.Repo)
	if err != nil {
		return h.Fail(err)
	}
	// Tags live in git, not in the database: the page is cut from the
	// sorted list of refs.
	all, err := g.Tags()
	if err != nil {
		return h.Fail(err)
	}
	pg := h.Page(params.Page, params.Limit)
	w := pg.Store()
	from, to := min(w.Offset, len(all)), min(w.Offset+w.Limit, len(all))
	total := int64(len(all))
	return repository.NewRepoListTagsOK().
		WithPayload(convert.Tags(app.BaseURL(params.HTTPRequest), r, all[from:to])).
		WithXTotalCount(total).WithLink(paging.Link(params.HTTPRequest, pg, total))
}

func (h Handlers) RepoGetTag(ctx context.Context, params repository.RepoGetTagParams) middleware.Responder {
	p := auth.FromContext(ctx)
	r, g, err := h.CodeRepo(ctx, p, params.Owner, params.Repo)
	if err != nil {
		return h.Fail(err)
	}
	t, err := g.Tag(params.Tag)
	if err != nil {
		return h.Fail(err)
	}
	return repository.NewRepoGetTagOK().WithPayload(convert.Tag(app.BaseURL(params.HTTPRequest), r, t))
}

func (h Handlers) RepoCreateTag(ctx context.Context, params repository.RepoCreateTagParams) middleware.Responder {
	p, r, err := h.UnitWriteRepo(ctx, params.Owner, params.Repo, app.CodeUnit)
	if err != nil {
		return h.Fail(err)
	}
	o := params.Body
	if o == nil || o.TagName == nil {
		return h.Fail(apierr.Validation("[TagName]: Required"))
	}
	name := *o.TagName
	if err := checkTagName("TagName", name); err != nil {
		return h.Fail(err)
	}
	g, err := h.OpenGit(r)
	if err != nil {
		return h.Fail(err)
	}
	// Without a target the reference tags the default branch.
	target, err := g.Resolve(conv.Value(o.Target))
	if err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return h.Fail(apierr.NotFound("target not found"))
		}
		return h.Fail(err)
	}
	id, err := g.MakeTag(name, target.Commit.Hash, conv.Value(o.Message), app.Signature(p.User, h.Clock.Now()))
	if err != nil {
		return h.Fail(err)
	}
	_, err = refs.New(h.Deps).Apply(ctx, refs.Change{Repo: r, Doer: p, Git: g, Atomic: true,
		Updates: []*gitstore.RefUpdate{{Name: gitstore.TagRefName(name), New: id}}})
	if err != nil {
		return h.Fail(err)
	}
	t, err := g.Tag(name)
	if err != nil {
		return h.Fail(err)
	}
	return repository.NewRepoCreateTagCreated().WithPayload(convert.Tag(app.BaseURL(params.HTTPRequest), r, t))
}

func (h Handlers) RepoDeleteTag(ctx context.Context, params repository.RepoDeleteTagParams) middleware.Responder {
	p, r, err := h.UnitWriteRepo(ctx, params.Owner, params.Repo, app.CodeUnit)
	if err != nil {
		return h.Fail(err)
	}
	g, err := h.OpenGit(r)
	if err != nil {
		return h.Fail(err)
	}
	t, err := g.Tag(params.Tag)
	if err != nil {
		return h.Fail(err)
	}
	// A release stands on the tag: the reference refuses to pull it away.
	if _, err := h.Store.Releases().FindByTag(ctx, r.ID, params.Tag); err == nil {
		return h.Fail(apierr.Conflict("a tag attached to a release cannot be deleted directly"))
	} else if !errors.Is(err, store.ErrNotFound) {
		return h.Fail(err)
	}
	_, err = refs.New(h.Deps).Apply(ctx, refs.Change{Repo: r, Doer: p, Git: g, Atomic: true,
		Updates: []*gitstore.RefUpdate{{Name: gitstore.TagRefName(params.Tag), Old: t.ID}}})
	if err != nil {
		return h.Fail(err)
	}
	return repository.NewRepoDeleteTagNoContent()
}
