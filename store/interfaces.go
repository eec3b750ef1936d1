package store

import "context"

// UserSearch filters users and organizations. Nil pointers mean "any".
type UserSearch struct {
	Type UserType
	// AnyType keeps individuals and organizations alike, whatever Type
	// says: whom a user follows may be either.
	AnyType       bool
	Keyword       string // matches name, full name and (if KeywordInEmail) email
	KeywordEmail  bool
	UID           int64
	SourceID      *int64
	LoginName     string
	Visibilities  []Visibility // empty means any
	IsActive      *bool
	IsAdmin       *bool
	IsRestricted  *bool
	ProhibitLogin *bool
	// Self, when not 0, is matched whatever Visibilities say: a signed-in
	// user always finds themself.
	Self int64
	// HideKeptEmails stops the keyword from matching the addresses of users
	// who keep their email private (Self's excepted), so a search never
	// reveals an address the result would hide.
	HideKeptEmails bool
	// FollowersOf keeps the users who follow that user, FollowedBy those
	// that user follows, StargazersOf those who starred that repository,
	// BlockedBy those that user or organization blocked.
	FollowersOf  int64
	FollowedBy   int64
	StargazersOf int64
	BlockedBy    int64
	// OrderBy is an ORDER BY clause chosen by impl from a fixed list.
	OrderBy string
}

// UserStore reads and writes users and organizations.
type UserStore interface {
	Create(ctx context.Context, u *User) error
	FindByID(ctx context.Context, id int64) (*User, error)
	// FindByIDForUpdate is FindByID for a read-change-Update: it must run
	// inside WithTx, and no other FindByIDForUpdate of the row proceeds
	// until that transaction ends, so concurrent edits of different fields
	// cannot write each other's old values back.
	FindByIDForUpdate(ctx context.Context, id int64) (*User, error)
	// FindByName matches case-insensitively.
	FindByName(ctx context.Context, name string) (*User, error)
	FindByIDs(ctx context.Context, ids []int64) (map[int64]*User, error)
	// Update writes every column of u; read u with FindByIDForUpdate in the
	// same transaction.
	Update(ctx context.Context, u *User) error
	Delete(ctx context.Context, id int64) error
	Search(ctx context.Context, q UserSearch, p Page) ([]*User, int64, error)
	Count(ctx context.Context, t UserType) (int64, error)
}

// EmailStore reads and writes users' email addresses.
type EmailStore interface {
	ListByUser(ctx context.Context, userID int64) ([]*Email, error)
	FindByEmail(ctx context.Context, email string) (*Email, error)
	// OwnerIDs maps each of emails (lower-cased) that is some user's
	// primary or activated address to that user's id, in one statement;
	// the others are left out. Commits name people by address only.
	OwnerIDs(ctx context.Context, emails []string) (map[string]int64, error)
	Create(ctx context.Context, e *Email) error
	// Delete removes the user's listed addresses; ErrNotFound if one is not theirs.
	Delete(ctx context.Context, userID int64, emails []string) error
	// SetPrimary makes email the user's only primary address.
	SetPrimary(ctx context.Context, userID int64, email string) error
	DeleteByUser(ctx context.Context, userID int64) error
	// Search lists addresses of individual users whose name, full name or
	// address contains keyword (all when empty).
	Search(ctx context.Context, keyword string, p Page) ([]*EmailWithOwner, int64, error)
}

// TokenStore reads and writes access tokens.
type TokenStore interface {
	Create(ctx context.Context, t *AccessToken) error
	FindByHash(ctx context.Context, hash string) (*AccessToken, error)
	// FindByHashWithUser is FindByHash together with the token's user, in
	// one statement (every token-authenticated request needs both).
	FindByHashWithUser(ctx context.Context, hash string) (*AccessToken, *User, error)
	FindByID(ctx context.Context, userID, id int64) (*AccessToken, error)
	FindByName(ctx context.Context, userID int64, name string) (*AccessToken, error)
	ListByUser(ctx context.Context, userID int64, p Page) ([]*AccessToken, int64, error)
	Delete(ctx context.Context, id int64) error
	DeleteByUser(ctx context.Context, userID int64) error
	MarkUsed(ctx context.Context, id int64) error
}

