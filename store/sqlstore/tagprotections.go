package sqlstore

import (
	"context"

	"repohost/store"
)

func (d *DB) TagProtections() store.TagProtectionStore { return tagProtectionStore{d} }

type tagProtectionStore struct{ d *DB }

func (s tagProtectionStore) ListAll(ctx context.Context, repoID int64) ([]*store.ProtectedTag, error) {
	var out []*store.ProtectedTag
	err := s.d.conn(ctx).Where("repo_id = ?", repoID).Order("id ASC").Find(&out).Error
	return out, translate(err, "list tag protections")
}

func (s tagProtectionStore) Find(ctx context.Context, repoID, id int64) (*store.ProtectedTag, error) {
	var pt store.ProtectedTag
	if err := s.d.conn(ctx).Where("repo_id = ? AND id = ?", repoID, id).Take(&pt).Error; err != nil {
		return nil, translate(err, "find tag protection")
	}
	return &pt, nil
}

func (s tagProtectionStore) Create(ctx context.Context, pt *store.ProtectedTag) error {
	return translate(s.d.conn(ctx).Create(pt).Error, "create tag protection")
}

func (s tagProtectionStore) Update(ctx context.Context, pt *store.ProtectedTag) error {
	res := s.d.conn(ctx).Select("*").Omit("created_at").Updates(pt)
	return affected(res, "update tag protection")
}

func (s tagProtectionStore) Delete(ctx context.Context, repoID, id int64) error {
	res := s.d.conn(ctx).Where("repo_id = ? AND id = ?", repoID, id).Delete(&store.ProtectedTag{})
	return affected(res, "delete tag protection")
}
