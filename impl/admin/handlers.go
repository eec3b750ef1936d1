package admin

import (
	"repohost/impl/actions"
	"repohost/impl/app"
	"repohost/impl/org"
	"repohost/impl/user"
)

// Handlers implements restapi.AdminAPI. It changes accounts and
// organizations only through their areas' services.
type Handlers struct {
	*app.Deps
	Users user.Service
	Orgs  org.Service
	// Actions lists and manages runners, runs and jobs site-wide.
	Actions actions.Service
}
