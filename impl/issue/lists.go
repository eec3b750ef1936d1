package issue

import (
	"net/http"

	"github.com/go-openapi/runtime/middleware"

	"repohost/impl/listcache"
	"repohost/impl/paging"
	"repohost/models"
	"repohost/restapi/operations/issue"
	"repohost/store"
)

// repoList answers a repository's issue list (issueListIssues) for viewer,
// from the rendered lists kept in Deps.IssueLists when it holds the answer.
// query is the list's filter (the repository's id included), as plain
// data: everything render reads besides the tables app.IssueListTables and
// the page. The caller has already checked access, after taking shared
// (listcache.Cache.Shared): an answer rendered here is kept only while
// nothing it was read from has changed since, and a write confined to
// another repository does not retire it.
func (s Service) repoList(req *http.Request, shared uint64, repoID int64, base string, viewer *store.User, query any, pg paging.Params,
	render func() ([]*models.Issue, int64, error)) middleware.Responder {
	return s.keptList(s.IssueLists, req, shared, repoID, listKey(base, viewer, query, pg), pg,
		func(link func(int64) string) (middleware.Responder, int64, error) {
			out, total, err := render()
			if err != nil {
				return nil, 0, err
			}
			return issue.NewIssueListIssuesOK().WithPayload(out).WithXTotalCount(total).WithLink(link(total)), total, nil
		})
}

// keptList answers a page of a list read from repository repoID's rows
// and shared ones through c (listcache.Cache.ServeRepo): render returns the
// route's OK answer, its Link set to link(total), with the total. shared
// was taken before anything the answer is read from, access included, and
// key holds everything besides the rows that changes the bytes (listKey).
func (s Service) keptList(c *listcache.Cache, req *http.Request, shared uint64, repoID int64, key string, pg paging.Params,
	render func(link func(total int64) string) (middleware.Responder, int64, error)) middleware.Responder {
	link := func(total int64) string { return paging.Link(req, pg, total) }
	r, err := c.ServeRepo(repoID, shared, key, link, func() (middleware.Responder, int64, error) { return render(link) })
	if err != nil {
		return s.Fail(err)
	}
	return r
}

// listKey is everything that changes the bytes of a repository's list
// besides the rows: the query, the page, the root URL and the viewer (an
// address is shown to its owner and to admins only, see convert.User).
func listKey(base string, viewer *store.User, query any, pg paging.Params) string {
	k := struct {
		Base   string
		Viewer int64
		Admin  bool
		Query  any
		Page   paging.Params
	}{Base: base, Query: query, Page: pg}
	if viewer != nil {
		k.Viewer, k.Admin = viewer.ID, viewer.IsAdmin
	}
	return listcache.Key(k)
}
