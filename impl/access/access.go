// Package access decides who may see and change what. Every visibility and
// permission rule lives here, so the handlers and the store's SQL filters
// (store.RepoViewer) agree.
//
// # Who sees a repository
//
// This is the one statement of the rule. The first step that applies decides:
//
//  1. A token limited to public data (scope public-only) never sees a
//     private repository nor any repository of a non-public owner, whoever
//     holds it, site admins included. Otherwise the steps below apply.
//  2. A site admin sees every repository, with full rights.
//  3. The owning user sees its repositories, with full rights.
//  4. A member of the owning organization sees all its repositories: its
//     owners with full rights, other members with read access.
//  5. Anyone else, anonymous callers included, sees a public repository
//     whose owner they may see (below) with read access, and no private one.
//
// An account or organization is seen by everyone when public. When it is
// not, anonymous callers and public-only tokens never see it; it sees
// itself, site admins and an organization's members see it; a limited one
// is also seen by every other signed-in caller who is not restricted; a
// private one by nobody else.
//
// RepoFor is the rule as a function of facts loaded beforehand; Checker.Repo
// loads those facts for one repository; Viewer hands the same facts to the
// store, whose SQL filter for lists (sqlstore's visibleTo) restates the
// rule. apitest's TestRepoVisibilityIsOneRule holds them equal for every
// kind of caller and owner.
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
	return c.IsOrgOwner(ctx, p, owner)
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
