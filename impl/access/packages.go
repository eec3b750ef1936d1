package access

import (
	"context"

	"repohost/impl/auth"
	"repohost/store"
)

// CanWritePackages tells whether p may publish and delete the packages of
// owner (a user or an organization): site admins, the user itself, and
// those who may manage the organization's repositories (its owners). This
// is the one statement of the rule; once teams carry a "repo.packages"
// unit, an organization member's right comes from it here. Reading
// packages needs only CanSeeUser of the owner.
func (c Checker) CanWritePackages(ctx context.Context, p *auth.Principal, owner *store.User) (bool, error) {
	if p == nil || p.PublicOnly() && owner.Visibility != store.VisibilityPublic {
		return false, nil
	}
	return c.CanCreateIn(ctx, p, owner)
}
