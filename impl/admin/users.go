package admin

import (
	"context"
	"strings"
	"time"

	"github.com/go-openapi/runtime/middleware"

	"repohost/impl/apierr"
	"repohost/impl/app"
	"repohost/impl/auth"
	"repohost/impl/convert"
	"repohost/impl/paging"
	usersvc "repohost/impl/user"
	"repohost/restapi/operations/admin"
	"repohost/store"
)

// userSortColumn maps the sort key and direction of the admin user search
// to a fixed ORDER BY clause; nothing a client sends reaches SQL.
func userSortColumn(key, dir string) (string, bool) {
	col := map[string]string{"name": "lower_name", "created": "created_at", "updated": "updated_at", "id": "id"}[key]
	return col + " " + strings.ToUpper(dir), col != ""
}

func str(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// visibility reads a visibility a client named.
func visibility(s string) (store.Visibility, error) {
	vis, ok := store.ParseVisibility(s)
	if !ok {
		return vis, apierr.Validation("Invalid visibility: %q", s)
	}
	return vis, nil
}

// userSearchOrder reads sort and order. order only counts together with
// sort, as in the reference.
func userSearchOrder(sort, order *string) (string, error) {
	key := strings.TrimSpace(str(sort))
	if key == "" {
		return "", nil
	}
	dir := strings.ToLower(strings.TrimSpace(str(order)))
	if dir == "" {
		dir = "asc"
	}
	if dir != "asc" && dir != "desc" {
		return "", apierr.Validation("Invalid sort order: %q", dir)
	}
	col, ok := userSortColumn(key, dir)
	if !ok {
		return "", apierr.Validation("Invalid sort mode: %q", key)
	}
	return col, nil
}

func (h Handlers) AdminSearchUsers(ctx context.Context, params admin.AdminSearchUsersParams) middleware.Responder {
	p, err := auth.RequireAdmin(ctx)
	if err != nil {
		return h.Fail(err)
	}
	orderBy, err := userSearchOrder(params.Sort, params.Order)
	if err != nil {
		return h.Fail(err)
	}
	q := store.UserSearch{
		Type:          store.UserTypeIndividual,
		Keyword:       strings.TrimSpace(str(params.Q)),
		KeywordEmail:  true,
		LoginName:     strings.TrimSpace(str(params.LoginName)),
		IsActive:      params.IsActive,
		IsAdmin:       params.IsAdmin,
		IsRestricted:  params.IsRestricted,
		ProhibitLogin: params.IsProhibitLogin,
		OrderBy:       orderBy,
	}
	if v := strings.TrimSpace(str(params.Visibility)); v != "" {
		vis, err := visibility(v)
		if err != nil {
			return h.Fail(err)
		}
		q.Visibilities = []store.Visibility{vis}
	}
	// As in the reference, source_id 0 means "any source".
	if params.SourceID != nil && *params.SourceID > 0 {
		q.SourceID = params.SourceID
	}
	pg := h.Page(params.Page, params.Limit)
	var users []*store.User
	var total int64
	// No account has two-factor authentication here, so asking for those
	// that do finds nobody, and asking for those that do not filters nothing.
	if params.Is2faEnabled == nil || !*params.Is2faEnabled {
		users, total, err = h.Store.Users().Search(ctx, q, pg.Store())
		if err != nil {
			return h.Fail(err)
		}
	}
	return admin.NewAdminSearchUsersOK().
		WithXTotalCount(total).
		WithLink(paging.Link(params.HTTPRequest, pg, total)).
		WithPayload(convert.Users(app.BaseURL(params.HTTPRequest), users, p.User))
}

func (h Handlers) AdminCreateUser(ctx context.Context, params admin.AdminCreateUserParams) middleware.Responder {
	p, err := auth.RequireAdmin(ctx)
	if err != nil {
		return h.Fail(err)
	}
	b := params.Body
	if b == nil || b.Username == nil {
		return h.Fail(apierr.Validation("[Username]: Required"))
	}
	if b.Email == nil || *b.Email == "" {
		return h.Fail(apierr.Validation("[Email]: Required"))
	}
	n := usersvc.CreateInput{
		Name:      *b.Username,
		Email:     *b.Email,
		Password:  str(b.Password),
		FullName:  str(b.FullName),
		LoginName: str(b.LoginName),
		// The reference makes a new account change its password at first
		// sign-in unless told otherwise.
		MustChangePassword: b.MustChangePassword == nil || *b.MustChangePassword,
		Restricted:         b.Restricted != nil && *b.Restricted,
	}
	if b.SourceID != nil {
		n.SourceID = *b.SourceID
	}
	// An account signed in by an external source may have no password;
	// a local one must.
	if n.SourceID == 0 && n.Password == "" {
		return h.Fail(apierr.Validation("[Password]: Required"))
	}
	if b.Visibility != nil {
		if n.Visibility, err = visibility(*b.Visibility); err != nil {
			return h.Fail(err)
		}
	}
	if b.Created != nil {
		n.CreatedAt = time.Time(*b.Created).UTC().Truncate(time.Second)
	}
	u, err := h.Users.Create(ctx, p.User, n)
	if err != nil {
		return h.Fail(err)
	}
	return admin.NewAdminCreateUserCreated().WithPayload(convert.User(app.BaseURL(params.HTTPRequest), u, p.User))
}

// adminFor checks that the caller is a site admin and loads the account
// or organization name that an admin route acts on.
func (h Handlers) adminFor(ctx context.Context, name string) (*auth.Principal, *store.User, error) {
	p, err := auth.RequireAdmin(ctx)
	if err != nil {
		return nil, nil, err
	}
	u, err := h.Store.Users().FindByName(ctx, name)
	if err != nil {
		return nil, nil, err
	}
	return p, u, nil
}

// individual loads an account by name for the admin routes: an unknown name
// and an organization's both answer 404.
func (h Handlers) individual(ctx context.Context, name string) (*store.User, error) {
	u, err := h.Store.Users().FindByName(ctx, name)
	if err != nil {
		return nil, err
	}
	if u.IsOrganization() {
		return nil, apierr.NotFound("not found")
	}
	return u, nil
}

func (h Handlers) AdminEditUser(ctx context.Context, params admin.AdminEditUserParams) middleware.Responder {
	p, err := auth.RequireAdmin(ctx)
	if err != nil {
		return h.Fail(err)
	}
	b := params.Body
	if b == nil || b.LoginName == nil {
		return h.Fail(apierr.Validation("[LoginName]: Required"))
	}
	if b.SourceID == nil {
		return h.Fail(apierr.Validation("[SourceID]: Required"))
	}
	if err := usersvc.CheckMaxRepoCreation(b.MaxRepoCreation); err != nil {
		return h.Fail(err)
	}
	u, err := h.individual(ctx, params.Username)
	if err != nil {
		return h.Fail(err)
	}
	in := usersvc.EditInput{
		LoginName:          b.LoginName,
		SourceID:           *b.SourceID,
		Password:           str(b.Password),
		FullName:           b.FullName,
		Website:            b.Website,
		Location:           b.Location,
		Description:        b.Description,
		MustChangePassword: b.MustChangePassword,
		ProhibitLogin:      b.ProhibitLogin,
		Active:             b.Active,
		Admin:              b.Admin,
		AllowGitHook:       b.AllowGitHook,
		AllowImportLocal:   b.AllowImportLocal,
		AllowCreateOrg:     b.AllowCreateOrganization,
		Restricted:         b.Restricted,
		MaxRepoCreation:    b.MaxRepoCreation,
	}
	if b.Email != nil {
		addr := string(*b.Email)
		in.Email = &addr
	}
	if b.Visibility != nil {
		vis, err := visibility(*b.Visibility)
		if err != nil {
			return h.Fail(err)
		}
		in.Visibility = &vis
	}
	if u, err = h.Users.Edit(ctx, p.User, u, in); err != nil {
		return h.Fail(err)
	}
	return admin.NewAdminEditUserOK().WithPayload(convert.User(app.BaseURL(params.HTTPRequest), u, p.User))
}

// AdminDeleteUser deletes an account; with purge also its repositories and
// the organizations it was the last owner of.
func (h Handlers) AdminDeleteUser(ctx context.Context, params admin.AdminDeleteUserParams) middleware.Responder {
	p, u, err := h.adminFor(ctx, params.Username)
	if err != nil {
		return h.Fail(err)
	}
	if err := h.Users.Delete(ctx, p.User, u, params.Purge != nil && *params.Purge); err != nil {
		return h.Fail(err)
	}
	return admin.NewAdminDeleteUserNoContent()
}

// AdminRenameUser gives an account a new name.
func (h Handlers) AdminRenameUser(ctx context.Context, params admin.AdminRenameUserParams) middleware.Responder {
	p, u, err := h.adminFor(ctx, params.Username)
	if err != nil {
		return h.Fail(err)
	}
	if u.IsOrganization() {
		return h.Fail(apierr.Validation("%s is an organization not a user", u.Name))
	}
	if params.Body == nil || params.Body.NewName == nil {
		return h.Fail(apierr.Validation("[NewName]: Required"))
	}
	if err := h.Users.Rename(ctx, p.User, u, *params.Body.NewName); err != nil {
		return h.Fail(err)
	}
	return admin.NewAdminRenameUserNoContent()
}
