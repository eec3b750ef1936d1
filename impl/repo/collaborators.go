package repo

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
	"repohost/models"
	"repohost/restapi/operations/repository"
	"repohost/store"
)

// collaboratorUser loads the individual a collaborator route names: 422
// when there is no such user, as the reference answers.
func (h Handlers) collaboratorUser(ctx context.Context, name string) (*store.User, error) {
	u, err := h.Store.Users().FindByName(ctx, name)
	if errors.Is(err, store.ErrNotFound) {
		return nil, apierr.Validation("user does not exist [name: %s]", name)
	}
	return u, err
}

func (h Handlers) RepoListCollaborators(ctx context.Context, params repository.RepoListCollaboratorsParams) middleware.Responder {
	p, r, _, err := h.SignedInRepo(ctx, params.Owner, params.Repo)
	if err != nil {
		return h.Fail(err)
	}
	pg := h.Page(params.Page, params.Limit)
	cs, total, err := h.Store.Access().ListCollaborators(ctx, r.ID, pg.Store())
	if err != nil {
		return h.Fail(err)
	}
	users := make([]*store.User, 0, len(cs))
	for _, c := range cs {
		users = append(users, c.User)
	}
	return repository.NewRepoListCollaboratorsOK().WithXTotalCount(total).
		WithLink(paging.Link(params.HTTPRequest, pg, total)).
		WithPayload(convert.Users(app.BaseURL(params.HTTPRequest), users, app.Viewer(p)))
}

func (h Handlers) RepoCheckCollaborator(ctx context.Context, params repository.RepoCheckCollaboratorParams) middleware.Responder {
	_, r, _, err := h.SignedInRepo(ctx, params.Owner, params.Repo)
	if err != nil {
		return h.Fail(err)
	}
	u, err := h.collaboratorUser(ctx, params.Collaborator)
	if err != nil {
		return h.Fail(err)
	}
	if _, err := h.Store.Access().FindCollaborator(ctx, r.ID, u.ID); err != nil {
		return h.Fail(err)
	}
	return repository.NewRepoCheckCollaboratorNoContent()
}

// collaboratorMode reads AddCollaboratorOption.permission; absent is write.
func collaboratorMode(o *models.AddCollaboratorOption) store.AccessMode {
	if o == nil || o.Permission == nil || *o.Permission == "" {
		return store.AccessWrite
	}
	m, _ := store.ParseAccessMode(*o.Permission) // the spec's enum checked it
	return m
}

func (h Handlers) RepoAddCollaborator(ctx context.Context, params repository.RepoAddCollaboratorParams) middleware.Responder {
	p, r, err := h.AdminWriteRepoBy(ctx, params.Owner, params.Repo)
	if err != nil {
		return h.Fail(err)
	}
	u, err := h.collaboratorUser(ctx, params.Collaborator)
	if err != nil {
		return h.Fail(err)
	}
	if err := h.svc().SetCollaborator(ctx, p.User, r, u, collaboratorMode(params.Body)); err != nil {
		return h.Fail(err)
	}
	return repository.NewRepoAddCollaboratorNoContent()
}

func (h Handlers) RepoDeleteCollaborator(ctx context.Context, params repository.RepoDeleteCollaboratorParams) middleware.Responder {
	p, r, err := h.AdminWriteRepoBy(ctx, params.Owner, params.Repo)
	if err != nil {
		return h.Fail(err)
	}
	u, err := h.collaboratorUser(ctx, params.Collaborator)
	if err != nil {
		return h.Fail(err)
	}
	if err := h.svc().RemoveCollaborator(ctx, p.User, r, u); err != nil {
		return h.Fail(err)
	}
	return repository.NewRepoDeleteCollaboratorNoContent()
}

// AdminWriteRepoBy is app's AdminWriteRepo with the caller.
func (h Handlers) AdminWriteRepoBy(ctx context.Context, owner, name string) (*auth.Principal, *store.Repository, error) {
	p, r, err := h.RepoAdmin(ctx, owner, name)
	if err != nil {
		return nil, nil, err
	}
	if r.IsArchived {
		return nil, nil, apierr.RepoArchived()
	}
	return p, r, nil
}

