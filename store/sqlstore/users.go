package sqlstore

import (
	"context"
	"strconv"
	"strings"

	"gorm.io/gorm"

	"repohost/store"
)

type userStore struct{ d *DB }

func (s userStore) Create(ctx context.Context, u *store.User) error {
	u.LowerName = strings.ToLower(u.Name)
	return translate(s.d.conn(ctx).Create(u).Error, "create user")
}

func (s userStore) FindByID(ctx context.Context, id int64) (*store.User, error) {
	return cached(ctx, s.d, userIDKey(id), tUsers, cloneUser, func() (*store.User, error) {
		return findUserByID(s.d.conn(ctx), id)
	})
}

func userIDKey(id int64) string { return "uid:" + strconv.FormatInt(id, 10) }

func (s userStore) FindByIDForUpdate(ctx context.Context, id int64) (*store.User, error) {
	db, err := s.d.lockingConn(ctx)
	if err != nil {
		return nil, err
	}
	return findUserByID(db, id)
}

func findUserByID(db *gorm.DB, id int64) (*store.User, error) {
	var u store.User
	if err := db.Take(&u, id).Error; err != nil {
		return nil, translate(err, "find user")
	}
	return &u, nil
}

func (s userStore) FindByName(ctx context.Context, name string) (*store.User, error) {
	name = strings.ToLower(name)
	u, err := cached(ctx, s.d, "user:"+name, tUsers, cloneUser, func() (*store.User, error) {
		var u store.User
		err := s.d.conn(ctx).Where("lower_name = ?", name).Take(&u).Error
		return &u, err
	})
	if err != nil {
		return nil, translate(err, "find user")
	}
	return u, nil
}

func (s userStore) FindByIDs(ctx context.Context, ids []int64) (map[int64]*store.User, error) {
	return cachedByIDs(ctx, s.d, ids, userIDKey, tUsers, cloneUser, func(u *store.User) int64 { return u.ID }, nil,
		rowsByID[*store.User](ctx, s.d, "find users"))
}

// userDerivedColumns are kept by the people store's SQL arithmetic; Update
// never writes back a copy read earlier.
var userDerivedColumns = []string{"created_at", "num_followers", "num_following", "num_stars"}

func (s userStore) Update(ctx context.Context, u *store.User) error {
	u.LowerName = strings.ToLower(u.Name)
	res := s.d.conn(ctx).Select("*").Omit(userDerivedColumns...).Updates(u)
	return affected(res, "update user")
}

// Delete removes the row; its stars, follows and blocks go by ON DELETE
// CASCADE, after the counters they were counted in are moved back.
func (s userStore) Delete(ctx context.Context, id int64) error {
	return s.d.WithTx(ctx, func(ctx context.Context) error {
		db := s.d.conn(ctx)
		for _, stmt := range []string{
			`UPDATE users SET num_followers = num_followers - 1 WHERE id IN (SELECT follow_id FROM follows WHERE user_id = ?)`,
			`UPDATE users SET num_following = num_following - 1 WHERE id IN (SELECT user_id FROM follows WHERE follow_id = ?)`,
			`UPDATE repositories SET num_stars = num_stars - 1 WHERE id IN (SELECT repo_id FROM stars WHERE user_id = ?)`,
		} {
			if err := db.Exec(stmt, id).Error; err != nil {
				return translate(err, "delete user")
			}
		}
		return translate(db.Delete(&store.User{}, id).Error, "delete user")
	})
}

func (s userStore) Count(ctx context.Context, t store.UserType) (int64, error) {
	var n int64
	err := s.d.conn(ctx).Model(&store.User{}).Where("type = ?", t).Count(&n).Error
	return n, translate(err, "count users")
}

