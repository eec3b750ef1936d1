package user

import "repohost/impl/app"

// Handlers implements restapi.UserAPI.
type Handlers struct {
	*app.Deps
	Users Service
}