func (h Handlers) RepoGetRepoPermissions(ctx context.Context, params repository.RepoGetRepoPermissionsParams) middleware.Responder {
	p, r, perm, err := h.SignedInRepo(ctx, params.Owner, params.Repo)
	if err != nil {
		return h.Fail(err)
	}
	u, err := h.Store.Users().FindByName(ctx, params.Collaborator)
	if err != nil {
		return h.Fail(err)
	}
	if u.ID != p.UserID() && !perm.IsAdmin() {
		return h.Fail(apierr.Forbidden("Only admins can query all permissions, repo admins can query all repo permissions, collaborators can query only their own"))
	}
	theirs, err := h.Access.Repo(ctx, &auth.Principal{User: u, Signer: u}, r)
	if err != nil {
		return h.Fail(err)
	}
	mode := theirs.Mode.String()
	return repository.NewRepoGetRepoPermissionsOK().WithPayload(&models.RepoCollaboratorPermission{
		Permission: mode, RoleName: mode, User: convert.User(app.BaseURL(params.HTTPRequest), u, app.Viewer(p)),
	})
}

// grantees judges with the permission model every user given something on
// r (collaborators, members of the owning organization's teams that have
// r), keeping the active ones keep accepts, by name, and then the owning
// user: the reference's order for assignees and reviewers, which lists the
// owner of a user's repository last.
func (h Handlers) grantees(ctx context.Context, r *store.Repository, keep func(access.Permission) bool) ([]*store.User, error) {
	var orgID int64
	if r.Owner.IsOrganization() {
		orgID = r.OwnerID
	}
	gs, teams, err := h.Store.Access().ListGrantees(ctx, r.ID, orgID)
	if err != nil {
		return nil, err
	}
	byID := map[int64]*store.Team{}
	for _, t := range teams {
		byID[t.ID] = t
	}
	var out []*store.User
	for _, g := range gs {
		if g.User.ID == r.OwnerID || !g.User.IsActive {
			continue
		}
		f := access.Facts{Collaboration: g.Collaboration, TeamHasRepo: map[int64]bool{}}
		for _, id := range g.TeamIDs {
			f.Teams = append(f.Teams, byID[id])
			f.TeamHasRepo[id] = true
		}
		if keep(access.RepoFor(&auth.Principal{User: g.User, Signer: g.User}, r, f)) {
			out = append(out, g.User)
		}
	}
	if !r.Owner.IsOrganization() {
		out = append(out, r.Owner)
	}
	return out, nil
}

func (h Handlers) RepoGetAssignees(ctx context.Context, params repository.RepoGetAssigneesParams) middleware.Responder {
	p, r, _, err := h.SignedInRepo(ctx, params.Owner, params.Repo)
	if err != nil {
		return h.Fail(err)
	}
	// Anyone who may change some unit may be assigned (the reference's
	// CanBeAssigned); issue.Service.resolveAssignees asks the same.
	users, err := h.grantees(ctx, r, access.Permission.CanWriteAny)
	if err != nil {
		return h.Fail(err)
	}
	return repository.NewRepoGetAssigneesOK().WithPayload(convert.Users(app.BaseURL(params.HTTPRequest), users, app.Viewer(p)))
}

// RepoGetReviewers lists, as the reference's GetReviewers does, every
// active user who may be asked for a review and whom the caller may see:
// the collaborators and the members of the organization's teams that read
// the repository's pull requests, by name, then the owning user (last, and
// only if not listed already). The caller is listed too: the list is for
// any pull request, and only its poster is left out of requests. Only those
// who may change review requests (the owner, a collaborator, a member of
// such a team; site admins) may read it; an archived repository takes none.
func (h Handlers) RepoGetReviewers(ctx context.Context, params repository.RepoGetReviewersParams) middleware.Responder {
	p, r, _, err := h.SignedInRepo(ctx, params.Owner, params.Repo)
	if err != nil {
		return h.Fail(err)
	}
	grantees, err := h.grantees(ctx, r, func(perm access.Permission) bool { return perm.CanRead(access.UnitPulls) })
	if err != nil {
		return h.Fail(err)
	}
	may := p.IsAdmin() || p.UserID() == r.OwnerID
	out := make([]*store.User, 0, len(grantees))
	for _, u := range grantees {
		may = may || u.ID == p.UserID()
		if u.ID == r.OwnerID {
			out = append(out, u) // listed whoever asks, as in the reference
			continue
		}
		if ok, err := h.Access.CanSeeUser(ctx, p, u); err != nil {
			return h.Fail(err)
		} else if ok {
			out = append(out, u)
		}
	}
	if !may || r.IsArchived {
		return h.Fail(apierr.Forbidden("doer has no permission to get reviewers"))
	}
	return repository.NewRepoGetReviewersOK().WithPayload(convert.Users(app.BaseURL(params.HTTPRequest), out, app.Viewer(p)))
}

