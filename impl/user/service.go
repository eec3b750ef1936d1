package user

import (
	"context"
	"errors"
	"net/mail"
	"strings"
	"time"

	"repohost/impl/apierr"
	"repohost/impl/app"
	"repohost/impl/auth"
	"repohost/impl/events"
	"repohost/impl/names"
	"repohost/store"
)

// Service is the only place that changes individual accounts: creating,
// editing, renaming and deleting them, their email addresses and their
// access tokens. Handlers (the admin API's too) check who may act, turn
// the request into the inputs below and call it. Every action records one
// event in the transaction of its change; doer is who acts (nil for the
// command line and the first start).
type Service struct {
	*app.Deps
	// Repos deletes the repositories of an account deleted with purge, and
	// ends the collaborations and transfers a block undoes.
	Repos Repositories
	// Orgs deletes the organizations such an account was the last owner of.
	Orgs OrgRemover
}

// RepositoryRemover deletes every repository owner owns, in the
// transaction carried by ctx; their files go once it commits. The
// repository service satisfies it.
type RepositoryRemover interface {
	DeleteAllOf(ctx context.Context, doer, owner *store.User) error
}

// Repositories is what the account service asks of the repository
// service: removals, and the grants a block ends.
type Repositories interface {
	RepositoryRemover
	RemoveCollaborator(ctx context.Context, doer *store.User, r *store.Repository, u *store.User) error
	RejectTransfer(ctx context.Context, doer *store.User, r *store.Repository) error
}

// OrgRemover deletes an organization; with purge its repositories go too,
// otherwise an organization that owns any is refused. The organization
// service satisfies it.
type OrgRemover interface {
	Delete(ctx context.Context, doer, org *store.User, purge bool) error
}

// Named is the event payload naming u.
func Named(u *store.User) events.Named { return events.Named{ID: u.ID, Name: u.Name} }

func (s Service) emit(ctx context.Context, kind events.Kind, doer, u *store.User) error {
	return s.Events.Emit(ctx, kind, 0, events.ActorID(doer), Named(u))
}

// ErrNameTaken answers a name some account or organization already has.
func ErrNameTaken(name string) error {
	return apierr.Validation("user already exists [name: %s]", name)
}

// NameFree refuses a name some account or organization already has
// (matched case-insensitively): both share one namespace.
func NameFree(ctx context.Context, st store.Store, name string) error {
	if _, err := st.Users().FindByName(ctx, name); err == nil {
		return ErrNameTaken(name)
	} else if !errors.Is(err, store.ErrNotFound) {
		return err
	}
	return nil
}

// NameTakenIfDuplicate turns the store's duplicate-key error of a write
// that sets name into ErrNameTaken: another request took the name since
// NameFree looked.
func NameTakenIfDuplicate(err error, name string) error {
	if errors.Is(err, store.ErrDuplicate) {
		return ErrNameTaken(name)
	}
	return err
}

// CreateInput describes an account to create.
type CreateInput struct {
	Name               string
	Email              string
	Password           string
	FullName           string
	LoginName          string
	SourceID           int64
	IsAdmin            bool
	MustChangePassword bool
	Restricted         bool
	Visibility         store.Visibility
	// CreatedAt back-dates the account (admin imports); zero means now.
	CreatedAt time.Time
}

// CheckEmail validates the form of an address.
func CheckEmail(email string) error {
	a, err := mail.ParseAddress(email)
	if err != nil || a.Address != email || !strings.Contains(email, "@") {
		return apierr.Validation("e-mail invalid [email: %s]", email)
	}
	return nil
}