// OrgStore reads organization membership, which TeamStore derives from
// team membership, and writes whether a membership is public.
type OrgStore interface {
	FindMember(ctx context.Context, orgID, userID int64) (*OrgMember, error)
	// SetMemberPublic shows or hides a membership; ErrNotFound if there is none.
	SetMemberPublic(ctx context.Context, orgID, userID int64, public bool) error
	CountOwners(ctx context.Context, orgID int64) (int64, error)
	// ListMembers lists members by name; publicOnly keeps public members.
	ListMembers(ctx context.Context, orgID int64, publicOnly bool, p Page) ([]*User, int64, error)
	// ListUserOrgs lists the organizations userID belongs to, keeping only
	// those whose visibility is in visibilities (all when empty) and, with
	// publicOnly, those where the membership is public.
	ListUserOrgs(ctx context.Context, userID int64, visibilities []Visibility, publicOnly bool, p Page) ([]*User, int64, error)
	DeleteOrgMembers(ctx context.Context, orgID int64) error
	DeleteUserMemberships(ctx context.Context, userID int64) error
	// ListMemberships returns every membership of userID in one statement,
	// so permissions for a whole page of repositories cost one query.
	ListMemberships(ctx context.Context, userID int64) ([]*OrgMember, error)
	// ListVisible lists organizations by name: those whose visibility is in
	// visibilities (every one when visibilities is nil) plus, when memberID
	// is not 0, those memberID belongs to.
	ListVisible(ctx context.Context, memberID int64, visibilities []Visibility, p Page) ([]*User, int64, error)
}

// RepoViewer describes who looks at repositories, so the store can keep the
// ones they may see in SQL instead of filtering page by page. It carries the
// facts the visibility rule of impl/access depends on; the zero value is an
// anonymous caller.
type RepoViewer struct {
	UserID     int64 // 0 for anonymous
	IsAdmin    bool
	PublicOnly bool // the caller's token is limited to public data
	Restricted bool // the caller is a restricted user
	// OnlyRepoID, when set, is the one repository the caller may see: a
	// running workflow task's token.
	OnlyRepoID int64
}

// RepoSearch filters repositories. Nil pointers mean "any".
type RepoSearch struct {
	Viewer  RepoViewer
	OwnerID int64 // 0: any owner
	// Reachable keeps repositories that Viewer owns or reaches through an
	// organization membership (GET /user/repos).
	Reachable bool
	// Keyword holds comma-separated alternatives. Each matches a repository
	// whose name or one of whose topics contains it, or "owner/name" parts;
	// with IncludeDescription also the description; with TopicOnly only a
	// topic equal to it.
	Keyword            string
	IncludeDescription bool
	TopicOnly          bool
	IsPrivate          *bool
	IsTemplate         *bool
	IsArchived         *bool
	IsFork             *bool
	// ForkOf keeps the forks of that repository.
	ForkOf int64
	// StarredBy keeps the repositories that user starred.
	StarredBy int64
	IsMirror  *bool
	// RelatedUserID keeps repositories related to that user: with
	// RelatedOwned the ones it owns, with RelatedMember the ones owned by
	// organizations it belongs to; with both, either kind.
	RelatedUserID int64
	RelatedOwned  bool
	RelatedMember bool
	// WatchedBy keeps the repositories that user watches.
	WatchedBy int64
	// PriorityOwnerID lists that owner's repositories first.
	PriorityOwnerID int64
	// OrderBy is an ORDER BY clause chosen by impl from a fixed list.
	OrderBy string
}

// RepoStore reads and writes repositories.
type RepoStore interface {
	Create(ctx context.Context, r *Repository) error
	// FindByName matches case-insensitively and loads the owner.
	FindByName(ctx context.Context, ownerID int64, name string) (*Repository, error)
	// FindByOwnerAndName finds owner/name (both matched
	// case-insensitively) with its owner, in one statement.
	FindByOwnerAndName(ctx context.Context, owner, name string) (*Repository, error)
	FindByID(ctx context.Context, id int64) (*Repository, error)
	// FindByIDs reads the repositories of ids that exist, with their
	// owners, in one statement.
	FindByIDs(ctx context.Context, ids []int64) ([]*Repository, error)
	// FindByIDForUpdate is FindByID for a read-change-Update, with the same
	// rules as UserStore.FindByIDForUpdate.
	FindByIDForUpdate(ctx context.Context, id int64) (*Repository, error)
	// Update writes every column of r except the counters kept elsewhere;
	// read r with FindByIDForUpdate in the same transaction.
	Update(ctx context.Context, r *Repository) error
	Delete(ctx context.Context, id int64) error
	// Search returns one page with owners loaded, and the size of the whole
	// filtered set, in a fixed number of statements.
	Search(ctx context.Context, q RepoSearch, p Page) ([]*Repository, int64, error)
	ListByOwner(ctx context.Context, ownerID int64) ([]*Repository, error)
	CountByOwner(ctx context.Context, ownerID int64) (int64, error)
	// AdjustForks adds delta to the repository's fork count atomically.
	AdjustForks(ctx context.Context, id, delta int64) error
}
