package impl

import (
	"repohost/impl/app"
	"repohost/impl/keys"
	"repohost/impl/org"
	"repohost/impl/packages"
	"repohost/impl/repo"
	"repohost/impl/user"
)

// Services are the areas' write paths, wired to one another once for
// every user of d (the handlers, the command line, the API tests).
type Services struct {
	Users user.Service
	Orgs  org.Service
	Keys  keys.Service
	// Packages also carries the cleanup_packages task (CleanupBlobs).
	Packages packages.Service
}

// NewServices wires the services over d.
func NewServices(d *app.Deps) Services {
	repos := repo.Service{Deps: d}
	orgs := org.Service{Deps: d, Repos: repos}
	return Services{
		Users:    user.Service{Deps: d, Repos: repos, Orgs: orgs},
		Orgs:     orgs,
		Keys:     keys.Service{Deps: d},
		Packages: packages.Service{Deps: d},
	}
}
