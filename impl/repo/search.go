package repo

import (
	"context"

	"github.com/go-openapi/runtime/middleware"
	"github.com/go-openapi/swag/conv"

	"repohost/impl/access"
	"repohost/impl/apierr"
	"repohost/impl/auth"
	"repohost/impl/paging"
	"repohost/models"
	"repohost/restapi/operations/repository"
	"repohost/store"
)

// sortColumns maps the sort parameter to its column. Nothing is stored for
// LFS (the server does not offer it), so every lfs_size is 0 and that order
// falls back to the tie-breaker, the id.
var sortColumns = map[string]string{
	"alpha":    "repositories.lower_name",
	"created":  "repositories.created_at",
	"updated":  "repositories.updated_at",
	"size":     "repositories.size",
	"git_size": "repositories.size",
	"lfs_size": "repositories.id",
	"id":       "repositories.id",
	"stars":    "repositories.num_stars",
	"forks":    "repositories.num_forks",
}

// searchOrder builds the ORDER BY clause from the fixed lists above, or a
// 422 for a value outside them.
func searchOrder(sortParam, orderParam *string) (string, error) {
	sortBy, order := conv.Value(sortParam), conv.Value(orderParam)
	if sortBy == "" {
		sortBy = "alpha"
	}
	col, ok := sortColumns[sortBy]
	if !ok {
		return "", apierr.Validation("Invalid sort mode: %q", sortBy)
	}
	switch order {
	case "", "asc":
		return col + " ASC", nil
	case "desc":
		if sortBy == "lfs_size" {
			return col + " ASC", nil
		}
		return col + " DESC", nil
	}
	return "", apierr.Validation("Invalid sort order: %q", order)
}

// searchQuery turns the parameters into a store query. none reports a
// filter nothing can match (teams and stars are not kept by this server).
func searchQuery(p *auth.Principal, params repository.RepoSearchParams) (q store.RepoSearch, none bool, err error) {
	q = store.RepoSearch{
		Viewer:             access.Viewer(p),
		Keyword:            conv.Value(params.Q),
		TopicOnly:          conv.Value(params.Topic),
		IncludeDescription: conv.Value(params.IncludeDesc),
		IsPrivate:          params.IsPrivate,
		IsTemplate:         params.Template,
		IsArchived:         params.Archived,
		PriorityOwnerID:    conv.Value(params.PriorityOwnerID),
	}
	// private=false leaves out every private repository, even the ones the
	// caller may see, and everything of non-public owners: the caller then
	// sees what an anonymous one does.
	if params.Private != nil && !*params.Private {
		q.Viewer = store.RepoViewer{}
	}
	if q.OrderBy, err = searchOrder(params.Sort, params.Order); err != nil {
		return q, false, err
	}
	collaborative := false
	yes, no := true, false
	switch mode := conv.Value(params.Mode); mode {
	case "":
	case "fork":
		q.IsFork = &yes
	case "source":
		q.IsFork, q.IsMirror = &no, &no
	case "mirror":
		q.IsMirror = &yes
	case "collaborative":
		q.IsMirror = &no
		collaborative = true
	default:
		return q, false, apierr.Validation("Invalid search mode: %q", mode)
	}
	if uid := conv.Value(params.UID); uid > 0 {
		q.RelatedUserID = uid
		switch {
		case conv.Value(params.Exclusive):
			q.RelatedOwned = true
		case collaborative:
			q.RelatedMember = true
		default:
			q.RelatedOwned, q.RelatedMember = true, true
		}
	}
	none = conv.Value(params.TeamID) > 0 || conv.Value(params.StarredBy) > 0
	return q, none, nil
}

func (h Handlers) RepoSearch(ctx context.Context, params repository.RepoSearchParams) middleware.Responder {
	gen := h.RepoLists.Generation(ctx)
	p := auth.FromContext(ctx)
	q, none, err := searchQuery(p, params)
	if err != nil {
		return h.Fail(err)
	}
	pg := h.Page(params.Page, params.Limit)
	ok := func(data []*models.Repository, total int64, link string) middleware.Responder {
		return repository.NewRepoSearchOK().WithXTotalCount(total).WithLink(link).
			WithPayload(&models.SearchResults{OK: true, Data: data})
	}
	if none {
		// Nothing to read: the empty page.
		return ok([]*models.Repository{}, 0, paging.Link(params.HTTPRequest, pg, 0))
	}
	r, err := List(ctx, h.Deps, gen, p, params.HTTPRequest, "search", q, pg, ok)
	if err != nil {
		return h.Fail(err)
	}
	return r
}
