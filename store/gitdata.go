package store

import (
	"context"
	"regexp"
	"strings"
	"time"
)

// GitData bundles the stores of data kept beside the git repositories:
// branch protection rules, topics, teams, and the repository-row changes
// that git events cause (pushes, adoption of stray directories).
type GitData interface {
	Protections() ProtectionStore
	TagProtections() TagProtectionStore
	LanguageStats() LanguageStatsStore
	Topics() TopicStore
	Teams() TeamStore
	GitRepos() GitRepoStore
	// Statuses keeps commit statuses and scheduled merges.
	Statuses() CommitStatusStore
	// Migrations keeps the migrations under way.
	Migrations() RepoMigrationStore
	// Mirrors keeps pull and push mirrors.
	Mirrors() MirrorStore
	// LFS keeps which repositories link which Git LFS objects, and
	// the LFS locks.
	LFS() LFSStore
}

// ProtectedBranch is one branch protection rule of a repository. RuleName is
// a branch name or a glob (see IsGlob); user and team lists hold ids, so a
// renamed user stays on them.
type ProtectedBranch struct {
	ID       int64 `gorm:"primaryKey"`
	RepoID   int64
	RuleName string
	// Priority orders the rules (lower first) among the globs matching one
	// branch, and the list.
	Priority int64

	EnablePush                    bool
	EnablePushWhitelist           bool
	PushWhitelistUserIDs          []int64 `gorm:"column:push_whitelist_user_ids;serializer:json"`
	PushWhitelistTeamIDs          []int64 `gorm:"column:push_whitelist_team_ids;serializer:json"`
	PushWhitelistDeployKeys       bool
	EnableForcePush               bool
	EnableForcePushAllowlist      bool
	ForcePushAllowlistUserIDs     []int64 `gorm:"column:force_push_allowlist_user_ids;serializer:json"`
	ForcePushAllowlistTeamIDs     []int64 `gorm:"column:force_push_allowlist_team_ids;serializer:json"`
	ForcePushAllowlistDeployKeys  bool
	EnableMergeWhitelist          bool
	MergeWhitelistUserIDs         []int64 `gorm:"column:merge_whitelist_user_ids;serializer:json"`
	MergeWhitelistTeamIDs         []int64 `gorm:"column:merge_whitelist_team_ids;serializer:json"`
	EnableStatusCheck             bool
	StatusCheckContexts           []string `gorm:"serializer:json"`
	RequiredApprovals             int64
	EnableApprovalsWhitelist      bool
	ApprovalsWhitelistUserIDs     []int64 `gorm:"column:approvals_whitelist_user_ids;serializer:json"`
	ApprovalsWhitelistTeamIDs     []int64 `gorm:"column:approvals_whitelist_team_ids;serializer:json"`
	EnableBypassAllowlist         bool
	BypassAllowlistUserIDs        []int64 `gorm:"column:bypass_allowlist_user_ids;serializer:json"`
	BypassAllowlistTeamIDs        []int64 `gorm:"column:bypass_allowlist_team_ids;serializer:json"`
	BlockOnRejectedReviews        bool
	BlockOnOfficialReviewRequests bool
	BlockOnOutdatedBranch         bool
	DismissStaleApprovals         bool
	IgnoreStaleApprovals          bool
	RequireSignedCommits          bool
	ProtectedFilePatterns         string
	UnprotectedFilePatterns       string
	BlockAdminMergeOverride       bool
	CreatedAt                     time.Time
	UpdatedAt                     time.Time
}

// IsGlob tells whether the rule names a pattern rather than one branch. The
// characters are those that make the reference treat a name as a glob.
func (p *ProtectedBranch) IsGlob() bool { return strings.ContainsAny(p.RuleName, "*?[{") }

// Matches tells whether the rule protects branch.
func (p *ProtectedBranch) Matches(branch string) bool {
	if !p.IsGlob() {
		return p.RuleName == branch
	}
	re, err := globRegexp(p.RuleName)
	return err == nil && re.MatchString(branch)
}

// CanPush tells whether a writer to the repository may push to a branch this
// rule protects: the rule must allow pushing, and with a whitelist the user
// (or one of their teams) must be on it.
func (p *ProtectedBranch) CanPush(userID int64, teamIDs []int64) bool {
	if !p.EnablePush {
		return false
	}
	if !p.EnablePushWhitelist {
		return true
	}
	return listed(userID, teamIDs, p.PushWhitelistUserIDs, p.PushWhitelistTeamIDs)
}

