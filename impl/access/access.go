// Package access decides who may see and change what. Every visibility and
// permission rule lives here, so the handlers and the store's SQL filters
// (store.RepoViewer) agree.
//
// # What a caller may do to a repository
//
// This is the one statement of the rule (the reference's
// GetUserRepoPermission). Access is a mode (none, read, write, admin,
// owner) per unit of the repository (repo.code, repo.issues, …); a unit
// switched off on the repository grants nothing to anyone. The first step
// that applies decides:
//
//  1. A token limited to public data (scope public-only) gets read access
//     to a public repository of a public owner and nothing else, whoever
//     holds it, site admins included.
//  2. Anonymous callers read a public repository of a public owner.
//  3. A site admin and the owning user have owner access to everything.
//  4. Nobody else reaches a repository whose owner they may not see
//     (below), unless they are its collaborators.
//  5. The floor: any other signed-in caller reads a public repository,
//     except restricted users, who get only what they were given.
//  6. A collaborator has its mode (read, write, admin) on every unit.
//  7. For an organization's repository, each team of the caller that has
//     it (given it, or including all repositories) adds: an admin team
//     (the owners team among them) makes the caller an owner; any other
//     adds its units_map level per unit. Each unit gets the highest of
//     the floor, the collaboration and the teams.
//
// The repository is visible when some unit can be read; otherwise it
// answers 404. Repository.permissions is derived: pull (visible), push
// (write to code), admin.
//
// Organization membership is team membership: a member is in at least one
// team, an owner in the owners team. An account or organization is seen by
// everyone when public. When it is not, anonymous callers and public-only
// tokens never see it; it sees itself, site admins and an organization's
// members see it; a limited one is also seen by every other signed-in
// caller who is not restricted; a private one by nobody else.
//
// RepoFor is the rule as a pure function of facts loaded beforehand
// (Facts: the caller's teams and collaboration); Checker.Repo loads them
// for one repository and Checker.Repos for a page, in a fixed number of
// statements; Viewer hands the caller to the store, whose SQL filter for
// lists (sqlstore's visibleTo) restates "visible". apitest's
// TestPermissionMatrix and TestRepoVisibilityIsOneRule hold them equal.
package access

import (
	"context"
	"errors"

	"repohost/impl/auth"
	"repohost/store"
)

// Checker answers access questions with the help of the store.
type Checker struct {
	Store store.Store
}

// membership returns the caller's membership of org, or nil.
func (c Checker) membership(ctx context.Context, orgID, userID int64) (*store.OrgMember, error) {
	if userID == 0 {
		return nil, nil
	}
	m, err := c.Store.Orgs().FindMember(ctx, orgID, userID)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil
	}
	return m, err
}

// CanSeeUser tells whether p may see the user or organization u (see the
// package comment). Membership is read only when it can change the answer.
func (c Checker) CanSeeUser(ctx context.Context, p *auth.Principal, u *store.User) (bool, error) {
	if canSeeUserWith(p, u, false) {
		return true, nil
	}
	if p == nil || p.PublicOnly() || !u.IsOrganization() {
		return false, nil
	}
	m, err := c.membership(ctx, u.ID, p.UserID())
	return m != nil, err
}

// IsOrgOwner tells whether p owns org (site admins count as owners).
func (c Checker) IsOrgOwner(ctx context.Context, p *auth.Principal, org *store.User) (bool, error) {
	if p.IsAdmin() {
		return true, nil
	}
	m, err := c.membership(ctx, org.ID, p.UserID())
	return m != nil && m.IsOwner, err
}

// IsOrgMember tells whether p belongs to org.
func (c Checker) IsOrgMember(ctx context.Context, p *auth.Principal, org *store.User) (bool, error) {
	m, err := c.membership(ctx, org.ID, p.UserID())
	return m != nil, err
}

