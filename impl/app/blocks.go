package app

import (
	"context"
	"errors"

	"repohost/impl/apierr"
	"repohost/store"
)

// ErrBlocked answers what a block forbids the blocked user (403, as the
// reference answers).
func ErrBlocked() error { return apierr.Forbidden("user is blocked") }

// RefuseBlocked answers ErrBlocked when any of the users or organizations
// in blockerIDs blocks doer (ids of 0 and doer's own are skipped). A block
// stops a user from interacting with the blocker's repositories and
// content: watching, opening issues or pull requests, commenting.
func (d *Deps) RefuseBlocked(ctx context.Context, doer *store.User, blockerIDs ...int64) error {
	if doer == nil {
		return nil
	}
	seen := map[int64]bool{}
	for _, id := range blockerIDs {
		if id == 0 || id == doer.ID || seen[id] {
			continue
		}
		seen[id] = true
		_, err := d.Store.People().FindBlock(ctx, id, doer.ID)
		if err == nil {
			return ErrBlocked()
		}
		if !errors.Is(err, store.ErrNotFound) {
			return err
		}
	}
	return nil
}