// Create makes an account with its primary email address, in one
// transaction. It serves the admin API, the command line and the first
// start.
func (s Service) Create(ctx context.Context, doer *store.User, n CreateInput) (*store.User, error) {
	if err := names.CheckUser("Username", n.Name); err != nil {
		return nil, err
	}
	if err := CheckEmail(n.Email); err != nil {
		return nil, err
	}
	// An account without a password (one signed in by an external source)
	// keeps an empty hash, which no password matches.
	hash := ""
	if n.Password != "" {
		var err error
		if hash, err = s.Hasher.HashPassword(n.Password); err != nil {
			return nil, err
		}
	}
	u := &store.User{
		Name:               n.Name,
		FullName:           n.FullName,
		Email:              n.Email,
		PasswordHash:       hash,
		Type:               store.UserTypeIndividual,
		IsAdmin:            n.IsAdmin,
		IsActive:           true,
		MustChangePassword: n.MustChangePassword,
		Restricted:         n.Restricted,
		Visibility:         n.Visibility,
		LoginName:          n.LoginName,
		SourceID:           n.SourceID,
		AllowCreateOrg:     true,
		MaxRepoCreation:    -1,
		CreatedAt:          n.CreatedAt,
		UpdatedAt:          n.CreatedAt,
	}
	err := s.Store.WithTx(ctx, func(ctx context.Context) error {
		if err := NameFree(ctx, s.Store, n.Name); err != nil {
			return err
		}
		if taken, err := s.emailOwnedByOther(ctx, n.Email, 0); err != nil {
			return err
		} else if taken {
			return apierr.Validation("e-mail already in use [email: %s]", n.Email)
		}
		if err := s.Store.Users().Create(ctx, u); err != nil {
			return NameTakenIfDuplicate(err, n.Name)
		}
		if err := s.Store.Emails().Create(ctx, &store.Email{UserID: u.ID, Email: n.Email, IsPrimary: true, IsActivated: true}); err != nil {
			return err
		}
		return s.emit(ctx, events.UserCreated, doer, u)
	})
	if err != nil {
		return nil, err
	}
	return u, nil
}

// EditInput is a change to an account; nil fields stay as they are. The
// fields after Visibility are a site admin's to change, and Edit refuses
// them from anyone else.
type EditInput struct {
	FullName    *string
	Website     *string
	Location    *string
	Description *string
	Visibility  *store.Visibility
	// The settings a user chooses for themself (GET /user/settings).
	Language      *string
	Theme         *string
	DiffViewStyle *string
	HideEmail     *bool
	HideActivity  *bool

	LoginName *string
	// SourceID 0 keeps the source, as in the reference.
	SourceID int64
	// Password "" keeps the password.
	Password string
	// Email becomes the primary address: one already the account's is
	// promoted, the old primary stays as a secondary address.
	Email              *string
	MustChangePassword *bool
	ProhibitLogin      *bool
	Active             *bool
	Admin              *bool
	AllowGitHook       *bool
	AllowImportLocal   *bool
	AllowCreateOrg     *bool
	Restricted         *bool
	// MaxRepoCreation is -1 (the site default) or more.
	MaxRepoCreation *int64
}

// CheckMaxRepoCreation refuses a repository limit below -1 (the site
// default).
func CheckMaxRepoCreation(n *int64) error {
	if n != nil && *n < -1 {
		return apierr.Validation("[MaxRepoCreation]: must be -1 (the site default) or more")
	}
	return nil
}

// adminOnly tells whether in changes what only a site admin may.
func (in EditInput) adminOnly() bool {
	return in.LoginName != nil || in.SourceID != 0 || in.Password != "" || in.Email != nil ||
		in.MustChangePassword != nil || in.ProhibitLogin != nil || in.Active != nil || in.Admin != nil ||
		in.AllowGitHook != nil || in.AllowImportLocal != nil || in.AllowCreateOrg != nil ||
		in.Restricted != nil || in.MaxRepoCreation != nil
}

