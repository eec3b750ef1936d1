package repo

import (
	"context"

	"repohost/impl/access"
	"repohost/impl/app"
	"repohost/impl/auth"
	"repohost/impl/convert"
	"repohost/models"
	"repohost/store"
)

// Models renders a page of repositories (owners loaded) with p's permission
// on each. The caller's memberships are read once, so the number of
// statements does not grow with the page.
func Models(ctx context.Context, d *app.Deps, p *auth.Principal, base string, repos []*store.Repository) ([]*models.Repository, error) {
	members := map[int64]*store.OrgMember{}
	if p != nil && !p.IsAdmin() {
		ms, err := d.Store.Orgs().ListMemberships(ctx, p.UserID())
		if err != nil {
			return nil, err
		}
		for _, m := range ms {
			members[m.OrgID] = m
		}
	}
	viewer := app.Viewer(p)
	out := make([]*models.Repository, 0, len(repos))
	for _, r := range repos {
		out = append(out, convert.Repo(d.Links(base), r, access.RepoFor(p, r, members[r.OwnerID]), viewer))
	}
	return out, nil
}
