package repo

import (
	"context"
	"net/http"

	"github.com/go-openapi/runtime/middleware"

	"repohost/impl/apierr"
	"repohost/impl/convert"
	"repohost/impl/paging"
	"repohost/models"
	"repohost/restapi/operations/repository"
	"repohost/store"
)

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
		out = append(out, convert.Team("", t, false))
	}
	return repository.NewRepoListTeamsOK().WithPayload(out).
		WithXTotalCount(total).WithLink(paging.Link(params.HTTPRequest, pg, total))
}
