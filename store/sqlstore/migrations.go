package sqlstore

import (
	"context"
	"fmt"

	"repohost/store"
)

func (d *DB) Migrations() store.RepoMigrationStore { return migrationStore{d} }

type migrationStore struct{ d *DB }

// The source's secret is kept sealed with the instance secret key, as
// webhooks' authorization headers are.

func (s migrationStore) Create(ctx context.Context, m *store.RepoMigration) error {
	row := *m
	v, err := s.d.secrets.Seal(m.AuthSecret)
	if err != nil {
		return fmt.Errorf("seal the credentials of a migration: %w", err)
	}
	row.AuthSecret = v
	if err := s.d.conn(ctx).Create(&row).Error; err != nil {
		return translate(err, "create migration")
	}
	m.CreatedAt = row.CreatedAt
	return nil
}

func (s migrationStore) Find(ctx context.Context, repoID int64) (*store.RepoMigration, error) {
	var m store.RepoMigration
	if err := s.d.conn(ctx).Where("repo_id = ?", repoID).Take(&m).Error; err != nil {
		return nil, translate(err, "find migration")
	}
	v, err := s.d.secrets.Open(m.AuthSecret)
	if err != nil {
		return nil, fmt.Errorf("open the credentials of a migration: %w", err)
	}
	m.AuthSecret = v
	return &m, nil
}

func (s migrationStore) Finish(ctx context.Context, repoID int64) error {
	db := s.d.conn(ctx)
	res := db.Where("repo_id = ?", repoID).Delete(&store.RepoMigration{})
	if res.Error != nil {
		return translate(res.Error, "delete migration")
	}
	if res.RowsAffected == 0 {
		return fmt.Errorf("finish migration: %w", store.ErrNotFound)
	}
	err := db.Model(&store.Repository{}).Where("id = ?", repoID).Update("status", store.RepoStatusReady).Error
	return translate(err, "mark repository ready")
}

func (s migrationStore) Abandon(ctx context.Context, repoID int64) (bool, error) {
	// A write: on PostgreSQL it waits for the row lock of a run that is
	// finishing, on SQLite for the one writer.
	res := s.d.conn(ctx).Where("repo_id = ?", repoID).Delete(&store.RepoMigration{})
	return res.RowsAffected > 0, translate(res.Error, "abandon migration")
}
