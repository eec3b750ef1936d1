package sqlstore

import (
	"time"

	"gorm.io/gorm"
)

// migrateV3 creates branch protection rules, topics and teams, and gives
// every existing organization its owners team. Rows that belong to a
// repository or an organization go with it (ON DELETE CASCADE).
func migrateV3(tx *gorm.DB) error {
	// Frozen stand-ins for the referenced tables, so GORM can declare the
	// foreign keys; they are not created here.
	type Repository struct {
		ID int64 `gorm:"primaryKey"`
	}
	type User struct {
		ID int64 `gorm:"primaryKey"`
	}
	type ProtectedBranch struct {
		ID                            int64       `gorm:"primaryKey"`
		RepoID                        int64       `gorm:"not null;uniqueIndex:idx_protected_branch_repo_rule;index:idx_protected_branch_repo_priority,priority:1"`
		Repo                          *Repository `gorm:"foreignKey:RepoID;constraint:OnDelete:CASCADE"`
		RuleName                      string      `gorm:"not null;uniqueIndex:idx_protected_branch_repo_rule"`
		Priority                      int64       `gorm:"not null;default:0;index:idx_protected_branch_repo_priority,priority:2"`
		EnablePush                    bool        `gorm:"not null;default:false"`
		EnablePushWhitelist           bool        `gorm:"not null;default:false"`
		PushWhitelistUserIDs          string      `gorm:"column:push_whitelist_user_ids;not null;default:'[]'"`
		PushWhitelistTeamIDs          string      `gorm:"column:push_whitelist_team_ids;not null;default:'[]'"`
		PushWhitelistDeployKeys       bool        `gorm:"not null;default:false"`
		EnableForcePush               bool        `gorm:"not null;default:false"`
		EnableForcePushAllowlist      bool        `gorm:"not null;default:false"`
		ForcePushAllowlistUserIDs     string      `gorm:"column:force_push_allowlist_user_ids;not null;default:'[]'"`
		ForcePushAllowlistTeamIDs     string      `gorm:"column:force_push_allowlist_team_ids;not null;default:'[]'"`
		ForcePushAllowlistDeployKeys  bool        `gorm:"not null;default:false"`
		EnableMergeWhitelist          bool        `gorm:"not null;default:false"`
		MergeWhitelistUserIDs         string      `gorm:"column:merge_whitelist_user_ids;not null;default:'[]'"`
		MergeWhitelistTeamIDs         string      `gorm:"column:merge_whitelist_team_ids;not null;default:'[]'"`
		EnableStatusCheck             bool        `gorm:"not null;default:false"`
		StatusCheckContexts           string      `gorm:"not null;default:'[]'"`
		RequiredApprovals             int64       `gorm:"not null;default:0"`
		EnableApprovalsWhitelist      bool        `gorm:"not null;default:false"`
		ApprovalsWhitelistUserIDs     string      `gorm:"column:approvals_whitelist_user_ids;not null;default:'[]'"`
		ApprovalsWhitelistTeamIDs     string      `gorm:"column:approvals_whitelist_team_ids;not null;default:'[]'"`
		EnableBypassAllowlist         bool        `gorm:"not null;default:false"`
		BypassAllowlistUserIDs        string      `gorm:"column:bypass_allowlist_user_ids;not null;default:'[]'"`
		BypassAllowlistTeamIDs        string      `gorm:"column:bypass_allowlist_team_ids;not null;default:'[]'"`
		BlockOnRejectedReviews        bool        `gorm:"not null;default:false"`
		BlockOnOfficialReviewRequests bool        `gorm:"not null;default:false"`
		BlockOnOutdatedBranch         bool        `gorm:"not null;default:false"`
		DismissStaleApprovals         bool        `gorm:"not null;default:false"`
		IgnoreStaleApprovals          bool        `gorm:"not null;default:false"`
		RequireSignedCommits          bool        `gorm:"not null;default:false"`
		ProtectedFilePatterns         string      `gorm:"not null;default:''"`
		UnprotectedFilePatterns       string      `gorm:"not null;default:''"`
		BlockAdminMergeOverride       bool        `gorm:"not null;default:false"`
		CreatedAt                     time.Time
		UpdatedAt                     time.Time
	}
	type Topic struct {
		ID        int64  `gorm:"primaryKey"`
		Name      string `gorm:"not null;uniqueIndex"`
		RepoCount int64  `gorm:"not null;default:0;index"`
		CreatedAt time.Time
		UpdatedAt time.Time
	}
	type RepoTopic struct {
		RepoID  int64       `gorm:"primaryKey;autoIncrement:false"`
		Repo    *Repository `gorm:"foreignKey:RepoID;constraint:OnDelete:CASCADE"`
		TopicID int64       `gorm:"primaryKey;autoIncrement:false;index"`
		Topic   *Topic      `gorm:"foreignKey:TopicID;constraint:OnDelete:CASCADE"`
	}
	type Team struct {
		ID                      int64  `gorm:"primaryKey"`
		OrgID                   int64  `gorm:"not null;uniqueIndex:idx_team_org_name"`
		Org                     *User  `gorm:"foreignKey:OrgID;constraint:OnDelete:CASCADE"`
		Name                    string `gorm:"not null"`
		LowerName               string `gorm:"not null;uniqueIndex:idx_team_org_name"`
		Description             string `gorm:"not null;default:''"`
		Permission              string `gorm:"not null;default:'read'"`
		IncludesAllRepositories bool   `gorm:"not null;default:false"`
		CanCreateOrgRepo        bool   `gorm:"not null;default:false"`
		Units                   string `gorm:"not null;default:'{}'"`
		Visibility              int    `gorm:"not null;default:2"`
		CreatedAt               time.Time
		UpdatedAt               time.Time
	}
	// TeamRepo grants a team without includes_all_repositories access to one
	// repository.
	type TeamRepo struct {
		TeamID int64       `gorm:"primaryKey;autoIncrement:false"`
		Team   *Team       `gorm:"foreignKey:TeamID;constraint:OnDelete:CASCADE"`
		RepoID int64       `gorm:"primaryKey;autoIncrement:false;index"`
		Repo   *Repository `gorm:"foreignKey:RepoID;constraint:OnDelete:CASCADE"`
	}
	if err := tx.Migrator().CreateTable(&ProtectedBranch{}, &Topic{}, &RepoTopic{}, &Team{}, &TeamRepo{}); err != nil {
		return err
	}
	now := time.Now().UTC().Truncate(time.Second)
	return tx.Exec(`INSERT INTO teams (org_id, name, lower_name, description, permission,
			includes_all_repositories, can_create_org_repo, units, visibility, created_at, updated_at)
		SELECT id, ?, ?, '', ?, ?, ?, ?, ?, ?, ? FROM users WHERE type = ?`,
		ownersTeamName, ownersTeamLowerName, "owner", true, true, ownersTeamUnitsJSON, 2, now, now, 1).Error
}

// The owners team as the reference creates it: owner access to every unit
// except the external tracker and wiki, which can only be read. Frozen here
// because the migration must keep creating exactly this.
const (
	ownersTeamLowerName = "owners"
	ownersTeamUnitsJSON = `{"repo.actions":"owner","repo.code":"owner","repo.ext_issues":"read","repo.ext_wiki":"read","repo.issues":"owner","repo.packages":"owner","repo.projects":"owner","repo.pulls":"owner","repo.releases":"owner","repo.wiki":"owner"}`
	ownersTeamName      = "Owners"
)