// CanForcePush tells whether a writer may rewrite the history of (or delete)
// a branch this rule protects.
func (p *ProtectedBranch) CanForcePush(userID int64, teamIDs []int64) bool {
	if !p.EnableForcePush {
		return false
	}
	if !p.EnableForcePushAllowlist {
		return true
	}
	return listed(userID, teamIDs, p.ForcePushAllowlistUserIDs, p.ForcePushAllowlistTeamIDs)
}

// DeployKeyCanPush and DeployKeyCanForcePush are CanPush and CanForcePush
// for a read-write deploy key, which stands for no user: a whitelist lets
// it through only when the rule says deploy keys are on it.
func (p *ProtectedBranch) DeployKeyCanPush() bool {
	return p.EnablePush && (!p.EnablePushWhitelist || p.PushWhitelistDeployKeys)
}

func (p *ProtectedBranch) DeployKeyCanForcePush() bool {
	return p.EnableForcePush && (!p.EnableForcePushAllowlist || p.ForcePushAllowlistDeployKeys)
}

// CanMerge tells whether a writer may merge into a branch this rule protects.
func (p *ProtectedBranch) CanMerge(userID int64, teamIDs []int64) bool {
	if !p.EnableMergeWhitelist {
		return true
	}
	return listed(userID, teamIDs, p.MergeWhitelistUserIDs, p.MergeWhitelistTeamIDs)
}

func listed(userID int64, teamIDs, users, teams []int64) bool {
	for _, id := range users {
		if id == userID {
			return true
		}
	}
	for _, t := range teamIDs {
		for _, id := range teams {
			if id == t {
				return true
			}
		}
	}
	return false
}

// MatchRule picks the rule that governs branch among rules (in priority
// order): a rule naming the branch exactly wins over any glob, and among
// globs the first in priority order wins, as in the reference.
func MatchRule(rules []*ProtectedBranch, branch string) *ProtectedBranch {
	for _, r := range rules {
		if !r.IsGlob() && r.RuleName == branch {
			return r
		}
	}
	for _, r := range rules {
		if r.IsGlob() && r.Matches(branch) {
			return r
		}
	}
	return nil
}

// CompileGlob compiles a glob over slash-separated names, with the syntax
// the reference uses for protection rules and template files: "*" and "?"
// stay within one path segment, "**" crosses segments, "[...]" is a class
// ("[!...]" negated) and "{a,b}" an alternative.
func CompileGlob(glob string) (*regexp.Regexp, error) { return globRegexp(glob) }

func globRegexp(glob string) (*regexp.Regexp, error) { return globRegexpSep(glob, "/") }

