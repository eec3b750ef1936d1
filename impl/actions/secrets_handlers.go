package actions

import (
	"context"
	"net/http"

	"github.com/go-openapi/runtime/middleware"
	"github.com/go-openapi/strfmt"

	"repohost/impl/apierr"
	"repohost/impl/auth"
	"repohost/impl/paging"
	"repohost/models"
	"repohost/restapi/operations/organization"
	"repohost/restapi/operations/repository"
	"repohost/restapi/operations/user"
	"repohost/store"
)

// The secrets and variables routes at the three scopes: a repository's
// are its owners' (the reference's reqOwner, as for its runners), an
// organization's its owners', a user's the user's own. Each handler
// resolves its scope and hands the rest to settings, which the three
// share.

func (h RepoHandlers) repoSettings(ctx context.Context, owner, name string) (settings, error) {
	_, sc, err := h.ownerRepo(ctx, owner, name)
	return settings{h.Actions, actorOf(ctx), sc}, err
}

func (h OrgHandlers) orgSettings(ctx context.Context, name string) (settings, error) {
	_, sc, err := h.ownedOrg(ctx, name)
	return settings{h.Actions, actorOf(ctx), sc}, err
}

func (h UserHandlers) userSettings(ctx context.Context) (settings, error) {
	_, sc, err := userScope(ctx)
	return settings{h.Actions, actorOf(ctx), sc}, err
}

func actorOf(ctx context.Context) int64 {
	if p := auth.FromContext(ctx); p != nil && p.User != nil {
		return p.User.ID
	}
	return 0
}

// settings is one scope's secrets and variables as its routes use them.
type settings struct {
	s     Service
	actor int64
	sc    Scope
}

// putSecret answers whether the secret was created (201) or replaced
// (204).
func (st settings) putSecret(ctx context.Context, name string, body *models.CreateOrUpdateSecretOption) (bool, error) {
	if body == nil || body.Data == nil {
		return false, apierr.Validation("[Data]: Required")
	}
	return st.s.PutSecret(ctx, st.actor, st.sc, name, *body.Data, body.Description)
}

func (st settings) listSecrets(ctx context.Context, r *http.Request, page, limit *int64) ([]*models.Secret, int64, string, error) {
	pg := st.s.Page(page, limit)
	list, total, err := st.s.ListSecrets(ctx, st.sc, pg.Store())
	if err != nil {
		return nil, 0, "", err
	}
	out := make([]*models.Secret, len(list))
	for i, sec := range list {
		out[i] = &models.Secret{Name: sec.Name, Description: sec.Description, Created: strfmt.DateTime(sec.CreatedAt)}
	}
	return out, total, paging.Link(r, pg, total), nil
}

func (st settings) createVariable(ctx context.Context, name string, body *models.CreateVariableOption) error {
	if body == nil || body.Value == nil {
		return apierr.Validation("[Value]: Required")
	}
	_, err := st.s.CreateVariable(ctx, st.actor, st.sc, name, *body.Value, body.Description)
	return err
}

func (st settings) updateVariable(ctx context.Context, name string, body *models.UpdateVariableOption) error {
	if body == nil || body.Value == nil {
		return apierr.Validation("[Value]: Required")
	}
	return st.s.UpdateVariable(ctx, st.actor, st.sc, name, body.Name, *body.Value, body.Description)
}

func (st settings) getVariable(ctx context.Context, name string) (*models.ActionVariable, error) {
	v, err := st.s.GetVariable(ctx, st.sc, name)
	if err != nil {
		return nil, err
	}
	return renderVariable(v), nil
}

func (st settings) listVariables(ctx context.Context, r *http.Request, page, limit *int64) ([]*models.ActionVariable, int64, string, error) {
	pg := st.s.Page(page, limit)
	list, total, err := st.s.ListVariables(ctx, st.sc, pg.Store())
	if err != nil {
		return nil, 0, "", err
	}
	out := make([]*models.ActionVariable, len(list))
	for i, v := range list {
		out[i] = renderVariable(v)
	}
	return out, total, paging.Link(r, pg, total), nil
}

