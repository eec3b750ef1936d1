package release

import (
	"context"
	"errors"

	"github.com/go-git/go-git/v6/plumbing"
	"github.com/go-openapi/runtime/middleware"
	"github.com/go-openapi/swag/conv"

	"repohost/impl/access"
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
	if len(name) > 255 || gitstore.ValidRefName(plumbing.NewTagReferenceName(name)) != nil {
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
	t, err := h.svc().TagCommit(ctx, p, r, *o.TagName, conv.Value(o.Target), conv.Value(o.Message))
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
	if err := h.svc().Untag(ctx, p, r, params.Tag); err != nil {
		return h.Fail(err)
	}
	return repository.NewRepoDeleteTagNoContent()
}

// TagCommit tags target (a branch, tag or commit; "" for the default
// branch) as name on behalf of p, annotated with message when it is not
// empty, through impl/refs (which records RefsChanged), and returns the
// tag.
func (s Service) TagCommit(ctx context.Context, p *auth.Principal, r *store.Repository, name, target, message string) (*gitstore.TagInfo, error) {
	if err := checkTagName("TagName", name); err != nil {
		return nil, err
	}
	g, err := s.OpenGit(r)
	if err != nil {
		return nil, err
	}
	at, err := g.Resolve(target)
	if errors.Is(err, store.ErrNotFound) {
		return nil, apierr.NotFound("target not found")
	}
	if err != nil {
		return nil, err
	}
	id, err := g.MakeTag(name, at.Commit.Hash, message, app.Signature(p.User, s.Clock.Now()))
	if err != nil {
		return nil, err
	}
	_, err = refs.New(s.Deps).Apply(ctx, refs.Change{Repo: r, Doer: p, Git: g, Atomic: true,
		Updates: []*gitstore.RefUpdate{{Name: gitstore.TagRefName(name), New: id}}})
	if err != nil {
		return nil, protectedTag(err, "user not allowed to create protected tag")
	}
	return g.Tag(name)
}

// Untag removes r's tag name on behalf of p; a tag a release stands
// on is refused (409), as in the reference.
func (s Service) Untag(ctx context.Context, p *auth.Principal, r *store.Repository, name string) error {
	g, err := s.OpenGit(r)
	if err != nil {
		return err
	}
	t, err := g.Tag(name)
	if err != nil {
		return err
	}
	if _, err := s.Store.Releases().FindByTag(ctx, r.ID, name); err == nil {
		return apierr.Conflict("a tag attached to a release cannot be deleted directly")
	} else if !errors.Is(err, store.ErrNotFound) {
		return err
	}
	_, err = refs.New(s.Deps).Apply(ctx, refs.Change{Repo: r, Doer: p, Git: g, Atomic: true,
		Updates: []*gitstore.RefUpdate{{Name: gitstore.TagRefName(name), Old: t.ID}}})
	return protectedTag(err, "user not allowed to delete protected tag")
}

// protectedTag turns the policy's refusal of a protected tag into the
// reference's answer for the tag and release APIs (422 with msg); other
// errors pass unchanged.
func protectedTag(err error, msg string) error {
	var refused *access.Refusal
	if errors.As(err, &refused) && refused.Reason == access.TagProtected {
		return apierr.Validation("%s", msg)
	}
	return err
}
