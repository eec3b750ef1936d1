package sqlstore

import (
	"time"

	"gorm.io/gorm"
)

// migrateV2 creates the issue tracker's tables. Every table hangs off
// repositories (directly or through issues) with ON DELETE CASCADE, so
// deleting a repository, or a user together with their repositories,
// removes its issue data on both databases without the other areas knowing
// about it. Authors (issue and comment posters, project creators) are
// deliberately not foreign keys: an issue outlives its author's account and
// is then shown as posted by the reference's "Ghost" user, and deleting it
// instead would silently corrupt the counters. Links to a user that mean
// nothing without the user (assignments, mentions, reactions, tracked time)
// cascade.
func migrateV2(tx *gorm.DB) error {
	// Referenced tables, reduced to their keys: only the foreign keys
	// need them.
	type Repository struct {
		ID int64 `gorm:"primaryKey"`
	}
	type User struct {
		ID int64 `gorm:"primaryKey"`
	}
	// IssueIndex is the per-repository counter that issues and pull
	// requests share; a row is created on first use.
	type IssueIndex struct {
		RepoID   int64       `gorm:"primaryKey;autoIncrement:false"`
		Repo     *Repository `gorm:"foreignKey:RepoID;constraint:OnDelete:CASCADE"`
		MaxIndex int64       `gorm:"not null;default:0"`
	}
	type Milestone struct {
		ID              int64       `gorm:"primaryKey"`
		RepoID          int64       `gorm:"not null;index"`
		Repo            *Repository `gorm:"foreignKey:RepoID;constraint:OnDelete:CASCADE"`
		Title           string      `gorm:"not null;default:''"`
		Description     string      `gorm:"not null;default:''"`
		IsClosed        bool        `gorm:"not null;default:false"`
		NumIssues       int64       `gorm:"not null;default:0"`
		NumClosedIssues int64       `gorm:"not null;default:0"`
		Deadline        *time.Time
		ClosedAt        *time.Time
		CreatedAt       time.Time
		UpdatedAt       time.Time
	}
	type Issue struct {
		ID     int64       `gorm:"primaryKey"`
		RepoID int64       `gorm:"not null;uniqueIndex:idx_issues_repo_number,priority:1;index:idx_issues_repo_closed,priority:1"`
		Repo   *Repository `gorm:"foreignKey:RepoID;constraint:OnDelete:CASCADE"`
		// "index" is a reserved word in SQL; the column is "number".
		Number         int64  `gorm:"not null;uniqueIndex:idx_issues_repo_number,priority:2"`
		PosterID       int64  `gorm:"not null;index"`
		Title          string `gorm:"not null;default:''"`
		Body           string `gorm:"not null;default:''"`
		ContentVersion int64  `gorm:"not null;default:0"`
		Ref            string `gorm:"not null;default:''"`
		IsClosed       bool   `gorm:"not null;default:false;index:idx_issues_repo_closed,priority:2"`
		IsPull         bool   `gorm:"not null;default:false"`
		IsLocked       bool   `gorm:"not null;default:false"`
		// Not a foreign key: 0 means "no milestone".
		MilestoneID int64 `gorm:"not null;default:0;index"`
		NumComments int64 `gorm:"not null;default:0"`
		Deadline    *time.Time
		ClosedAt    *time.Time
		CreatedAt   time.Time
		UpdatedAt   time.Time `gorm:"index"`
	}
	type Comment struct {
		ID        int64  `gorm:"primaryKey"`
		IssueID   int64  `gorm:"not null;index"`
		Issue     *Issue `gorm:"foreignKey:IssueID;constraint:OnDelete:CASCADE"`
		PosterID  int64  `gorm:"not null;index"`
		Body      string `gorm:"not null;default:''"`
		CreatedAt time.Time
		UpdatedAt time.Time
	}
	type Label struct {
		ID          int64       `gorm:"primaryKey"`
		RepoID      int64       `gorm:"not null;index"`
		Repo        *Repository `gorm:"foreignKey:RepoID;constraint:OnDelete:CASCADE"`
		Name        string      `gorm:"not null"`
		Color       string      `gorm:"not null;default:''"`
		Description string      `gorm:"not null;default:''"`
		Exclusive   bool        `gorm:"not null;default:false"`
		ArchivedAt  *time.Time
		CreatedAt   time.Time
		UpdatedAt   time.Time
	}
	type IssueLabel struct {
		IssueID int64  `gorm:"primaryKey;autoIncrement:false"`
		Issue   *Issue `gorm:"foreignKey:IssueID;constraint:OnDelete:CASCADE"`
		LabelID int64  `gorm:"primaryKey;autoIncrement:false;index"`
		Label   *Label `gorm:"foreignKey:LabelID;constraint:OnDelete:CASCADE"`
	}
	type IssueAssignee struct {
		IssueID    int64  `gorm:"primaryKey;autoIncrement:false"`
		Issue      *Issue `gorm:"foreignKey:IssueID;constraint:OnDelete:CASCADE"`
		AssigneeID int64  `gorm:"primaryKey;autoIncrement:false;index"`
		Assignee   *User  `gorm:"foreignKey:AssigneeID;constraint:OnDelete:CASCADE"`
		// Position keeps the order the assignees were given in.
		Position int `gorm:"not null;default:0"`
	}
	type IssueMention struct {
		IssueID int64  `gorm:"primaryKey;autoIncrement:false"`
		Issue   *Issue `gorm:"foreignKey:IssueID;constraint:OnDelete:CASCADE"`
		UserID  int64  `gorm:"primaryKey;autoIncrement:false;index"`
		User    *User  `gorm:"foreignKey:UserID;constraint:OnDelete:CASCADE"`
	}
	// Reaction: comment_id is 0 for a reaction to the issue itself, so it
	// cannot be a foreign key (and NULL would defeat the unique index);
	// deleting a comment deletes its reactions explicitly.
	type Reaction struct {
		ID        int64  `gorm:"primaryKey"`
		Type      string `gorm:"not null;uniqueIndex:idx_reactions_unique,priority:4"`
		IssueID   int64  `gorm:"not null;uniqueIndex:idx_reactions_unique,priority:1"`
		Issue     *Issue `gorm:"foreignKey:IssueID;constraint:OnDelete:CASCADE"`
		CommentID int64  `gorm:"not null;default:0;uniqueIndex:idx_reactions_unique,priority:2;index"`
		UserID    int64  `gorm:"not null;uniqueIndex:idx_reactions_unique,priority:3;index"`
		User      *User  `gorm:"foreignKey:UserID;constraint:OnDelete:CASCADE"`
		CreatedAt time.Time
	}
	type TrackedTime struct {
		ID        int64  `gorm:"primaryKey"`
		IssueID   int64  `gorm:"not null;index"`
		Issue     *Issue `gorm:"foreignKey:IssueID;constraint:OnDelete:CASCADE"`
		UserID    int64  `gorm:"not null;index"`
		User      *User  `gorm:"foreignKey:UserID;constraint:OnDelete:CASCADE"`
		Time      int64  `gorm:"not null;default:0"`
		CreatedAt time.Time
	}
	type Project struct {
		ID           int64       `gorm:"primaryKey"`
		RepoID       int64       `gorm:"not null;index"`
		Repo         *Repository `gorm:"foreignKey:RepoID;constraint:OnDelete:CASCADE"`
		CreatorID    int64       `gorm:"not null;default:0"`
		Title        string      `gorm:"not null"`
		Description  string      `gorm:"not null;default:''"`
		IsClosed     bool        `gorm:"not null;default:false"`
		CardType     string      `gorm:"not null;default:'text_only'"`
		TemplateType string      `gorm:"not null;default:'none'"`
		ClosedAt     *time.Time
		CreatedAt    time.Time
		UpdatedAt    time.Time
	}
	type ProjectIssue struct {
		ProjectID int64    `gorm:"primaryKey;autoIncrement:false"`
		Project   *Project `gorm:"foreignKey:ProjectID;constraint:OnDelete:CASCADE"`
		IssueID   int64    `gorm:"primaryKey;autoIncrement:false;index"`
		Issue     *Issue   `gorm:"foreignKey:IssueID;constraint:OnDelete:CASCADE"`
	}
	// GORM would call the counter table "issue_indices".
	if err := tx.Table("issue_indexes").Migrator().CreateTable(&IssueIndex{}); err != nil {
		return err
	}
	// Referenced tables first.
	return tx.Migrator().CreateTable(&Milestone{}, &Issue{}, &Comment{}, &Label{}, &IssueLabel{},
		&IssueAssignee{}, &IssueMention{}, &Reaction{}, &TrackedTime{}, &Project{}, &ProjectIssue{})
}
