package repo

import "repohost/impl/app"

// Handlers implements the repository operations of restapi.RepositoryAPI
// (impl/branch, impl/contents and impl/release implement the rest).
type Handlers struct{ *app.Deps }

func (h Handlers) svc() Service { return Service{h.Deps} }
