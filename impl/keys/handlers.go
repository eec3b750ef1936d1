package keys

import (
	"context"

	"github.com/go-openapi/runtime/middleware"

	"repohost/impl/app"
	"repohost/impl/auth"
	"repohost/impl/convert"
	"repohost/impl/paging"
	"repohost/models"
	"repohost/restapi/operations/repository"
	"repohost/restapi/operations/user"
	"repohost/store"
)

// UserHandlers implements the key operations of the user tag.
type UserHandlers struct {
	*app.Deps
	Keys Service
}

// RepoHandlers implements the deploy key operations of the repository tag.
type RepoHandlers struct {
	*app.Deps
	Keys Service
}

func str(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func fingerprint(s *string) string { return str(s) }

// sshKeyModels renders keys of owner; the user and key type are shown to
// the owner and site admins only.
func sshKeyModels(base string, p *auth.Principal, owner *store.User, ks []*store.PublicKey) []*models.PublicKey {
	var ownerModel *models.User
	if p != nil && (p.IsAdmin() || p.UserID() == owner.ID) {
		ownerModel = convert.User(base, owner, app.Viewer(p))
	}
	out := make([]*models.PublicKey, 0, len(ks))
	for _, k := range ks {
		out = append(out, convert.PublicKey(base, k, ownerModel))
	}
	return out
}

func (h UserHandlers) UserCurrentListKeys(ctx context.Context, params user.UserCurrentListKeysParams) middleware.Responder {
	p, err := auth.RequireUser(ctx)
	if err != nil {
		return h.Fail(err)
	}
	pg := h.Page(params.Page, params.Limit)
	ks, total, err := h.Store.Keys().ListPublicKeys(ctx, p.UserID(), fingerprint(params.Fingerprint), pg.Store())
	if err != nil {
		return h.Fail(err)
	}
	return user.NewUserCurrentListKeysOK().WithXTotalCount(total).WithLink(paging.Link(params.HTTPRequest, pg, total)).
		WithPayload(sshKeyModels(app.BaseURL(params.HTTPRequest), p, p.User, ks))
}

func (h UserHandlers) UserListKeys(ctx context.Context, params user.UserListKeysParams) middleware.Responder {
	p := auth.FromContext(ctx)
	u, err := h.VisibleUser(ctx, p, params.Username)
	if err != nil {
		return h.Fail(err)
	}
	pg := h.Page(params.Page, params.Limit)
	ks, total, err := h.Store.Keys().ListPublicKeys(ctx, u.ID, fingerprint(params.Fingerprint), pg.Store())
	if err != nil {
		return h.Fail(err)
	}
	return user.NewUserListKeysOK().WithXTotalCount(total).WithLink(paging.Link(params.HTTPRequest, pg, total)).
		WithPayload(sshKeyModels(app.BaseURL(params.HTTPRequest), p, u, ks))
}

func (h UserHandlers) UserCurrentGetKey(ctx context.Context, params user.UserCurrentGetKeyParams) middleware.Responder {
	p, err := auth.RequireUser(ctx)
	if err != nil {
		return h.Fail(err)
	}
	k, err := h.Store.Keys().FindPublicKey(ctx, p.UserID(), params.ID)
	if err != nil {
		return h.Fail(err)
	}
	return user.NewUserCurrentGetKeyOK().WithPayload(sshKeyModels(app.BaseURL(params.HTTPRequest), p, p.User, []*store.PublicKey{k})[0])
}

func (h UserHandlers) UserCurrentPostKey(ctx context.Context, params user.UserCurrentPostKeyParams) middleware.Responder {
	p, err := auth.RequireUser(ctx)
	if err != nil {
		return h.Fail(err)
	}
	k, err := h.Keys.AddPublicKey(ctx, p.User, p.User, str(params.Body.Title), str(params.Body.Key))
	if err != nil {
		return h.Fail(err)
	}
	return user.NewUserCurrentPostKeyCreated().WithPayload(sshKeyModels(app.BaseURL(params.HTTPRequest), p, p.User, []*store.PublicKey{k})[0])
}

func (h UserHandlers) UserCurrentDeleteKey(ctx context.Context, params user.UserCurrentDeleteKeyParams) middleware.Responder {
	p, err := auth.RequireUser(ctx)
	if err != nil {
		return h.Fail(err)
	}
	if err := h.Keys.DeletePublicKey(ctx, p.User, p.User, params.ID); err != nil {
		return h.Fail(err)
	}
	return user.NewUserCurrentDeleteKeyNoContent()
}

func gpgModels(ks []*store.GPGKey) []*models.GPGKey {
	out := make([]*models.GPGKey, 0, len(ks))
	for _, k := range ks {
		out = append(out, convert.GPGKey(k))
	}
	return out
}

func (h UserHandlers) UserCurrentListGPGKeys(ctx context.Context, params user.UserCurrentListGPGKeysParams) middleware.Responder {
	p, err := auth.RequireUser(ctx)
	if err != nil {
		return h.Fail(err)
	}
	pg := h.Page(params.Page, params.Limit)
	ks, total, err := h.Store.Keys().ListGPGKeys(ctx, p.UserID(), pg.Store())
	if err != nil {
		return h.Fail(err)
	}
	return user.NewUserCurrentListGPGKeysOK().WithXTotalCount(total).WithLink(paging.Link(params.HTTPRequest, pg, total)).
		WithPayload(gpgModels(ks))
}

func (h UserHandlers) UserListGPGKeys(ctx context.Context, params user.UserListGPGKeysParams) middleware.Responder {
	u, err := h.VisibleUser(ctx, auth.FromContext(ctx), params.Username)
	if err != nil {
		return h.Fail(err)
	}
	pg := h.Page(params.Page, params.Limit)
	ks, total, err := h.Store.Keys().ListGPGKeys(ctx, u.ID, pg.Store())
	if err != nil {
		return h.Fail(err)
	}
	return user.NewUserListGPGKeysOK().WithXTotalCount(total).WithLink(paging.Link(params.HTTPRequest, pg, total)).
		WithPayload(gpgModels(ks))
}

func (h UserHandlers) UserCurrentGetGPGKey(ctx context.Context, params user.UserCurrentGetGPGKeyParams) middleware.Responder {
	p, err := auth.RequireUser(ctx)
	if err != nil {
		return h.Fail(err)
	}
	k, err := h.Store.Keys().FindGPGKey(ctx, p.UserID(), params.ID)
	if err != nil {
		return h.Fail(err)
	}
	return user.NewUserCurrentGetGPGKeyOK().WithPayload(convert.GPGKey(k))
}

func (h UserHandlers) UserCurrentPostGPGKey(ctx context.Context, params user.UserCurrentPostGPGKeyParams) middleware.Responder {
	p, err := auth.RequireUser(ctx)
	if err != nil {
		return h.Fail(err)
	}
	k, err := h.Keys.AddGPGKey(ctx, p.User, str(params.Form.ArmoredKey), str(params.Form.Signature))
	if err != nil {
		return h.Fail(err)
	}
	return user.NewUserCurrentPostGPGKeyCreated().WithPayload(convert.GPGKey(k))
}

func (h UserHandlers) UserCurrentDeleteGPGKey(ctx context.Context, params user.UserCurrentDeleteGPGKeyParams) middleware.Responder {
	p, err := auth.RequireUser(ctx)
	if err != nil {
		return h.Fail(err)
	}
	if err := h.Keys.DeleteGPGKey(ctx, p.User, params.ID); err != nil {
		return h.Fail(err)
	}
	return user.NewUserCurrentDeleteGPGKeyNoContent()
}

func (h UserHandlers) GetVerificationToken(ctx context.Context, params user.GetVerificationTokenParams) middleware.Responder {
	p, err := auth.RequireUser(ctx)
	if err != nil {
		return h.Fail(err)
	}
	return user.NewGetVerificationTokenOK().WithPayload(VerificationToken(p.User, h.Clock.Now()))
}

func (h UserHandlers) UserVerifyGPGKey(ctx context.Context, params user.UserVerifyGPGKeyParams) middleware.Responder {
	p, err := auth.RequireUser(ctx)
	if err != nil {
		return h.Fail(err)
	}
	k, err := h.Keys.VerifyGPGKey(ctx, p.User, str(params.Body.KeyID), str(params.Body.Signature))
	if err != nil {
		return h.Fail(err)
	}
	return user.NewUserVerifyGPGKeyCreated().WithPayload(convert.GPGKey(k))
}

// adminRepo loads owner/name for its admin (401, 404, 403), with the
// model deploy keys embed.
func (h RepoHandlers) adminRepo(ctx context.Context, base, owner, name string) (*auth.Principal, *store.Repository, *models.Repository, error) {
	p, r, err := h.RepoAdmin(ctx, owner, name)
	if err != nil {
		return nil, nil, nil, err
	}
	perm, err := h.Access.Repo(ctx, p, r)
	if err != nil {
		return nil, nil, nil, err
	}
	return p, r, convert.Repo(h.Links(base), r, perm, app.Viewer(p)), nil
}

func (h RepoHandlers) RepoListKeys(ctx context.Context, params repository.RepoListKeysParams) middleware.Responder {
	base := app.BaseURL(params.HTTPRequest)
	_, r, rm, err := h.adminRepo(ctx, base, params.Owner, params.Repo)
	if err != nil {
		return h.Fail(err)
	}
	var keyID int64
	if params.KeyID != nil {
		keyID = *params.KeyID
	}
	pg := h.Page(params.Page, params.Limit)
	ks, total, err := h.Store.Keys().ListDeployKeys(ctx, r.ID, keyID, fingerprint(params.Fingerprint), pg.Store())
	if err != nil {
		return h.Fail(err)
	}
	out := make([]*models.DeployKey, 0, len(ks))
	for _, k := range ks {
		out = append(out, convert.DeployKey(base, k, rm))
	}
	return repository.NewRepoListKeysOK().WithXTotalCount(total).WithLink(paging.Link(params.HTTPRequest, pg, total)).WithPayload(out)
}

func (h RepoHandlers) RepoGetKey(ctx context.Context, params repository.RepoGetKeyParams) middleware.Responder {
	base := app.BaseURL(params.HTTPRequest)
	_, r, rm, err := h.adminRepo(ctx, base, params.Owner, params.Repo)
	if err != nil {
		return h.Fail(err)
	}
	k, err := h.Store.Keys().FindDeployKey(ctx, r.ID, params.ID)
	if err != nil {
		return h.Fail(err)
	}
	return repository.NewRepoGetKeyOK().WithPayload(convert.DeployKey(base, k, rm))
}

func (h RepoHandlers) RepoCreateKey(ctx context.Context, params repository.RepoCreateKeyParams) middleware.Responder {
	base := app.BaseURL(params.HTTPRequest)
	p, r, rm, err := h.adminRepo(ctx, base, params.Owner, params.Repo)
	if err != nil {
		return h.Fail(err)
	}
	readOnly := params.Body.ReadOnly != nil && *params.Body.ReadOnly
	k, err := h.Keys.AddDeployKey(ctx, p.User, r, str(params.Body.Title), str(params.Body.Key), readOnly)
	if err != nil {
		return h.Fail(err)
	}
	return repository.NewRepoCreateKeyCreated().WithPayload(convert.DeployKey(base, k, rm))
}

func (h RepoHandlers) RepoDeleteKey(ctx context.Context, params repository.RepoDeleteKeyParams) middleware.Responder {
	p, r, err := h.RepoAdmin(ctx, params.Owner, params.Repo)
	if err != nil {
		return h.Fail(err)
	}
	if err := h.Keys.DeleteDeployKey(ctx, p.User, r, params.ID); err != nil {
		return h.Fail(err)
	}
	return repository.NewRepoDeleteKeyNoContent()
}
