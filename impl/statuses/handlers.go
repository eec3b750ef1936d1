package statuses

import (
	"context"
	"errors"
	"net/http"
	"net/url"

	"github.com/go-openapi/runtime/middleware"
	"github.com/go-openapi/swag/conv"

	"repohost/impl/apierr"
	"repohost/impl/app"
	"repohost/impl/auth"
	"repohost/impl/convert"
	"repohost/impl/paging"
	"repohost/models"
	"repohost/restapi/operations/repository"
	"repohost/store"
)

// Handlers implements the commit status operations of the repository tag.
type Handlers struct {
	*app.Deps
}

func (h Handlers) svc() Service { return Service{h.Deps} }

// resolve is the commit ref names in r: a branch, a tag or a commit id.
// A name that is none of these stays as it is, as the reference keeps it
// (it has no statuses, so its lists are empty).
func (h Handlers) resolve(r *store.Repository, ref string) (string, error) {
	g, err := h.OpenGit(r)
	if err != nil {
		return "", err
	}
	res, err := g.Resolve(ref)
	if errors.Is(err, store.ErrNotFound) {
		return ref, nil
	}
	if err != nil {
		return "", err
	}
	return res.Commit.Hash.String(), nil
}

func (h Handlers) RepoCreateStatus(ctx context.Context, params repository.RepoCreateStatusParams) middleware.Responder {
	p, err := auth.RequireUser(ctx)
	if err != nil {
		return h.Fail(err)
	}
	r, perm, err := h.UnitRepo(ctx, p, params.Owner, params.Repo, app.CodeUnit)
	if err != nil {
		return h.Fail(err)
	}
	if !perm.CanWrite(app.CodeUnit) {
		return h.Fail(apierr.Forbidden(app.MsgNeedWrite))
	}
	if params.Sha == "" {
		return h.Fail(apierr.BadRequest("sha not given"))
	}
	g, err := h.OpenGit(r)
	if err != nil {
		return h.Fail(err)
	}
	// Unlike a list, a report must name a commit the repository has.
	c, err := g.Resolve(params.Sha)
	if err != nil {
		return h.Fail(err)
	}
	o := params.Body
	st, err := h.svc().Create(ctx, r, p.User.ID, c.Commit.Hash.String(), Input{State: o.State,
		TargetURL: o.TargetURL, Description: o.Description, Context: o.Context})
	if err != nil {
		return h.Fail(err)
	}
	base := app.BaseURL(params.HTTPRequest)
	return repository.NewRepoCreateStatusCreated().WithPayload(render(base, r, st, p.User))
}

func (h Handlers) RepoListStatuses(ctx context.Context, params repository.RepoListStatusesParams) middleware.Responder {
	out, total, link, err := h.list(ctx, params.Owner, params.Repo, params.Sha, params.Sort, params.State, params.Page, params.Limit, params.HTTPRequest)
	if err != nil {
		return h.Fail(err)
	}
	return repository.NewRepoListStatusesOK().WithPayload(out).WithXTotalCount(total).WithLink(link)
}

func (h Handlers) RepoListStatusesByRef(ctx context.Context, params repository.RepoListStatusesByRefParams) middleware.Responder {
	out, total, link, err := h.list(ctx, params.Owner, params.Repo, params.Ref, params.Sort, params.State, params.Page, params.Limit, params.HTTPRequest)
	if err != nil {
		return h.Fail(err)
	}
	return repository.NewRepoListStatusesByRefOK().WithPayload(out).WithXTotalCount(total).WithLink(link)
}

