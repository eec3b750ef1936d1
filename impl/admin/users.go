package admin

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/go-openapi/runtime/middleware"

	"repohost/impl/apierr"
	"repohost/impl/app"
	"repohost/impl/auth"
	"repohost/impl/convert"
	"repohost/impl/names"
	"repohost/impl/paging"
	"repohost/impl/repo"
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
		vis, ok := store.ParseVisibility(v)
		if !ok {
			return h.Fail(apierr.Validation("Invalid visibility: %q", v))
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
	n := usersvc.NewUser{
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
		vis, ok := store.ParseVisibility(*b.Visibility)
		if !ok {
			return h.Fail(apierr.Validation("Invalid visibility: %q", *b.Visibility))
		}
		n.Visibility = vis
	}
	if b.Created != nil {
		n.CreatedAt = time.Time(*b.Created).UTC().Truncate(time.Second)
	}
	u, err := usersvc.Create(ctx, h.Deps, n)
	if err != nil {
		return h.Fail(err)
	}
	return admin.NewAdminCreateUserCreated().WithPayload(convert.User(app.BaseURL(params.HTTPRequest), u, p.User))
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

// isLastAdmin tells whether u is the only site admin left.
func (h Handlers) isLastAdmin(ctx context.Context, u *store.User) (bool, error) {
	if !u.IsAdmin {
		return false, nil
	}
	yes := true
	_, n, err := h.Store.Users().Search(ctx, store.UserSearch{Type: store.UserTypeIndividual, IsAdmin: &yes}, store.Page{Limit: 1})
	return n <= 1, err
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
	if b.MaxRepoCreation != nil && *b.MaxRepoCreation < -1 {
		return h.Fail(apierr.Validation("[MaxRepoCreation]: must be -1 (the site default) or more"))
	}
	var u *store.User
	err = h.Store.WithTx(ctx, func(ctx context.Context) error {
		found, err := h.individual(ctx, params.Username)
		if err != nil {
			return err
		}
		if err := h.applyEdit(ctx, found, params); err != nil {
			return err
		}
		u = found
		return h.Store.Users().Update(ctx, found)
	})
	if err != nil {
		return h.Fail(err)
	}
	return admin.NewAdminEditUserOK().WithPayload(convert.User(app.BaseURL(params.HTTPRequest), u, p.User))
}

// applyEdit copies every field the body sets onto u, and makes a changed
// email the primary address (an address already the user's is promoted;
// the old primary stays as a secondary address).
func (h Handlers) applyEdit(ctx context.Context, u *store.User, params admin.AdminEditUserParams) error {
	b := params.Body
	u.LoginName = *b.LoginName
	// As in the reference, source_id 0 leaves the source alone.
	if *b.SourceID != 0 {
		u.SourceID = *b.SourceID
	}
	if pw := str(b.Password); pw != "" {
		hash, err := h.Hasher.HashPassword(pw)
		if err != nil {
			return err
		}
		u.PasswordHash = hash
	}
	if b.Email != nil && !strings.EqualFold(string(*b.Email), u.Email) {
		addr := string(*b.Email)
		if err := usersvc.CheckEmail(addr); err != nil {
			return err
		}
		taken, err := h.emailOwnedByOther(ctx, addr, u.ID)
		if err != nil {
			return err
		}
		if taken {
			return apierr.BadRequest("e-mail already in use [email: %s]", addr)
		}
		if err := h.Store.Emails().SetPrimary(ctx, u.ID, addr); err != nil {
			return err
		}
		u.Email = addr
	}
	if b.Admin != nil && !*b.Admin {
		last, err := h.isLastAdmin(ctx, u)
		if err != nil {
			return err
		}
		if last {
			return apierr.BadRequest("can not remove the last admin user [uid: %d]", u.ID)
		}
	}
	if b.Visibility != nil {
		vis, ok := store.ParseVisibility(*b.Visibility)
		if !ok {
			return apierr.Validation("Invalid visibility: %q", *b.Visibility)
		}
		u.Visibility = vis
	}
	setBool := func(dst *bool, src *bool) {
		if src != nil {
			*dst = *src
		}
	}
	setString := func(dst *string, src *string) {
		if src != nil {
			*dst = *src
		}
	}
	setString(&u.FullName, b.FullName)
	setString(&u.Website, b.Website)
	setString(&u.Location, b.Location)
	setString(&u.Description, b.Description)
	setBool(&u.MustChangePassword, b.MustChangePassword)
	setBool(&u.ProhibitLogin, b.ProhibitLogin)
	setBool(&u.IsActive, b.Active)
	setBool(&u.IsAdmin, b.Admin)
	setBool(&u.AllowGitHook, b.AllowGitHook)
	setBool(&u.AllowImportLocal, b.AllowImportLocal)
	setBool(&u.AllowCreateOrg, b.AllowCreateOrganization)
	setBool(&u.Restricted, b.Restricted)
	if b.MaxRepoCreation != nil {
		u.MaxRepoCreation = *b.MaxRepoCreation
	}
	return nil
}

// AdminDeleteUser deletes an account with its addresses, tokens and
// memberships. An account that still owns repositories or belongs to
// organizations is refused unless purge is set; purge deletes its
// repositories too, and the organizations it was the last owner of. The
// rows go in one transaction; the git directories after it commits, so no
// transaction waits on the disk.
func (h Handlers) AdminDeleteUser(ctx context.Context, params admin.AdminDeleteUserParams) middleware.Responder {
	p, err := auth.RequireAdmin(ctx)
	if err != nil {
		return h.Fail(err)
	}
	purge := params.Purge != nil && *params.Purge
	err = h.Store.WithTx(ctx, func(ctx context.Context) error {
		u, err := h.Store.Users().FindByName(ctx, params.Username)
		if err != nil {
			return err
		}
		switch {
		case u.IsOrganization():
			return apierr.Validation("%s is an organization not a user", u.Name)
		case u.ID == p.UserID():
			return apierr.Validation("you cannot delete yourself")
		}
		if last, err := h.isLastAdmin(ctx, u); err != nil {
			return err
		} else if last {
			return apierr.Validation("can not delete the last admin user [uid: %d]", u.ID)
		}
		repos, err := h.Store.Repos().ListByOwner(ctx, u.ID)
		if err != nil {
			return err
		}
		if len(repos) > 0 && !purge {
			return apierr.Validation("user still has ownership of repositories [uid: %d, count: %d]", u.ID, len(repos))
		}
		ms, err := h.Store.Orgs().ListMemberships(ctx, u.ID)
		if err != nil {
			return err
		}
		if len(ms) > 0 && !purge {
			return apierr.Validation("user still has membership of organizations [uid: %d]", u.ID)
		}
		if err := h.deleteRepos(ctx, p.User, u, repos); err != nil {
			return err
		}
		for _, m := range ms {
			if err := h.deleteOrgIfLastOwner(ctx, p.User, m, u.ID); err != nil {
				return err
			}
		}
		if err := h.Store.Orgs().DeleteUserMemberships(ctx, u.ID); err != nil {
			return err
		}
		if err := h.Store.Tokens().DeleteByUser(ctx, u.ID); err != nil {
			return err
		}
		if err := h.Store.Emails().DeleteByUser(ctx, u.ID); err != nil {
			return err
		}
		return h.Store.Users().Delete(ctx, u.ID)
	})
	if err != nil {
		return h.Fail(err)
	}
	return admin.NewAdminDeleteUserNoContent()
}

// deleteRepos deletes owner's repositories through the repository service,
// in the caller's transaction; their files go once it commits.
func (h Handlers) deleteRepos(ctx context.Context, doer, owner *store.User, repos []*store.Repository) error {
	for _, r := range repos {
		r.Owner = owner
		if err := (repo.Service{Deps: h.Deps}).Delete(ctx, doer, r); err != nil {
			return err
		}
	}
	return nil
}

// deleteOrgIfLastOwner deletes the organization of m, with its
// repositories and memberships, when userID is its only owner: purging a
// user must not leave an organization nobody can manage.
func (h Handlers) deleteOrgIfLastOwner(ctx context.Context, doer *store.User, m *store.OrgMember, userID int64) error {
	if !m.IsOwner {
		return nil
	}
	owners, err := h.Store.Orgs().CountOwners(ctx, m.OrgID)
	if err != nil || owners > 1 {
		return err
	}
	org, err := h.Store.Users().FindByID(ctx, m.OrgID)
	if errors.Is(err, store.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	repos, err := h.Store.Repos().ListByOwner(ctx, org.ID)
	if err != nil {
		return err
	}
	if err := h.deleteRepos(ctx, doer, org, repos); err != nil {
		return err
	}
	if err := h.Store.Orgs().DeleteOrgMembers(ctx, org.ID); err != nil {
		return err
	}
	return h.Store.Users().Delete(ctx, org.ID)
}

// AdminRenameUser gives an account a new name and moves its repositories'
// directories: the directory first, then the row, moving the directory
// back if the row cannot change.
func (h Handlers) AdminRenameUser(ctx context.Context, params admin.AdminRenameUserParams) middleware.Responder {
	if _, err := auth.RequireAdmin(ctx); err != nil {
		return h.Fail(err)
	}
	u, err := h.Store.Users().FindByName(ctx, params.Username)
	if err != nil {
		return h.Fail(err)
	}
	if u.IsOrganization() {
		return h.Fail(apierr.Validation("%s is an organization not a user", u.Name))
	}
	if params.Body == nil || params.Body.NewName == nil {
		return h.Fail(apierr.Validation("[NewName]: Required"))
	}
	newName := *params.Body.NewName
	if err := names.CheckUser("NewName", newName); err != nil {
		return h.Fail(err)
	}
	if newName == u.Name {
		return admin.NewAdminRenameUserNoContent()
	}
	if !strings.EqualFold(newName, u.Name) {
		if _, err := h.Store.Users().FindByName(ctx, newName); err == nil {
			return h.Fail(apierr.Validation("user already exists [name: %s]", newName))
		} else if !errors.Is(err, store.ErrNotFound) {
			return h.Fail(err)
		}
	}
	oldName := u.Name
	if err := h.Git.RenameOwner(oldName, newName); err != nil {
		if errors.Is(err, store.ErrDuplicate) {
			return h.Fail(apierr.Validation("user already exists [name: %s]", newName))
		}
		return h.Fail(err)
	}
	u.Name = newName
	if err := h.Store.Users().Update(ctx, u); err != nil {
		if gerr := h.Git.RenameOwner(newName, oldName); gerr != nil {
			h.Log.Error("move repositories back after a failed rename", "from", newName, "to", oldName, "err", gerr)
		}
		if errors.Is(err, store.ErrDuplicate) {
			return h.Fail(apierr.Validation("user already exists [name: %s]", newName))
		}
		return h.Fail(err)
	}
	return admin.NewAdminRenameUserNoContent()
}
