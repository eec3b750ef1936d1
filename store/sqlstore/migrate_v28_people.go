package sqlstore

import (
	"time"

	"gorm.io/gorm"
)

// migrateV28 adds stars (a user's mark on a repository), follows (a user
// following another) and user blocks (a user or organization blocking a
// user), each going with the rows it links (ON DELETE CASCADE); the
// counters the user model shows (followers, following, starred
// repositories), kept by SQL arithmetic in the transaction of each change;
// and the user settings the users table had no column for.
func migrateV28(tx *gorm.DB) error {
	// Stand-ins for the existing tables, only as foreign key targets.
	type Repository struct{ ID int64 }
	type User struct{ ID int64 }
	type Star struct {
		UserID    int64       `gorm:"primaryKey;autoIncrement:false"`
		User      *User       `gorm:"foreignKey:UserID;constraint:OnDelete:CASCADE"`
		RepoID    int64       `gorm:"primaryKey;autoIncrement:false"`
		Repo      *Repository `gorm:"foreignKey:RepoID;constraint:OnDelete:CASCADE"`
		CreatedAt time.Time   `gorm:"not null"`
	}
	type Follow struct {
		UserID    int64     `gorm:"primaryKey;autoIncrement:false"`
		User      *User     `gorm:"foreignKey:UserID;constraint:OnDelete:CASCADE"`
		FollowID  int64     `gorm:"primaryKey;autoIncrement:false"`
		Follow    *User     `gorm:"foreignKey:FollowID;constraint:OnDelete:CASCADE"`
		CreatedAt time.Time `gorm:"not null"`
	}
	type UserBlock struct {
		BlockerID int64     `gorm:"primaryKey;autoIncrement:false"`
		Blocker   *User     `gorm:"foreignKey:BlockerID;constraint:OnDelete:CASCADE"`
		BlockeeID int64     `gorm:"primaryKey;autoIncrement:false"`
		Blockee   *User     `gorm:"foreignKey:BlockeeID;constraint:OnDelete:CASCADE"`
		Note      string    `gorm:"not null;default:''"`
		CreatedAt time.Time `gorm:"not null"`
	}
	if err := tx.Migrator().CreateTable(&Star{}, &Follow{}, &UserBlock{}); err != nil {
		return err
	}
	for _, stmt := range []string{
		// A repository's stargazers, a user's followers, who blocked a user.
		`CREATE INDEX idx_stars_repo ON stars (repo_id, user_id)`,
		`CREATE INDEX idx_follows_follow ON follows (follow_id, user_id)`,
		`CREATE INDEX idx_user_blocks_blockee ON user_blocks (blockee_id, blocker_id)`,
		`ALTER TABLE users ADD COLUMN num_followers bigint NOT NULL DEFAULT 0`,
		`ALTER TABLE users ADD COLUMN num_following bigint NOT NULL DEFAULT 0`,
		`ALTER TABLE users ADD COLUMN num_stars bigint NOT NULL DEFAULT 0`,
		`ALTER TABLE users ADD COLUMN theme text NOT NULL DEFAULT ''`,
		`ALTER TABLE users ADD COLUMN diff_view_style text NOT NULL DEFAULT ''`,
		`ALTER TABLE users ADD COLUMN hide_activity boolean NOT NULL DEFAULT false`,
	} {
		if err := tx.Exec(stmt).Error; err != nil {
			return err
		}
	}
	return nil
}
