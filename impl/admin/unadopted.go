package admin

import (
	"context"
	"errors"
	"path"
	"strings"

	"github.com/go-openapi/runtime/middleware"

	"repohost/impl/apierr"
	"repohost/impl/auth"
	"repohost/impl/names"
	"repohost/impl/paging"
	"repohost/impl/repo"
	"repohost/restapi/operations/admin"
	"repohost/store"
)

// unadoptedGlob reads the list filter: a glob over "owner", or over
// "owner/repo" when it holds a slash (each side its own glob).
type unadoptedGlob struct{ owner, name string }

func parseUnadoptedGlob(q string) (unadoptedGlob, error) {
	g := unadoptedGlob{owner: "*", name: "*"}
	if q == "" {
		return g, nil
	}
	owner, name, hasName := strings.Cut(q, "/")
	g.owner = owner
	if hasName {
		g.name = name
	}
	for _, p := range []string{g.owner, g.name} {
		if _, err := path.Match(p, ""); err != nil {
			return g, apierr.Validation("[Query]: invalid glob pattern %q", q)
		}
	}
	return g, nil
}

func (g unadoptedGlob) match(d store.RepoDir) bool {
	ok1, _ := path.Match(g.owner, d.Owner)
	ok2, _ := path.Match(g.name, d.Name)
	return ok1 && ok2
}

// adoptable tells whether a directory can become a repository: its names
// are ones the API could have created (lower-case, as stored on disk).
func adoptable(d store.RepoDir) bool {
	return names.CheckUser("Owner", d.Owner) == nil && names.CheckRepo("Name", d.Name) == nil &&
		d.Owner == strings.ToLower(d.Owner) && d.Name == strings.ToLower(d.Name)
}

func (h Handlers) AdminUnadoptedList(ctx context.Context, params admin.AdminUnadoptedListParams) middleware.Responder {
	if _, err := auth.RequireAdmin(ctx); err != nil {
		return h.Fail(err)
	}
	// The service spec's query wins over the reference's older pattern.
	q := ""
	switch {
	case params.Query != nil:
		q = *params.Query
	case params.Pattern != nil:
		q = *params.Pattern
	}
	glob, err := parseUnadoptedGlob(q)
	if err != nil {
		return h.Fail(err)
	}
	dirs, err := h.Git.RepoDirs()
	if err != nil {
		return h.Fail(err)
	}
	candidates := dirs[:0]
	for _, d := range dirs {
		if adoptable(d) && glob.match(d) {
			candidates = append(candidates, d)
		}
	}
	stray, err := h.Store.GitRepos().Unadopted(ctx, candidates)
	if err != nil {
		return h.Fail(err)
	}
	pg := h.Page(params.Page, params.Limit)
	total := int64(len(stray))
	win := pg.Store()
	page := stray[min(win.Offset, len(stray)):min(win.Offset+win.Limit, len(stray))]
	out := make([]string, 0, len(page))
	for _, d := range page {
		out = append(out, d.Owner+"/"+d.Name)
	}
	return admin.NewAdminUnadoptedListOK().WithPayload(out).
		WithXTotalCount(total).WithLink(paging.Link(params.HTTPRequest, pg, total))
}

// strayDir checks owner/name for adoption or deletion, before the disk is
// touched: valid names, an existing owner, no repository row, and a real
// directory. Any failure is the reference's 404.
func (h Handlers) strayDir(ctx context.Context, owner, name string) (*store.User, error) {
	d := store.RepoDir{Owner: owner, Name: name}
	if !adoptable(d) {
		return nil, apierr.NotFound("not found")
	}
	u, err := h.Store.Users().FindByName(ctx, owner)
	if err != nil {
		return nil, err
	}
	if _, err := h.Store.Repos().FindByName(ctx, u.ID, name); err == nil {
		return nil, apierr.NotFound("repository %s/%s already exists", owner, name)
	} else if !errors.Is(err, store.ErrNotFound) {
		return nil, err
	}
	ok, err := h.Git.IsRepoDir(owner, name)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, apierr.NotFound("repository directory %s/%s does not exist", owner, name)
	}
	return u, nil
}

func (h Handlers) AdminAdoptRepository(ctx context.Context, params admin.AdminAdoptRepositoryParams) middleware.Responder {
	p, err := auth.RequireAdmin(ctx)
	if err != nil {
		return h.Fail(err)
	}
	owner, err := h.strayDir(ctx, params.Owner, params.Repo)
	if err != nil {
		return h.Fail(err)
	}
	// Adopted repositories start private, as in the reference.
	_, err = repo.Service{Deps: h.Deps}.Create(ctx, p.User, owner, repo.CreateInput{
		Origin: repo.OriginAdopted, Name: params.Repo, Private: true,
	})
	if errors.Is(err, repo.ErrExists) {
		return h.Fail(apierr.NotFound("repository %s/%s already exists", params.Owner, params.Repo))
	}
	if err != nil {
		return h.Fail(err)
	}
	return admin.NewAdminAdoptRepositoryNoContent()
}

func (h Handlers) AdminDeleteUnadoptedRepository(ctx context.Context, params admin.AdminDeleteUnadoptedRepositoryParams) middleware.Responder {
	if _, err := auth.RequireAdmin(ctx); err != nil {
		return h.Fail(err)
	}
	owner, err := h.strayDir(ctx, params.Owner, params.Repo)
	if err != nil {
		return h.Fail(err)
	}
	// The row check is repeated once the directory is parked, so an
	// adoption racing with this delete keeps its files.
	err = h.Git.DeleteStray(owner.LowerName, params.Repo, func() (bool, error) {
		_, err := h.Store.Repos().FindByName(ctx, owner.ID, params.Repo)
		if errors.Is(err, store.ErrNotFound) {
			return true, nil
		}
		return false, err
	})
	switch {
	case errors.Is(err, store.ErrConflict):
		return h.Fail(apierr.NotFound("repository %s/%s already exists", params.Owner, params.Repo))
	case err != nil:
		return h.Fail(err)
	}
	return admin.NewAdminDeleteUnadoptedRepositoryNoContent()
}
