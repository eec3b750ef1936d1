package sqlstore

import (
	"context"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"repohost/store"
)

func (d *DB) Notifications() store.NotificationStore { return notificationStore{d} }

type notificationStore struct{ d *DB }

func (s notificationStore) Notify(ctx context.Context, n *store.Notification) error {
	// A read thread becomes unread and points at the new comment; an
	// unread one keeps pointing at the first comment not read; a pinned
	// one stays pinned. All move to the top.
	err := s.d.conn(ctx).Clauses(clause.OnConflict{
		Columns: []clause.Column{{Name: "user_id"}, {Name: "repo_id"}, {Name: "issue_id"}},
		DoUpdates: clause.Set{
			{Column: clause.Column{Name: "comment_id"}, Value: gorm.Expr("CASE WHEN notifications.status = ? THEN excluded.comment_id ELSE notifications.comment_id END", store.NotificationRead)},
			{Column: clause.Column{Name: "status"}, Value: gorm.Expr("CASE WHEN notifications.status = ? THEN ? ELSE notifications.status END", store.NotificationRead, store.NotificationUnread)},
			{Column: clause.Column{Name: "release_id"}, Value: gorm.Expr("excluded.release_id")},
			{Column: clause.Column{Name: "source"}, Value: gorm.Expr("excluded.source")},
			{Column: clause.Column{Name: "updated_by"}, Value: gorm.Expr("excluded.updated_by")},
			{Column: clause.Column{Name: "updated_at"}, Value: gorm.Expr("CASE WHEN excluded.updated_at > notifications.updated_at THEN excluded.updated_at ELSE notifications.updated_at END")},
		},
	}).Create(n).Error
	return translate(err, "notify")
}

// filter keeps f's threads of the repositories f.Viewer may see (the
// access rule's SQL mirror), whose issue still exists.
func (s notificationStore) filter(ctx context.Context, f store.NotificationFilter) *gorm.DB {
	db := s.d.conn(ctx).Model(&store.Notification{}).Where("notifications.user_id = ?", f.UserID)
	if f.RepoID > 0 {
		db = db.Where("notifications.repo_id = ?", f.RepoID)
	}
	if len(f.Statuses) > 0 {
		db = db.Where("notifications.status IN ?", f.Statuses)
	}
	if len(f.Sources) > 0 {
		db = db.Where("notifications.source IN ?", f.Sources)
	}
	if f.Since != nil {
		db = db.Where("notifications.updated_at >= ?", f.Since.UTC())
	}
	if f.Before != nil {
		db = db.Where("notifications.updated_at < ?", f.Before.UTC())
	}
	for repoID, sources := range f.Hidden {
		if len(sources) > 0 {
			db = db.Where("NOT (notifications.repo_id = ? AND notifications.source IN ?)", repoID, sources)
		}
	}
	db = db.Where("(notifications.issue_id = 0 OR EXISTS (SELECT 1 FROM issues WHERE issues.id = notifications.issue_id))")
	if cond, args := visibilityOf(f.Viewer).cond(false); cond != "" {
		db = db.Joins("JOIN repositories ON repositories.id = notifications.repo_id").Where(cond, args...)
	}
	return db
}

func (s notificationStore) List(ctx context.Context, f store.NotificationFilter, p store.Page) ([]*store.Notification, int64, error) {
	total, err := s.Count(ctx, f)
	if err != nil {
		return nil, 0, err
	}
	out, err := readPage[store.Notification](s.filter(ctx, f).Select("notifications.*"),
		parseOrder("notifications.updated_at DESC, notifications.id DESC"), p, total)
	return out, total, translate(err, "list notifications")
}

func (s notificationStore) Count(ctx context.Context, f store.NotificationFilter) (int64, error) {
	var n int64
	err := s.filter(ctx, f).Count(&n).Error
	return n, translate(err, "count notifications")
}

func (s notificationStore) Find(ctx context.Context, id int64) (*store.Notification, error) {
	var n store.Notification
	if err := s.d.conn(ctx).Where("id = ?", id).Take(&n).Error; err != nil {
		return nil, translate(err, "find notification")
	}
	return &n, nil
}

func (s notificationStore) SetStatus(ctx context.Context, id int64, status int, at time.Time) error {
	res := s.d.conn(ctx).Model(&store.Notification{}).Where("id = ?", id).
		UpdateColumns(map[string]any{"status": status, "updated_at": at.UTC()})
	return affected(res, "change notification")
}

func (s notificationStore) RepoIDs(ctx context.Context, userID, repoID int64) ([]int64, error) {
	var ids []int64
	db := s.d.conn(ctx).Model(&store.Notification{}).Where("user_id = ?", userID)
	if repoID != 0 {
		db = db.Where("repo_id = ?", repoID)
	}
	err := db.Distinct("repo_id").Pluck("repo_id", &ids).Error
	return ids, translate(err, "list notification repositories")
}

func (s notificationStore) SetStatuses(ctx context.Context, f store.NotificationFilter, upTo time.Time, status int, at time.Time) ([]*store.Notification, error) {
	var out []*store.Notification
	err := s.d.WithTx(ctx, func(ctx context.Context) error {
		var ids []int64
		if err := s.filter(ctx, f).Where("notifications.updated_at <= ?", upTo.UTC()).
			Order("notifications.updated_at DESC, notifications.id DESC").Pluck("notifications.id", &ids).Error; err != nil {
			return translate(err, "list notifications")
		}
		if len(ids) == 0 {
			return nil
		}
		if err := s.d.conn(ctx).Model(&store.Notification{}).Where("id IN ?", ids).
			UpdateColumns(map[string]any{"status": status, "updated_at": at.UTC()}).Error; err != nil {
			return translate(err, "change notifications")
		}
		return translate(s.d.conn(ctx).Where("id IN ?", ids).Order("updated_at DESC, id DESC").Find(&out).Error, "list notifications")
	})
	return out, err
}

// FindByIDs is the releases among ids, by id (a page of notification
// threads reads its releases in one go).
func (s releaseStore) FindByIDs(ctx context.Context, ids []int64) (map[int64]*store.Release, error) {
	out := make(map[int64]*store.Release, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	var list []*store.Release
	if err := s.d.conn(ctx).Where("id IN ?", ids).Find(&list).Error; err != nil {
		return nil, translate(err, "find releases")
	}
	for _, r := range list {
		out[r.ID] = r
	}
	return out, nil
}
