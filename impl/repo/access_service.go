package repo

import (
	"context"
	"errors"
	"fmt"

	"repohost/impl/apierr"
	"repohost/impl/events"
	"repohost/store"
)

// SetCollaborator makes the individual u a collaborator of r with mode
// (read, write or admin), or changes the mode of one already.
func (s Service) SetCollaborator(ctx context.Context, doer *store.User, r *store.Repository, u *store.User, mode store.AccessMode) error {
	switch {
	case u.IsOrganization():
		return apierr.Validation("an organization cannot be a collaborator")
	case u.ID == r.OwnerID:
		return apierr.Validation("the owner of a repository cannot be its collaborator")
	case mode < store.AccessRead || mode > store.AccessAdmin:
		return apierr.Validation("[Permission]: must be one of read, write, admin")
	}
	return s.Store.WithTx(ctx, func(ctx context.Context) error {
		if err := s.Store.Access().SetCollaborator(ctx, &store.Collaboration{RepoID: r.ID, UserID: u.ID, Mode: mode, CreatedAt: s.Clock.Now()}); err != nil {
			return err
		}
		return s.Events.Emit(ctx, events.CollaboratorSet, r.ID, events.ActorID(doer),
			events.Collaborator{Repo: EventOf(r), User: events.Named{ID: u.ID, Name: u.Name}, Mode: mode.String()})
	})
}

