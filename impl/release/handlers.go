package release

import "repohost/impl/app"

// Handlers implements the release operations of restapi.RepositoryAPI.
type Handlers struct{ *app.Deps }
