package sqlstore

import (
	"time"

	"gorm.io/gorm"
)

// migrateV7 adds team membership, collaborators and pending transfers, and
// makes organization membership follow from team membership: until now an
// organization's members were rows of org_members alone. Each owner joins
// the owners team. The other members of an organization join a new team
// "Members" that reads every repository of it (all units), which is exactly
// what a member could do before, so nobody gains or loses access.
// org_members stays, as the derived table the team store maintains.
func migrateV7(tx *gorm.DB) error {
	type User struct {
		ID int64 `gorm:"primaryKey"`
	}
	type Repository struct {
		ID int64 `gorm:"primaryKey"`
	}
	type Team struct {
		ID int64 `gorm:"primaryKey"`
	}
	type TeamUser struct {
		TeamID int64 `gorm:"primaryKey;autoIncrement:false"`
		Team   *Team `gorm:"foreignKey:TeamID;constraint:OnDelete:CASCADE"`
		UserID int64 `gorm:"primaryKey;autoIncrement:false"`
		User   *User `gorm:"foreignKey:UserID;constraint:OnDelete:CASCADE"`
		OrgID  int64 `gorm:"not null"`
	}
	type Collaboration struct {
		RepoID    int64       `gorm:"primaryKey;autoIncrement:false"`
		Repo      *Repository `gorm:"foreignKey:RepoID;constraint:OnDelete:CASCADE"`
		UserID    int64       `gorm:"primaryKey;autoIncrement:false"`
		User      *User       `gorm:"foreignKey:UserID;constraint:OnDelete:CASCADE"`
		Mode      int         `gorm:"not null;default:1"`
		CreatedAt time.Time
	}
	type RepoTransfer struct {
		RepoID      int64       `gorm:"primaryKey;autoIncrement:false"`
		Repo        *Repository `gorm:"foreignKey:RepoID;constraint:OnDelete:CASCADE"`
		DoerID      int64       `gorm:"not null"`
		RecipientID int64       `gorm:"not null"`
		TeamIDs     string      `gorm:"column:team_ids;not null;default:'[]'"`
		CreatedAt   time.Time
	}
	if err := tx.Migrator().CreateTable(&TeamUser{}, &Collaboration{}, &RepoTransfer{}); err != nil {
		return err
	}
	now := time.Now().UTC()
	for _, stmt := range []struct {
		sql  string
		args []any
	}{
		// The teams of one user in one organization (every permission
		// check), and the repositories one user collaborates on (lists).
		{`CREATE INDEX idx_team_users_user_org ON team_users (user_id, org_id, team_id)`, nil},
		{`CREATE INDEX idx_collaborations_user_repo ON collaborations (user_id, repo_id)`, nil},
		{`INSERT INTO team_users (team_id, user_id, org_id)
			SELECT teams.id, org_members.user_id, org_members.org_id FROM org_members
			JOIN teams ON teams.org_id = org_members.org_id AND teams.lower_name = ?
			WHERE org_members.is_owner = ?`, []any{ownersTeamLowerName, true}},
		{"", nil}, // createMembersTeamsV7
		{`INSERT INTO team_users (team_id, user_id, org_id)
			SELECT teams.id, org_members.user_id, org_members.org_id FROM org_members
			JOIN teams ON teams.org_id = org_members.org_id AND teams.lower_name = ?
			WHERE org_members.is_owner = ?`, []any{"members", false}},
	} {
		if stmt.sql == "" {
			if err := createMembersTeamsV7(tx, now); err != nil {
				return err
			}
			continue
		}
		if err := tx.Exec(stmt.sql, stmt.args...).Error; err != nil {
			return err
		}
	}
	return nil
}

// createMembersTeamsV7 gives every organization with members who are not
// owners its "Members" team (values bound as typed Go values: PostgreSQL
// cannot type bare parameters in a SELECT list).
func createMembersTeamsV7(tx *gorm.DB, now time.Time) error {
	var orgIDs []int64
	if err := tx.Table("org_members").Where("is_owner = ?", false).Distinct().Pluck("org_id", &orgIDs).Error; err != nil {
		return err
	}
	for _, id := range orgIDs {
		err := tx.Table("teams").Create(map[string]any{
			"org_id": id, "name": "Members", "lower_name": "members",
			"description": "Members from before teams: read access to every repository", "permission": "read",
			"includes_all_repositories": true, "can_create_org_repo": false, "units": membersTeamUnitsJSON,
			"visibility": 2, "created_at": now, "updated_at": now,
		}).Error
		if err != nil {
			return err
		}
	}
	return nil
}

// membersTeamUnitsJSON reads every unit, frozen with the migration.
const membersTeamUnitsJSON = `{"repo.actions":"read","repo.code":"read","repo.ext_issues":"read","repo.ext_wiki":"read","repo.issues":"read","repo.packages":"read","repo.projects":"read","repo.pulls":"read","repo.releases":"read","repo.wiki":"read"}`
