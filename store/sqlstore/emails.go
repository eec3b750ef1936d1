package sqlstore

import (
	"context"
	"strings"

	"gorm.io/gorm"

	"repohost/store"
)

type emailStore struct{ d *DB }

func (s emailStore) ListByUser(ctx context.Context, userID int64) ([]*store.Email, error) {
	var out []*store.Email
	err := s.d.conn(ctx).Where("user_id = ?", userID).Order("is_primary DESC, lower_email ASC").Find(&out).Error
	return out, translate(err, "list emails")
}

func (s emailStore) FindByEmail(ctx context.Context, email string) (*store.Email, error) {
	var e store.Email
	if err := s.d.conn(ctx).Where("lower_email = ?", strings.ToLower(email)).Take(&e).Error; err != nil {
		return nil, translate(err, "find email")
	}
	return &e, nil
}

func (s emailStore) OwnerIDs(ctx context.Context, emails []string) (map[string]int64, error) {
	out := make(map[string]int64, len(emails))
	if len(emails) == 0 {
		return out, nil
	}
	lower := make([]string, 0, len(emails))
	for _, e := range emails {
		lower = append(lower, strings.ToLower(e))
	}
	var rows []*store.Email
	err := s.d.conn(ctx).Select("user_id", "lower_email").
		Where("lower_email IN ? AND (is_primary OR is_activated)", lower).Find(&rows).Error
	for _, r := range rows {
		out[r.LowerEmail] = r.UserID
	}
	return out, translate(err, "find email owners")
}

func (s emailStore) Create(ctx context.Context, e *store.Email) error {
	e.LowerEmail = strings.ToLower(e.Email)
	return translate(s.d.conn(ctx).Create(e).Error, "add email")
}

func (s emailStore) Delete(ctx context.Context, userID int64, emails []string) error {
	return s.d.WithTx(ctx, func(ctx context.Context) error {
		for _, e := range emails {
			res := s.d.conn(ctx).Where("user_id = ? AND lower_email = ?", userID, strings.ToLower(e)).Delete(&store.Email{})
			if res.Error != nil {
				return translate(res.Error, "delete email")
			}
			if res.RowsAffected == 0 {
				return translate(gorm.ErrRecordNotFound, "delete email "+e)
			}
		}
		return nil
	})
}

func (s emailStore) SetPrimary(ctx context.Context, userID int64, email string) error {
	return s.d.WithTx(ctx, func(ctx context.Context) error {
		db := s.d.conn(ctx).Model(&store.Email{})
		if err := db.Where("user_id = ?", userID).Update("is_primary", false).Error; err != nil {
			return translate(err, "set primary email")
		}
		res := s.d.conn(ctx).Model(&store.Email{}).Where("user_id = ? AND lower_email = ?", userID, strings.ToLower(email)).
			Updates(map[string]any{"is_primary": true, "is_activated": true})
		if res.Error != nil {
			return translate(res.Error, "set primary email")
		}
		if res.RowsAffected == 0 {
			return s.Create(ctx, &store.Email{UserID: userID, Email: email, IsPrimary: true, IsActivated: true})
		}
		return nil
	})
}

func (s emailStore) DeleteByUser(ctx context.Context, userID int64) error {
	return translate(s.d.conn(ctx).Where("user_id = ?", userID).Delete(&store.Email{}).Error, "delete emails")
}

func (s emailStore) Search(ctx context.Context, keyword string, p store.Page) ([]*store.EmailWithOwner, int64, error) {
	// CROSS JOIN is an inner join (the condition is in WHERE) that SQLite
	// also reads as "emails first": the list then walks the unique index
	// of addresses in its order and looks each owner up, instead of
	// gathering every individual's addresses and sorting them.
	db := s.d.conn(ctx).Table("emails").Joins("CROSS JOIN users").
		Where("users.id = emails.user_id AND users.type = ?", store.UserTypeIndividual)
	if kw := strings.TrimSpace(keyword); kw != "" {
		pat := likePattern(kw)
		db = db.Where(`(users.lower_name LIKE ? ESCAPE '\' OR LOWER(users.full_name) LIKE ? ESCAPE '\' OR emails.lower_email LIKE ? ESCAPE '\')`, pat, pat, pat)
	}
	var total int64
	if err := db.Count(&total).Error; err != nil {
		return nil, 0, translate(err, "count emails")
	}
	// lower_email is unique, so it alone is a total order.
	out, err := readPage[store.EmailWithOwner](db.Select("emails.*, users.name AS user_name"),
		listOrder{{"emails.lower_email", false}}, p, total)
	return out, total, translate(err, "search emails")
}