func renderVariable(v *store.ActionVariable) *models.ActionVariable {
	return &models.ActionVariable{OwnerID: v.Scope.OwnerID, RepoID: v.Scope.RepoID, Name: v.Name, Data: v.Data, Description: v.Description}
}

// Repository scope.

// RepoListActionsSecrets lists the repository's secrets, without values.
func (h RepoHandlers) RepoListActionsSecrets(ctx context.Context, params repository.RepoListActionsSecretsParams) middleware.Responder {
	st, err := h.repoSettings(ctx, params.Owner, params.Repo)
	if err != nil {
		return h.Fail(err)
	}
	out, total, link, err := st.listSecrets(ctx, params.HTTPRequest, params.Page, params.Limit)
	if err != nil {
		return h.Fail(err)
	}
	return repository.NewRepoListActionsSecretsOK().WithPayload(out).WithXTotalCount(total).WithLink(link)
}

// UpdateRepoSecret creates or replaces a secret of the repository.
func (h RepoHandlers) UpdateRepoSecret(ctx context.Context, params repository.UpdateRepoSecretParams) middleware.Responder {
	st, err := h.repoSettings(ctx, params.Owner, params.Repo)
	if err != nil {
		return h.Fail(err)
	}
	created, err := st.putSecret(ctx, params.Secretname, params.Body)
	if err != nil {
		return h.Fail(err)
	}
	if created {
		return repository.NewUpdateRepoSecretCreated()
	}
	return repository.NewUpdateRepoSecretNoContent()
}

// DeleteRepoSecret removes a secret of the repository.
func (h RepoHandlers) DeleteRepoSecret(ctx context.Context, params repository.DeleteRepoSecretParams) middleware.Responder {
	st, err := h.repoSettings(ctx, params.Owner, params.Repo)
	if err == nil {
		err = st.s.DeleteSecret(ctx, st.actor, st.sc, params.Secretname)
	}
	if err != nil {
		return h.Fail(err)
	}
	return repository.NewDeleteRepoSecretNoContent()
}

// GetRepoVariablesList lists the repository's variables.
func (h RepoHandlers) GetRepoVariablesList(ctx context.Context, params repository.GetRepoVariablesListParams) middleware.Responder {
	st, err := h.repoSettings(ctx, params.Owner, params.Repo)
	if err != nil {
		return h.Fail(err)
	}
	out, total, link, err := st.listVariables(ctx, params.HTTPRequest, params.Page, params.Limit)
	if err != nil {
		return h.Fail(err)
	}
	return repository.NewGetRepoVariablesListOK().WithPayload(out).WithXTotalCount(total).WithLink(link)
}

// GetRepoVariable reads a variable of the repository.
func (h RepoHandlers) GetRepoVariable(ctx context.Context, params repository.GetRepoVariableParams) middleware.Responder {
	st, err := h.repoSettings(ctx, params.Owner, params.Repo)
	if err != nil {
		return h.Fail(err)
	}
	v, err := st.getVariable(ctx, params.Variablename)
	if err != nil {
		return h.Fail(err)
	}
	return repository.NewGetRepoVariableOK().WithPayload(v)
}

// CreateRepoVariable creates a variable of the repository.
func (h RepoHandlers) CreateRepoVariable(ctx context.Context, params repository.CreateRepoVariableParams) middleware.Responder {
	st, err := h.repoSettings(ctx, params.Owner, params.Repo)
	if err == nil {
		err = st.createVariable(ctx, params.Variablename, params.Body)
	}
	if err != nil {
		return h.Fail(err)
	}
	return repository.NewCreateRepoVariableCreated()
}

// UpdateRepoVariable changes a variable of the repository.
func (h RepoHandlers) UpdateRepoVariable(ctx context.Context, params repository.UpdateRepoVariableParams) middleware.Responder {
	st, err := h.repoSettings(ctx, params.Owner, params.Repo)
	if err == nil {
		err = st.updateVariable(ctx, params.Variablename, params.Body)
	}
	if err != nil {
		return h.Fail(err)
	}
	return repository.NewUpdateRepoVariableNoContent()
}

