package contents

import "repohost/impl/app"

// Handlers implements the contents operations of restapi.RepositoryAPI.
type Handlers struct{ *app.Deps }
