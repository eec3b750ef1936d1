// Package convert turns store types into the generated API models: one
// function per resource, so every endpoint renders a resource the same way.
package convert

import (
	"crypto/md5"
	"encoding/hex"
	"fmt"
	"strings"
	"time"

	"github.com/go-openapi/strfmt"

	"repohost/impl/access"
	"repohost/models"
	"repohost/store"
)

// NoReplyDomain is the host of the placeholder address shown instead of a
// hidden email.
const NoReplyDomain = "noreply.localhost"

// Time renders t, or nil for an unset time, so it serialises as null.
func Time(t *time.Time) *strfmt.DateTime {
	if t == nil || t.IsZero() {
		return nil
	}
	d := strfmt.DateTime(t.UTC())
	return &d
}

// TimeOf is Time for a time that is always set.
func TimeOf(t time.Time) *strfmt.DateTime { return Time(&t) }

// AvatarHash names the avatar of a user or organization as the reference
// names a generated one: the MD5 of its lower-cased, trimmed email
// address, or of its name when it has none. impl/avatar draws the picture.
func AvatarHash(u *store.User) string {
	seed := u.Email
	if seed == "" {
		seed = u.Name
	}
	sum := md5.Sum([]byte(strings.ToLower(strings.TrimSpace(seed))))
	return hex.EncodeToString(sum[:])
}

// AvatarURL is the avatar address of a user or organization (this server
// has no uploaded avatars).
func AvatarURL(base string, u *store.User) string {
	return base + "avatars/" + AvatarHash(u)
}

func userType(u *store.User) string {
	if u.IsOrganization() {
		return "Organization"
	}
	return "User"
}

// User renders u as seen by viewer (nil for anonymous): the real email only
// to signed-in callers (unless hidden), and account details only to the user
// themself and site admins, as the reference does.
func User(base string, u *store.User, viewer *store.User) *models.User {
	if u == nil {
		return nil
	}
	out := &models.User{
		ID:           u.ID,
		UserName:     u.Name,
		Username:     u.Name, // the reference sends the login under both names
		FullName:     u.FullName,
		AvatarURL:    AvatarURL(base, u),
		HTMLURL:      base + u.Name,
		Created:      TimeOf(u.CreatedAt),
		Description:  u.Description,
		Website:      u.Website,
		Location:     u.Location,
		Visibility:   u.Visibility.String(),
		Restricted:   u.Restricted,
		Type:         userType(u),
		Email:        strfmt.Email(fmt.Sprintf("%s@%s", u.LowerName, NoReplyDomain)),
		Followers:    u.NumFollowers,
		Following:    u.NumFollowing,
		StarredRepos: u.NumStars,
	}
	privileged := viewer != nil && (viewer.ID == u.ID || viewer.IsAdmin)
	if viewer != nil && (privileged || !u.KeepEmailPrivate) && u.Email != "" {
		out.Email = strfmt.Email(u.Email)
	}
	if privileged {
		out.IsAdmin = u.IsAdmin
		out.LoginName = u.LoginName
		out.SourceID = u.SourceID
		out.LastLogin = Time(u.LastLoginAt)
		out.Language = u.Language
		out.IsActive = u.IsActive
		out.ProhibitLogin = u.ProhibitLogin
	}
	return out
}

// DefaultTheme is the theme of a user who never chose one.
const DefaultTheme = "gitea-auto"

// UserSettings renders the settings u chose for themself.
func UserSettings(u *store.User) *models.UserSettings {
	theme := u.Theme
	if theme == "" {
		theme = DefaultTheme
	}
	return &models.UserSettings{
		FullName:      u.FullName,
		Website:       u.Website,
		Description:   u.Description,
		Location:      u.Location,
		Language:      u.Language,
		Theme:         theme,
		DiffViewStyle: u.DiffViewStyle,
		HideEmail:     u.KeepEmailPrivate,
		HideActivity:  u.HideActivity,
	}
}