// DeleteRepoVariable removes a variable of the repository.
func (h RepoHandlers) DeleteRepoVariable(ctx context.Context, params repository.DeleteRepoVariableParams) middleware.Responder {
	st, err := h.repoSettings(ctx, params.Owner, params.Repo)
	if err == nil {
		err = st.s.DeleteVariable(ctx, st.actor, st.sc, params.Variablename)
	}
	if err != nil {
		return h.Fail(err)
	}
	return repository.NewDeleteRepoVariableNoContent()
}

// Organization scope.

// OrgListActionsSecrets lists the organization's secrets, without values.
func (h OrgHandlers) OrgListActionsSecrets(ctx context.Context, params organization.OrgListActionsSecretsParams) middleware.Responder {
	st, err := h.orgSettings(ctx, params.Org)
	if err != nil {
		return h.Fail(err)
	}
	out, total, link, err := st.listSecrets(ctx, params.HTTPRequest, params.Page, params.Limit)
	if err != nil {
		return h.Fail(err)
	}
	return organization.NewOrgListActionsSecretsOK().WithPayload(out).WithXTotalCount(total).WithLink(link)
}

// UpdateOrgSecret creates or replaces a secret of the organization.
func (h OrgHandlers) UpdateOrgSecret(ctx context.Context, params organization.UpdateOrgSecretParams) middleware.Responder {
	st, err := h.orgSettings(ctx, params.Org)
	if err != nil {
		return h.Fail(err)
	}
	created, err := st.putSecret(ctx, params.Secretname, params.Body)
	if err != nil {
		return h.Fail(err)
	}
	if created {
		return organization.NewUpdateOrgSecretCreated()
	}
	return organization.NewUpdateOrgSecretNoContent()
}

// DeleteOrgSecret removes a secret of the organization.
func (h OrgHandlers) DeleteOrgSecret(ctx context.Context, params organization.DeleteOrgSecretParams) middleware.Responder {
	st, err := h.orgSettings(ctx, params.Org)
	if err == nil {
		err = st.s.DeleteSecret(ctx, st.actor, st.sc, params.Secretname)
	}
	if err != nil {
		return h.Fail(err)
	}
	return organization.NewDeleteOrgSecretNoContent()
}

// GetOrgVariablesList lists the organization's variables.
func (h OrgHandlers) GetOrgVariablesList(ctx context.Context, params organization.GetOrgVariablesListParams) middleware.Responder {
	st, err := h.orgSettings(ctx, params.Org)
	if err != nil {
		return h.Fail(err)
	}
	out, total, link, err := st.listVariables(ctx, params.HTTPRequest, params.Page, params.Limit)
	if err != nil {
		return h.Fail(err)
	}
	return organization.NewGetOrgVariablesListOK().WithPayload(out).WithXTotalCount(total).WithLink(link)
}

// GetOrgVariable reads a variable of the organization.
func (h OrgHandlers) GetOrgVariable(ctx context.Context, params organization.GetOrgVariableParams) middleware.Responder {
	st, err := h.orgSettings(ctx, params.Org)
	if err != nil {
		return h.Fail(err)
	}
	v, err := st.getVariable(ctx, params.Variablename)
	if err != nil {
		return h.Fail(err)
	}
	return organization.NewGetOrgVariableOK().WithPayload(v)
}

// CreateOrgVariable creates a variable of the organization.
func (h OrgHandlers) CreateOrgVariable(ctx context.Context, params organization.CreateOrgVariableParams) middleware.Responder {
	st, err := h.orgSettings(ctx, params.Org)
	if err == nil {
		err = st.createVariable(ctx, params.Variablename, params.Body)
	}
	if err != nil {
		return h.Fail(err)
	}
	return organization.NewCreateOrgVariableCreated()
}

// UpdateOrgVariable changes a variable of the organization.
func (h OrgHandlers) UpdateOrgVariable(ctx context.Context, params organization.UpdateOrgVariableParams) middleware.Responder {
	st, err := h.orgSettings(ctx, params.Org)
	if err == nil {
		err = st.updateVariable(ctx, params.Variablename, params.Body)
	}
	if err != nil {
		return h.Fail(err)
	}
	return organization.NewUpdateOrgVariableNoContent()
}

