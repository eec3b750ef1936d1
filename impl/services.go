package impl

import (
	"context"

	"repohost/impl/app"
	"repohost/impl/org"
	"repohost/impl/repo"
	"repohost/impl/user"
	"repohost/store"
)

// Services are the areas' write paths, wired to one another once for
// every user of d (the handlers, the command line, the API tests).
type Services struct {
	Users user.Service
	Orgs  org.Service
}

// NewServices wires the services over d.
func NewServices(d *app.Deps) Services {
	repos := ownedRepos{d}
	orgs := org.Service{Deps: d, Repos: repos}
	return Services{
		Users: user.Service{Deps: d, Repos: repos, Orgs: orgs},
		Orgs:  orgs,
	}
}

// ownedRepos is the user.RepositoryRemover over the repository area's
// current deletion code, until the repository service takes its place:
// the rows go in the caller's transaction, the files once it commits.
type ownedRepos struct{ d *app.Deps }

func (o ownedRepos) DeleteAllOf(ctx context.Context, _, owner *store.User) error {
	repos, err := o.d.Store.Repos().ListByOwner(ctx, owner.ID)
	if err != nil {
		return err
	}
	for _, r := range repos {
		if err := o.d.Store.Repos().Delete(ctx, r.ID); err != nil {
			return err
		}
		o.d.Store.AfterCommit(ctx, func() { repo.RemoveFiles(o.d, owner.Name, r.Name, r.ID) })
	}
	return nil
}
