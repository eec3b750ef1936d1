package org

import (
	"context"
	"errors"
	"net/http"

	"github.com/go-openapi/runtime/middleware"

	"repohost/impl/access"
	"repohost/impl/apierr"
	"repohost/impl/app"
	"repohost/impl/auth"
	"repohost/impl/convert"
	"repohost/impl/paging"
	"repohost/impl/repo"
	"repohost/models"
	"repohost/restapi/operations/organization"
	"repohost/store"
)

// TeamViewer is how the store filters teams for p (the service spec's
// team visibility): a token limited to public data sees what anyone
// signed in sees.
func TeamViewer(p *auth.Principal) store.TeamViewer {
	if p.PublicOnly() {
		return store.TeamViewer{UserID: -1}
	}
	return store.TeamViewer{UserID: p.UserID(), IsAdmin: p.IsAdmin()}
}

// mayReadTeam is the service spec's team visibility for one team: site
// admins and the organization's owners see every team, a team's members
// see it, any member of the organization sees a limited one, anyone
// signed in a public one.
func (h Handlers) mayReadTeam(ctx context.Context, p *auth.Principal, t *store.Team) (bool, error) {
	if p.IsAdmin() || (t.Visibility == store.VisibilityPublic) {
		return true, nil
	}
	if p.PublicOnly() {
		return false, nil
	}
	m, err := h.Store.Orgs().FindMember(ctx, t.OrgID, p.UserID())
	if errors.Is(err, store.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if m.IsOwner || t.Visibility == store.VisibilityLimited {
		return true, nil
	}
	return h.Store.Teams().IsMember(ctx, t.ID, p.UserID())
}

// team loads team id for a signed-in caller who may read it: 401, then 404
// for a team that does not exist or whose organization the caller may not
// see, 403 for a visible organization's team the caller may not read.
func (h Handlers) team(ctx context.Context, id int64) (*auth.Principal, *store.Team, error) {
	p, err := auth.RequireUser(ctx)
	if err != nil {
		return nil, nil, err
	}
	t, err := h.Store.Teams().FindByID(ctx, id)
	if err != nil {
		return nil, nil, err
	}
	seen, err := h.Access.CanSeeUser(ctx, p, t.Org)
	if err != nil {
		return nil, nil, err
	}
	if !seen {
		return nil, nil, apierr.NotFound("not found")
	}
	ok, err := h.mayReadTeam(ctx, p, t)
	if err != nil {
		return nil, nil, err
	}
	if !ok {
		// The reference: 403 to a member of the organization, 404 to
		// anyone else, to whom the team does not exist.
		member, err := h.Access.IsOrgMember(ctx, p, t.Org)
		if err != nil {
			return nil, nil, err
		}
		if !member {
			return nil, nil, apierr.NotFound("not found")
		}
		return nil, nil, apierr.Forbidden("You are not allowed to access this team")
	}
	return p, t, nil
}

// ownedTeam loads team id for an owner of its organization: 401, 404 as
// for team, then 403 for anyone else.
func (h Handlers) ownedTeam(ctx context.Context, id int64) (*auth.Principal, *store.Team, error) {
	p, err := auth.RequireUser(ctx)
	if err != nil {
		return nil, nil, err
	}
	t, err := h.Store.Teams().FindByID(ctx, id)
	if err != nil {
		return nil, nil, err
	}
	seen, err := h.Access.CanSeeUser(ctx, p, t.Org)
	if err != nil {
		return nil, nil, err
	}
	if !seen {
		return nil, nil, apierr.NotFound("not found")
	}
	owner, err := h.Access.IsOrgOwner(ctx, p, t.Org)
	if err != nil {
		return nil, nil, err
	}
	if !owner {
		return nil, nil, app.ErrNotOrgOwner
	}
	return p, t, nil
}

func teamInput(name, desc, perm *string, includesAll, canCreate *bool, units []string, unitsMap map[string]string, vis *string) TeamInput {
	return TeamInput{Name: name, Description: desc, Permission: perm, IncludesAllRepositories: includesAll,
		CanCreateOrgRepo: canCreate, Units: units, UnitsMap: unitsMap, Visibility: visibility(vis)}
}

func (h Handlers) OrgListTeams(ctx context.Context, params organization.OrgListTeamsParams) middleware.Responder {
	p, err := auth.RequireUser(ctx)
	if err != nil {
		return h.Fail(err)
	}
	o, err := h.VisibleOrg(ctx, p, params.Org)
	if err != nil {
		return h.Fail(err)
	}
	pg := h.Page(params.Page, params.Limit)
	teams, total, err := h.Store.Teams().List(ctx, o.ID, TeamViewer(p), "", false, pg.Store())
	if err != nil {
		return h.Fail(err)
	}
	return organization.NewOrgListTeamsOK().WithXTotalCount(total).
		WithLink(paging.Link(params.HTTPRequest, pg, total)).
		WithPayload(convert.Teams(app.BaseURL(params.HTTPRequest), teams))
}

func (h Handlers) TeamSearch(ctx context.Context, params organization.TeamSearchParams) middleware.Responder {
	p, err := auth.RequireUser(ctx)
	if err != nil {
		return h.Fail(err)
	}
	o, err := h.VisibleOrg(ctx, p, params.Org)
	if err != nil {
		return h.Fail(err)
	}
	pg := h.Page(params.Page, params.Limit)
	teams, total, err := h.Store.Teams().List(ctx, o.ID, TeamViewer(p), deref(params.Q), deref(params.IncludeDesc), pg.Store())
	if err != nil {
		return h.Fail(err)
	}
	return organization.NewTeamSearchOK().WithXTotalCount(total).
		WithLink(paging.Link(params.HTTPRequest, pg, total)).
		WithPayload(&models.TeamSearchResults{OK: true, Data: convert.Teams(app.BaseURL(params.HTTPRequest), teams)})
}

func (h Handlers) OrgCreateTeam(ctx context.Context, params organization.OrgCreateTeamParams) middleware.Responder {
	p, o, err := h.OwnedOrg(ctx, params.Org)
	if err != nil {
		return h.Fail(err)
	}
	b := params.Body
	t, err := h.Orgs.CreateTeam(ctx, p.User, o, teamInput(b.Name, b.Description, b.Permission, b.IncludesAllRepositories,
		b.CanCreateOrgRepo, b.Units, b.UnitsMap, b.Visibility))
	if err != nil {
		return h.Fail(err)
	}
	return organization.NewOrgCreateTeamCreated().WithPayload(convert.Team(app.BaseURL(params.HTTPRequest), t, true))
}

func (h Handlers) OrgGetTeam(ctx context.Context, params organization.OrgGetTeamParams) middleware.Responder {
	_, t, err := h.team(ctx, params.ID)
	if err != nil {
		return h.Fail(err)
	}
	return organization.NewOrgGetTeamOK().WithPayload(convert.Team(app.BaseURL(params.HTTPRequest), t, true))
}

func (h Handlers) OrgEditTeam(ctx context.Context, params organization.OrgEditTeamParams) middleware.Responder {
	p, t, err := h.ownedTeam(ctx, params.ID)
	if err != nil {
		return h.Fail(err)
	}
	b := params.Body
	edited, err := h.Orgs.EditTeam(ctx, p.User, t, teamInput(b.Name, b.Description, b.Permission, b.IncludesAllRepositories,
		b.CanCreateOrgRepo, b.Units, b.UnitsMap, b.Visibility))
	if err != nil {
		return h.Fail(err)
	}
	return organization.NewOrgEditTeamOK().WithPayload(convert.Team(app.BaseURL(params.HTTPRequest), edited, true))
}

func (h Handlers) OrgDeleteTeam(ctx context.Context, params organization.OrgDeleteTeamParams) middleware.Responder {
	p, t, err := h.ownedTeam(ctx, params.ID)
	if err != nil {
		return h.Fail(err)
	}
	if err := h.Orgs.DeleteTeam(ctx, p.User, t); err != nil {
		return h.Fail(err)
	}
	return organization.NewOrgDeleteTeamNoContent()
}

func (h Handlers) OrgListTeamMembers(ctx context.Context, params organization.OrgListTeamMembersParams) middleware.Responder {
	p, t, err := h.team(ctx, params.ID)
	if err != nil {
		return h.Fail(err)
	}
	pg := h.Page(params.Page, params.Limit)
	users, total, err := h.Store.Teams().ListMembers(ctx, t.ID, pg.Store())
	if err != nil {
		return h.Fail(err)
	}
	return organization.NewOrgListTeamMembersOK().WithXTotalCount(total).
		WithLink(paging.Link(params.HTTPRequest, pg, total)).
		WithPayload(convert.Users(app.BaseURL(params.HTTPRequest), users, app.Viewer(p)))
}

// teamMember loads username as a member of t: 404 when unknown, hidden
// or not in the team.
func (h Handlers) teamMember(ctx context.Context, p *auth.Principal, t *store.Team, username string) (*store.User, error) {
	u, err := h.VisibleIndividual(ctx, p, username)
	if err != nil {
		return nil, err
	}
	in, err := h.Store.Teams().IsMember(ctx, t.ID, u.ID)
	if err != nil {
		return nil, err
	}
	if !in {
		return nil, apierr.NotFound("user is not a member of the team")
	}
	return u, nil
}

func (h Handlers) OrgListTeamMember(ctx context.Context, params organization.OrgListTeamMemberParams) middleware.Responder {
	p, t, err := h.team(ctx, params.ID)
	if err != nil {
		return h.Fail(err)
	}
	u, err := h.teamMember(ctx, p, t, params.Username)
	if err != nil {
		return h.Fail(err)
	}
	return organization.NewOrgListTeamMemberOK().WithPayload(convert.User(app.BaseURL(params.HTTPRequest), u, app.Viewer(p)))
}

func (h Handlers) OrgAddTeamMember(ctx context.Context, params organization.OrgAddTeamMemberParams) middleware.Responder {
	p, t, err := h.ownedTeam(ctx, params.ID)
	if err != nil {
		return h.Fail(err)
	}
	u, err := h.VisibleUser(ctx, p, params.Username)
	if err != nil {
		return h.Fail(err)
	}
	if err := h.Orgs.AddTeamMember(ctx, p.User, t, u); err != nil {
		return h.Fail(err)
	}
	return organization.NewOrgAddTeamMemberNoContent()
}

func (h Handlers) OrgRemoveTeamMember(ctx context.Context, params organization.OrgRemoveTeamMemberParams) middleware.Responder {
	p, t, err := h.ownedTeam(ctx, params.ID)
	if err != nil {
		return h.Fail(err)
	}
	u, err := h.teamMember(ctx, p, t, params.Username)
	if err != nil {
		return h.Fail(err)
	}
	if err := h.Orgs.RemoveTeamMember(ctx, p.User, t, u); err != nil {
		return h.Fail(err)
	}
	return organization.NewOrgRemoveTeamMemberNoContent()
}

func (h Handlers) OrgListTeamRepos(ctx context.Context, params organization.OrgListTeamReposParams) middleware.Responder {
	p, t, err := h.team(ctx, params.ID)
	if err != nil {
		return h.Fail(err)
	}
	pg := h.Page(params.Page, params.Limit)
	repos, total, err := h.Store.Teams().ListRepos(ctx, t, access.Viewer(p), pg.Store())
	if err != nil {
		return h.Fail(err)
	}
	out, err := repo.Models(ctx, h.Deps, p, app.BaseURL(params.HTTPRequest), repos)
	if err != nil {
		return h.Fail(err)
	}
	return organization.NewOrgListTeamReposOK().WithXTotalCount(total).
		WithLink(paging.Link(params.HTTPRequest, pg, total)).WithPayload(out)
}

// teamRepo loads org/name for a team route: the caller must see it, and it
// must belong to the team's organization (404 otherwise).
func (h Handlers) teamRepo(ctx context.Context, p *auth.Principal, t *store.Team, org, name string) (*store.Repository, access.Permission, error) {
	r, perm, err := h.Repo(ctx, p, org, name)
	if err != nil {
		return nil, access.None, err
	}
	if r.OwnerID != t.OrgID {
		return nil, access.None, apierr.NotFound("not found")
	}
	return r, perm, nil
}

func (h Handlers) OrgListTeamRepo(ctx context.Context, params organization.OrgListTeamRepoParams) middleware.Responder {
	p, t, err := h.team(ctx, params.ID)
	if err != nil {
		return h.Fail(err)
	}
	r, perm, err := h.teamRepo(ctx, p, t, params.Org, params.Repo)
	if err != nil {
		return h.Fail(err)
	}
	has, err := h.Access.TeamHas(ctx, t, r)
	if err != nil {
		return h.Fail(err)
	}
	if !has {
		return h.Fail(apierr.NotFound("repository not in the team"))
	}
	return organization.NewOrgListTeamRepoOK().WithPayload(convert.Repo(h.Links(app.BaseURL(params.HTTPRequest)), r, perm, app.Viewer(p)))
}

func (h Handlers) OrgAddTeamRepository(ctx context.Context, params organization.OrgAddTeamRepositoryParams) middleware.Responder {
	p, t, err := h.ownedTeam(ctx, params.ID)
	if err != nil {
		return h.Fail(err)
	}
	r, _, err := h.teamRepo(ctx, p, t, params.Org, params.Repo)
	if err != nil {
		return h.Fail(err)
	}
	if err := (repo.Service{Deps: h.Deps}).AddTeamRepo(ctx, p.User, t, r); err != nil {
		return h.Fail(err)
	}
	return organization.NewOrgAddTeamRepositoryNoContent()
}

func (h Handlers) OrgRemoveTeamRepository(ctx context.Context, params organization.OrgRemoveTeamRepositoryParams) middleware.Responder {
	p, t, err := h.ownedTeam(ctx, params.ID)
	if err != nil {
		return h.Fail(err)
	}
	r, _, err := h.teamRepo(ctx, p, t, params.Org, params.Repo)
	if err != nil {
		return h.Fail(err)
	}
	if err := (repo.Service{Deps: h.Deps}).RemoveTeamRepo(ctx, p.User, t, r); err != nil {
		return h.Fail(err)
	}
	return organization.NewOrgRemoveTeamRepositoryNoContent()
}

// Public members.

func (h Handlers) OrgListPublicMembers(ctx context.Context, params organization.OrgListPublicMembersParams) middleware.Responder {
	p := auth.FromContext(ctx)
	o, err := h.VisibleOrg(ctx, p, params.Org)
	if err != nil {
		return h.Fail(err)
	}
	pg := h.Page(params.Page, params.Limit)
	users, total, err := h.Store.Orgs().ListMembers(ctx, o.ID, true, pg.Store())
	if err != nil {
		return h.Fail(err)
	}
	return organization.NewOrgListPublicMembersOK().WithXTotalCount(total).
		WithLink(paging.Link(params.HTTPRequest, pg, total)).
		WithPayload(convert.Users(app.BaseURL(params.HTTPRequest), users, app.Viewer(p)))
}

func (h Handlers) OrgIsPublicMember(ctx context.Context, params organization.OrgIsPublicMemberParams) middleware.Responder {
	p := auth.FromContext(ctx)
	o, err := h.VisibleOrg(ctx, p, params.Org)
	if err != nil {
		return h.Fail(err)
	}
	u, err := h.VisibleIndividual(ctx, p, params.Username)
	if err != nil {
		return h.Fail(err)
	}
	m, err := h.Store.Orgs().FindMember(ctx, o.ID, u.ID)
	if errors.Is(err, store.ErrNotFound) || (err == nil && !m.IsPublic) {
		return h.Fail(apierr.NotFound("user is not a public member"))
	}
	if err != nil {
		return h.Fail(err)
	}
	return organization.NewOrgIsPublicMemberNoContent()
}

// ownMembership loads the organization and the user of a publicize or
// conceal: only the member themselves may change their membership's
// visibility (403 for anyone else).
func (h Handlers) ownMembership(ctx context.Context, org, username string) (*auth.Principal, *store.User, error) {
	p, err := auth.RequireUser(ctx)
	if err != nil {
		return nil, nil, err
	}
	o, err := h.VisibleOrg(ctx, p, org)
	if err != nil {
		return nil, nil, err
	}
	u, err := h.VisibleIndividual(ctx, p, username)
	if err != nil {
		return nil, nil, err
	}
	if u.ID != p.UserID() {
		return nil, nil, &apierr.Error{Status: http.StatusForbidden, Message: "Cannot publicize or conceal another member"}
	}
	return p, o, nil
}

func (h Handlers) OrgPublicizeMember(ctx context.Context, params organization.OrgPublicizeMemberParams) middleware.Responder {
	p, o, err := h.ownMembership(ctx, params.Org, params.Username)
	if err != nil {
		return h.Fail(err)
	}
	if err := h.Orgs.Publicize(ctx, p.User, o, p.User); err != nil {
		return h.Fail(err)
	}
	return organization.NewOrgPublicizeMemberNoContent()
}

func (h Handlers) OrgConcealMember(ctx context.Context, params organization.OrgConcealMemberParams) middleware.Responder {
	p, o, err := h.ownMembership(ctx, params.Org, params.Username)
	if err != nil {
		return h.Fail(err)
	}
	if err := h.Orgs.Conceal(ctx, p.User, o, p.User); err != nil {
		return h.Fail(err)
	}
	return organization.NewOrgConcealMemberNoContent()
}
