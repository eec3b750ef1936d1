package admin

import "repohost/impl/app"

// Handlers implements restapi.AdminAPI.
type Handlers struct{ *app.Deps }
