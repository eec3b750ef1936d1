package sqlstore

import (
	"context"
	"fmt"
	"time"

	"repohost/store"
)

type oauth2Store struct{ d *DB }

func (d *DB) OAuth2() store.OAuth2Store { return oauth2Store{d} }

func (s oauth2Store) CreateApp(ctx context.Context, a *store.OAuth2Application) error {
	return translate(s.d.conn(ctx).Create(a).Error, "create oauth2 application")
}

func (s oauth2Store) FindApp(ctx context.Context, userID, id int64) (*store.OAuth2Application, error) {
	var a store.OAuth2Application
	if err := s.d.conn(ctx).Where("user_id = ? AND id = ?", userID, id).Take(&a).Error; err != nil {
		return nil, translate(err, "find oauth2 application")
	}
	return &a, nil
}

func (s oauth2Store) FindAppByClientID(ctx context.Context, clientID string) (*store.OAuth2Application, error) {
	var a store.OAuth2Application
	if err := s.d.conn(ctx).Where("client_id = ?", clientID).Take(&a).Error; err != nil {
		return nil, translate(err, "find oauth2 application")
	}
	return &a, nil
}

func (s oauth2Store) ListApps(ctx context.Context, userID int64, p store.Page) ([]*store.OAuth2Application, int64, error) {
	db := s.d.conn(ctx).Model(&store.OAuth2Application{}).Where("user_id = ?", userID)
	var total int64
	if err := db.Count(&total).Error; err != nil {
		return nil, 0, translate(err, "count oauth2 applications")
	}
	out, err := readPage[store.OAuth2Application](db, listOrder{{"oauth2_applications.id", false}}, p, total)
	return out, total, translate(err, "list oauth2 applications")
}

func (s oauth2Store) UpdateApp(ctx context.Context, a *store.OAuth2Application) error {
	res := s.d.conn(ctx).Model(&store.OAuth2Application{}).Where("id = ?", a.ID).Updates(map[string]any{
		"name":                         a.Name,
		"client_secret_hash":           a.ClientSecretHash,
		"redirect_uris":                a.RedirectURIs,
		"confidential_client":          a.ConfidentialClient,
		"skip_secondary_authorization": a.SkipSecondaryAuthorization,
		"updated_at":                   s.d.clock.Now(),
	})
	if res.Error == nil && res.RowsAffected == 0 {
		return fmt.Errorf("update oauth2 application: %w", store.ErrNotFound)
	}
	return translate(res.Error, "update oauth2 application")
}

// DeleteApp removes the application; its grants go with it, and their
// codes and tokens with them (ON DELETE CASCADE, enforced on both
// databases).
func (s oauth2Store) DeleteApp(ctx context.Context, userID, id int64) error {
	res := s.d.conn(ctx).Where("user_id = ? AND id = ?", userID, id).Delete(&store.OAuth2Application{})
	if res.Error == nil && res.RowsAffected == 0 {
		return fmt.Errorf("delete oauth2 application: %w", store.ErrNotFound)
	}
	return translate(res.Error, "delete oauth2 application")
}

func (s oauth2Store) FindGrant(ctx context.Context, userID, appID int64) (*store.OAuth2Grant, error) {
	var g store.OAuth2Grant
	if err := s.d.conn(ctx).Where("user_id = ? AND application_id = ?", userID, appID).Take(&g).Error; err != nil {
		return nil, translate(err, "find oauth2 grant")
	}
	return &g, nil
}

func (s oauth2Store) FindGrantByID(ctx context.Context, id int64) (*store.OAuth2Grant, error) {
	var g store.OAuth2Grant
	if err := s.d.conn(ctx).Where("id = ?", id).Take(&g).Error; err != nil {
		return nil, translate(err, "find oauth2 grant")
	}
	return &g, nil
}

func (s oauth2Store) SaveGrant(ctx context.Context, g *store.OAuth2Grant) error {
	if g.ID == 0 {
		return translate(s.d.conn(ctx).Create(g).Error, "create oauth2 grant")
	}
	err := s.d.conn(ctx).Model(&store.OAuth2Grant{}).Where("id = ?", g.ID).
		Updates(map[string]any{"scope": g.Scope, "updated_at": s.d.clock.Now()}).Error
	return translate(err, "update oauth2 grant")
}

