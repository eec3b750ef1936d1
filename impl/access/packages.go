package access

import (
	"context"

	"repohost/impl/auth"
	"repohost/store"
)

// CanWritePackages tells whether p may publish and delete the packages of
// owner (a user or an organization): site admins, the user itself, and,
// for an organization, a member of a team whose repo.packages unit grants
// write access or more (the owners team grants owner). This is the one
// statement of the rule. Reading packages needs only CanSeeUser of the
// owner.
func (c Checker) CanWritePackages(ctx context.Context, p *auth.Principal, owner *store.User) (bool, error) {
	if p == nil || p.PublicOnly() && owner.Visibility != store.VisibilityPublic {
		return false, nil
	}
	if p.IsAdmin() || p.UserID() == owner.ID {
		return true, nil
	}
	if !owner.IsOrganization() {
		return false, nil
	}
	teams, err := c.Store.Teams().UserTeams(ctx, owner.ID, p.UserID())
	if err != nil {
		return false, err
	}
	for _, t := range teams {
		if TeamUnitMode(t, UnitPackages) >= store.AccessWrite {
			return true, nil
		}
	}
	return false, nil
}
