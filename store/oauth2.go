package store

import (
	"context"
	"time"
)

// OAuth2Application is a client registered by a user for the OAuth2
// provider. Only the hash of its secret is kept: the secret is shown once,
// when it is made.
type OAuth2Application struct {
	ID                         int64 `gorm:"primaryKey"`
	UserID                     int64
	Name                       string
	ClientID                   string
	ClientSecretHash           string
	RedirectURIs               string // JSON array
	ConfidentialClient         bool
	SkipSecondaryAuthorization bool
	CreatedAt                  time.Time
	UpdatedAt                  time.Time
}

// OAuth2Grant is a user's consent to one application, with the scope
// granted. Counter numbers the refresh tokens: only the newest one is
// valid, and presenting an older one revokes the grant.
type OAuth2Grant struct {
	ID            int64 `gorm:"primaryKey"`
	UserID        int64
	ApplicationID int64
	Scope         string // space-separated, as granted
	Counter       int64
	CreatedAt     time.Time
	UpdatedAt     time.Time
}

// OAuth2Code is an authorization code waiting to be exchanged, kept by
// its hash. It is used at most once.
type OAuth2Code struct {
	ID                  int64 `gorm:"primaryKey"`
	GrantID             int64
	CodeHash            string
	RedirectURI         string
	CodeChallenge       string
	CodeChallengeMethod string
	Nonce               string
	ExpiresAt           time.Time
}

// OAuth2Token is an access token issued through the provider, kept by its
// hash; it acts with its grant's scope until it expires.
type OAuth2Token struct {
	ID        int64 `gorm:"primaryKey"`
	GrantID   int64
	TokenHash string
	ExpiresAt time.Time
	CreatedAt time.Time
}

// WebSession is a browser's sign-in on the server's web pages, kept by
// the hash of its cookie.
type WebSession struct {
	ID        int64 `gorm:"primaryKey"`
	UserID    int64
	TokenHash string
	ExpiresAt time.Time
	CreatedAt time.Time
}

// OAuth2Store keeps the OAuth2 provider's applications, grants, codes,
// tokens and the web sessions of its sign-in page.
type OAuth2Store interface {
	CreateApp(ctx context.Context, a *OAuth2Application) error
	FindApp(ctx context.Context, userID, id int64) (*OAuth2Application, error)
	FindAppByClientID(ctx context.Context, clientID string) (*OAuth2Application, error)
	ListApps(ctx context.Context, userID int64, p Page) ([]*OAuth2Application, int64, error)
	UpdateApp(ctx context.Context, a *OAuth2Application) error
	// DeleteApp removes the application with its grants, codes and tokens.
	DeleteApp(ctx context.Context, userID, id int64) error

	FindGrant(ctx context.Context, userID, appID int64) (*OAuth2Grant, error)
	FindGrantByID(ctx context.Context, id int64) (*OAuth2Grant, error)
	// SaveGrant creates the user's grant for the application or sets its
	// scope.
	SaveGrant(ctx context.Context, g *OAuth2Grant) error
	// AdvanceGrant moves the grant's counter from counter to counter+1;
	// ErrConflict when it no longer stands at counter.
	AdvanceGrant(ctx context.Context, id, counter int64) error
	// DeleteGrant removes the grant with its codes and tokens.
	DeleteGrant(ctx context.Context, id int64) error

	CreateCode(ctx context.Context, c *OAuth2Code) error
	// TakeCode removes and returns the code with this hash: one caller
	// wins it, every other gets ErrNotFound.
	TakeCode(ctx context.Context, hash string) (*OAuth2Code, error)

	CreateToken(ctx context.Context, t *OAuth2Token) error
	// FindTokenWithUser returns an unexpired token with its grant and
	// its user.
	FindTokenWithUser(ctx context.Context, hash string, now time.Time) (*OAuth2Token, *OAuth2Grant, *User, error)
	DeleteToken(ctx context.Context, hash string) (*OAuth2Token, error)

	CreateSession(ctx context.Context, s *WebSession) error
	FindSession(ctx context.Context, hash string, now time.Time) (*WebSession, *User, error)
}

// Table names, independent of the types' names.
func (OAuth2Application) TableName() string { return "oauth2_applications" }
func (OAuth2Grant) TableName() string       { return "oauth2_grants" }
func (OAuth2Code) TableName() string        { return "oauth2_codes" }
func (OAuth2Token) TableName() string       { return "oauth2_tokens" }
func (WebSession) TableName() string        { return "web_sessions" }
