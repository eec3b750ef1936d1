package org

import (
	"context"
	"errors"
	"net/url"

	"repohost/impl/apierr"
	"repohost/impl/app"
	"repohost/impl/events"
	"repohost/impl/names"
	"repohost/impl/user"
	"repohost/store"
)

// Service is the only place that changes organizations and their
// memberships. Handlers (the admin API's too) check who may act, turn the
// request into the inputs below and call it. Every action records one
// event in the transaction of its change; doer is who acts.
type Service struct {
	*app.Deps
	// Repos deletes the repositories of an organization deleted with
	// purge.
	Repos user.RepositoryRemover
}

func (s Service) emit(ctx context.Context, kind events.Kind, doer, o *store.User) error {
	return s.Events.Emit(ctx, kind, 0, events.ActorID(doer), user.Named(o))
}

func (s Service) emitMember(ctx context.Context, kind events.Kind, doer, o, u *store.User) error {
	return s.Events.Emit(ctx, kind, 0, events.ActorID(doer), events.Member{Org: user.Named(o), User: user.Named(u)})
}

// checkProfile validates the free-form profile fields shared by create and
// edit; empty values clear a field and are always fine.
func checkProfile(email, website string) error {
	if email != "" {
		if err := user.CheckEmail(email); err != nil {
			return err
		}
	}
	if website != "" {
		u, err := url.Parse(website)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return apierr.Validation("[Website]: invalid URL")
		}
	}
	return nil
}

// CreateInput describes an organization to create.
type CreateInput struct {
	Name                      string
	FullName                  string
	Email                     string
	Description               string
	Website                   string
	Location                  string
	Visibility                store.Visibility
	RepoAdminChangeTeamAccess bool
}

// Create makes an organization with owner as its first (and only) owner,
// in one transaction. Callers decide whether doer may create it.
func (s Service) Create(ctx context.Context, doer, owner *store.User, in CreateInput) (*store.User, error) {
	if err := names.CheckUser("UserName", in.Name); err != nil {
		return nil, err
	}
	if err := checkProfile(in.Email, in.Website); err != nil {
		return nil, err
	}
	if owner.IsOrganization() {
		return nil, apierr.Validation("an organization cannot own an organization")
	}
	org := &store.User{
		Name:                   in.Name,
		FullName:               in.FullName,
		Email:                  in.Email,
		Type:                   store.UserTypeOrganization,
		IsActive:               true,
		Visibility:             in.Visibility,
		Description:            in.Description,
		Website:                in.Website,
		Location:               in.Location,
		MaxRepoCreation:        -1,
		RepoAdminChangeTeamAcc: in.RepoAdminChangeTeamAccess,
	}
	err := s.Store.WithTx(ctx, func(ctx context.Context) error {
		if err := user.NameFree(ctx, s.Store, in.Name); err != nil {
			return err
		}
		if err := s.Store.Users().Create(ctx, org); err != nil {
			return user.NameTakenIfDuplicate(err, in.Name)
		}
		// Every organization has an owners team, as in the reference; its
		// first member makes the creator the owner.
		if err := s.Store.Teams().CreateOwnersTeam(ctx, org.ID); err != nil {
			return err
		}
		owners, err := s.Store.Teams().FindByName(ctx, org.ID, store.OwnersTeamName)
		if err != nil {
			return err
		}
		if err := s.Store.Teams().AddMember(ctx, owners, owner.ID); err != nil {
			return err
		}
		return s.emit(ctx, events.OrgCreated, doer, org)
	})
	if err != nil {
		return nil, err
	}
	return org, nil
}

// EditInput is a change to an organization; nil fields stay as they are.
type EditInput struct {
	FullName                  *string
	Email                     *string
	Description               *string
	Website                   *string
	Location                  *string
	Visibility                *store.Visibility
	RepoAdminChangeTeamAccess *bool
}

