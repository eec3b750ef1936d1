package sqlstore

import (
	"time"

	"gorm.io/gorm"
)

// migrateV32 adds the OAuth2 provider: applications registered by users,
// the grants users gave them, authorization codes and access tokens (both
// kept by hash), and the web sessions of the sign-in page. Each goes with
// its user, and codes and tokens with their grant (ON DELETE CASCADE).
func migrateV32(tx *gorm.DB) error {
	// User stands for the existing table, only as the target of the
	// foreign keys.
	type User struct{ ID int64 }
	type Oauth2Application struct {
		ID                         int64  `gorm:"primaryKey"`
		UserID                     int64  `gorm:"not null"`
		User                       *User  `gorm:"foreignKey:UserID;constraint:OnDelete:CASCADE"`
		Name                       string `gorm:"not null"`
		ClientID                   string `gorm:"not null"`
		ClientSecretHash           string `gorm:"not null"`
		RedirectURIs               string `gorm:"column:redirect_uris;not null;default:'[]'"`
		ConfidentialClient         bool   `gorm:"not null;default:true"`
		SkipSecondaryAuthorization bool   `gorm:"not null;default:false"`
		CreatedAt                  time.Time
		UpdatedAt                  time.Time
	}
	type Oauth2Grant struct {
		ID            int64              `gorm:"primaryKey"`
		UserID        int64              `gorm:"not null"`
		User          *User              `gorm:"foreignKey:UserID;constraint:OnDelete:CASCADE"`
		ApplicationID int64              `gorm:"not null"`
		Application   *Oauth2Application `gorm:"foreignKey:ApplicationID;constraint:OnDelete:CASCADE"`
		Scope         string             `gorm:"not null;default:''"`
		Counter       int64              `gorm:"not null;default:1"`
		CreatedAt     time.Time
		UpdatedAt     time.Time
	}
	type Oauth2Code struct {
		ID                  int64        `gorm:"primaryKey"`
		GrantID             int64        `gorm:"not null"`
		Grant               *Oauth2Grant `gorm:"foreignKey:GrantID;constraint:OnDelete:CASCADE"`
		CodeHash            string       `gorm:"not null"`
		RedirectURI         string       `gorm:"not null"`
		CodeChallenge       string       `gorm:"not null;default:''"`
		CodeChallengeMethod string       `gorm:"not null;default:''"`
		Nonce               string       `gorm:"not null;default:''"`
		ExpiresAt           time.Time    `gorm:"not null"`
	}
	type Oauth2Token struct {
		ID        int64        `gorm:"primaryKey"`
		GrantID   int64        `gorm:"not null"`
		Grant     *Oauth2Grant `gorm:"foreignKey:GrantID;constraint:OnDelete:CASCADE"`
		TokenHash string       `gorm:"not null"`
		ExpiresAt time.Time    `gorm:"not null"`
		CreatedAt time.Time
	}
	type WebSession struct {
		ID        int64     `gorm:"primaryKey"`
		UserID    int64     `gorm:"not null"`
		User      *User     `gorm:"foreignKey:UserID;constraint:OnDelete:CASCADE"`
		TokenHash string    `gorm:"not null"`
		ExpiresAt time.Time `gorm:"not null"`
		CreatedAt time.Time
	}
	if err := tx.Migrator().CreateTable(&Oauth2Application{}, &Oauth2Grant{}, &Oauth2Code{}, &Oauth2Token{}, &WebSession{}); err != nil {
		return err
	}
	for _, stmt := range []string{
		`CREATE UNIQUE INDEX idx_oauth2_applications_client ON oauth2_applications (client_id)`,
		`CREATE INDEX idx_oauth2_applications_user ON oauth2_applications (user_id, id)`,
		`CREATE UNIQUE INDEX idx_oauth2_grants_user_app ON oauth2_grants (user_id, application_id)`,
		`CREATE INDEX idx_oauth2_grants_app ON oauth2_grants (application_id)`,
		`CREATE UNIQUE INDEX idx_oauth2_codes_hash ON oauth2_codes (code_hash)`,
		`CREATE INDEX idx_oauth2_codes_grant ON oauth2_codes (grant_id)`,
		`CREATE UNIQUE INDEX idx_oauth2_tokens_hash ON oauth2_tokens (token_hash)`,
		`CREATE INDEX idx_oauth2_tokens_grant ON oauth2_tokens (grant_id)`,
		`CREATE UNIQUE INDEX idx_web_sessions_hash ON web_sessions (token_hash)`,
		`CREATE INDEX idx_web_sessions_user ON web_sessions (user_id)`,
	} {
		if err := tx.Exec(stmt).Error; err != nil {
			return err
		}
	}
	return nil
}