// RemoveCollaborator ends u's collaboration on r; none is no error.
func (s Service) RemoveCollaborator(ctx context.Context, doer *store.User, r *store.Repository, u *store.User) error {
	return s.Store.WithTx(ctx, func(ctx context.Context) error {
		err := s.Store.Access().RemoveCollaborator(ctx, r.ID, u.ID)
		if errors.Is(err, store.ErrNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		return s.Events.Emit(ctx, events.CollaboratorRemoved, r.ID, events.ActorID(doer),
			events.Collaborator{Repo: EventOf(r), User: events.Named{ID: u.ID, Name: u.Name}})
	})
}

func teamRepoEvent(t *store.Team, r *store.Repository) events.TeamGrant {
	re := EventOf(r)
	return events.TeamGrant{Team: events.Named{ID: t.ID, Name: t.Name}, Repo: &re}
}

// AddTeamRepo gives team t the repository r of its organization.
func (s Service) AddTeamRepo(ctx context.Context, doer *store.User, t *store.Team, r *store.Repository) error {
	if r.OwnerID != t.OrgID {
		return apierr.NotFound("repository not owned by the team's organization")
	}
	return s.Store.WithTx(ctx, func(ctx context.Context) error {
		if err := s.Store.Teams().AddRepo(ctx, t.ID, r.ID); err != nil {
			return err
		}
		return s.Events.Emit(ctx, events.TeamRepoAdded, r.ID, events.ActorID(doer), teamRepoEvent(t, r))
	})
}

// RemoveTeamRepo takes r away from t; a team without it is no error.
func (s Service) RemoveTeamRepo(ctx context.Context, doer *store.User, t *store.Team, r *store.Repository) error {
	return s.Store.WithTx(ctx, func(ctx context.Context) error {
		err := s.Store.Teams().RemoveRepo(ctx, t.ID, r.ID)
		if errors.Is(err, store.ErrNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		return s.Events.Emit(ctx, events.TeamRepoRemoved, r.ID, events.ActorID(doer), teamRepoEvent(t, r))
	})
}

// TransferTeams checks the teams a transfer to recipient names: only an
// organization recipient takes teams, and only its own.
func (s Service) TransferTeams(ctx context.Context, recipient *store.User, ids []int64) ([]*store.Team, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	if !recipient.IsOrganization() {
		return nil, apierr.Validation("repository can only be transferred with teams to an organization")
	}
	found, err := s.Store.Teams().FindByIDs(ctx, ids)
	if err != nil {
		return nil, err
	}
	out := make([]*store.Team, 0, len(ids))
	for _, id := range ids {
		t := found[id]
		if t == nil || t.OrgID != recipient.ID {
			return nil, apierr.Validation("team %d is not a team of %s", id, recipient.Name)
		}
		out = append(out, t)
	}
	return out, nil
}

// OfferTransfer records that r is to go to recipient once they accept.
func (s Service) OfferTransfer(ctx context.Context, doer *store.User, r *store.Repository, recipient *store.User, teams []*store.Team) (*store.RepoTransfer, error) {
	if err := s.transferable(ctx, r, recipient); err != nil {
		return nil, err
	}
	tr := &store.RepoTransfer{RepoID: r.ID, DoerID: doer.ID, RecipientID: recipient.ID, TeamIDs: teamIDs(teams), CreatedAt: s.Clock.Now()}
	err := s.Store.WithTx(ctx, func(ctx context.Context) error {
		if err := s.Store.Access().CreateTransfer(ctx, tr); err != nil {
			return err
		}
		return s.Events.Emit(ctx, events.RepoTransferStarted, r.ID, events.ActorID(doer), EventOf(r))
	})
	if err != nil {
		return nil, err
	}
	return tr, nil
}

// RejectTransfer drops r's pending transfer.
func (s Service) RejectTransfer(ctx context.Context, doer *store.User, r *store.Repository) error {
	return s.Store.WithTx(ctx, func(ctx context.Context) error {
		if err := s.Store.Access().DeleteTransfer(ctx, r.ID); err != nil {
			return err
		}
		return s.Events.Emit(ctx, events.RepoTransferDropped, r.ID, events.ActorID(doer), EventOf(r))
	})
}

func teamIDs(teams []*store.Team) []int64 {
	ids := make([]int64, 0, len(teams))
	for _, t := range teams {
		ids = append(ids, t.ID)
	}
	return ids
}

// transferable refuses a transfer to the current owner or to an owner
// that already has a repository of that name.
func (s Service) transferable(ctx context.Context, r *store.Repository, recipient *store.User) error {
	if recipient.ID == r.OwnerID {
		return apierr.Validation("the repository already belongs to %s", recipient.Name)
	}
	_, err := s.Store.Repos().FindByName(ctx, recipient.ID, r.Name)
	switch {
	case err == nil:
		return apierr.Validation("The repository with the same name already exists.")
	case !errors.Is(err, store.ErrNotFound):
		return err
	}
	return nil
}

// Transfer moves r to recipient now, giving it to teams of an organization
// recipient. The bare repository moves on disk first, then the row in a
// transaction that re-reads it locked; if the row cannot follow, the
// directory is moved back, so the two never end up apart. The old
// organization's teams lose the repository, a pending transfer is
// dropped, and the recipient's collaboration (now pointless) ends.
func (s Service) Transfer(ctx context.Context, doer *store.User, r *store.Repository, recipient *store.User, teams []*store.Team) (*store.Repository, error) {
	if err := s.transferable(ctx, r, recipient); err != nil {
		return nil, err
	}
	oldOwner := r.Owner
	if err := s.Git.Rename(oldOwner.Name, r.Name, recipient.Name, r.Name); err != nil {
		return nil, err
	}
	var moved *store.Repository
	err := s.Store.WithTx(ctx, func(ctx context.Context) error {
		fresh, err := s.Store.Repos().FindByIDForUpdate(ctx, r.ID)
		if err != nil {
			return err
		}
		if fresh.OwnerID != oldOwner.ID || fresh.LowerName != r.LowerName {
			return apierr.Conflict("the repository was moved or renamed meanwhile")
		}
		if err := s.transferable(ctx, fresh, recipient); err != nil {
			return err
		}
		fresh.OwnerID, fresh.Owner = recipient.ID, recipient
		if err := s.Store.Repos().Update(ctx, fresh); err != nil {
			return err
		}
		if err := s.Store.Teams().UnlinkRepo(ctx, r.ID); err != nil {
			return err
		}
		for _, t := range teams {
			if err := s.Store.Teams().AddRepo(ctx, t.ID, r.ID); err != nil {
				return err
			}
		}
		if err := s.Store.Access().DeleteTransfer(ctx, r.ID); err != nil && !errors.Is(err, store.ErrNotFound) {
			return err
		}
		if err := s.Store.Access().RemoveCollaborator(ctx, r.ID, recipient.ID); err != nil && !errors.Is(err, store.ErrNotFound) {
			return err
		}
		ev := EventOf(fresh)
		ev.OldOwner = oldOwner.Name
		moved = fresh
		return s.Events.Emit(ctx, events.RepoTransferred, r.ID, events.ActorID(doer), ev)
	})
	if err != nil {
		if undo := s.Git.Rename(recipient.Name, r.Name, oldOwner.Name, r.Name); undo != nil {
			s.Log.Error("undo repository transfer on disk", "repo", fmt.Sprintf("%s/%s", recipient.Name, r.Name), "err", undo)
		}
		return nil, err
	}
	return moved, nil
}

// giveCreatorTeams gives a new repository of an organization to the teams
// through which its creator, not an owner, may create repositories (as the
// reference does), so the creator reaches what it made.
func (s Service) giveCreatorTeams(ctx context.Context, doer, owner *store.User, r *store.Repository) error {
	if !owner.IsOrganization() || doer == nil || doer.IsAdmin {
		return nil
	}
	teams, err := s.Store.Teams().UserTeams(ctx, owner.ID, doer.ID)
	if err != nil {
		return err
	}
	for _, t := range teams {
		if t.IsOwnersTeam() {
			return nil
		}
	}
	for _, t := range teams {
		if t.CanCreateOrgRepo && !t.IncludesAllRepositories {
			if err := s.Store.Teams().AddRepo(ctx, t.ID, r.ID); err != nil {
				return err
			}
		}
	}
	return nil
}

// watchNew makes the creator of the new repository r watch it, and for an
// organization's repository the members of the teams that include all its
// repositories; r's watcher count is then theirs.
func (s Service) watchNew(ctx context.Context, doer, owner *store.User, r *store.Repository) error {
	var orgID, doerID int64
	if owner.IsOrganization() {
		orgID = owner.ID
	}
	if doer != nil {
		doerID = doer.ID
	}
	n, err := s.Store.Watches().WatchNew(ctx, r.ID, orgID, doerID)
	if err != nil {
		return err
	}
	r.NumWatches = n
	return nil
}
