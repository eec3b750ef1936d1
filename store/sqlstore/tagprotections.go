package sqlstore

import (
	"context"

	"gorm.io/gorm/clause"

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

func (d *DB) LanguageStats() store.LanguageStatsStore { return languageStatsStore{d} }

type languageStatsStore struct{ d *DB }

func (s languageStatsStore) Find(ctx context.Context, repoID int64) (*store.LanguageStats, error) {
	var ls store.LanguageStats
	if err := s.d.conn(ctx).Where("repo_id = ?", repoID).Take(&ls).Error; err != nil {
		return nil, translate(err, "find language stats")
	}
	return &ls, nil
}

func (s languageStatsStore) Put(ctx context.Context, ls *store.LanguageStats) error {
	err := s.d.conn(ctx).Clauses(clause.OnConflict{
		Columns:   []clause.Column{{Name: "repo_id"}},
		DoUpdates: clause.AssignmentColumns([]string{"tree_id", "sizes"}),
	}).Create(ls).Error
	return translate(err, "store language stats")
}
