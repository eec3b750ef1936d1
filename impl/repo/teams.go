package repo

import (
	"context"
	"net/http"
	"sort"

	"github.com/go-openapi/runtime/middleware"

	"repohost/impl/apierr"
	"repohost/impl/paging"
	"repohost/models"
	"repohost/restapi/operations/repository"
	"repohost/store"
)

// renderTeam converts a team. The organization is left out (null), as the
// reference sends it from this route.
func renderTeam(t *store.Team) *models.Team {
	units := make([]string, 0, len(t.Units))
	unitsMap := make(map[string]string, len(t.Units))
	for u, mode := range t.Units {
		units = append(units, u)
		unitsMap[u] = mode
	}
	sort.Strings(units)
	return &models.Team{
		ID:                      t.ID,
		Name:                    t.Name,
		Description:             t.Description,
		Permission:              t.Permission,
		IncludesAllRepositories: t.IncludesAllRepositories,
		CanCreateOrgRepo:        t.CanCreateOrgRepo,
		Units:                   units,
		UnitsMap:                unitsMap,
		Visibility:              t.Visibility.String(),
	}
}

func (h Handlers) RepoListTeams(ctx context.Context, params repository.RepoListTeamsParams) middleware.Responder {
	p, r, _, err := h.SignedInRepo(ctx, params.Owner, params.Repo)
	if err != nil {
		return h.Fail(err)
	}
	if !r.Owner.IsOrganization() {
		return h.Fail(&apierr.Error{Status: http.StatusMethodNotAllowed, Message: "repo is not owned by an organization"})
	}
	pg := h.Page(params.Page, params.Limit)
	viewer := store.TeamViewer{UserID: p.UserID(), IsAdmin: p.IsAdmin()}
	if p.PublicOnly() {
		// A token limited to public data sees what anyone signed in sees.
		viewer = store.TeamViewer{UserID: -1}
	}
	teams, total, err := h.Store.Teams().ListForRepo(ctx, r.OwnerID, r.ID, viewer, pg.Store())
	if err != nil {
		return h.Fail(err)
	}
	out := make([]*models.Team, 0, len(teams))
	for _, t := range teams {
		out = append(out, renderTeam(t))
	}
	return repository.NewRepoListTeamsOK().WithPayload(out).
		WithXTotalCount(total).WithLink(paging.Link(params.HTTPRequest, pg, total))
}
