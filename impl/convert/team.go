package convert

import (
	"sort"

	"repohost/impl/access"
	"repohost/models"
	"repohost/store"
)

// Team renders a team; withOrg includes its organization (t.Org loaded),
// which the reference leaves null on the repository's team list.
func Team(base string, t *store.Team, withOrg bool) *models.Team {
	units := make([]string, 0, len(t.Units))
	unitsMap := make(map[string]string, len(t.Units))
	for u, mode := range t.Units {
		units = append(units, u)
		unitsMap[u] = mode
	}
	sort.Strings(units)
	if m, _ := store.ParseAccessMode(t.Permission); m >= store.AccessAdmin {
		// As the reference renders it: an admin (or owner) team holds
		// every unit at its own mode, the external ones included, whatever
		// levels are stored for them (the external units grant reading
		// only, which the permission rule applies on its own).
		for _, u := range access.Units {
			unitsMap[u.String()] = t.Permission
		}
	}
	out := &models.Team{
		ID:                      t.ID,
		Name:                    t.Name,
		Description:             t.Description,
		Permission:              t.Permission,
		IncludesAllRepositories: t.IncludesAllRepositories,
		CanCreateOrgRepo:        t.CanCreateOrgRepo,
		Units:                   units,
		UnitsMap:                unitsMap,
		Visibility:              t.Visibility.String(),
	}
	if withOrg && t.Org != nil {
		out.Organization = Org(base, t.Org)
	}
	return out
}

// Teams renders a list of teams with their organizations.
func Teams(base string, ts []*store.Team) []*models.Team {
	out := make([]*models.Team, 0, len(ts))
	for _, t := range ts {
		out = append(out, Team(base, t, true))
	}
	return out
}