// DeleteOrgVariable removes a variable of the organization.
func (h OrgHandlers) DeleteOrgVariable(ctx context.Context, params organization.DeleteOrgVariableParams) middleware.Responder {
	st, err := h.orgSettings(ctx, params.Org)
	if err == nil {
		err = st.s.DeleteVariable(ctx, st.actor, st.sc, params.Variablename)
	}
	if err != nil {
		return h.Fail(err)
	}
	return organization.NewDeleteOrgVariableNoContent()
}

// User scope.

// UpdateUserSecret creates or replaces a secret of the signed-in user.
func (h UserHandlers) UpdateUserSecret(ctx context.Context, params user.UpdateUserSecretParams) middleware.Responder {
	st, err := h.userSettings(ctx)
	if err != nil {
		return h.Fail(err)
	}
	created, err := st.putSecret(ctx, params.Secretname, params.Body)
	if err != nil {
		return h.Fail(err)
	}
	if created {
		return user.NewUpdateUserSecretCreated()
	}
	return user.NewUpdateUserSecretNoContent()
}

// DeleteUserSecret removes a secret of the signed-in user.
func (h UserHandlers) DeleteUserSecret(ctx context.Context, params user.DeleteUserSecretParams) middleware.Responder {
	st, err := h.userSettings(ctx)
	if err == nil {
		err = st.s.DeleteSecret(ctx, st.actor, st.sc, params.Secretname)
	}
	if err != nil {
		return h.Fail(err)
	}
	return user.NewDeleteUserSecretNoContent()
}

// GetUserVariablesList lists the signed-in user's variables.
func (h UserHandlers) GetUserVariablesList(ctx context.Context, params user.GetUserVariablesListParams) middleware.Responder {
	st, err := h.userSettings(ctx)
	if err != nil {
		return h.Fail(err)
	}
	out, total, link, err := st.listVariables(ctx, params.HTTPRequest, params.Page, params.Limit)
	if err != nil {
		return h.Fail(err)
	}
	return user.NewGetUserVariablesListOK().WithPayload(out).WithXTotalCount(total).WithLink(link)
}

// GetUserVariable reads a variable of the signed-in user.
func (h UserHandlers) GetUserVariable(ctx context.Context, params user.GetUserVariableParams) middleware.Responder {
	st, err := h.userSettings(ctx)
	if err != nil {
		return h.Fail(err)
	}
	v, err := st.getVariable(ctx, params.Variablename)
	if err != nil {
		return h.Fail(err)
	}
	return user.NewGetUserVariableOK().WithPayload(v)
}

// CreateUserVariable creates a variable of the signed-in user.
func (h UserHandlers) CreateUserVariable(ctx context.Context, params user.CreateUserVariableParams) middleware.Responder {
	st, err := h.userSettings(ctx)
	if err == nil {
		err = st.createVariable(ctx, params.Variablename, params.Body)
	}
	if err != nil {
		return h.Fail(err)
	}
	return user.NewCreateUserVariableCreated()
}

// UpdateUserVariable changes a variable of the signed-in user.
func (h UserHandlers) UpdateUserVariable(ctx context.Context, params user.UpdateUserVariableParams) middleware.Responder {
	st, err := h.userSettings(ctx)
	if err == nil {
		err = st.updateVariable(ctx, params.Variablename, params.Body)
	}
	if err != nil {
		return h.Fail(err)
	}
	return user.NewUpdateUserVariableNoContent()
}

// DeleteUserVariable removes a variable of the signed-in user.
func (h UserHandlers) DeleteUserVariable(ctx context.Context, params user.DeleteUserVariableParams) middleware.Responder {
	st, err := h.userSettings(ctx)
	if err == nil {
		err = st.s.DeleteVariable(ctx, st.actor, st.sc, params.Variablename)
	}
	if err != nil {
		return h.Fail(err)
	}
	return user.NewDeleteUserVariableNoContent()
}