func (s userStore) Search(ctx context.Context, q store.UserSearch, p store.Page) ([]*store.User, int64, error) {
	if err := checkKeyword(q.Keyword); err != nil {
		return nil, 0, err
	}
	db := s.d.conn(ctx).Model(&store.User{})
	kw := strings.TrimSpace(q.Keyword)
	// The rows tested come from the trigram index when the keyword is
	// long enough for it (search_names.go). On SQLite, which has no
	// statistics, the unary + keeps the type's indexes out of it: it would
	// rather walk every user of the type in the page's order.
	ids, idArgs, candidates := s.d.userCandidates(kw, q.KeywordEmail)
	candidates = candidates && kw != ""
	if candidates {
		db = db.Where(s.d.columnIn("id", ids), idArgs...)
	}
	switch {
	case q.AnyType:
	case candidates && !s.d.usesPostgres():
		db = db.Where("+type = ?", q.Type)
	default:
		db = db.Where("type = ?", q.Type)
	}
	if kw != "" {
		pat := likePattern(kw)
		like := ` LIKE ? ESCAPE '\'` // stablePlans: the pattern bound does not recompile it
		switch {
		case q.KeywordEmail && q.HideKeptEmails:
			db = db.Where(`(lower_name`+like+` OR LOWER(full_name)`+like+`
				OR (LOWER(email)`+like+` AND (keep_email_private = ? OR id = ?)))`, pat, pat, pat, false, q.Self)
		case q.KeywordEmail:
			db = db.Where(`(lower_name`+like+` OR LOWER(full_name)`+like+` OR LOWER(email)`+like+`)`, pat, pat, pat)
		default:
			db = db.Where(`(lower_name`+like+` OR LOWER(full_name)`+like+`)`, pat, pat)
		}
	}
	if q.UID > 0 {
		db = db.Where("id = ?", q.UID)
	}
	// Each link table is read by its index on the key given.
	for _, l := range []struct {
		id    int64
		query string
	}{
		{q.FollowersOf, "SELECT user_id FROM follows WHERE follow_id = ?"},
		{q.FollowedBy, "SELECT follow_id FROM follows WHERE user_id = ?"},
		{q.StargazersOf, "SELECT user_id FROM stars WHERE repo_id = ?"},
		{q.BlockedBy, "SELECT blockee_id FROM user_blocks WHERE blocker_id = ?"},
	} {
		if l.id > 0 {
			db = db.Where(s.d.columnIn("id", l.query), l.id)
		}
	}
	if q.SourceID != nil {
		db = db.Where("source_id = ?", *q.SourceID)
	}
	if q.LoginName != "" {
		db = db.Where("login_name = ?", q.LoginName)
	}
	switch {
	case len(q.Visibilities) > 0 && q.Self != 0:
		db = db.Where("(visibility IN ? OR id = ?)", q.Visibilities, q.Self)
	case len(q.Visibilities) > 0:
		db = db.Where("visibility IN ?", q.Visibilities)
	}
	// In a fixed order: the same filters make the same SQL text, and so
	// reuse one prepared statement (and its plan).
	for _, f := range []struct {
		col string
		v   *bool
	}{{"is_active", q.IsActive}, {"is_admin", q.IsAdmin}, {"restricted", q.IsRestricted}, {"prohibit_login", q.ProhibitLogin}} {
		if f.v != nil {
			db = db.Where(f.col+" = ?", *f.v)
		}
	}
	order := parseOrder(q.OrderBy)
	switch {
	case len(order) == 0:
		order = listOrder{{expr: "lower_name"}}
	case order[0].expr != "lower_name":
		// lower_name is unique; any other key needs the id after it.
		order = order.tieBreak("id")
	}
	// Each statement starts from the filter afresh.
	db = db.Session(&gorm.Session{})
	count := func() (int64, error) {
		var total int64
		err := db.Count(&total).Error
		return total, translate(err, "count users")
	}
	page := func(total int64) ([]*store.User, error) {
		users, err := readPage[store.User](db, order, p, total)
		return users, translate(err, "search users")
	}
	if candidates {
		// A keyword's few candidates: the first page may be the whole set.
		return pageThenCount(p, page, count)
	}
	total, err := count()
	if err != nil {
		return nil, 0, err
	}
	users, err := page(total)
	return users, total, err
}