// Users renders a list of users for viewer.
func Users(base string, us []*store.User, viewer *store.User) []*models.User {
	out := make([]*models.User, 0, len(us))
	for _, u := range us {
		out = append(out, User(base, u, viewer))
	}
	return out
}

// Org renders an organization.
func Org(base string, o *store.User) *models.Organization {
	return &models.Organization{
		ID:                        o.ID,
		Name:                      o.Name,
		UserName:                  o.Name,
		FullName:                  o.FullName,
		Email:                     o.Email,
		AvatarURL:                 AvatarURL(base, o),
		Description:               o.Description,
		Website:                   o.Website,
		Location:                  o.Location,
		Visibility:                o.Visibility.String(),
		RepoAdminChangeTeamAccess: o.RepoAdminChangeTeamAcc,
	}
}

// Orgs renders a list of organizations.
func Orgs(base string, os []*store.User) []*models.Organization {
	out := make([]*models.Organization, 0, len(os))
	for _, o := range os {
		out = append(out, Org(base, o))
	}
	return out
}

// Topics splits the stored topic list.
func Topics(s string) []string {
	if s == "" {
		return []string{}
	}
	return strings.Split(s, ",")
}

// Links are the addresses the server is reached at: Root, the root URL
// with a trailing slash, prefixes every web and API address; SSHHost and
// SSHPort name the built-in SSH server (SSHPort 0: none).
type Links struct {
	Root    string
	SSHHost string
	SSHPort int
}

// SSHURL is the SSH clone address of the repository fullName, "" without
// an SSH server: the short scp-like form on port 22, a full ssh:// URL on
// any other, as the reference writes them.
func (l Links) SSHURL(fullName string) string {
	if l.SSHPort == 0 || l.SSHHost == "" {
		return ""
	}
	host := l.SSHHost
	if strings.Contains(host, ":") {
		host = "[" + host + "]" // an IPv6 address
	}
	if l.SSHPort == 22 {
		return fmt.Sprintf("git@%s:%s.git", host, fullName)
	}
	return fmt.Sprintf("ssh://git@%s:%d/%s.git", host, l.SSHPort, fullName)
}