func (s oauth2Store) AdvanceGrant(ctx context.Context, id, counter int64) error {
	res := s.d.conn(ctx).Exec(`UPDATE oauth2_grants SET counter = counter + 1, updated_at = ? WHERE id = ? AND counter = ?`,
		s.d.clock.Now(), id, counter)
	if res.Error != nil {
		return translate(res.Error, "advance oauth2 grant")
	}
	if res.RowsAffected == 0 {
		return fmt.Errorf("advance oauth2 grant: %w", store.ErrConflict)
	}
	return nil
}

// DeleteGrant removes the grant; its codes and tokens go with it (ON
// DELETE CASCADE).
func (s oauth2Store) DeleteGrant(ctx context.Context, id int64) error {
	return translate(s.d.conn(ctx).Where("id = ?", id).Delete(&store.OAuth2Grant{}).Error, "delete oauth2 grant")
}

func (s oauth2Store) CreateCode(ctx context.Context, c *store.OAuth2Code) error {
	return translate(s.d.conn(ctx).Create(c).Error, "create oauth2 code")
}

func (s oauth2Store) TakeCode(ctx context.Context, hash string) (*store.OAuth2Code, error) {
	var c store.OAuth2Code
	err := s.d.WithTx(ctx, func(ctx context.Context) error {
		db := s.d.conn(ctx)
		if err := db.Where("code_hash = ?", hash).Take(&c).Error; err != nil {
			return translate(err, "find oauth2 code")
		}
		// The delete decides between concurrent exchanges of one code.
		res := db.Where("id = ?", c.ID).Delete(&store.OAuth2Code{})
		if res.Error != nil {
			return translate(res.Error, "take oauth2 code")
		}
		if res.RowsAffected == 0 {
			return fmt.Errorf("take oauth2 code: %w", store.ErrNotFound)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return &c, nil
}

func (s oauth2Store) CreateToken(ctx context.Context, t *store.OAuth2Token) error {
	return translate(s.d.conn(ctx).Create(t).Error, "create oauth2 token")
}

// oauth2TokenRow reads a token, its grant and its user in one statement.
type oauth2TokenRow struct {
	store.OAuth2Token
	Grant store.OAuth2Grant `gorm:"foreignKey:GrantID"`
}

func (oauth2TokenRow) TableName() string { return "oauth2_tokens" }

func (s oauth2Store) FindTokenWithUser(ctx context.Context, hash string, now time.Time) (*store.OAuth2Token, *store.OAuth2Grant, *store.User, error) {
	var row oauth2TokenRow
	err := s.d.conn(ctx).InnerJoins("Grant").Where("oauth2_tokens.token_hash = ? AND oauth2_tokens.expires_at > ?", hash, now).Take(&row).Error
	if err != nil {
		return nil, nil, nil, translate(err, "find oauth2 token")
	}
	var u store.User
	if err := s.d.conn(ctx).Where("id = ?", row.Grant.UserID).Take(&u).Error; err != nil {
		return nil, nil, nil, translate(err, "find oauth2 token user")
	}
	return &row.OAuth2Token, &row.Grant, &u, nil
}

func (s oauth2Store) DeleteToken(ctx context.Context, hash string) (*store.OAuth2Token, error) {
	var t store.OAuth2Token
	err := s.d.WithTx(ctx, func(ctx context.Context) error {
		db := s.d.conn(ctx)
		if err := db.Where("token_hash = ?", hash).Take(&t).Error; err != nil {
			return translate(err, "find oauth2 token")
		}
		return translate(db.Where("id = ?", t.ID).Delete(&store.OAuth2Token{}).Error, "delete oauth2 token")
	})
	if err != nil {
		return nil, err
	}
	return &t, nil
}

func (s oauth2Store) CreateSession(ctx context.Context, ws *store.WebSession) error {
	return translate(s.d.conn(ctx).Create(ws).Error, "create web session")
}

func (s oauth2Store) FindSession(ctx context.Context, hash string, now time.Time) (*store.WebSession, *store.User, error) {
	var ws store.WebSession
	if err := s.d.conn(ctx).Where("token_hash = ? AND expires_at > ?", hash, now).Take(&ws).Error; err != nil {
		return nil, nil, translate(err, "find web session")
	}
	var u store.User
	if err := s.d.conn(ctx).Where("id = ?", ws.UserID).Take(&u).Error; err != nil {
		return nil, nil, translate(err, "find web session user")
	}
	return &ws, &u, nil
}
