package repo

import "repohost/impl/app"

// Handlers implements restapi.RepositoryAPI.
type Handlers struct{ *app.Deps }