// Edit applies in to u, re-read inside the transaction so fields changed
// meanwhile by someone else are not written back with old values.
func (s Service) Edit(ctx context.Context, doer, u *store.User, in EditInput) (*store.User, error) {
	if in.adminOnly() && (doer == nil || !doer.IsAdmin) {
		return nil, apierr.Forbidden("only a site admin may change this")
	}
	if err := CheckMaxRepoCreation(in.MaxRepoCreation); err != nil {
		return nil, err
	}
	var out *store.User
	err := s.Store.WithTx(ctx, func(ctx context.Context) error {
		// Locked: a concurrent edit of other fields waits for this one
		// instead of being overwritten with the values read here.
		found, err := s.Store.Users().FindByIDForUpdate(ctx, u.ID)
		if err != nil {
			return err
		}
		if err := s.applyEdit(ctx, found, in); err != nil {
			return err
		}
		out = found
		if err := s.Store.Users().Update(ctx, found); err != nil {
			return err
		}
		return s.emit(ctx, events.UserEdited, doer, found)
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// applyEdit copies every field in sets onto u, and makes a changed email
// the primary address.
func (s Service) applyEdit(ctx context.Context, u *store.User, in EditInput) error {
	set(&u.LoginName, in.LoginName)
	if in.SourceID != 0 {
		u.SourceID = in.SourceID
	}
	if in.Password != "" {
		hash, err := s.Hasher.HashPassword(in.Password)
		if err != nil {
			return err
		}
		u.PasswordHash = hash
	}
	if in.Email != nil && !strings.EqualFold(*in.Email, u.Email) {
		addr := *in.Email
		if err := CheckEmail(addr); err != nil {
			return err
		}
		taken, err := s.emailOwnedByOther(ctx, addr, u.ID)
		if err != nil {
			return err
		}
		if taken {
			return apierr.BadRequest("e-mail already in use [email: %s]", addr)
		}
		if err := s.Store.Emails().SetPrimary(ctx, u.ID, addr); err != nil {
			return err
		}
		u.Email = addr
	}
	if in.Admin != nil && !*in.Admin {
		last, err := s.isLastAdmin(ctx, u)
		if err != nil {
			return err
		}
		if last {
			return apierr.BadRequest("can not remove the last admin user [uid: %d]", u.ID)
		}
	}
	set(&u.Visibility, in.Visibility)
	set(&u.FullName, in.FullName)
	set(&u.Website, in.Website)
	set(&u.Location, in.Location)
	set(&u.Description, in.Description)
	set(&u.Language, in.Language)
	set(&u.Theme, in.Theme)
	set(&u.DiffViewStyle, in.DiffViewStyle)
	set(&u.KeepEmailPrivate, in.HideEmail)
	set(&u.HideActivity, in.HideActivity)
	set(&u.MustChangePassword, in.MustChangePassword)
	set(&u.ProhibitLogin, in.ProhibitLogin)
	set(&u.IsActive, in.Active)
	set(&u.IsAdmin, in.Admin)
	set(&u.AllowGitHook, in.AllowGitHook)
	set(&u.AllowImportLocal, in.AllowImportLocal)
	set(&u.AllowCreateOrg, in.AllowCreateOrg)
	set(&u.Restricted, in.Restricted)
	set(&u.MaxRepoCreation, in.MaxRepoCreation)
	return nil
}

// set copies *src to *dst when src is given.
func set[T any](dst *T, src *T) {
	if src != nil {
		*dst = *src
	}
}

// emailOwnedByOther tells whether addr belongs to an account other than
// userID (to any account when userID is 0).
func (s Service) emailOwnedByOther(ctx context.Context, addr string, userID int64) (bool, error) {
	e, err := s.Store.Emails().FindByEmail(ctx, addr)
	switch {
	case err == nil:
		return e.UserID != userID, nil
	case errors.Is(err, store.ErrNotFound):
		return false, nil
	}
	return false, err
}

// isLastAdmin tells whether u is the only site admin left.
func (s Service) isLastAdmin(ctx context.Context, u *store.User) (bool, error) {
	if !u.IsAdmin {
		return false, nil
	}
	yes := true
	_, n, err := s.Store.Users().Search(ctx, store.UserSearch{Type: store.UserTypeIndividual, IsAdmin: &yes}, store.Page{Limit: 1})
	return n <= 1, err
}

// Rename gives the account u a new name and moves its repositories'
// directories: the directory first, then the row, moving the directory
// back if the row cannot change. The same name changes nothing.
func (s Service) Rename(ctx context.Context, doer, u *store.User, newName string) error {
	if err := names.CheckUser("NewName", newName); err != nil {
		return err
	}
	if newName == u.Name {
		return nil
	}
	if !strings.EqualFold(newName, u.Name) {
		if err := NameFree(ctx, s.Store, newName); err != nil {
			return err
		}
	}
	oldName := u.Name
	if err := s.Git.RenameOwner(oldName, newName); err != nil {
		return NameTakenIfDuplicate(err, newName)
	}
	err := s.Store.WithTx(ctx, func(ctx context.Context) error {
		// Read again, locked, so the rename cannot write back fields an
		// edit changed since u was loaded.
		fresh, err := s.Store.Users().FindByIDForUpdate(ctx, u.ID)
		if err != nil {
			return err
		}
		fresh.Name = newName
		if err := s.Store.Users().Update(ctx, fresh); err != nil {
			return err
		}
		u.Name = newName
		return s.Events.Emit(ctx, events.UserRenamed, 0, events.ActorID(doer), events.Renamed{ID: u.ID, Name: newName, OldName: oldName})
	})
	if err != nil {
		if gerr := s.Git.RenameOwner(newName, oldName); gerr != nil {
			s.Log.ErrorContext(ctx, "move repositories back after a failed rename", "from", newName, "to", oldName, "err", gerr)
		}
		return NameTakenIfDuplicate(err, newName)
	}
	return nil
}

// Delete deletes the account u with its addresses, tokens and
// memberships. An account that still owns repositories or belongs to
// organizations is refused unless purge is set; purge deletes its
// repositories too (through Repos), and the organizations it was the last
// owner of (through Orgs). Everything goes in one transaction; files on
// disk once it commits.
func (s Service) Delete(ctx context.Context, doer, u *store.User, purge bool) error {
	return s.Store.WithTx(ctx, func(ctx context.Context) error {
		switch {
		case u.IsOrganization():
			return apierr.Validation("%s is an organization not a user", u.Name)
		case doer != nil && u.ID == doer.ID:
			return apierr.Validation("you cannot delete yourself")
		}
		if last, err := s.isLastAdmin(ctx, u); err != nil {
			return err
		} else if last {
			return apierr.Validation("can not delete the last admin user [uid: %d]", u.ID)
		}
		repos, err := s.Store.Repos().CountByOwner(ctx, u.ID)
		if err != nil {
			return err
		}
		if repos > 0 && !purge {
			return apierr.Validation("user still has ownership of repositories [uid: %d, count: %d]", u.ID, repos)
		}
		ms, err := s.Store.Orgs().ListMemberships(ctx, u.ID)
		if err != nil {
			return err
		}
		if len(ms) > 0 && !purge {
			return apierr.Validation("user still has membership of organizations [uid: %d]", u.ID)
		}
		if repos > 0 {
			if err := s.Repos.DeleteAllOf(ctx, doer, u); err != nil {
				return err
			}
		}
		for _, m := range ms {
			if err := s.deleteOrgIfLastOwner(ctx, doer, m); err != nil {
				return err
			}
		}
		if err := s.Store.Orgs().DeleteUserMemberships(ctx, u.ID); err != nil {
			return err
		}
		if err := s.Store.Tokens().DeleteByUser(ctx, u.ID); err != nil {
			return err
		}
		if err := s.Store.Emails().DeleteByUser(ctx, u.ID); err != nil {
			return err
		}
		if err := s.Store.Users().Delete(ctx, u.ID); err != nil {
			return err
		}
		return s.emit(ctx, events.UserDeleted, doer, u)
	})
}

// deleteOrgIfLastOwner deletes the organization of m, with its
// repositories, when its member is its only owner: purging a user must not
// leave an organization nobody can manage.
func (s Service) deleteOrgIfLastOwner(ctx context.Context, doer *store.User, m *store.OrgMember) error {
	if !m.IsOwner {
		return nil
	}
	owners, err := s.Store.Orgs().CountOwners(ctx, m.OrgID)
	if err != nil || owners > 1 {
		return err
	}
	org, err := s.Store.Users().FindByID(ctx, m.OrgID)
	if errors.Is(err, store.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	return s.Orgs.Delete(ctx, doer, org, true)
}

// AddEmails gives u the addresses, all or none. Each must be well formed
// and used by nobody (u included).
func (s Service) AddEmails(ctx context.Context, doer, u *store.User, addrs []string) ([]*store.Email, error) {
	if len(addrs) == 0 {
		return nil, apierr.Validation("Email list empty")
	}
	added := make([]*store.Email, 0, len(addrs))
	seen := map[string]bool{}
	for _, raw := range addrs {
		addr := strings.TrimSpace(raw)
		if CheckEmail(addr) != nil {
			return nil, apierr.Validation("Email address %q invalid", addr)
		}
		if seen[strings.ToLower(addr)] {
			return nil, apierr.Validation("Email address has been used: %s", addr)
		}
		seen[strings.ToLower(addr)] = true
		added = append(added, &store.Email{UserID: u.ID, Email: addr, IsActivated: true})
	}
	err := s.Store.WithTx(ctx, func(ctx context.Context) error {
		for _, e := range added {
			used := apierr.Validation("Email address has been used: %s", e.Email)
			if taken, err := s.emailOwnedByOther(ctx, e.Email, 0); err != nil {
				return err
			} else if taken {
				return used
			}
			if err := s.Store.Emails().Create(ctx, e); err != nil {
				if errors.Is(err, store.ErrDuplicate) {
					return used
				}
				return err
			}
		}
		return s.emit(ctx, events.UserEmailsAdded, doer, u)
	})
	if err != nil {
		return nil, err
	}
	return added, nil
}

// DeleteEmails removes addresses of u, all or none. An address that is not
// u's answers 404; the primary one cannot go (422). No address at all
// changes nothing.
func (s Service) DeleteEmails(ctx context.Context, doer, u *store.User, addrs []string) error {
	if len(addrs) == 0 {
		return nil
	}
	return s.Store.WithTx(ctx, func(ctx context.Context) error {
		es, err := s.Store.Emails().ListByUser(ctx, u.ID)
		if err != nil {
			return err
		}
		mine := make(map[string]*store.Email, len(es))
		for _, e := range es {
			mine[e.LowerEmail] = e
		}
		gone := make([]string, 0, len(addrs))
		seen := map[string]bool{}
		for _, raw := range addrs {
			addr := strings.TrimSpace(raw)
			e := mine[strings.ToLower(addr)]
			switch {
			case e == nil:
				return apierr.NotFound("Email address does not exist [email: %s]", addr)
			case e.IsPrimary:
				return apierr.Validation("Primary email address cannot be deleted [email: %s]", addr)
			case seen[e.LowerEmail]:
				continue
			}
			seen[e.LowerEmail] = true
			gone = append(gone, addr)
		}
		if err := s.Store.Emails().Delete(ctx, u.ID, gone); err != nil {
			return err
		}
		return s.emit(ctx, events.UserEmailsDeleted, doer, u)
	})
}

// TokenInput describes an access token to create.
type TokenInput struct {
	Name   string
	Scopes []string
}

func errTokenNameUsed() error { return apierr.BadRequest("access token name has been used already") }

// CreateToken issues a token for owner. The secret is returned here once:
// only its hash is kept.
func (s Service) CreateToken(ctx context.Context, doer, owner *store.User, in TokenInput) (*store.AccessToken, string, error) {
	if strings.TrimSpace(in.Name) == "" {
		return nil, "", apierr.Validation("[Name]: Required")
	}
	if _, err := s.Store.Tokens().FindByName(ctx, owner.ID, in.Name); err == nil {
		return nil, "", errTokenNameUsed()
	} else if !errors.Is(err, store.ErrNotFound) {
		return nil, "", err
	}
	scopes, bad, ok := auth.ParseScopes(in.Scopes)
	if !ok {
		return nil, "", apierr.BadRequest("invalid access token scope provided: unknown scope %q", bad)
	}
	scopes = normalizeScopes(scopes)
	if len(scopes) == 0 || (len(scopes) == 1 && scopes.PublicOnly()) {
		return nil, "", apierr.BadRequest("access token must have a scope")
	}
	secret, hash, err := auth.NewToken()
	if err != nil {
		return nil, "", err
	}
	t := &store.AccessToken{
		UserID:         owner.ID,
		Name:           in.Name,
		TokenHash:      hash,
		TokenLastEight: secret[len(secret)-8:],
		Scopes:         scopes.String(),
	}
	err = s.Store.WithTx(ctx, func(ctx context.Context) error {
		if err := s.Store.Tokens().Create(ctx, t); err != nil {
			if errors.Is(err, store.ErrDuplicate) {
				// Lost a race with a concurrent create of the same name.
				return errTokenNameUsed()
			}
			return err
		}
		return s.emitToken(ctx, events.TokenCreated, doer, owner, t)
	})
	if err != nil {
		return nil, "", err
	}
	return t, secret, nil
}

// DeleteToken revokes owner's token t.
func (s Service) DeleteToken(ctx context.Context, doer, owner *store.User, t *store.AccessToken) error {
	return s.Store.WithTx(ctx, func(ctx context.Context) error {
		if err := s.Store.Tokens().Delete(ctx, t.ID); err != nil {
			return err
		}
		return s.emitToken(ctx, events.TokenDeleted, doer, owner, t)
	})
}

func (s Service) emitToken(ctx context.Context, kind events.Kind, doer, owner *store.User, t *store.AccessToken) error {
	return s.Events.Emit(ctx, kind, 0, events.ActorID(doer), events.Token{ID: t.ID, Name: t.Name, Owner: Named(owner)})
}
