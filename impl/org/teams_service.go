package org

import (
	"context"
	"errors"
	"regexp"
	"strings"

	"repohost/impl/access"
	"repohost/impl/apierr"
	"repohost/impl/events"
	"repohost/impl/user"
	"repohost/store"
)

// TeamInput describes a team to create, or a change to one (PATCH): nil
// fields stay as they are.
type TeamInput struct {
	Name                    *string
	Description             *string
	Permission              *string // read, write or admin
	IncludesAllRepositories *bool
	CanCreateOrgRepo        *bool
	Units                   []string          // deprecated: these units at the team's mode
	UnitsMap                map[string]string // unit name to level
	Visibility              *store.Visibility
}

// unitsFor turns a team's mode with units_map (preferred) or the
// deprecated units list into the stored unit map and the team's mode, as
// the reference does: at admin and above every unit is admin (the
// external ones read); below, a units_map sets each level and the team's
// mode becomes the lowest level it grants (ignoring the external units),
// none when it grants nothing. changed tells whether units were given.
func unitsFor(mode store.AccessMode, units []string, unitsMap map[string]string) (map[string]string, store.AccessMode, bool, error) {
	out := map[string]string{}
	if mode >= store.AccessAdmin {
		for _, u := range access.Units {
			out[u.String()] = store.AccessAdmin.String()
			if u.External() {
				out[u.String()] = store.AccessRead.String()
			}
		}
		return out, mode, true, nil
	}
	switch {
	case unitsMap != nil:
		lowest := store.AccessNone
		for name, level := range unitsMap {
			u, ok := access.ParseUnit(name)
			if !ok {
				return nil, 0, false, apierr.Validation("[UnitsMap]: unknown unit %q", name)
			}
			m, ok := store.ParseAccessMode(level)
			if !ok {
				return nil, 0, false, apierr.Validation("[UnitsMap]: unknown access level %q", level)
			}
			if u.External() && m > store.AccessRead {
				m = store.AccessRead
			}
			out[name] = m.String()
			if m != store.AccessNone && !u.External() && (lowest == store.AccessNone || m < lowest) {
				lowest = m
			}
		}
		return out, lowest, true, nil
	case units != nil:
		for _, name := range units {
			u, ok := access.ParseUnit(name)
			if !ok {
				return nil, 0, false, apierr.Validation("[Units]: unknown unit %q", name)
			}
			m := mode
			if u.External() && m > store.AccessRead {
				m = store.AccessRead
			}
			out[name] = m.String()
		}
		return out, mode, true, nil
	}
	return nil, mode, false, nil
}

func parseTeamMode(s string) (store.AccessMode, error) {
	m, ok := store.ParseAccessMode(s)
	if !ok || m < store.AccessRead || m > store.AccessAdmin {
		return 0, apierr.Validation("[Permission]: must be one of read, write, admin")
	}
	return m, nil
}

// teamName is the reference's AlphaDashDot binding for team names.
var teamName = regexp.MustCompile(`^[\pL\pN_.-]+$`)

func checkTeamName(name string) error {
	switch {
	case strings.TrimSpace(name) == "":
		return apierr.Validation("[Name]: Required")
	case len(name) > 255:
		return apierr.Validation("[Name]: MaxSize")
	case !teamName.MatchString(name):
		return apierr.Validation("[Name]: AlphaDashDot")
	}
	return nil
}

func (s Service) emitTeam(ctx context.Context, kind events.Kind, doer *store.User, t *store.Team) error {
	return s.Events.Emit(ctx, kind, 0, events.ActorID(doer), events.Named{ID: t.ID, Name: t.Name})
}

// CreateTeam makes a team of o; by default it is private, has no
// repository and reads nothing it is not given.
func (s Service) CreateTeam(ctx context.Context, doer, o *store.User, in TeamInput) (*store.Team, error) {
	name := deref(in.Name)
	if err := checkTeamName(name); err != nil {
		return nil, err
	}
	mode := store.AccessRead
	if in.Permission != nil && *in.Permission != "" {
		var err error
		if mode, err = parseTeamMode(*in.Permission); err != nil {
			return nil, err
		}
	} else if in.Units != nil && in.UnitsMap == nil {
		// The reference reads an absent permission as "none", and gives
		// the listed units that mode: the team is rendered with
		// permission "none" and those units at none.
		mode = store.AccessNone
	}
	units, mode, given, err := unitsFor(mode, in.Units, in.UnitsMap)
	if err != nil {
		return nil, err
	}
	if !given {
		// Neither units_map nor units: every unit at the team's mode.
		all := make([]string, 0, len(access.Units))
		for _, u := range access.Units {
			all = append(all, u.String())
		}
		units, mode, _, _ = unitsFor(mode, all, nil)
	}
	t := &store.Team{
		OrgID: o.ID, Name: name, Description: deref(in.Description), Permission: mode.String(),
		IncludesAllRepositories: deref(in.IncludesAllRepositories), CanCreateOrgRepo: deref(in.CanCreateOrgRepo),
		Units: units, Visibility: store.VisibilityPrivate,
	}
	if in.Visibility != nil {
		t.Visibility = *in.Visibility
	}
	err = s.Store.WithTx(ctx, func(ctx context.Context) error {
		if err := s.Store.Teams().Create(ctx, t); err != nil {
			return teamNameTaken(err, name)
		}
		return s.emitTeam(ctx, events.TeamCreated, doer, t)
	})
	if err != nil {
		return nil, err
	}
	t.Org = o
	return t, nil
}

