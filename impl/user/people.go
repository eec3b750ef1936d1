package user

import (
	"context"
	"errors"

	"repohost/impl/apierr"
	"repohost/impl/app"
	"repohost/impl/events"
	"repohost/impl/issue"
	"repohost/impl/repo"
	"repohost/store"
)

// Stars, follows and blocks: the links between people and what they pay
// attention to. Each change records its event in its own transaction and
// moves the counters the store keeps (stars on the repository and the
// user, followers and following on the two users).

// errBlocked answers a star or follow that a block forbids, as the
// reference does.
func errBlocked() error { return app.ErrBlocked() }

// blocks tells whether blocker blocks blockee.
func (s Service) blocks(ctx context.Context, blockerID, blockeeID int64) (bool, error) {
	_, err := s.Store.People().FindBlock(ctx, blockerID, blockeeID)
	if errors.Is(err, store.ErrNotFound) {
		return false, nil
	}
	return err == nil, err
}

// Star marks r as starred by doer; doing it again changes nothing. A user
// whom r's owner blocks may not star it.
func (s Service) Star(ctx context.Context, doer *store.User, r *store.Repository) error {
	return s.Store.WithTx(ctx, func(ctx context.Context) error {
		blocked, err := s.blocks(ctx, r.OwnerID, doer.ID)
		if err != nil {
			return err
		}
		if blocked {
			return errBlocked()
		}
		added, err := s.Store.People().Star(ctx, doer.ID, r.ID, s.Clock.Now())
		if err != nil || !added {
			return err
		}
		return s.Events.Emit(ctx, events.RepoStarred, r.ID, doer.ID, repo.EventOf(r))
	})
}

// Unstar takes doer's star off r, if there is one.
func (s Service) Unstar(ctx context.Context, doer *store.User, r *store.Repository) error {
	return s.Store.WithTx(ctx, func(ctx context.Context) error {
		removed, err := s.Store.People().Unstar(ctx, doer.ID, r.ID)
		if err != nil || !removed {
			return err
		}
		return s.Events.Emit(ctx, events.RepoUnstarred, r.ID, doer.ID, repo.EventOf(r))
	})
}

// Follow makes doer a follower of u. Following oneself, or someone one
// already follows, changes nothing (as the reference answers both); a block
// between the two, either way, refuses it.
func (s Service) Follow(ctx context.Context, doer, u *store.User) error {
	if doer.ID == u.ID {
		return nil
	}
	return s.Store.WithTx(ctx, func(ctx context.Context) error {
		blocked, err := s.Store.People().IsBlocked(ctx, doer.ID, u.ID)
		if err != nil {
			return err
		}
		if blocked {
			return errBlocked()
		}
		added, err := s.Store.People().Follow(ctx, doer.ID, u.ID, s.Clock.Now())
		if err != nil || !added {
			return err
		}
		return s.Events.Emit(ctx, events.UserFollowed, 0, doer.ID, Named(u))
	})
}

// Unfollow ends doer's following of u, if it follows.
func (s Service) Unfollow(ctx context.Context, doer, u *store.User) error {
	return s.Store.WithTx(ctx, s.unfollow(doer, u))
}

func (s Service) unfollow(doer, u *store.User) func(ctx context.Context) error {
	return func(ctx context.Context) error {
		removed, err := s.Store.People().Unfollow(ctx, doer.ID, u.ID)
		if err != nil || !removed {
			return err
		}
		return s.Events.Emit(ctx, events.UserUnfollowed, 0, doer.ID, Named(u))
	}
}

// Block makes blocker (doer, or an organization doer owns) block blockee,
// with the reference's effects: the follows between the two end, and each
// one's stars on, watches of, assignments in and collaborations on the
// other's repositories go, as do transfers between them. An
// organization cannot be blocked, nor oneself, nor someone blocked
// already, nor (by an organization) one of its members (400, as the
// reference answers).
func (s Service) Block(ctx context.Context, doer, blocker, blockee *store.User, note string) error {
	if blockee.IsOrganization() {
		return apierr.BadRequest("cannot block an organization")
	}
	if blocker.ID == blockee.ID || doer.ID == blockee.ID {
		return apierr.BadRequest("cannot block the user")
	}
	return s.Store.WithTx(ctx, func(ctx context.Context) error {
		if blocker.IsOrganization() {
			_, err := s.Store.Orgs().FindMember(ctx, blocker.ID, blockee.ID)
			if err == nil {
				return apierr.BadRequest("cannot block a member of the organization")
			}
			if !errors.Is(err, store.ErrNotFound) {
				return err
			}
		}
		added, err := s.Store.People().Block(ctx, &store.UserBlock{BlockerID: blocker.ID, BlockeeID: blockee.ID,
			Note: note, CreatedAt: s.Clock.Now()})
		if err != nil {
			return err
		}
		if !added {
			return apierr.BadRequest("cannot block the user")
		}
		for _, pair := range [][2]*store.User{{blocker, blockee}, {blockee, blocker}} {
			if err := s.unfollow(pair[0], pair[1])(ctx); err != nil {
				return err
			}
			if _, err := s.Store.People().UnstarOwnedBy(ctx, pair[0].ID, pair[1].ID); err != nil {
				return err
			}
			if _, err := s.Store.Watches().UnwatchOwnedBy(ctx, pair[0].ID, pair[1].ID); err != nil {
				return err
			}
			if err := s.untie(ctx, doer, pair[0], pair[1]); err != nil {
				return err
			}
		}
		return s.Events.Emit(ctx, events.UserBlocked, 0, doer.ID, events.Block{Blocker: Named(blocker), User: Named(blockee)})
	})
}

// untie ends u's assignments to issues of owner's repositories, its
// collaborations on them, and the transfers of owner's repositories
// waiting for u, each through its own service so that each leaves its
// event (and an assignment its timeline entry).
func (s Service) untie(ctx context.Context, doer, u, owner *store.User) error {
	ties, err := s.Store.People().Ties(ctx, u.ID, owner.ID)
	if err != nil {
		return err
	}
	issues := issue.Service{Deps: s.Deps}
	find := func(id int64) (*store.Repository, error) { return s.Store.Repos().FindByID(ctx, id) }
	for _, a := range ties.Assigned {
		r, err := find(a.RepoID)
		if err != nil {
			return err
		}
		if err := issues.Unassign(ctx, r, a.Index, u); err != nil {
			return err
		}
	}
	for _, id := range ties.Collaborations {
		r, err := find(id)
		if err != nil {
			return err
		}
		if err := s.Repos.RemoveCollaborator(ctx, doer, r, u); err != nil {
			return err
		}
	}
	for _, id := range ties.Transfers {
		r, err := find(id)
		if err != nil {
			return err
		}
		if err := s.Repos.RejectTransfer(ctx, doer, r); err != nil {
			return err
		}
	}
	return nil
}

// Unblock ends blocker's block of blockee; there must be one (400 as the
// reference answers otherwise).
func (s Service) Unblock(ctx context.Context, doer, blocker, blockee *store.User) error {
	if blockee.IsOrganization() {
		return apierr.BadRequest("cannot block an organization")
	}
	return s.Store.WithTx(ctx, func(ctx context.Context) error {
		removed, err := s.Store.People().Unblock(ctx, blocker.ID, blockee.ID)
		if err != nil {
			return err
		}
		if !removed {
			return apierr.BadRequest("cannot unblock the user")
		}
		return s.Events.Emit(ctx, events.UserUnblocked, 0, doer.ID, events.Block{Blocker: Named(blocker), User: Named(blockee)})
	})
}
