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

// Permission is a caller's access to one repository.
type Permission struct {
	Pull  bool
	Push  bool
	Admin bool
	// Owner is the reference's "owner" access mode: the owning user, an
	// owner of the owning organization, or a site admin.
	Owner bool
}

// None is no access at all; the repository is invisible to the caller.
var None = Permission{}

var full = Permission{Pull: true, Push: true, Admin: true, Owner: true}

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

// Repo computes p's permission on r (whose Owner is loaded). None means the
// repository must answer 404.
func (c Checker) Repo(ctx context.Context, p *auth.Principal, r *store.Repository) (Permission, error) {
	var m *store.OrgMember
	if p != nil && !p.IsAdmin() && r.Owner.IsOrganization() {
		var err error
		if m, err = c.membership(ctx, r.OwnerID, p.UserID()); err != nil {
			return None, err
		}
	}
	return RepoFor(p, r, m), nil
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

// RepoFor is the rule of the package comment without the store, for
// lists: m is p's membership of the organization that owns r (nil when
// there is none, r is user-owned, or p is a site admin). A list loads the
// caller's memberships once and calls RepoFor per item, so its query count
// does not grow with the page.
func RepoFor(p *auth.Principal, r *store.Repository, m *store.OrgMember) Permission {
	if p != nil && p.TaskRepoID != 0 {
		// A workflow task's token reads its own repository only.
		if r.ID == p.TaskRepoID {
			return Permission{Pull: true}
		}
		return None
	}
	if p.PublicOnly() && (r.IsPrivate || r.Owner.Visibility != store.VisibilityPublic) {
		return None
	}
	switch {
	case p.IsAdmin() || (p != nil && r.OwnerID == p.UserID()):
		return full
	case m != nil && m.IsOwner:
		return full
	case m != nil:
		return Permission{Pull: true}
	case r.IsPrivate || !canSeeUserWith(p, r.Owner, false):
		return None
	}
	return Permission{Pull: true}
}

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
