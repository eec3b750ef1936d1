package app

import (
	"context"

	"repohost/impl/apierr"
	"repohost/store"
)

// ErrBlocked answers what a block forbids the blocked user (403, as the
// reference answers).
func ErrBlocked() error { return apierr.Forbidden("user is blocked") }

// RefuseBlocked answers ErrBlocked when any of the users or organizations
// in blockerIDs blocks doer (impl/access decides; see Checker.Blocked).
func (d *Deps) RefuseBlocked(ctx context.Context, doer *store.User, blockerIDs ...int64) error {
	if doer == nil {
		return nil
	}
	blocked, err := d.Access.Blocked(ctx, doer.ID, blockerIDs...)
	if err != nil {
		return err
	}
	if blocked {
		return ErrBlocked()
	}
	return nil
}
