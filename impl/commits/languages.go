package commits

import (
	"context"
	"errors"

	"github.com/go-openapi/runtime/middleware"

	"repohost/impl/auth"
	"repohost/models"
	"repohost/restapi/operations/repository"
	"repohost/store"
)

// RepoGetLanguages counts the bytes of each language on the default
// branch. The count depends only on the tree, so it is computed once per
// tree and kept in the database (one per repository, the newest): a
// repository read again at the same tree costs one statement and no walk.
func (h Handlers) RepoGetLanguages(ctx context.Context, params repository.RepoGetLanguagesParams) middleware.Responder {
	r, g, err := h.CodeRepo(ctx, auth.FromContext(ctx), params.Owner, params.Repo)
	if err != nil {
		return h.Fail(err)
	}
	out := models.LanguageStatistics{}
	if empty, err := g.IsEmpty(); err != nil || empty {
		if err != nil {
			return h.Fail(err)
		}
		return repository.NewRepoGetLanguagesOK().WithPayload(out)
	}
	head, err := g.Resolve("")
	if err != nil {
		return h.Fail(err)
	}
	tree, err := head.Commit.Tree()
	if err != nil {
		return h.Fail(err)
	}
	cached, err := h.Store.LanguageStats().Find(ctx, r.ID)
	switch {
	case err == nil && cached.TreeID == tree.Hash.String():
		for k, v := range cached.Sizes {
			out[k] = v
		}
		return repository.NewRepoGetLanguagesOK().WithPayload(out)
	case err != nil && !errors.Is(err, store.ErrNotFound):
		return h.Fail(err)
	}
	sizes, err := g.LanguageSizes(tree)
	if err != nil {
		return h.Fail(err)
	}
	if err := h.Store.LanguageStats().Put(ctx, &store.LanguageStats{RepoID: r.ID, TreeID: tree.Hash.String(), Sizes: sizes}); err != nil {
		// The count stands; only the next request pays for it again.
		h.Log.WarnContext(ctx, "store language stats", "repo", r.FullName(), "err", err)
	}
	for k, v := range sizes {
		out[k] = v
	}
	return repository.NewRepoGetLanguagesOK().WithPayload(out)
}
