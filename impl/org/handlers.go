package org

import (
	"repohost/impl/apierr"
	"repohost/impl/app"
	"repohost/models"
	"repohost/store"
)

// Handlers implements restapi.OrganizationAPI.
type Handlers struct {
	*app.Deps
	Orgs Service
}

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}

// visibility reads an optional visibility; absent or "" is nil.
func visibility(v *string) *store.Visibility {
	if v == nil || *v == "" {
		return nil
	}
	// The spec's enum already rejected anything else.
	vis, _ := store.ParseVisibility(*v)
	return &vis
}

// CreateInputFrom reads the body of both routes that create an
// organization (POST /orgs and POST /admin/users/{username}/orgs).
func CreateInputFrom(opt *models.CreateOrgOption) (CreateInput, error) {
	if opt == nil || opt.UserName == nil {
		return CreateInput{}, apierr.Validation("[UserName]: Required")
	}
	in := CreateInput{
		Name:                      *opt.UserName,
		FullName:                  deref(opt.FullName),
		Email:                     deref(opt.Email),
		Description:               deref(opt.Description),
		Website:                   deref(opt.Website),
		Location:                  deref(opt.Location),
		RepoAdminChangeTeamAccess: deref(opt.RepoAdminChangeTeamAccess),
	}
	if vis := visibility(opt.Visibility); vis != nil {
		in.Visibility = *vis
	}
	return in, nil
}

func editInput(opt *models.EditOrgOption) EditInput {
	return EditInput{
		FullName:                  opt.FullName,
		Email:                     opt.Email,
		Description:               opt.Description,
		Website:                   opt.Website,
		Location:                  opt.Location,
		Visibility:                visibility(opt.Visibility),
		RepoAdminChangeTeamAccess: opt.RepoAdminChangeTeamAccess,
	}
}