// list is a page of the statuses of the commit ref names, filtered and
// sorted as asked, with the total and the Link header.
func (h Handlers) list(ctx context.Context, owner, name, ref string, sort, state *string, page, limit *int64, req *http.Request) ([]*models.CommitStatus, int64, string, error) {
	p := auth.FromContext(ctx)
	r, _, err := h.UnitRepo(ctx, p, owner, name, app.CodeUnit)
	if err != nil {
		return nil, 0, "", err
	}
	if ref == "" {
		return nil, 0, "", apierr.BadRequest("ref/sha not given")
	}
	sha, err := h.resolve(r, ref)
	if err != nil {
		return nil, 0, "", err
	}
	pg := h.Page(page, limit)
	sts, total, err := h.Store.Statuses().List(ctx, store.StatusFilter{RepoID: r.ID, SHA: sha,
		State: conv.Value(state), Sort: conv.Value(sort)}, pg.Store())
	if err != nil {
		return nil, 0, "", err
	}
	creators, err := h.creators(ctx, sts)
	if err != nil {
		return nil, 0, "", err
	}
	base := app.BaseURL(req)
	out := make([]*models.CommitStatus, 0, len(sts))
	for _, st := range sts {
		out = append(out, render(base, r, st, creators[st.CreatorID]))
	}
	return out, total, paging.Link(req, pg, total), nil
}

func (h Handlers) RepoGetCombinedStatusByRef(ctx context.Context, params repository.RepoGetCombinedStatusByRefParams) middleware.Responder {
	p := auth.FromContext(ctx)
	r, perm, err := h.UnitRepo(ctx, p, params.Owner, params.Repo, app.CodeUnit)
	if err != nil {
		return h.Fail(err)
	}
	if params.Ref == "" {
		return h.Fail(apierr.BadRequest("ref/sha not given"))
	}
	sha, err := h.resolve(r, params.Ref)
	if err != nil {
		return h.Fail(err)
	}
	latest, err := h.svc().Latest(ctx, r.ID, sha)
	if err != nil {
		return h.Fail(err)
	}
	pg := h.Page(params.Page, params.Limit)
	win := pg.Store()
	total := int64(len(latest))
	page := latest[min(win.Offset, len(latest)):min(win.Offset+win.Limit, len(latest))]
	base := app.BaseURL(params.HTTPRequest)
	creators, err := h.creators(ctx, page)
	if err != nil {
		return h.Fail(err)
	}
	list := make([]*models.CommitStatus, 0, len(page))
	for _, st := range page {
		list = append(list, render(base, r, st, creators[st.CreatorID]))
	}
	commitURL := base + "api/v1/repos/" + r.FullName() + "/commits/" + url.PathEscape(sha)
	out := &models.CombinedStatus{State: Combine(latest), SHA: sha, TotalCount: total, Statuses: list,
		Repository: convert.Repo(h.Links(base), r, perm, app.Viewer(p)), CommitURL: commitURL, URL: commitURL + "/status"}
	return repository.NewRepoGetCombinedStatusByRefOK().WithPayload(out).
		WithXTotalCount(total).WithLink(paging.Link(params.HTTPRequest, pg, total))
}

// creators loads the accounts that reported statuses, once each; a
// deleted account shows as nobody.
func (h Handlers) creators(ctx context.Context, list []*store.CommitStatus) (map[int64]*store.User, error) {
	ids := []int64{}
	seen := map[int64]bool{}
	for _, st := range list {
		if st.CreatorID > 0 && !seen[st.CreatorID] {
			seen[st.CreatorID] = true
			ids = append(ids, st.CreatorID)
		}
	}
	if len(ids) == 0 {
		return map[int64]*store.User{}, nil
	}
	return h.Store.Users().FindByIDs(ctx, ids)
}

// render is a status as the API shows it: its number among its commit's
// statuses as its id, and its commit's status list as its url.
func render(base string, r *store.Repository, st *store.CommitStatus, creator *store.User) *models.CommitStatus {
	out := &models.CommitStatus{ID: st.Index, State: st.State, Context: st.Context, Description: st.Description,
		TargetURL: st.TargetURL, URL: base + "api/v1/repos/" + r.FullName() + "/statuses/" + url.PathEscape(st.SHA),
		CreatedAt: *convert.TimeOf(st.CreatedAt), UpdatedAt: *convert.TimeOf(st.UpdatedAt)}
	if creator != nil {
		out.Creator = convert.User(base, creator, nil)
	}
	return out
}