// Edit applies in to o.
func (s Service) Edit(ctx context.Context, doer, o *store.User, in EditInput) (*store.User, error) {
	if err := checkProfile(deref(in.Email), deref(in.Website)); err != nil {
		return nil, err
	}
	err := s.Store.WithTx(ctx, func(ctx context.Context) error {
		// Re-read inside the transaction so fields changed meanwhile by
		// someone else are not written back with old values.
		fresh, err := s.Store.Users().FindByIDForUpdate(ctx, o.ID)
		if err != nil {
			return err
		}
		set(&fresh.FullName, in.FullName)
		set(&fresh.Email, in.Email)
		set(&fresh.Description, in.Description)
		set(&fresh.Website, in.Website)
		set(&fresh.Location, in.Location)
		set(&fresh.RepoAdminChangeTeamAcc, in.RepoAdminChangeTeamAccess)
		set(&fresh.Visibility, in.Visibility)
		o = fresh
		if err := s.Store.Users().Update(ctx, fresh); err != nil {
			return err
		}
		return s.emit(ctx, events.OrgEdited, doer, fresh)
	})
	if err != nil {
		return nil, err
	}
	return o, nil
}

func set[T any](dst *T, src *T) {
	if src != nil {
		*dst = *src
	}
}

// Delete deletes o with its memberships. An organization that still owns
// repositories is refused unless purge is set; purge deletes them too
// (through Repos), in the same transaction.
func (s Service) Delete(ctx context.Context, doer, o *store.User, purge bool) error {
	return s.Store.WithTx(ctx, func(ctx context.Context) error {
		if purge {
			if err := s.Repos.DeleteAllOf(ctx, doer, o); err != nil {
				return err
			}
		} else {
			// Counted inside the transaction, right before the delete, so
			// the window for a repository created concurrently is as small
			// as the database allows.
			n, err := s.Store.Repos().CountByOwner(ctx, o.ID)
			if err != nil {
				return err
			}
			if n > 0 {
				return apierr.Validation("organization still has ownership of repositories")
			}
		}
		if err := s.Store.Orgs().DeleteOrgMembers(ctx, o.ID); err != nil {
			return err
		}
		if err := s.Store.Users().Delete(ctx, o.ID); err != nil {
			return err
		}
		return s.emit(ctx, events.OrgDeleted, doer, o)
	})
}

func errNotMember() error { return apierr.NotFound("user is not a member") }

// member loads u's membership of o, 404 when there is none.
func (s Service) member(ctx context.Context, o, u *store.User) (*store.OrgMember, error) {
	m, err := s.Store.Orgs().FindMember(ctx, o.ID, u.ID)
	if errors.Is(err, store.ErrNotFound) {
		return nil, errNotMember()
	}
	return m, err
}

// RemoveMember ends u's membership of o by taking it out of every team of
// o; the last owner cannot go.
func (s Service) RemoveMember(ctx context.Context, doer, o, u *store.User) error {
	return s.Store.WithTx(ctx, func(ctx context.Context) error {
		m, err := s.member(ctx, o, u)
		if err != nil {
			return err
		}
		if m.IsOwner {
			n, err := s.Store.Orgs().CountOwners(ctx, o.ID)
			if err != nil {
				return err
			}
			if n <= 1 {
				return apierr.Validation("cannot remove the last owner of an organization")
			}
		}
		if err := s.Store.Teams().RemoveFromOrg(ctx, o.ID, u.ID); err != nil {
			return err
		}
		return s.emitMember(ctx, events.OrgMemberRemoved, doer, o, u)
	})
}

// Publicize shows u's membership of o to everyone.
func (s Service) Publicize(ctx context.Context, doer, o, u *store.User) error {
	return s.setPublic(ctx, doer, o, u, true, events.OrgMemberPublicized)
}

// Conceal hides u's membership of o from non-members again.
func (s Service) Conceal(ctx context.Context, doer, o, u *store.User) error {
	return s.setPublic(ctx, doer, o, u, false, events.OrgMemberConcealed)
}

// setPublic sets whether u's membership of o is public; one already so
// changes nothing.
func (s Service) setPublic(ctx context.Context, doer, o, u *store.User, public bool, kind events.Kind) error {
	return s.Store.WithTx(ctx, func(ctx context.Context) error {
		m, err := s.member(ctx, o, u)
		if err != nil || m.IsPublic == public {
			return err
		}
		if err := s.Store.Orgs().SetMemberPublic(ctx, o.ID, u.ID, public); err != nil {
			return err
		}
		return s.emitMember(ctx, kind, doer, o, u)
	})
}