// globRegexpSep compiles glob with seps as the characters "*" and "?" do
// not match.
func globRegexpSep(glob, seps string) (*regexp.Regexp, error) {
	notSep := "[^" + regexp.QuoteMeta(seps) + "]"
	var b strings.Builder
	b.WriteString("^")
	depth := 0
	for i := 0; i < len(glob); i++ {
		c := glob[i]
		switch {
		case c == '*' && i+1 < len(glob) && glob[i+1] == '*':
			b.WriteString(".*")
			i++
		case c == '*':
			b.WriteString(notSep + "*")
		case c == '?':
			b.WriteString(notSep)
		case c == '[':
			end := strings.IndexByte(glob[i+1:], ']')
			if end < 0 {
				b.WriteString(`\[`)
				continue
			}
			class := glob[i+1 : i+1+end]
			if strings.HasPrefix(class, "!") {
				class = "^" + class[1:]
			}
			b.WriteString("[" + strings.ReplaceAll(class, `\`, `\\`) + "]")
			i += end + 1
		case c == '{':
			depth++
			b.WriteString("(?:")
		case c == '}' && depth > 0:
			depth--
			b.WriteString(")")
		case c == ',' && depth > 0:
			b.WriteString("|")
		case c == '\\' && i+1 < len(glob):
			i++
			b.WriteString(regexp.QuoteMeta(glob[i : i+1]))
		default:
			b.WriteString(regexp.QuoteMeta(string(c)))
		}
	}
	for ; depth > 0; depth-- {
		b.WriteString(")")
	}
	b.WriteString("$")
	return regexp.Compile(b.String())
}

// ProtectionStore reads and writes branch protection rules.
type ProtectionStore interface {
	// List returns a page of the repository's rules by priority, then id,
	// and how many there are.
	List(ctx context.Context, repoID int64, p Page) ([]*ProtectedBranch, int64, error)
	// ListAll returns every rule of the repository in priority order, for
	// matching branches against them.
	ListAll(ctx context.Context, repoID int64) ([]*ProtectedBranch, error)
	FindByName(ctx context.Context, repoID int64, ruleName string) (*ProtectedBranch, error)
	// Create inserts the rule; a Priority of 0 places it after every other.
	Create(ctx context.Context, pb *ProtectedBranch) error
	Update(ctx context.Context, pb *ProtectedBranch) error
	Delete(ctx context.Context, repoID, id int64) error
	// SetPriorities gives the rules ids[0], ids[1], ... priorities 1, 2, ...
	// in one statement; ids that are not the repository's are ignored.
	SetPriorities(ctx context.Context, repoID int64, ids []int64) error
	// Rename renames the rule named exactly from, if there is one.
	Rename(ctx context.Context, repoID int64, from, to string) error
	// CopyAll copies every rule of one repository to another.
	CopyAll(ctx context.Context, fromRepoID, toRepoID int64) error
}

// Topic is a topic name shared by every repository that uses it.
type Topic struct {
	ID        int64 `gorm:"primaryKey"`
	Name      string
	RepoCount int64
	CreatedAt time.Time
	UpdatedAt time.Time
}

// TopicStore reads and writes topics.
type TopicStore interface {
	// ListByRepo returns a page of the repository's topics by name.
	ListByRepo(ctx context.Context, repoID int64, p Page) ([]*Topic, int64, error)
	// Search returns topics whose name contains keyword and that a
	// repository v may see uses, most used first; RepoCount is the number
	// of those repositories v may see.
	Search(ctx context.Context, v RepoViewer, keyword string, p Page) ([]*Topic, int64, error)
	// Update replaces the repository's topics with what change returns when
	// given the current ones, atomically: concurrent updates of one
	// repository run one after the other. An error from change is returned
	// as it is and nothing changes. The repository's topics column follows,
	// ordered by popularity.
	Update(ctx context.Context, repoID int64, change func(current []string) ([]string, error)) error
	// Copy gives toRepoID the topics of fromRepoID.
	Copy(ctx context.Context, fromRepoID, toRepoID int64) error
}

// Team access modes, as the reference names them.
const (
	TeamAccessNone  = "none"
	TeamAccessRead  = "read"
	TeamAccessWrite = "write"
	TeamAccessAdmin = "admin"
	TeamAccessOwner = "owner"
)

// OwnersTeamName is the team every organization has; its members are the
// organization's owners.
const OwnersTeamName = "Owners"

// Team is a group of an organization's members with access to some or all of
// its repositories.
type Team struct {
	ID          int64 `gorm:"primaryKey"`
	OrgID       int64
	Org         *User `gorm:"foreignKey:OrgID"`
	Name        string
	LowerName   string
	Description string
	// Permission is the team's access mode name; a team whose units_map
	// holds levels below admin has the lowest level it grants (the
	// reference's rule), so "none" grants nothing at all.
	Permission              string
	IncludesAllRepositories bool
	CanCreateOrgRepo        bool
	// Units maps unit names (repo.code, ...) to access modes.
	Units      map[string]string `gorm:"serializer:json"`
	Visibility Visibility
	CreatedAt  time.Time
	UpdatedAt  time.Time
}

// IsOwnersTeam tells the organization's owners team from the others; its
// membership is the organization's owners.
func (t *Team) IsOwnersTeam() bool { return t.LowerName == strings.ToLower(OwnersTeamName) }

// TeamViewer describes who lists teams: site admins and organization owners
// see every team, members see limited and public ones, anyone else public
// ones.
type TeamViewer struct {
	UserID  int64
	IsAdmin bool
}

// TeamStore reads and writes teams and their members and repositories.
// Organization membership (OrgStore) is derived from team membership: a
// user is a member of an organization while in at least one of its teams,
// and an owner while in its owners team. The methods that change team
// membership keep it so in the same statement batch.
type TeamStore interface {
	// CreateOwnersTeam gives a new organization its owners team.
	CreateOwnersTeam(ctx context.Context, orgID int64) error
	Create(ctx context.Context, t *Team) error
	// Update writes t's settings (not its organization).
	Update(ctx context.Context, t *Team) error
	// Delete deletes a team with its memberships and repository links,
	// updating the organization's membership.
	Delete(ctx context.Context, t *Team) error
	// FindByID loads a team with its organization.
	FindByID(ctx context.Context, id int64) (*Team, error)
	FindByName(ctx context.Context, orgID int64, name string) (*Team, error)
	FindByIDs(ctx context.Context, ids []int64) (map[int64]*Team, error)
	// List lists the teams of orgID that v may see by name, those whose
	// name (or with includeDesc description) contains keyword when set.
	List(ctx context.Context, orgID int64, v TeamViewer, keyword string, includeDesc bool, p Page) ([]*Team, int64, error)
	// ListForRepo lists the teams of orgID with access to repoID that v may
	// see, by name.
	ListForRepo(ctx context.Context, orgID, repoID int64, v TeamViewer, p Page) ([]*Team, int64, error)
	// ListForUser lists userID's teams with their organizations, by
	// organization and name.
	// When orgVisibilities is not empty, only teams of organizations with
	// one of those visibilities are listed.
	ListForUser(ctx context.Context, userID int64, orgVisibilities []Visibility, p Page) ([]*Team, int64, error)
	// UserTeams lists the teams of orgID that userID belongs to.
	UserTeams(ctx context.Context, orgID, userID int64) ([]*Team, error)
	// UserTeamIDs lists the ids of the teams of orgID that userID belongs to.
	UserTeamIDs(ctx context.Context, orgID, userID int64) ([]int64, error)

	// AddMember puts userID in t (nothing when already there).
	AddMember(ctx context.Context, t *Team, userID int64) error
	// RemoveMember takes userID out of t; ErrNotFound when not in it.
	RemoveMember(ctx context.Context, t *Team, userID int64) error
	// RemoveFromOrg takes userID out of every team of orgID.
	RemoveFromOrg(ctx context.Context, orgID, userID int64) error
	IsMember(ctx context.Context, teamID, userID int64) (bool, error)
	CountMembers(ctx context.Context, teamID int64) (int64, error)
	ListMembers(ctx context.Context, teamID int64, p Page) ([]*User, int64, error)
	// MemberIDs lists the ids of every member of teamID, ascending.
	MemberIDs(ctx context.Context, teamID int64) ([]int64, error)

	// AddRepo gives t the repository (nothing when it has it already).
	AddRepo(ctx context.Context, teamID, repoID int64) error
	// RemoveRepo takes it away; ErrNotFound when t did not have it.
	RemoveRepo(ctx context.Context, teamID, repoID int64) error
	// UnlinkRepo takes repoID away from every team that was given it (a
	// transfer leaves the old organization's teams behind).
	UnlinkRepo(ctx context.Context, repoID int64) error
	// HasRepo tells whether t was given repoID (IncludesAllRepositories
	// aside).
	HasRepo(ctx context.Context, teamID, repoID int64) (bool, error)
	// ListRepos lists the repositories t has (all of its organization's
	// with IncludesAllRepositories) that v may see, owners loaded, by id.
	ListRepos(ctx context.Context, t *Team, v RepoViewer, p Page) ([]*Repository, int64, error)
}

// RepoDir names a repository directory on disk, both parts lower-case.
type RepoDir struct {
	Owner string
	Name  string
}

// GitRepoStore holds this area's repository-wide writes: row changes after
// git events (one column at a time, so they never undo a concurrent edit of
// other settings), stray directories, and what a template passes on.
type GitRepoStore interface {
	// MarkPushed records that the repository has content; when branch is
	// not empty it becomes the default branch.
	MarkPushed(ctx context.Context, repoID int64, branch string) error
	// SetSize records the repository's disk use in bytes, leaving
	// updated_at alone (a size is not a change of the repository).
	SetSize(ctx context.Context, repoID, size int64) error
	// RenameDefaultBranch moves the default branch from one name to
	// another, if it still is from.
	RenameDefaultBranch(ctx context.Context, repoID int64, from, to string) error
	// Unadopted keeps the directories whose owner exists and that have no
	// repository row, in a fixed number of statements.
	Unadopted(ctx context.Context, dirs []RepoDir) ([]RepoDir, error)
	// CopyLabels gives toRepoID a copy of every label of fromRepoID.
	CopyLabels(ctx context.Context, fromRepoID, toRepoID int64) error
}