// Repo renders r with the caller's permission on it. r.Owner must be loaded.
func Repo(links Links, r *store.Repository, perm access.Permission, viewer *store.User) *models.Repository {
	base := links.Root
	full := r.FullName()
	out := &models.Repository{
		ID:                            r.ID,
		Owner:                         User(base, r.Owner, viewer),
		Name:                          r.Name,
		FullName:                      full,
		Description:                   r.Description,
		Empty:                         r.IsEmpty,
		Private:                       r.IsPrivate,
		Fork:                          r.IsFork,
		Template:                      r.IsTemplate,
		Mirror:                        r.IsMirror,
		Size:                          r.Size / 1024, // stored in bytes, answered in KiB as the reference does
		HTMLURL:                       base + full,
		URL:                           base + "api/v1/repos/" + full,
		Link:                          "",
		SSHURL:                        links.SSHURL(full),
		CloneURL:                      base + full + ".git",
		OriginalURL:                   r.OriginalURL,
		Website:                       r.Website,
		Stars:                         r.NumStars,
		Forks:                         r.NumForks,
		Watchers:                      r.NumWatches,
		OpenIssues:                    r.NumIssues - r.NumClosedIssues,
		OpenPulls:                     r.NumPulls - r.NumClosedPulls,
		Releases:                      r.NumReleases,
		DefaultBranch:                 r.DefaultBranch,
		Archived:                      r.IsArchived,
		ArchivedAt:                    Time(r.ArchivedAt),
		Created:                       TimeOf(r.CreatedAt),
		Updated:                       TimeOf(r.UpdatedAt),
		Permissions:                   &models.Permission{Admin: perm.Admin, Push: perm.Push, Pull: perm.Pull},
		HasIssues:                     r.HasIssues,
		HasWiki:                       r.HasWiki,
		HasPullRequests:               r.HasPullRequests,
		HasProjects:                   r.HasProjects,
		HasReleases:                   r.HasReleases,
		HasPackages:                   r.HasPackages,
		HasActions:                    r.HasActions,
		HasCode:                       r.HasCode,
		ProjectsMode:                  r.ProjectsMode,
		IgnoreWhitespaceConflicts:     r.IgnoreWhitespaceConflicts,
		AllowMerge:                    r.AllowMerge,
		AllowRebase:                   r.AllowRebase,
		AllowRebaseMerge:              r.AllowRebaseMerge,
		AllowSquash:                   r.AllowSquash,
		AllowFastForwardOnly:          r.AllowFastForwardOnly,
		AllowManualMerge:              r.AllowManualMerge,
		AutodetectManualMerge:         r.AutodetectManualMerge,
		AllowRebaseUpdate:             r.AllowRebaseUpdate,
		AllowMergeUpdate:              true,
		DefaultDeleteBranchAfterMerge: r.DefaultDeleteBranchAfterMerge,
		DefaultMergeStyle:             r.DefaultMergeStyle,
		DefaultUpdateStyle:            "merge",
		DefaultAllowMaintainerEdit:    r.DefaultAllowMaintainerEdit,
		DefaultTargetBranch:           r.DefaultTargetBranch,
		AvatarURL:                     "",
		Internal:                      false,
		MirrorInterval:                "",
		MirrorUpdated:                 Time(r.MirrorUpdated),
		ObjectFormatName:              r.ObjectFormat,
		LanguagesURL:                  base + "api/v1/repos/" + full + "/languages",
		Licenses:                      []string{},
		Topics:                        Topics(r.Topics),
	}
	if r.IsMirror {
		out.MirrorInterval = r.MirrorInterval.String()
	}
	if r.HasIssues {
		if r.ExternalTrackerURL != "" {
			out.ExternalTracker = &models.ExternalTracker{
				ExternalTrackerURL:           r.ExternalTrackerURL,
				ExternalTrackerFormat:        r.ExternalTrackerFormat,
				ExternalTrackerStyle:         r.ExternalTrackerStyle,
				ExternalTrackerRegexpPattern: r.ExternalTrackerRegexpPattern,
			}
		} else {
			out.InternalTracker = &models.InternalTracker{
				EnableTimeTracker:                r.EnableTimeTracker,
				AllowOnlyContributorsToTrackTime: r.AllowOnlyContributorsToTrackTime,
				EnableIssueDependencies:          r.EnableIssueDependencies,
			}
		}
	}
	if r.HasWiki && r.ExternalWikiURL != "" {
		out.ExternalWiki = &models.ExternalWiki{ExternalWikiURL: r.ExternalWikiURL}
	}
	return out
}

// Email renders one address.
func Email(e *store.Email, userName string) *models.Email {
	return &models.Email{
		Email:    strfmt.Email(e.Email),
		Verified: e.IsActivated,
		Primary:  e.IsPrimary,
		UserID:   e.UserID,
		UserName: userName,
	}
}

// Token renders an access token; the secret is only known at creation and is
// passed in then (empty otherwise).
func Token(t *store.AccessToken, secret string, scopes []string) *models.AccessToken {
	return &models.AccessToken{
		ID:             t.ID,
		Name:           t.Name,
		Token:          secret,
		TokenLastEight: t.TokenLastEight,
		Scopes:         scopes,
		Created:        TimeOf(t.CreatedAt),
		Updated:        Time(t.LastUsedAt),
	}
}

// OAuth2Application renders an OAuth2 application; secret is set only in
// the answer that made it.
func OAuth2Application(a *store.OAuth2Application, redirectURIs []string, secret string) *models.OAuth2Application {
	return &models.OAuth2Application{
		ID:                         a.ID,
		Name:                       a.Name,
		ClientID:                   a.ClientID,
		ClientSecret:               secret,
		RedirectURIs:               redirectURIs,
		ConfidentialClient:         a.ConfidentialClient,
		SkipSecondaryAuthorization: a.SkipSecondaryAuthorization,
		Created:                    *TimeOf(a.CreatedAt),
	}
}
