package sqlstore

import (
	"context"

	"gorm.io/gorm/clause"

	"repohost/store"
)

type accessStore struct{ d *DB }

func (s accessStore) Grants(ctx context.Context, userID int64, orgIDs, repoIDs []int64) (*store.Grants, error) {
	g := &store.Grants{TeamRepos: map[int64][]int64{}, Collaborations: map[int64]store.AccessMode{}}
	if userID <= 0 || len(repoIDs) == 0 {
		return g, nil
	}
	db := s.d.conn(ctx)
	if orgIDs != nil {
		// Run even for an empty list (0 is no organization's id), so a
		// list page's statement count does not depend on its owners.
		orgIDs = append(orgIDs, 0)
		err := db.Where("org_id IN ? AND id IN (SELECT team_id FROM team_users WHERE user_id = ? AND org_id IN ?)",
			orgIDs, userID, orgIDs).Find(&g.Teams).Error
		if err != nil {
			return nil, translate(err, "list teams")
		}
	}
	// The teams' repository links and the collaborations in one statement:
	// kind 0 rows are links (team id in ref), kind 1 collaborations (mode).
	var rows []struct {
		Kind   int
		RepoID int64
		Ref    int64
	}
	err := db.Raw(`SELECT 0 AS kind, team_repos.repo_id AS repo_id, team_repos.team_id AS ref
		FROM team_repos JOIN team_users ON team_users.team_id = team_repos.team_id
		WHERE team_users.user_id = ? AND team_repos.repo_id IN ?
		UNION ALL
		SELECT 1, repo_id, mode FROM collaborations WHERE user_id = ? AND repo_id IN ?`,
		userID, repoIDs, userID, repoIDs).Scan(&rows).Error
	if err != nil {
		return nil, translate(err, "list grants")
	}
	for _, r := range rows {
		if r.Kind == 0 {
			g.TeamRepos[r.RepoID] = append(g.TeamRepos[r.RepoID], r.Ref)
		} else {
			g.Collaborations[r.RepoID] = store.AccessMode(r.Ref)
		}
	}
	return g, nil
}

func (s accessStore) SetCollaborator(ctx context.Context, c *store.Collaboration) error {
	err := s.d.conn(ctx).Clauses(clause.OnConflict{
		Columns:   []clause.Column{{Name: "repo_id"}, {Name: "user_id"}},
		DoUpdates: clause.AssignmentColumns([]string{"mode"}),
	}).Create(c).Error
	return translate(err, "set collaborator")
}

func (s accessStore) RemoveCollaborator(ctx context.Context, repoID, userID int64) error {
	res := s.d.conn(ctx).Where("repo_id = ? AND user_id = ?", repoID, userID).Delete(&store.Collaboration{})
	return affected(res, "remove collaborator")
}

func (s accessStore) FindCollaborator(ctx context.Context, repoID, userID int64) (*store.Collaboration, error) {
	var c store.Collaboration
	if err := s.d.conn(ctx).Where("repo_id = ? AND user_id = ?", repoID, userID).Take(&c).Error; err != nil {
		return nil, translate(err, "find collaborator")
	}
	return &c, nil
}

func (s accessStore) ListCollaborators(ctx context.Context, repoID int64, p store.Page) ([]*store.Collaborator, int64, error) {
	db := s.d.conn(ctx).Model(&store.User{}).
		Joins("JOIN collaborations ON collaborations.user_id = users.id").
		Where("collaborations.repo_id = ?", repoID)
	var total int64
	if err := db.Count(&total).Error; err != nil {
		return nil, 0, translate(err, "count collaborators")
	}
	type row struct {
		store.User
		CollabMode store.AccessMode
	}
	rows, err := readPage[row](db.Select("users.*, collaborations.mode AS collab_mode"), byLowerName, p, total)
	if err != nil {
		return nil, 0, translate(err, "list collaborators")
	}
	out := make([]*store.Collaborator, 0, len(rows))
	for _, r := range rows {
		u := r.User
		out = append(out, &store.Collaborator{User: &u, Mode: r.CollabMode})
	}
	return out, total, nil
}

func (s accessStore) ListGrantees(ctx context.Context, repoID, orgID int64) ([]*store.Grantee, []*store.Team, error) {
	db := s.d.conn(ctx)
	var teams []*store.Team
	if orgID > 0 {
		err := db.Where("org_id = ? AND (includes_all_repositories = ? OR id IN (SELECT team_id FROM team_repos WHERE repo_id = ?))",
			orgID, true, repoID).Find(&teams).Error
		if err != nil {
			return nil, nil, translate(err, "list teams")
		}
	}
	teamIDs := make([]int64, 0, len(teams))
	for _, t := range teams {
		teamIDs = append(teamIDs, t.ID)
	}
	var rows []struct {
		UserID int64
		Kind   int
		Ref    int64
	}
	err := db.Raw(`SELECT user_id, 1 AS kind, mode AS ref FROM collaborations WHERE repo_id = ?
		UNION ALL SELECT user_id, 0, team_id FROM team_users WHERE team_id IN ?`, repoID, append(teamIDs, 0)).Scan(&rows).Error
	if err != nil {
		return nil, nil, translate(err, "list grantees")
	}
	byUser := map[int64]*store.Grantee{}
	ids := []int64{}
	for _, r := range rows {
		g := byUser[r.UserID]
		if g == nil {
			g = &store.Grantee{}
			byUser[r.UserID] = g
			ids = append(ids, r.UserID)
		}
		if r.Kind == 1 {
			g.Collaboration = store.AccessMode(r.Ref)
		} else {
			g.TeamIDs = append(g.TeamIDs, r.Ref)
		}
	}
	var users []*store.User
	if len(ids) > 0 {
		if err := db.Where("id IN ?", ids).Order("lower_name").Find(&users).Error; err != nil {
			return nil, nil, translate(err, "list grantees")
		}
	}
	out := make([]*store.Grantee, 0, len(users))
	for _, u := range users {
		g := byUser[u.ID]
		g.User = u
		out = append(out, g)
	}
	return out, teams, nil
}

func (s accessStore) CreateTransfer(ctx context.Context, t *store.RepoTransfer) error {
	err := s.d.conn(ctx).Clauses(clause.OnConflict{
		Columns:   []clause.Column{{Name: "repo_id"}},
		DoUpdates: clause.AssignmentColumns([]string{"doer_id", "recipient_id", "team_ids", "created_at"}),
	}).Create(t).Error
	return translate(err, "create transfer")
}

func (s accessStore) FindTransfer(ctx context.Context, repoID int64) (*store.RepoTransfer, error) {
	var t store.RepoTransfer
	if err := s.d.conn(ctx).Where("repo_id = ?", repoID).Take(&t).Error; err != nil {
		return nil, translate(err, "find transfer")
	}
	return &t, nil
}

func (s accessStore) DeleteTransfer(ctx context.Context, repoID int64) error {
	return affected(s.d.conn(ctx).Where("repo_id = ?", repoID).Delete(&store.RepoTransfer{}), "delete transfer")
}
