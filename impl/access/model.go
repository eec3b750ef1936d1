package access

import (
	"repohost/impl/auth"
	"repohost/store"
)

// Unit is one feature of a repository that access is granted to separately.
type Unit int

const (
	UnitCode Unit = iota
	UnitIssues
	UnitPulls
	UnitReleases
	UnitWiki
	UnitProjects
	UnitExtIssues
	UnitExtWiki
	UnitActions
	UnitPackages
	numUnits
)

// Units lists every unit, in the reference's order of unit types.
var Units = func() []Unit {
	out := make([]Unit, numUnits)
	for i := range out {
		out[i] = Unit(i)
	}
	return out
}()

var unitNames = [numUnits]string{"repo.code", "repo.issues", "repo.pulls", "repo.releases", "repo.wiki",
	"repo.projects", "repo.ext_issues", "repo.ext_wiki", "repo.actions", "repo.packages"}

// String is the unit's name in units_map ("repo.code", ...).
func (u Unit) String() string {
	if u < 0 || u >= numUnits {
		return ""
	}
	return unitNames[u]
}

// ParseUnit reads a unit name.
func ParseUnit(s string) (Unit, bool) {
	for i, n := range unitNames {
		if n == s {
			return Unit(i), true
		}
	}
	return 0, false
}

// External tells the units that only link elsewhere (external tracker and
// wiki); a team never gets more than read access to them.
func (u Unit) External() bool { return u == UnitExtIssues || u == UnitExtWiki }

// Enabled tells whether unit u is switched on for r. The issue tracker and
// the wiki are either internal or external, never both.
func Enabled(r *store.Repository, u Unit) bool {
	switch u {
	case UnitCode:
		return r.HasCode
	case UnitIssues:
		return r.HasIssues && r.ExternalTrackerURL == ""
	case UnitExtIssues:
		return r.HasIssues && r.ExternalTrackerURL != ""
	case UnitPulls:
		return r.HasPullRequests
	case UnitReleases:
		return r.HasReleases
	case UnitWiki:
		return r.HasWiki && r.ExternalWikiURL == ""
	case UnitExtWiki:
		return r.HasWiki && r.ExternalWikiURL != ""
	case UnitProjects:
		return r.HasProjects
	case UnitActions:
		return r.HasActions
	case UnitPackages:
		return r.HasPackages
	}
	return false
}

// Mode is an access level: none, read, write, admin, owner.
type Mode = store.AccessMode

// Permission is a caller's access to one repository: a repository-wide
// mode and a mode per unit. Ask it with CanRead and CanWrite for the unit
// a route touches, IsAdmin and IsOwner for repository settings.
type Permission struct {
	// Mode is the repository-wide mode (the reference's AccessMode).
	Mode Mode
	// units holds the mode per unit; a unit switched off on the
	// repository has none, whoever asks.
	units [numUnits]Mode

	// Pull, Push and Admin are the repository's "permissions" object:
	// Pull tells whether the repository is visible at all (some unit can
	// be read), Push whether its code can be written, Admin whether its
	// settings can be changed. Owner is the owner access mode. They are
	// derived from the modes above by RepoFor; code that acts on one unit
	// asks CanRead or CanWrite for it instead.
	Pull, Push, Admin, Owner bool
}

// None is no access at all; the repository is invisible to the caller.
var None = Permission{}

// UnitMode is the caller's mode on unit u.
func (p Permission) UnitMode(u Unit) Mode {
	if u < 0 || u >= numUnits {
		return store.AccessNone
	}
	return p.units[u]
}

// CanRead tells whether the caller may read unit u.
func (p Permission) CanRead(u Unit) bool { return p.UnitMode(u) >= store.AccessRead }

// CanWrite tells whether the caller may change unit u.
func (p Permission) CanWrite(u Unit) bool { return p.UnitMode(u) >= store.AccessWrite }

// IsAdmin tells whether the caller administers the repository.
func (p Permission) IsAdmin() bool { return p.Mode >= store.AccessAdmin }

// IsOwner tells whether the caller has the owner access mode.
func (p Permission) IsOwner() bool { return p.Mode >= store.AccessOwner }

// CanWriteAny tells whether the caller may change some unit.
func (p Permission) CanWriteAny() bool {
	for _, m := range p.units {
		if m >= store.AccessWrite {
			return true
		}
	}
	return false
}

// finish derives the summary fields.
func (p Permission) finish() Permission {
	p.Pull = p.Mode >= store.AccessRead
	for _, m := range p.units {
		p.Pull = p.Pull || m >= store.AccessRead
	}
	p.Push = p.CanWrite(UnitCode)
	p.Admin = p.IsAdmin()
	p.Owner = p.IsOwner()
	return p
}

