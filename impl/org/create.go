package org

import (
	"context"
	"errors"
	"net/mail"
	"net/url"
	"strings"

	"repohost/impl/apierr"
	"repohost/impl/app"
	"repohost/impl/names"
	"repohost/models"
	"repohost/store"
)

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}

// visibility reads an optional visibility; absent or "" keeps current.
func visibility(v *string, current store.Visibility) store.Visibility {
	if v == nil || *v == "" {
		return current
	}
	// The spec's enum already rejected anything else.
	vis, _ := store.ParseVisibility(*v)
	return vis
}

// checkProfile validates the free-form profile fields shared by create and
// edit; empty values clear a field and are always fine.
func checkProfile(email, website *string) error {
	if e := deref(email); e != "" {
		a, err := mail.ParseAddress(e)
		if err != nil || a.Address != e || !strings.Contains(e, "@") {
			return apierr.Validation("e-mail invalid [email: %s]", e)
		}
	}
	if w := deref(website); w != "" {
		u, err := url.Parse(w)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return apierr.Validation("[Website]: invalid URL")
		}
	}
	return nil
}

func errNameTaken(name string) error {
	return apierr.Validation("user already exists [name: %s]", name)
}

// Create makes an organization with owner as its first (and only) owner, in
// one transaction. Callers decide whether the caller may create it.
func Create(ctx context.Context, d *app.Deps, owner *store.User, opt *models.CreateOrgOption) (*store.User, error) {
	if opt == nil || opt.UserName == nil {
		return nil, apierr.Validation("[UserName]: Required")
	}
	name := *opt.UserName
	if err := names.CheckUser("UserName", name); err != nil {
		return nil, err
	}
	if err := checkProfile(opt.Email, opt.Website); err != nil {
		return nil, err
	}
	if owner.IsOrganization() {
		return nil, apierr.Validation("an organization cannot own an organization")
	}
	org := &store.User{
		Name:                   name,
		FullName:               deref(opt.FullName),
		Email:                  deref(opt.Email),
		Type:                   store.UserTypeOrganization,
		IsActive:               true,
		Visibility:             visibility(opt.Visibility, store.VisibilityPublic),
		Description:            deref(opt.Description),
		Website:                deref(opt.Website),
		Location:               deref(opt.Location),
		MaxRepoCreation:        -1,
		RepoAdminChangeTeamAcc: deref(opt.RepoAdminChangeTeamAccess),
	}
	err := d.Store.WithTx(ctx, func(ctx context.Context) error {
		// Users and organizations share one namespace.
		if _, err := d.Store.Users().FindByName(ctx, name); err == nil {
			return errNameTaken(name)
		} else if !errors.Is(err, store.ErrNotFound) {
			return err
		}
		if err := d.Store.Users().Create(ctx, org); err != nil {
			if errors.Is(err, store.ErrDuplicate) {
				return errNameTaken(name)
			}
			return err
		}
		if err := d.Store.Orgs().AddMember(ctx, &store.OrgMember{OrgID: org.ID, UserID: owner.ID, IsOwner: true}); err != nil {
			return err
		}
		// Every organization has an owners team, as in the reference.
		return d.Store.Teams().CreateOwnersTeam(ctx, org.ID)
	})
	if err != nil {
		return nil, err
	}
	return org, nil
}
