package repo

import (
	"context"

	"repohost/impl/app"
	"repohost/impl/auth"
	"repohost/impl/convert"
	"repohost/models"
	"repohost/store"
)

// Models renders a page of repositories (owners loaded) with p's permission
// on each. The caller's grants are read once for the page, so the number
// of statements does not grow with the page nor with the caller's teams.
func Models(ctx context.Context, d *app.Deps, p *auth.Principal, base string, repos []*store.Repository) ([]*models.Repository, error) {
	perms, err := d.Access.Repos(ctx, p, repos)
	if err != nil {
		return nil, err
	}
	viewer := app.Viewer(p)
	out := make([]*models.Repository, 0, len(repos))
	for i, r := range repos {
		out = append(out, convert.Repo(d.Links(base), r, perms[i], viewer))
	}
	return out, nil
}