// uniform is mode on every enabled unit of r.
func uniform(r *store.Repository, mode Mode) Permission {
	p := Permission{Mode: mode}
	for _, u := range Units {
		if Enabled(r, u) {
			p.units[u] = mode
		}
	}
	return p.finish()
}

// Facts is what RepoFor needs to know about a signed-in caller beyond the
// principal and the repository (whose Owner is loaded). The zero value is
// a caller with no grant.
type Facts struct {
	// Teams are the caller's teams in the organization that owns the
	// repository (all of them, whether or not they have it: belonging to
	// one makes the caller a member, the owners team an owner).
	Teams []*store.Team
	// TeamHasRepo tells which of Teams were given the repository
	// (IncludesAllRepositories aside).
	TeamHasRepo map[int64]bool
	// Collaboration is the caller's collaborator mode (none when not one).
	Collaboration Mode
}

// TeamMode is a team's repository-wide mode.
func TeamMode(t *store.Team) Mode {
	m, _ := store.ParseAccessMode(t.Permission)
	return m
}

// TeamUnitMode is what a team grants on unit u: its units_map entry, none
// when it has none.
func TeamUnitMode(t *store.Team, u Unit) Mode {
	m, _ := store.ParseAccessMode(t.Units[u.String()])
	return m
}

// RepoFor is the one permission rule (see the package comment): p's access
// to r, from facts loaded beforehand. It reads nothing, so a single
// repository (Checker.Repo) and every item of a list page (Checker.Repos)
// get the same answer; sqlstore's visibleTo restates its "may see" part.
func RepoFor(p *auth.Principal, r *store.Repository, f Facts) Permission {
	if p != nil && p.TaskRepoID != 0 {
		// A running workflow task's token reads its own repository only.
		if r.ID == p.TaskRepoID {
			return uniform(r, store.AccessRead)
		}
		return None
	}
	if p.PublicOnly() && (r.IsPrivate || r.Owner.Visibility != store.VisibilityPublic) {
		return None
	}
	if p == nil {
		if r.IsPrivate || r.Owner.Visibility != store.VisibilityPublic {
			return None
		}
		return uniform(r, store.AccessRead)
	}
	if p.IsAdmin() || r.OwnerID == p.UserID() {
		return uniform(r, store.AccessOwner)
	}
	member := len(f.Teams) > 0
	if !canSeeUserWith(p, r.Owner, member) && f.Collaboration == store.AccessNone {
		return None
	}
	// A public repository is read by every signed-in caller who sees its
	// owner, restricted users excepted: they reach only what they were
	// given.
	floor := store.AccessNone
	if !r.IsPrivate && !p.User.Restricted {
		floor = store.AccessRead
	}
	var teams []*store.Team
	for _, t := range f.Teams {
		if teamHas(t, r, f.TeamHasRepo[t.ID]) {
			teams = append(teams, t)
		}
	}
	return withTeams(r, max(f.Collaboration, floor), teams)
}

// teamHas tells whether team t grants anything on r: it must be a team of
// r's organization, given r (given) or including all its repositories.
func teamHas(t *store.Team, r *store.Repository, given bool) bool {
	return r.Owner.IsOrganization() && t.OrgID == r.OwnerID && (t.IncludesAllRepositories || given)
}

// withTeams is step 7 of the rule: base (the floor and the collaboration)
// raised by the teams that have r.
func withTeams(r *store.Repository, base Mode, teams []*store.Team) Permission {
	if len(teams) == 0 {
		return uniform(r, base)
	}
	mode := base
	for _, t := range teams {
		// An admin team (the owners team among them) owns the repository.
		if TeamMode(t) >= store.AccessAdmin {
			return uniform(r, store.AccessOwner)
		}
		mode = max(mode, TeamMode(t))
	}
	perm := Permission{Mode: mode}
	for _, u := range Units {
		if !Enabled(r, u) {
			continue
		}
		m := base
		for _, t := range teams {
			m = max(m, TeamUnitMode(t, u))
		}
		if mode >= store.AccessAdmin {
			m = mode
		}
		perm.units[u] = m
	}
	return perm.finish()
}

// TeamRepoFor is what membership of team t alone grants on r, given tells
// whether t was given r: RepoFor's step 7 for a single team, with no floor
// and no collaboration. It answers "may this team read (or write) this
// repository" (review requests for a team, for one), so that question
// never gets a rule of its own.
func TeamRepoFor(t *store.Team, r *store.Repository, given bool) Permission {
	if !teamHas(t, r, given) {
		return None
	}
	return withTeams(r, store.AccessNone, []*store.Team{t})
}
