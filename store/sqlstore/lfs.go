package sqlstore

import (
	"context"
	"errors"

	"gorm.io/gorm/clause"

	"repohost/store"
)

func (d *DB) LFS() store.LFSStore { return lfsStore{d} }

type lfsStore struct{ d *DB }

func (s lfsStore) Link(ctx context.Context, repoID int64, oid string, size int64) error {
	m := &store.LFSMetaObject{Oid: oid, Size: size, RepositoryID: repoID}
	err := s.d.conn(ctx).Clauses(clause.OnConflict{
		Columns:   []clause.Column{{Name: "repository_id"}, {Name: "oid"}},
		DoNothing: true,
	}).Create(m).Error
	return translateRef(err, "link lfs object")
}

func (s lfsStore) Meta(ctx context.Context, repoID int64, oid string) (*store.LFSMetaObject, error) {
	var m store.LFSMetaObject
	if err := s.d.conn(ctx).Where("repository_id = ? AND oid = ?", repoID, oid).Take(&m).Error; err != nil {
		return nil, translate(err, "find lfs object")
	}
	return &m, nil
}

func (s lfsStore) ReposWith(ctx context.Context, oid string, limit int) ([]int64, error) {
	var ids []int64
	err := s.d.conn(ctx).Model(&store.LFSMetaObject{}).Where("oid = ?", oid).
		Order("repository_id ASC").Limit(limit).Pluck("repository_id", &ids).Error
	return ids, translate(err, "list repositories with lfs object")
}

func (s lfsStore) Linked(ctx context.Context, oid string) (bool, error) {
	ids, err := s.ReposWith(ctx, oid, 1)
	return len(ids) > 0, err
}

func (s lfsStore) OwnerBytes(ctx context.Context, ownerID int64) (int64, error) {
	var total int64
	err := s.d.conn(ctx).Raw(`SELECT COALESCE(SUM(m.size), 0) FROM lfs_meta_objects m
		JOIN repositories r ON r.id = m.repository_id WHERE r.owner_id = ?`, ownerID).Scan(&total).Error
	return total, translate(err, "sum lfs objects of owner")
}

func (s lfsStore) CreateLock(ctx context.Context, l *store.LFSLock) (*store.LFSLock, error) {
	err := s.d.conn(ctx).Omit("Owner").Clauses(clause.OnConflict{
		Columns:   []clause.Column{{Name: "repo_id"}, {Name: "path"}},
		DoNothing: true,
	}).Create(l).Error
	if err != nil {
		return nil, translateRef(err, "create lfs lock")
	}
	if l.ID == 0 {
		// The path is locked already: the existing lock is the answer.
		prev, err := s.LockByPath(ctx, l.RepoID, l.Path)
		if err != nil {
			return nil, err
		}
		return prev, store.ErrDuplicate
	}
	got, err := s.Lock(ctx, l.RepoID, l.ID)
	if errors.Is(err, store.ErrNotFound) {
		return l, nil
	}
	return got, err
}

func (s lfsStore) Lock(ctx context.Context, repoID, id int64) (*store.LFSLock, error) {
	var l store.LFSLock
	if err := s.d.conn(ctx).Preload("Owner").Where("repo_id = ? AND id = ?", repoID, id).Take(&l).Error; err != nil {
		return nil, translate(err, "find lfs lock")
	}
	return &l, nil
}

func (s lfsStore) LockByPath(ctx context.Context, repoID int64, path string) (*store.LFSLock, error) {
	var l store.LFSLock
	if err := s.d.conn(ctx).Preload("Owner").Where("repo_id = ? AND path = ?", repoID, path).Take(&l).Error; err != nil {
		return nil, translate(err, "find lfs lock")
	}
	return &l, nil
}

func (s lfsStore) Locks(ctx context.Context, repoID int64, offset, limit int) ([]*store.LFSLock, error) {
	var out []*store.LFSLock
	err := s.d.conn(ctx).Preload("Owner").Where("repo_id = ?", repoID).Order("id ASC").
		Offset(offset).Limit(limit).Find(&out).Error
	return out, translate(err, "list lfs locks")
}

func (s lfsStore) DeleteLock(ctx context.Context, repoID, id int64) error {
	res := s.d.conn(ctx).Where("repo_id = ? AND id = ?", repoID, id).Delete(&store.LFSLock{})
	return affected(res, "delete lfs lock")
}