// Teams of a repository.

func errNotOrgRepo() error {
	return &apierr.Error{Status: http.StatusMethodNotAllowed, Message: "repo is not owned by an organization"}
}

// repoTeam loads the team a /repos/{owner}/{repo}/teams/{team} route names
// in the repository's organization: 405 for a user's repository, 404 for
// an unknown team.
func (h Handlers) repoTeam(ctx context.Context, r *store.Repository, name string) (*store.Team, error) {
	if !r.Owner.IsOrganization() {
		return nil, errNotOrgRepo()
	}
	t, err := h.Store.Teams().FindByName(ctx, r.OwnerID, name)
	if err != nil {
		return nil, err
	}
	t.Org = r.Owner
	return t, nil
}

func (h Handlers) RepoCheckTeam(ctx context.Context, params repository.RepoCheckTeamParams) middleware.Responder {
	_, r, _, err := h.SignedInRepo(ctx, params.Owner, params.Repo)
	if err != nil {
		return h.Fail(err)
	}
	t, err := h.repoTeam(ctx, r, params.Team)
	if err != nil {
		return h.Fail(err)
	}
	has, err := h.Access.TeamHas(ctx, t, r)
	if err != nil {
		return h.Fail(err)
	}
	if !has {
		return h.Fail(apierr.NotFound("team does not have access to the repository"))
	}
	return repository.NewRepoCheckTeamOK().WithPayload(convert.Team(app.BaseURL(params.HTTPRequest), t, true))
}

// teamChange loads the repository and team of a team change: repository
// admins only, and only the organization's owners unless the organization
// lets repository admins change team access.
func (h Handlers) teamChange(ctx context.Context, owner, name, team string) (*auth.Principal, *store.Repository, *store.Team, error) {
	p, r, perm, err := h.SignedInRepo(ctx, owner, name)
	if err != nil {
		return nil, nil, nil, err
	}
	if !perm.IsAdmin() {
		return nil, nil, nil, apierr.Forbidden(app.MsgNeedAdmin)
	}
	if !r.Owner.IsOrganization() {
		return nil, nil, nil, errNotOrgRepo()
	}
	if !r.Owner.RepoAdminChangeTeamAcc && !perm.IsOwner() {
		return nil, nil, nil, apierr.Forbidden("user is nor repo admin nor owner")
	}
	if r.IsArchived {
		return nil, nil, nil, apierr.RepoArchived()
	}
	t, err := h.repoTeam(ctx, r, team)
	if err != nil {
		return nil, nil, nil, err
	}
	return p, r, t, nil
}

func (h Handlers) RepoAddTeam(ctx context.Context, params repository.RepoAddTeamParams) middleware.Responder {
	p, r, t, err := h.teamChange(ctx, params.Owner, params.Repo, params.Team)
	if err != nil {
		return h.Fail(err)
	}
	has, err := h.Access.TeamHas(ctx, t, r)
	if err != nil {
		return h.Fail(err)
	}
	if has {
		return h.Fail(apierr.Validation("team '%s' already has access to the repository", t.Name))
	}
	if err := h.svc().AddTeamRepo(ctx, p.User, t, r); err != nil {
		return h.Fail(err)
	}
	return repository.NewRepoAddTeamNoContent()
}

func (h Handlers) RepoDeleteTeam(ctx context.Context, params repository.RepoDeleteTeamParams) middleware.Responder {
	p, r, t, err := h.teamChange(ctx, params.Owner, params.Repo, params.Team)
	if err != nil {
		return h.Fail(err)
	}
	has, err := h.Store.Teams().HasRepo(ctx, t.ID, r.ID)
	if err != nil {
		return h.Fail(err)
	}
	if !has {
		return h.Fail(apierr.Validation("team '%s' does not have access to the repository", t.Name))
	}
	if err := h.svc().RemoveTeamRepo(ctx, p.User, t, r); err != nil {
		return h.Fail(err)
	}
	return repository.NewRepoDeleteTeamNoContent()
}