// Repo computes p's permission on r (whose Owner is loaded) with RepoFor,
// after loading the facts it needs: none for anonymous callers, site
// admins and the owner; the caller's collaboration for a user's
// repository (one statement); also the caller's teams in the owning
// organization for an organization's (two). None means the repository
// must answer 404.
func (c Checker) Repo(ctx context.Context, p *auth.Principal, r *store.Repository) (Permission, error) {
	if !needsFacts(p, r) {
		return RepoFor(p, r, Facts{}), nil
	}
	var orgIDs []int64
	if r.Owner.IsOrganization() {
		orgIDs = []int64{r.OwnerID}
	}
	g, err := c.Store.Access().Grants(ctx, p.UserID(), orgIDs, []int64{r.ID})
	if err != nil {
		return None, err
	}
	return RepoFor(p, r, (&grantSet{g}).facts(r)), nil
}

// Repos is Repo for a page of repositories, in a fixed number of
// statements whatever their number and the caller's teams.
func (c Checker) Repos(ctx context.Context, p *auth.Principal, repos []*store.Repository) ([]Permission, error) {
	g, err := c.grants(ctx, p, repos)
	if err != nil {
		return nil, err
	}
	out := make([]Permission, len(repos))
	for i, r := range repos {
		out[i] = RepoFor(p, r, g.facts(r))
	}
	return out, nil
}

// needsFacts tells whether RepoFor's answer for p on r depends on grants.
func needsFacts(p *auth.Principal, r *store.Repository) bool {
	return p != nil && !p.IsAdmin() && r.OwnerID != p.UserID() && !p.PublicOnly()
}

// grants loads p's grants on a page of repositories. For a caller whose
// answers may depend on them it always runs the same statements, whatever
// the page holds, so a list's statement count stays fixed.
func (c Checker) grants(ctx context.Context, p *auth.Principal, repos []*store.Repository) (*grantSet, error) {
	if len(repos) == 0 || p == nil || p.IsAdmin() || p.PublicOnly() {
		return &grantSet{}, nil
	}
	repoIDs, orgIDs := []int64{}, []int64{}
	seenOrg := map[int64]bool{}
	for _, r := range repos {
		repoIDs = append(repoIDs, r.ID)
		if r.Owner.IsOrganization() && !seenOrg[r.OwnerID] {
			seenOrg[r.OwnerID] = true
			orgIDs = append(orgIDs, r.OwnerID)
		}
	}
	g, err := c.Store.Access().Grants(ctx, p.UserID(), orgIDs, repoIDs)
	if err != nil {
		return nil, err
	}
	return &grantSet{g}, nil
}

// grantSet hands each repository its Facts out of one Grants.
type grantSet struct{ g *store.Grants }

func (s *grantSet) facts(r *store.Repository) Facts {
	if s.g == nil {
		return Facts{}
	}
	f := Facts{Collaboration: s.g.Collaborations[r.ID], TeamHasRepo: map[int64]bool{}}
	for _, t := range s.g.Teams {
		if t.OrgID == r.OwnerID {
			f.Teams = append(f.Teams, t)
		}
	}
	for _, id := range s.g.TeamRepos[r.ID] {
		f.TeamHasRepo[id] = true
	}
	return f
}

// Viewer gives the store the facts about p that the rule depends on, so
// its SQL filter keeps exactly the repositories RepoFor lets p see.
func Viewer(p *auth.Principal) store.RepoViewer {
	if p == nil {
		return store.RepoViewer{}
	}
	return store.RepoViewer{
		UserID:     p.UserID(),
		IsAdmin:    p.IsAdmin(),
		PublicOnly: p.PublicOnly(),
		Restricted: p.User.Restricted,
		OnlyRepoID: p.TaskRepoID,
	}
}

// CanCreateIn tells whether p may create repositories owned by owner.
func (c Checker) CanCreateIn(ctx context.Context, p *auth.Principal, owner *store.User) (bool, error) {
	if p.IsAdmin() || p.UserID() == owner.ID {
		return true, nil
	}
	if !owner.IsOrganization() {
		return false, nil
	}
	// Owners may, and members of a team that may create repositories.
	teams, err := c.Store.Teams().UserTeams(ctx, owner.ID, p.UserID())
	if err != nil {
		return false, err
	}
	for _, t := range teams {
		if t.IsOwnersTeam() || t.CanCreateOrgRepo {
			return true, nil
		}
	}
	return false, nil
}

