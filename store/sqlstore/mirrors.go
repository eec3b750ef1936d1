package sqlstore

import (
	"context"
	"fmt"
	"time"

	"repohost/store"
)

func (d *DB) Mirrors() store.MirrorStore { return mirrorStore{d} }

type mirrorStore struct{ d *DB }

// Credentials are kept sealed with the instance secret key, as webhooks'
// authorization headers are (sealedColumns lists both columns).

func (s mirrorStore) seal(v string) (string, error) {
	out, err := s.d.secrets.Seal(v)
	if err != nil {
		return "", fmt.Errorf("seal the credentials of a mirror: %w", err)
	}
	return out, nil
}

func (s mirrorStore) open(v string) (string, error) {
	out, err := s.d.secrets.Open(v)
	if err != nil {
		return "", fmt.Errorf("open the credentials of a mirror: %w", err)
	}
	return out, nil
}

func (s mirrorStore) Create(ctx context.Context, m *store.Mirror) error {
	row := *m
	var err error
	if row.AuthSecret, err = s.seal(m.AuthSecret); err != nil {
		return err
	}
	if err := s.d.conn(ctx).Create(&row).Error; err != nil {
		return translate(err, "create mirror")
	}
	m.ID, m.CreatedAt = row.ID, row.CreatedAt
	return nil
}

func (s mirrorStore) Find(ctx context.Context, repoID int64) (*store.Mirror, error) {
	var m store.Mirror
	if err := s.d.conn(ctx).Where("repo_id = ?", repoID).Take(&m).Error; err != nil {
		return nil, translate(err, "find mirror")
	}
	v, err := s.open(m.AuthSecret)
	if err != nil {
		return nil, err
	}
	m.AuthSecret = v
	return &m, nil
}

func (s mirrorStore) Schedule(ctx context.Context, repoID int64, next *time.Time) error {
	err := s.d.conn(ctx).Model(&store.Mirror{}).Where("repo_id = ?", repoID).Update("next_update", next).Error
	return translate(err, "schedule mirror")
}

func (s mirrorStore) Synced(ctx context.Context, repoID int64, at time.Time, next *time.Time) error {
	return s.d.WithTx(ctx, func(ctx context.Context) error {
		db := s.d.conn(ctx)
		if err := db.Model(&store.Mirror{}).Where("repo_id = ?", repoID).Update("next_update", next).Error; err != nil {
			return translate(err, "schedule mirror")
		}
		// A synced mirror is ready: its first sync ends its creation.
		err := db.Model(&store.Repository{}).Where("id = ?", repoID).
			Updates(map[string]any{"mirror_updated": at, "status": store.RepoStatusReady}).Error
		return translate(err, "record mirror update")
	})
}

func (s mirrorStore) Due(ctx context.Context, now time.Time, limit int) ([]int64, error) {
	var ids []int64
	err := s.d.conn(ctx).Model(&store.Mirror{}).Where("next_update <= ?", now).
		Order("next_update ASC").Limit(limit).Pluck("repo_id", &ids).Error
	return ids, translate(err, "list due mirrors")
}

func (s mirrorStore) CreatePush(ctx context.Context, m *store.PushMirror) error {
	row := *m
	var err error
	if row.AuthSecret, err = s.seal(m.AuthSecret); err != nil {
		return err
	}
	if err := s.d.conn(ctx).Create(&row).Error; err != nil {
		return translate(err, "create push mirror")
	}
	m.ID, m.CreatedAt = row.ID, row.CreatedAt
	return nil
}

func (s mirrorStore) openAll(ms []*store.PushMirror) error {
	for _, m := range ms {
		v, err := s.open(m.AuthSecret)
		if err != nil {
			return err
		}
		m.AuthSecret = v
	}
	return nil
}

var pushMirrorOrder = listOrder{{expr: "push_mirrors.id"}}

func (s mirrorStore) ListPush(ctx context.Context, repoID int64, p store.Page) ([]*store.PushMirror, int64, error) {
	db := s.d.conn(ctx).Model(&store.PushMirror{}).Where("push_mirrors.repo_id = ?", repoID)
	var total int64
	if err := db.Count(&total).Error; err != nil {
		return nil, 0, translate(err, "count push mirrors")
	}
	out, err := readPage[store.PushMirror](db, pushMirrorOrder, p, total)
	if err != nil {
		return nil, 0, translate(err, "list push mirrors")
	}
	return out, total, s.openAll(out)
}

func (s mirrorStore) AllPush(ctx context.Context, repoID int64) ([]*store.PushMirror, error) {
	var out []*store.PushMirror
	if err := s.d.conn(ctx).Where("repo_id = ?", repoID).Order("id ASC").Find(&out).Error; err != nil {
		return nil, translate(err, "list push mirrors")
	}
	return out, s.openAll(out)
}

func (s mirrorStore) FindPush(ctx context.Context, repoID int64, remoteName string) (*store.PushMirror, error) {
	var m store.PushMirror
	if err := s.d.conn(ctx).Where("repo_id = ? AND remote_name = ?", repoID, remoteName).Take(&m).Error; err != nil {
		return nil, translate(err, "find push mirror")
	}
	return &m, s.openAll([]*store.PushMirror{&m})
}

func (s mirrorStore) DeletePush(ctx context.Context, repoID int64, remoteName string) error {
	res := s.d.conn(ctx).Where("repo_id = ? AND remote_name = ?", repoID, remoteName).Delete(&store.PushMirror{})
	return affected(res, "delete push mirror")
}

func (s mirrorStore) Pushed(ctx context.Context, id int64, at time.Time, lastError string, next *time.Time) error {
	err := s.d.conn(ctx).Model(&store.PushMirror{}).Where("id = ?", id).
		Updates(map[string]any{"last_update": at, "last_error": lastError, "next_update": next}).Error
	return translate(err, "record push mirror update")
}

func (s mirrorStore) SchedulePush(ctx context.Context, id int64, next *time.Time) error {
	err := s.d.conn(ctx).Model(&store.PushMirror{}).Where("id = ?", id).Update("next_update", next).Error
	return translate(err, "schedule push mirror")
}

func (s mirrorStore) DuePush(ctx context.Context, now time.Time, limit int) ([]*store.PushMirror, error) {
	var out []*store.PushMirror
	err := s.d.conn(ctx).Where("next_update <= ?", now).Order("next_update ASC").Limit(limit).Find(&out).Error
	if err != nil {
		return nil, translate(err, "list due push mirrors")
	}
	return out, s.openAll(out)
}
