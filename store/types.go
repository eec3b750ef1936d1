package store

import "time"

// Visibility of a user or organization.
type Visibility int

const (
	VisibilityPublic Visibility = iota
	VisibilityLimited
	VisibilityPrivate
)

var visibilityNames = [...]string{"public", "limited", "private"}

func (v Visibility) String() string {
	if v < 0 || int(v) >= len(visibilityNames) {
		return "public"
	}
	return visibilityNames[v]
}

// ParseVisibility reads "public", "limited" or "private".
func ParseVisibility(s string) (Visibility, bool) {
	for i, n := range visibilityNames {
		if n == s {
			return Visibility(i), true
		}
	}
	return VisibilityPublic, false
}

// UserType tells individual accounts from organizations; both live in one
// table because they share one namespace of names.
type UserType int

const (
	UserTypeIndividual UserType = iota
	UserTypeOrganization
)

// User is an account or an organization.
type User struct {
	ID                     int64 `gorm:"primaryKey"`
	Name                   string
	LowerName              string
	FullName               string
	Email                  string
	PasswordHash           string
	Type                   UserType
	IsAdmin                bool
	IsActive               bool
	ProhibitLogin          bool
	Restricted             bool
	MustChangePassword     bool
	Visibility             Visibility
	Description            string
	Website                string
	Location               string
	Language               string
	LoginName              string
	SourceID               int64
	AllowCreateOrg         bool
	AllowGitHook           bool
	AllowImportLocal       bool
	MaxRepoCreation        int64 // -1 means the site default
	RepoAdminChangeTeamAcc bool
	KeepEmailPrivate       bool
	// Settings the user chooses for the web interface (GET /user/settings).
	Theme         string
	DiffViewStyle string
	HideActivity  bool
	// Counters kept by PeopleStore; UserStore.Update never writes them.
	NumFollowers int64
	NumFollowing int64
	NumStars     int64
	CreatedAt    time.Time
	UpdatedAt    time.Time
	LastLoginAt  *time.Time
}

func (u *User) IsOrganization() bool { return u.Type == UserTypeOrganization }

// Email is one address of a user. Exactly one per user is primary, and it
// mirrors User.Email.
type Email struct {
	ID          int64 `gorm:"primaryKey"`
	UserID      int64
	Email       string
	LowerEmail  string
	IsPrimary   bool
	IsActivated bool
}

// EmailWithOwner is an address joined with its owner's name, for admin lists.
type EmailWithOwner struct {
	Email
	UserName string
}

// AccessToken authenticates API calls. Only the SHA-256 of the secret is kept.
type AccessToken struct {
	ID             int64 `gorm:"primaryKey"`
	UserID         int64
	Name           string
	TokenHash      string
	TokenLastEight string
	Scopes         string // comma-separated, normalised
	CreatedAt      time.Time
	LastUsedAt     *time.Time
}

// OrgMember records that a user belongs to an organization.
type OrgMember struct {
	OrgID    int64 `gorm:"primaryKey"`
	UserID   int64 `gorm:"primaryKey"`
	IsOwner  bool
	IsPublic bool
}

// Repository is a hosted git repository and its settings.
type Repository struct {
	ID            int64 `gorm:"primaryKey"`
	OwnerID       int64
	Owner         *User `gorm:"foreignKey:OwnerID"`
	Name          string
	LowerName     string
	Description   string
	Website       string
	DefaultBranch string
	IsPrivate     bool
	IsArchived    bool
	ArchivedAt    *time.Time
	IsTemplate    bool
	IsEmpty       bool
	IsFork        bool
	ForkID        int64
	IsMirror      bool
	// MirrorInterval is how often a pull mirror is synced (0: only on
	// demand); MirrorUpdated when its last sync ended (nil before).
	MirrorInterval time.Duration
	MirrorUpdated  *time.Time
	// Status is RepoStatusReady, or RepoStatusBeingMigrated while a
	// migration fills the repository.
	Status       int
	ObjectFormat string
	Size         int64
	// OriginalURL is the address a migrated or mirrored repository came
	// from, without credentials ("" for any other).
	OriginalURL string

	HasIssues       bool
	HasWiki         bool
	HasPullRequests bool
	HasProjects     bool
	HasReleases     bool
	HasPackages     bool
	HasActions      bool
	HasCode         bool
	ProjectsMode    string

	IgnoreWhitespaceConflicts     bool
	AllowMerge                    bool
	AllowRebase                   bool
	AllowRebaseMerge              bool
	AllowSquash                   bool
	AllowFastForwardOnly          bool
	AllowManualMerge              bool
	AutodetectManualMerge         bool
	AllowRebaseUpdate             bool
	DefaultDeleteBranchAfterMerge bool
	DefaultMergeStyle             string
	DefaultAllowMaintainerEdit    bool
	DefaultTargetBranch           string

	EnableTimeTracker                bool
	AllowOnlyContributorsToTrackTime bool
	EnableIssueDependencies          bool
	ExternalTrackerURL               string
	ExternalTrackerFormat            string
	ExternalTrackerStyle             string
	ExternalTrackerRegexpPattern     string
	ExternalWikiURL                  string

	NumIssues       int64
	NumClosedIssues int64
	NumPulls        int64
	NumClosedPulls  int64
	NumStars        int64
	NumForks        int64
	NumWatches      int64
	NumReleases     int64
	Topics          string // comma-separated, in display order

	CreatedAt time.Time
	UpdatedAt time.Time
}

// FullName is "owner/name".
func (r *Repository) FullName() string {
	if r.Owner == nil {
		return r.Name
	}
	return r.Owner.Name + "/" + r.Name
}