func teamNameTaken(err error, name string) error {
	if errors.Is(err, store.ErrDuplicate) {
		return apierr.Validation("team already exists [org_id: %s]", name)
	}
	return err
}

// EditTeam applies in to t with the reference's rules: the owners team
// keeps its name and owner permission and can always create repositories;
// permission (and with it includes_all_repositories) applies
// only when given; units_map or units replace the units; visibility stays
// unless given.
func (s Service) EditTeam(ctx context.Context, doer *store.User, t *store.Team, in TeamInput) (*store.Team, error) {
	fresh := *t
	if in.Name != nil && *in.Name != "" {
		if err := checkTeamName(*in.Name); err != nil {
			return nil, err
		}
		if t.IsOwnersTeam() && !strings.EqualFold(*in.Name, t.Name) {
			return nil, apierr.Validation("the owners team cannot be renamed")
		}
		fresh.Name = *in.Name
	}
	set(&fresh.Description, in.Description)
	set(&fresh.CanCreateOrgRepo, in.CanCreateOrgRepo)
	set(&fresh.Visibility, in.Visibility)
	if t.IsOwnersTeam() {
		fresh.CanCreateOrgRepo = true
	} else {
		mode, _ := store.ParseAccessMode(t.Permission)
		if in.Permission != nil && *in.Permission != "" {
			var err error
			if mode, err = parseTeamMode(*in.Permission); err != nil {
				return nil, err
			}
			// The reference applies includes_all_repositories only
			// together with a permission.
			set(&fresh.IncludesAllRepositories, in.IncludesAllRepositories)
		}
		units, mode, given, err := unitsFor(mode, in.Units, in.UnitsMap)
		if err != nil {
			return nil, err
		}
		if given {
			fresh.Units = units
		}
		fresh.Permission = mode.String()
	}
	err := s.Store.WithTx(ctx, func(ctx context.Context) error {
		if err := s.Store.Teams().Update(ctx, &fresh); err != nil {
			return teamNameTaken(err, fresh.Name)
		}
		return s.emitTeam(ctx, events.TeamEdited, doer, &fresh)
	})
	if err != nil {
		return nil, err
	}
	return &fresh, nil
}

// DeleteTeam deletes t; the owners team cannot go.
func (s Service) DeleteTeam(ctx context.Context, doer *store.User, t *store.Team) error {
	if t.IsOwnersTeam() {
		return apierr.Validation("the owners team cannot be deleted")
	}
	return s.Store.WithTx(ctx, func(ctx context.Context) error {
		if err := s.Store.Teams().Delete(ctx, t); err != nil {
			return err
		}
		return s.emitTeam(ctx, events.TeamDeleted, doer, t)
	})
}

func teamGrant(t *store.Team, u *store.User) events.TeamGrant {
	n := user.Named(u)
	return events.TeamGrant{Team: events.Named{ID: t.ID, Name: t.Name}, User: &n}
}

// AddTeamMember puts the individual u in t (nothing when already there).
// Joining a first team of the organization makes u a member of it.
func (s Service) AddTeamMember(ctx context.Context, doer *store.User, t *store.Team, u *store.User) error {
	if u.IsOrganization() {
		return apierr.Validation("an organization cannot be a member of an organization")
	}
	return s.Store.WithTx(ctx, func(ctx context.Context) error {
		in, err := s.Store.Teams().IsMember(ctx, t.ID, u.ID)
		if err != nil || in {
			return err
		}
		// A user the organization blocks cannot join its teams.
		if err := s.RefuseBlocked(ctx, u, t.OrgID); err != nil {
			return err
		}
		_, err = s.Store.Orgs().FindMember(ctx, t.OrgID, u.ID)
		wasMember := err == nil
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			return err
		}
		if err := s.Store.Teams().AddMember(ctx, t, u.ID); err != nil {
			return err
		}
		if err := s.Events.Emit(ctx, events.TeamMemberAdded, 0, events.ActorID(doer), teamGrant(t, u)); err != nil {
			return err
		}
		if wasMember {
			return nil
		}
		return s.emitMember(ctx, events.OrgMemberAdded, doer, t.Org, u)
	})
}

// RemoveTeamMember takes u out of t; the owners team keeps its last
// member. Leaving the last team of the organization ends the membership.
func (s Service) RemoveTeamMember(ctx context.Context, doer *store.User, t *store.Team, u *store.User) error {
	return s.Store.WithTx(ctx, func(ctx context.Context) error {
		if t.IsOwnersTeam() {
			n, err := s.Store.Teams().CountMembers(ctx, t.ID)
			if err != nil {
				return err
			}
			in, err := s.Store.Teams().IsMember(ctx, t.ID, u.ID)
			if err != nil {
				return err
			}
			if in && n <= 1 {
				return apierr.Validation("cannot remove the last member of the owners team")
			}
		}
		if err := s.Store.Teams().RemoveMember(ctx, t, u.ID); err != nil {
			return err
		}
		if err := s.Events.Emit(ctx, events.TeamMemberRemoved, 0, events.ActorID(doer), teamGrant(t, u)); err != nil {
			return err
		}
		if _, err := s.Store.Orgs().FindMember(ctx, t.OrgID, u.ID); errors.Is(err, store.ErrNotFound) {
			return s.emitMember(ctx, events.OrgMemberRemoved, doer, t.Org, u)
		} else if err != nil {
			return err
		}
		return nil
	})
}
