package sqlstore

import (
	"context"
	"strings"

	"repohost/store"
)

func (d *DB) Teams() store.TeamStore { return teamStore{d} }

type teamStore struct{ d *DB }

// ownersUnits is the unit map of an owners team: owner access to every unit
// except the external tracker and wiki, which can only be read, as the
// reference sets it up.
func ownersUnits() map[string]string {
	units := map[string]string{}
	for _, u := range []string{"repo.code", "repo.issues", "repo.pulls", "repo.releases", "repo.wiki",
		"repo.projects", "repo.packages", "repo.actions"} {
		units[u] = store.TeamAccessOwner
	}
	units["repo.ext_issues"] = store.TeamAccessRead
	units["repo.ext_wiki"] = store.TeamAccessRead
	return units
}

func (s teamStore) CreateOwnersTeam(ctx context.Context, orgID int64) error {
	t := &store.Team{
		OrgID:                   orgID,
		Name:                    store.OwnersTeamName,
		LowerName:               strings.ToLower(store.OwnersTeamName),
		Permission:              store.TeamAccessOwner,
		IncludesAllRepositories: true,
		CanCreateOrgRepo:        true,
		Units:                   ownersUnits(),
		Visibility:              store.VisibilityPrivate,
	}
	return translate(s.d.conn(ctx).Create(t).Error, "create owners team")
}

// The owners team's members are the organization's owners; other teams have
// no members yet.
const (
	isOrgOwner  = "EXISTS (SELECT 1 FROM org_members WHERE org_members.org_id = teams.org_id AND org_members.user_id = ? AND org_members.is_owner = ?)"
	isOrgMember = "EXISTS (SELECT 1 FROM org_members WHERE org_members.org_id = teams.org_id AND org_members.user_id = ?)"
)

func (s teamStore) ListForRepo(ctx context.Context, orgID, repoID int64, v store.TeamViewer, p store.Page) ([]*store.Team, int64, error) {
	db := s.d.conn(ctx).Model(&store.Team{}).
		Where("teams.org_id = ? AND (teams.includes_all_repositories = ? OR teams.id IN (SELECT team_id FROM team_repos WHERE repo_id = ?))",
			orgID, true, repoID)
	switch {
	case v.IsAdmin:
	case v.UserID == 0:
		db = db.Where("teams.visibility = ?", store.VisibilityPublic)
	default:
		// Public teams to anyone signed in, limited ones to members,
		// everything to owners (private teams to their members: for the
		// owners team, the owners).
		db = db.Where("(teams.visibility = ? OR (teams.visibility = ? AND "+isOrgMember+") OR "+isOrgOwner+")",
			store.VisibilityPublic, store.VisibilityLimited, v.UserID, v.UserID, true)
	}
	var total int64
	if err := db.Count(&total).Error; err != nil {
		return nil, 0, translate(err, "count teams")
	}
	out, err := readPage[store.Team](db, listOrder{{"teams.lower_name", false}, {"teams.id", false}}, p, total)
	return out, total, translate(err, "list teams")
}

func (s teamStore) FindByName(ctx context.Context, orgID int64, name string) (*store.Team, error) {
	var t store.Team
	err := s.d.conn(ctx).Where("org_id = ? AND lower_name = ?", orgID, strings.ToLower(name)).Take(&t).Error
	if err != nil {
		return nil, translate(err, "find team")
	}
	return &t, nil
}

func (s teamStore) FindByIDs(ctx context.Context, ids []int64) (map[int64]*store.Team, error) {
	out := map[int64]*store.Team{}
	if len(ids) == 0 {
		return out, nil
	}
	var ts []*store.Team
	if err := s.d.conn(ctx).Where("id IN ?", ids).Find(&ts).Error; err != nil {
		return nil, translate(err, "find teams")
	}
	for _, t := range ts {
		out[t.ID] = t
	}
	return out, nil
}

func (s teamStore) UserTeamIDs(ctx context.Context, orgID, userID int64) ([]int64, error) {
	var ids []int64
	err := s.d.conn(ctx).Model(&store.Team{}).
		Where("teams.org_id = ? AND teams.lower_name = ? AND "+isOrgOwner, orgID, strings.ToLower(store.OwnersTeamName), userID, true).
		Pluck("teams.id", &ids).Error
	return ids, translate(err, "list user teams")
}
