// Package access decides who may see and change what. Every visibility and
// permission rule lives here, so the handlers and the store's SQL filters
// (store.RepoViewer) agree.
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

// CanSeeUser tells whether p may see the user or organization u: public ones
// are visible to all, limited ones to signed-in callers, private ones only to
// themselves, their members and site admins.
func (c Checker) CanSeeUser(ctx context.Context, p *auth.Principal, u *store.User) (bool, error) {
	if p.IsAdmin() || u.Visibility == store.VisibilityPublic {
		return true, nil
	}
	if p == nil || p.PublicOnly() {
		return false, nil
	}
	if p.UserID() == u.ID {
		return true, nil
	}
	if u.Visibility == store.VisibilityLimited {
		return !p.User.Restricted, nil
	}
	if !u.IsOrganization() {
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
	if p.IsAdmin() {
		return full, nil
	}
	if p != nil && p.PublicOnly() && (r.IsPrivate || r.Owner.Visibility != store.VisibilityPublic) {
		return None, nil
	}
	if p != nil && r.OwnerID == p.UserID() {
		return full, nil
	}
	if p != nil && r.Owner.IsOrganization() {
		m, err := c.membership(ctx, r.OwnerID, p.UserID())
		if err != nil {
			return None, err
		}
		if m != nil && m.IsOwner {
			return full, nil
		}
		if m != nil {
			// Without teams, membership grants read access to every
			// repository of the organization.
			return Permission{Pull: true}, nil
		}
	}
	if r.IsPrivate {
		return None, nil
	}
	visible, err := c.CanSeeUser(ctx, p, r.Owner)
	if err != nil || !visible {
		return None, err
	}
	return Permission{Pull: true}, nil
}

// Viewer is the store-side description of p, for SQL visibility filters.
func Viewer(p *auth.Principal) store.RepoViewer {
	if p == nil || p.PublicOnly() {
		return store.RepoViewer{}
	}
	return store.RepoViewer{UserID: p.UserID(), IsAdmin: p.IsAdmin()}
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

// RepoFor is Repo without the store, for lists: m is p's membership of the
// organization that owns r (nil when there is none or r is user-owned). A
// list loads the caller's memberships once and calls RepoFor per item, so
// its query count does not grow with the page. It must answer exactly as
// Repo does.
func RepoFor(p *auth.Principal, r *store.Repository, m *store.OrgMember) Permission {
	if p.IsAdmin() {
		return full
	}
	if p != nil && p.PublicOnly() && (r.IsPrivate || r.Owner.Visibility != store.VisibilityPublic) {
		return None
	}
	if p != nil && r.OwnerID == p.UserID() {
		return full
	}
	if p != nil && r.Owner.IsOrganization() && m != nil {
		if m.IsOwner {
			return full
		}
		return Permission{Pull: true}
	}
	if r.IsPrivate || !canSeeUserWith(p, r.Owner, m != nil) {
		return None
	}
	return Permission{Pull: true}
}

// canSeeUserWith is CanSeeUser with the membership already known.
func canSeeUserWith(p *auth.Principal, u *store.User, member bool) bool {
	switch {
	case p.IsAdmin() || u.Visibility == store.VisibilityPublic:
		return true
	case p == nil || p.PublicOnly():
		return false
	case p.UserID() == u.ID:
		return true
	case u.Visibility == store.VisibilityLimited:
		return !p.User.Restricted
	}
	return u.IsOrganization() && member
}

// UserVisibilities is the SQL form of CanSeeUser for individual accounts:
// the visibilities p may see (nil: all), and p's own id, which p always
// sees (0 when anonymous or when p's token is limited to public data).
func UserVisibilities(p *auth.Principal) ([]store.Visibility, int64) {
	switch {
	case p.IsAdmin():
		return nil, 0
	case p == nil || p.PublicOnly():
		return []store.Visibility{store.VisibilityPublic}, 0
	case p.User.Restricted:
		return []store.Visibility{store.VisibilityPublic}, p.UserID()
	}
	return []store.Visibility{store.VisibilityPublic, store.VisibilityLimited}, p.UserID()
}
