package sqlstore

import (
	"context"
	"time"

	"repohost/store"
)

type tokenStore struct{ d *DB }

func (s tokenStore) Create(ctx context.Context, t *store.AccessToken) error {
	return translate(s.d.conn(ctx).Create(t).Error, "create token")
}

func (s tokenStore) FindByHash(ctx context.Context, hash string) (*store.AccessToken, error) {
	var t store.AccessToken
	if err := s.d.conn(ctx).Where("token_hash = ?", hash).Take(&t).Error; err != nil {
		return nil, translate(err, "find token")
	}
	return &t, nil
}

// tokenWithUser reads a token and its user in one row.
type tokenWithUser struct {
	store.AccessToken
	User store.User `gorm:"foreignKey:UserID"`
}

func (tokenWithUser) TableName() string { return "access_tokens" }

func (s tokenStore) FindByHashWithUser(ctx context.Context, hash string) (*store.AccessToken, *store.User, error) {
	clone := func(r *tokenWithUser) *tokenWithUser { c := *r; return &c }
	row, err := cached(ctx, s.d, "token:"+hash, tTokens|tUsers, clone, func() (*tokenWithUser, error) {
		var row tokenWithUser
		err := s.d.conn(ctx).InnerJoins("User").Where("access_tokens.token_hash = ?", hash).Take(&row).Error
		return &row, err
	})
	if err != nil {
		return nil, nil, translate(err, "find token")
	}
	return &row.AccessToken, &row.User, nil
}

func (s tokenStore) FindByID(ctx context.Context, userID, id int64) (*store.AccessToken, error) {
	var t store.AccessToken
	if err := s.d.conn(ctx).Where("user_id = ? AND id = ?", userID, id).Take(&t).Error; err != nil {
		return nil, translate(err, "find token")
	}
	return &t, nil
}

func (s tokenStore) FindByName(ctx context.Context, userID int64, name string) (*store.AccessToken, error) {
	var t store.AccessToken
	if err := s.d.conn(ctx).Where("user_id = ? AND name = ?", userID, name).Take(&t).Error; err != nil {
		return nil, translate(err, "find token")
	}
	return &t, nil
}

func (s tokenStore) ListByUser(ctx context.Context, userID int64, p store.Page) ([]*store.AccessToken, int64, error) {
	db := s.d.conn(ctx).Model(&store.AccessToken{}).Where("user_id = ?", userID)
	var total int64
	if err := db.Count(&total).Error; err != nil {
		return nil, 0, translate(err, "count tokens")
	}
	out, err := readPage[store.AccessToken](db, listOrder{{"access_tokens.id", true}}, p, total)
	return out, total, translate(err, "list tokens")
}

func (s tokenStore) Delete(ctx context.Context, id int64) error {
	return translate(s.d.conn(ctx).Delete(&store.AccessToken{}, id).Error, "delete token")
}

func (s tokenStore) DeleteByUser(ctx context.Context, userID int64) error {
	return translate(s.d.conn(ctx).Where("user_id = ?", userID).Delete(&store.AccessToken{}).Error, "delete tokens")
}

// MarkUsed records the time of use, at most once a minute per token so that a
// busy client does not turn every read into a write.
func (s tokenStore) MarkUsed(ctx context.Context, id int64) error {
	now := s.d.clock.Now()
	err := s.d.conn(ctx).Model(&store.AccessToken{}).
		Where("id = ? AND (last_used_at IS NULL OR last_used_at < ?)", id, now.Add(-time.Minute)).
		Update("last_used_at", now).Error
	return translate(err, "mark token used")
}
