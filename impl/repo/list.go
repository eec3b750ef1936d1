package repo

import (
	"context"
	"net/http"

	"github.com/go-openapi/runtime/middleware"

	"repohost/impl/access"
	"repohost/impl/app"
	"repohost/impl/auth"
	"repohost/impl/convert"
	"repohost/impl/listcache"
	"repohost/impl/paging"
	"repohost/models"
	"repohost/store"
)

// Models renders a page of repositories (owners loaded) with p's permission
// on each. The caller's grants are read once for the page, so the number
// of statements does not grow with the page nor with the caller's teams.
func Models(ctx context.Context, d *app.Deps, p *auth.Principal, base string, repos []*store.Repository) ([]*models.Repository, error) {
	perms, err := d.Access.Repos(ctx, p, repos)
	if err != nil {
		return nil, err
	}
	viewer := app.Viewer(p)
	out := make([]*models.Repository, 0, len(repos))
	for i, r := range repos {
		out = append(out, convert.Repo(d.Links(base), r, perms[i], viewer))
	}
	return out, nil
}

// List answers a page of the repositories q finds, rendered for p, from
// the rendered lists kept in d.RepoLists when it holds the answer. route
// names the list (its answers differ in shape); ok builds the route's OK
// answer from the page, its total and its Link. gen is d.RepoLists'
// generation, taken before anything the answer depends on was read (the
// owner's visibility checked by the caller included): an answer rendered
// here is kept only while none of app.RepoListTables has changed since.
//
// The key holds everything that changes the bytes besides those tables'
// rows: the route, the root URL, the store query (q, with the viewer its
// SQL filter sees), the page, and the caller's facts the permission in each
// repository and the owner's rendering depend on (access.Viewer: user id,
// site admin, public-only token, restricted, a workflow task's
// repository), apart from q's viewer, which a query may blank.
func List(ctx context.Context, d *app.Deps, gen uint64, p *auth.Principal, req *http.Request, route string,
	q store.RepoSearch, pg paging.Params,
	ok func(out []*models.Repository, total int64, link string) middleware.Responder) (middleware.Responder, error) {
	base := app.BaseURL(req)
	key := listcache.Key(struct {
		Route  string
		Base   string
		Query  store.RepoSearch
		Page   paging.Params
		Caller store.RepoViewer
	}{route, base, q, pg, access.Viewer(p)})
	link := func(total int64) string { return paging.Link(req, pg, total) }
	return d.RepoLists.Serve(key, gen, link, func() (middleware.Responder, int64, error) {
		repos, total, err := d.Store.Repos().Search(ctx, q, pg.Store())
		if err != nil {
			return nil, 0, err
		}
		out, err := Models(ctx, d, p, base, repos)
		if err != nil {
			return nil, 0, err
		}
		return ok(out, total, link(total)), total, nil
	})
}
