package impl

import (
	"repohost/impl/actions"
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
	// Actions also carries the cleanup_actions, stop_endless_tasks,
	// cancel_abandoned_jobs and delete_old_actions tasks, and the
	// consumer that turns pushes into workflow runs.
	Actions actions.Service
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
		Actions:  actions.Service{Deps: d},
	}
}
