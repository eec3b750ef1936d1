package issue

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"

	"github.com/go-openapi/runtime"
	"github.com/go-openapi/runtime/middleware"

	"repohost/impl/issue/listcache"
	"repohost/impl/paging"
	"repohost/models"
	"repohost/restapi/operations/issue"
	"repohost/store"
)

// repoList answers a repository's issue list (issueListIssues) for viewer,
// from the rendered lists kept in Deps.IssueLists when it holds the answer.
// query is the list's filter (the repository's id included), as plain
// data: everything render reads besides the tables listcache.Tables and
// the page. The caller has already checked access, after taking gen, the
// lists' generation (listcache.Cache.Generation): an answer rendered here
// is kept only while nothing it was read from has changed since.
func (s Service) repoList(req *http.Request, gen uint64, base string, viewer *store.User, query any, pg paging.Params,
	render func() ([]*models.Issue, int64, error)) middleware.Responder {
	lists := s.IssueLists
	var key string
	if lists != nil {
		key = listKey(base, viewer, query, pg)
		if a, ok := lists.Get(key); ok {
			return cachedList{a, paging.Link(req, pg, a.Total)}
		}
	}
	out, total, err := render()
	if err != nil {
		return s.Fail(err)
	}
	ok := issue.NewIssueListIssuesOK().WithPayload(out).WithXTotalCount(total).WithLink(paging.Link(req, pg, total))
	if lists == nil {
		return ok
	}
	return middleware.ResponderFunc(func(rw http.ResponseWriter, p runtime.Producer) {
		tee := &teeWriter{ResponseWriter: rw}
		ok.WriteResponse(tee, p)
		lists.Put(key, gen, listcache.Answer{Body: tee.body.Bytes(), Total: total})
	})
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
	b, err := json.Marshal(k)
	if err != nil {
		panic(err) // plain data: cannot fail
	}
	return string(b)
}

// cachedList writes a kept answer as IssueListIssuesOK writes it.
type cachedList struct {
	listcache.Answer
	link string
}

func (c cachedList) WriteResponse(rw http.ResponseWriter, _ runtime.Producer) {
	if c.link != "" {
		rw.Header().Set("Link", c.link)
	}
	rw.Header().Set("X-Total-Count", strconv.FormatInt(c.Total, 10))
	rw.WriteHeader(http.StatusOK)
	_, _ = rw.Write(c.Body)
}

// teeWriter keeps a copy of the body it writes.
type teeWriter struct {
	http.ResponseWriter
	body bytes.Buffer
}

func (t *teeWriter) Write(b []byte) (int, error) {
	t.body.Write(b)
	return t.ResponseWriter.Write(b)
}