// TeamHas tells whether team t has r: a team of r's organization given r,
// or one including all its repositories (the owners team among them).
func (c Checker) TeamHas(ctx context.Context, t *store.Team, r *store.Repository) (bool, error) {
	if !r.Owner.IsOrganization() || t.OrgID != r.OwnerID {
		return false, nil
	}
	if t.IncludesAllRepositories {
		return true, nil
	}
	return c.Store.Teams().HasRepo(ctx, t.ID, r.ID)
}

// TeamRepo is what membership of team t alone grants on r (TeamRepoFor),
// after asking whether t was given r.
func (c Checker) TeamRepo(ctx context.Context, t *store.Team, r *store.Repository) (Permission, error) {
	has, err := c.TeamHas(ctx, t, r)
	if err != nil || !has {
		return None, err
	}
	return TeamRepoFor(t, r, true), nil
}

// OrgRole is what a user's teams give them in an organization.
type OrgRole struct {
	// Mode is the highest mode of their teams (the Owners team's is
	// owner); none when they are in no team.
	Mode Mode
	// CanCreateRepo: a team of theirs may create repositories (the
	// Owners team may).
	CanCreateRepo bool
}

// OrgRoleOf computes userID's role in the organization orgID from their
// teams, as the reference's GetOrgUserMaxAuthorizeLevel and
// CanCreateOrgRepo do (a site admin's account gets no more than its teams).
func (c Checker) OrgRoleOf(ctx context.Context, orgID, userID int64) (OrgRole, error) {
	teams, err := c.Store.Teams().UserTeams(ctx, orgID, userID)
	if err != nil {
		return OrgRole{}, err
	}
	var role OrgRole
	for _, t := range teams {
		m := TeamMode(t)
		if t.IsOwnersTeam() {
			m = store.AccessOwner
		}
		role.Mode = max(role.Mode, m)
		role.CanCreateRepo = role.CanCreateRepo || t.IsOwnersTeam() || t.CanCreateOrgRepo
	}
	return role, nil
}

// MayMakePrivate tells whether p may create a private repository or make a
// repository private. A token limited to public data may not, whoever
// holds it, site admins included: what it could make private it could no
// longer see (step 1 of the package comment).
func MayMakePrivate(p *auth.Principal) bool { return !p.PublicOnly() }

// canSeeUserWith is CanSeeUser with p's membership of u already known.
func canSeeUserWith(p *auth.Principal, u *store.User, member bool) bool {
	switch {
	case u.Visibility == store.VisibilityPublic:
		return true
	case p == nil || p.PublicOnly():
		return false
	case p.IsAdmin() || p.UserID() == u.ID || member:
		return true
	case u.Visibility == store.VisibilityLimited:
		return !p.User.Restricted
	}
	return false
}

// UserVisibilities is the SQL form of CanSeeUser for individual accounts:
// the visibilities p may see (nil: all), and p's own id, which p always
// sees (0 when anonymous or when p's token is limited to public data).
func UserVisibilities(p *auth.Principal) ([]store.Visibility, int64) {
	switch {
	case p == nil || p.PublicOnly():
		return []store.Visibility{store.VisibilityPublic}, 0
	case p.IsAdmin():
		return nil, 0
	case p.User.Restricted:
		return []store.Visibility{store.VisibilityPublic}, p.UserID()
	}
	return []store.Visibility{store.VisibilityPublic, store.VisibilityLimited}, p.UserID()
}

// Blocked tells whether any of the users or organizations in blockerIDs
// blocks the user doerID (ids of 0 and the doer's own are skipped). A
// block stops a user from interacting with the blocker's repositories and
// content: watching, opening issues or pull requests, commenting.
func (c Checker) Blocked(ctx context.Context, doerID int64, blockerIDs ...int64) (bool, error) {
	seen := map[int64]bool{}
	for _, id := range blockerIDs {
		if id == 0 || id == doerID || seen[id] {
			continue
		}
		seen[id] = true
		_, err := c.Store.People().FindBlock(ctx, id, doerID)
		if err == nil {
			return true, nil
		}
		if !errors.Is(err, store.ErrNotFound) {
			return false, err
		}
	}
	return false, nil
}
