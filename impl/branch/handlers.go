package branch

import "repohost/impl/app"

// Handlers implements the branch operations of restapi.RepositoryAPI.
type Handlers struct{ *app.Deps }
