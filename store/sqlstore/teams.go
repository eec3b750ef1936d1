package sqlstore

import (
	"context"
	"strings"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

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

// teamVisibleTo keeps the teams v may see (the service spec's rule): every
// team for site admins and the organization's owners, public teams for
// anyone signed in, limited ones for the organization's members, private
// ones for their own members. An anonymous viewer sees none... except that
// it never reaches a team list; UserID -1 stands for "signed in, nothing
// more" (a token limited to public data).
func teamVisibleTo(db *gorm.DB, v store.TeamViewer) *gorm.DB {
	switch {
	case v.IsAdmin:
		return db
	case v.UserID == 0:
		return db.Where("teams.visibility = ?", store.VisibilityPublic)
	}
	return db.Where(`(teams.visibility = ?
		OR (teams.visibility = ? AND EXISTS (SELECT 1 FROM org_members WHERE org_members.org_id = teams.org_id AND org_members.user_id = ?))
		OR EXISTS (SELECT 1 FROM org_members WHERE org_members.org_id = teams.org_id AND org_members.user_id = ? AND org_members.is_owner = ?)
		OR EXISTS (SELECT 1 FROM team_users WHERE team_users.team_id = teams.id AND team_users.user_id = ?))`,
		store.VisibilityPublic, store.VisibilityLimited, v.UserID, v.UserID, true, v.UserID)
}

var byTeamName = listOrder{{"teams.lower_name", false}, {"teams.id", false}}

func (s teamStore) ListForRepo(ctx context.Context, orgID, repoID int64, v store.TeamViewer, p store.Page) ([]*store.Team, int64, error) {
	db := s.d.conn(ctx).Model(&store.Team{}).
		Where("teams.org_id = ? AND (teams.includes_all_repositories = ? OR teams.id IN (SELECT team_id FROM team_repos WHERE repo_id = ?))",
			orgID, true, repoID)
	db = teamVisibleTo(db, v)
	var total int64
	if err := db.Count(&total).Error; err != nil {
		return nil, 0, translate(err, "count teams")
	}
	out, err := readPage[store.Team](db, byTeamName, p, total)
	return out, total, translate(err, "list teams")
}

func (s teamStore) List(ctx context.Context, orgID int64, v store.TeamViewer, keyword string, includeDesc bool, p store.Page) ([]*store.Team, int64, error) {
	db := s.d.conn(ctx).Model(&store.Team{}).Where("teams.org_id = ?", orgID)
	if keyword != "" {
		pat := likePattern(keyword)
		if includeDesc {
			db = db.Where(`(teams.lower_name LIKE ? ESCAPE '\' OR LOWER(teams.description) LIKE ? ESCAPE '\')`, pat, pat)
		} else {
			db = db.Where(`teams.lower_name LIKE ? ESCAPE '\'`, pat)
		}
	}
	db = teamVisibleTo(db, v)
	var total int64
	if err := db.Count(&total).Error; err != nil {
		return nil, 0, translate(err, "count teams")
	}
	out, err := readPage[store.Team](db.Preload("Org"), byTeamName, p, total)
	return out, total, translate(err, "list teams")
}

func (s teamStore) ListForUser(ctx context.Context, userID int64, orgVisibilities []store.Visibility, p store.Page) ([]*store.Team, int64, error) {
	db := s.d.conn(ctx).Model(&store.Team{}).
		Where("teams.id IN (SELECT team_id FROM team_users WHERE user_id = ?)", userID)
	if len(orgVisibilities) > 0 {
		db = db.Where("teams.org_id IN (SELECT id FROM users WHERE visibility IN ?)", orgVisibilities)
	}
	var total int64
	if err := db.Count(&total).Error; err != nil {
		return nil, 0, translate(err, "count teams")
	}
	out, err := readPage[store.Team](db.Preload("Org"),
		listOrder{{"teams.org_id", false}, {"teams.lower_name", false}, {"teams.id", false}}, p, total)
	return out, total, translate(err, "list teams")
}

func (s teamStore) Create(ctx context.Context, t *store.Team) error {
	t.LowerName = strings.ToLower(t.Name)
	return translate(s.d.conn(ctx).Omit("Org").Create(t).Error, "create team")
}

func (s teamStore) Update(ctx context.Context, t *store.Team) error {
	t.LowerName = strings.ToLower(t.Name)
	res := s.d.conn(ctx).Model(t).Select("name", "lower_name", "description", "permission",
		"includes_all_repositories", "can_create_org_repo", "units", "visibility", "updated_at").Omit("Org").Updates(t)
	return affected(res, "update team")
}

func (s teamStore) Delete(ctx context.Context, t *store.Team) error {
	var users []int64
	db := s.d.conn(ctx)
	if err := db.Model(&store.TeamUser{}).Where("team_id = ?", t.ID).Pluck("user_id", &users).Error; err != nil {
		return translate(err, "list team members")
	}
	if err := db.Where("team_id = ?", t.ID).Delete(&store.TeamUser{}).Error; err != nil {
		return translate(err, "delete team members")
	}
	if err := db.Exec("DELETE FROM team_repos WHERE team_id = ?", t.ID).Error; err != nil {
		return translate(err, "delete team repositories")
	}
	if err := affected(db.Delete(&store.Team{}, t.ID), "delete team"); err != nil {
		return err
	}
	for _, u := range users {
		if err := s.syncOrgMember(ctx, t.OrgID, u); err != nil {
			return err
		}
	}
	return nil
}

func (s teamStore) FindByID(ctx context.Context, id int64) (*store.Team, error) {
	var t store.Team
	if err := s.d.conn(ctx).Preload("Org").Take(&t, id).Error; err != nil {
		return nil, translate(err, "find team")
	}
	return &t, nil
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

func (s teamStore) UserTeams(ctx context.Context, orgID, userID int64) ([]*store.Team, error) {
	var out []*store.Team
	err := s.d.conn(ctx).Where("org_id = ? AND id IN (SELECT team_id FROM team_users WHERE user_id = ? AND org_id = ?)",
		orgID, userID, orgID).Order("lower_name").Find(&out).Error
	return out, translate(err, "list user teams")
}

func (s teamStore) UserTeamIDs(ctx context.Context, orgID, userID int64) ([]int64, error) {
	var ids []int64
	err := s.d.conn(ctx).Model(&store.TeamUser{}).Where("org_id = ? AND user_id = ?", orgID, userID).
		Order("team_id").Pluck("team_id", &ids).Error
	return ids, translate(err, "list user teams")
}

// syncOrgMember makes userID's row of org_members agree with its teams in
// orgID: none when in no team, an owner when in the owners team. Whether
// the membership is public survives as long as the membership does.
func (s teamStore) syncOrgMember(ctx context.Context, orgID, userID int64) error {
	var row struct {
		Teams  int64
		Owners int64
	}
	err := s.d.conn(ctx).Raw(`SELECT COUNT(*) AS teams,
		COALESCE(SUM(CASE WHEN teams.lower_name = ? THEN 1 ELSE 0 END), 0) AS owners
		FROM team_users JOIN teams ON teams.id = team_users.team_id
		WHERE team_users.org_id = ? AND team_users.user_id = ?`,
		strings.ToLower(store.OwnersTeamName), orgID, userID).Scan(&row).Error
	if err != nil {
		return translate(err, "count memberships")
	}
	db := s.d.conn(ctx)
	if row.Teams == 0 {
		err = db.Where("org_id = ? AND user_id = ?", orgID, userID).Delete(&store.OrgMember{}).Error
		return translate(err, "remove member")
	}
	err = db.Clauses(clause.OnConflict{
		Columns:   []clause.Column{{Name: "org_id"}, {Name: "user_id"}},
		DoUpdates: clause.AssignmentColumns([]string{"is_owner"}),
	}).Create(&store.OrgMember{OrgID: orgID, UserID: userID, IsOwner: row.Owners > 0}).Error
	return translate(err, "add member")
}

func (s teamStore) AddMember(ctx context.Context, t *store.Team, userID int64) error {
	err := s.d.conn(ctx).Clauses(onConflictIgnore).Create(&store.TeamUser{TeamID: t.ID, UserID: userID, OrgID: t.OrgID}).Error
	if err != nil {
		return translate(err, "add team member")
	}
	return s.syncOrgMember(ctx, t.OrgID, userID)
}

func (s teamStore) RemoveMember(ctx context.Context, t *store.Team, userID int64) error {
	res := s.d.conn(ctx).Where("team_id = ? AND user_id = ?", t.ID, userID).Delete(&store.TeamUser{})
	if err := affected(res, "remove team member"); err != nil {
		return err
	}
	return s.syncOrgMember(ctx, t.OrgID, userID)
}

func (s teamStore) RemoveFromOrg(ctx context.Context, orgID, userID int64) error {
	if err := s.d.conn(ctx).Where("org_id = ? AND user_id = ?", orgID, userID).Delete(&store.TeamUser{}).Error; err != nil {
		return translate(err, "remove from teams")
	}
	return s.syncOrgMember(ctx, orgID, userID)
}

func (s teamStore) IsMember(ctx context.Context, teamID, userID int64) (bool, error) {
	var n int64
	err := s.d.conn(ctx).Model(&store.TeamUser{}).Where("team_id = ? AND user_id = ?", teamID, userID).Count(&n).Error
	return n > 0, translate(err, "find team member")
}

func (s teamStore) CountMembers(ctx context.Context, teamID int64) (int64, error) {
	var n int64
	err := s.d.conn(ctx).Model(&store.TeamUser{}).Where("team_id = ?", teamID).Count(&n).Error
	return n, translate(err, "count team members")
}

func (s teamStore) ListMembers(ctx context.Context, teamID int64, p store.Page) ([]*store.User, int64, error) {
	db := s.d.conn(ctx).Model(&store.User{}).
		Where("users.id IN (SELECT user_id FROM team_users WHERE team_id = ?)", teamID)
	var total int64
	if err := db.Count(&total).Error; err != nil {
		return nil, 0, translate(err, "count team members")
	}
	out, err := readPage[store.User](db, byLowerName, p, total)
	return out, total, translate(err, "list team members")
}

func (s teamStore) MemberIDs(ctx context.Context, teamID int64) ([]int64, error) {
	ids := []int64{}
	err := s.d.conn(ctx).Table("team_users").Where("team_id = ?", teamID).Order("user_id").Pluck("user_id", &ids).Error
	return ids, translate(err, "team member ids")
}

func (s teamStore) AddRepo(ctx context.Context, teamID, repoID int64) error {
	err := s.d.conn(ctx).Exec(`INSERT INTO team_repos (team_id, repo_id) VALUES (?, ?) ON CONFLICT DO NOTHING`, teamID, repoID).Error
	return translate(err, "add team repository")
}

func (s teamStore) RemoveRepo(ctx context.Context, teamID, repoID int64) error {
	return affected(s.d.conn(ctx).Exec(`DELETE FROM team_repos WHERE team_id = ? AND repo_id = ?`, teamID, repoID), "remove team repository")
}

func (s teamStore) UnlinkRepo(ctx context.Context, repoID int64) error {
	return translate(s.d.conn(ctx).Exec(`DELETE FROM team_repos WHERE repo_id = ?`, repoID).Error, "unlink repository")
}

func (s teamStore) HasRepo(ctx context.Context, teamID, repoID int64) (bool, error) {
	var n int64
	err := s.d.conn(ctx).Table("team_repos").Where("team_id = ? AND repo_id = ?", teamID, repoID).Count(&n).Error
	return n > 0, translate(err, "find team repository")
}

func (s teamStore) ListRepos(ctx context.Context, t *store.Team, v store.RepoViewer, p store.Page) ([]*store.Repository, int64, error) {
	db := s.d.conn(ctx).Model(&store.Repository{}).Where("repositories.owner_id = ?", t.OrgID)
	if !v.IsAdmin || v.PublicOnly {
		db = visibleTo(db, v)
	}
	if !t.IncludesAllRepositories {
		db = db.Where("repositories.id IN (SELECT repo_id FROM team_repos WHERE team_id = ?)", t.ID)
	}
	var total int64
	if err := db.Count(&total).Error; err != nil {
		return nil, 0, translate(err, "count team repositories")
	}
	out, err := readPage[store.Repository](db.Select("repositories.*"), listOrder{{"repositories.id", false}}, p, total)
	if err != nil {
		return nil, 0, translate(err, "list team repositories")
	}
	return out, total, s.d.withOwners(ctx, out)
}
