package store

import (
	"context"
	"time"
)

// Repository statuses, as the reference's: a repository being migrated
// has its row (its name is taken, its owner sees it) but no content yet,
// and refuses pushes until the migration has filled it.
const (
	RepoStatusReady         = 0
	RepoStatusBeingMigrated = 1
)

// RepoMigration is a migration waiting for, or under way in, the
// repo_migrate consumer: where the repository's content comes from. The
// row goes when the migration ends; a failed migration takes its
// repository (and this row) with it, so it can be asked for again.
type RepoMigration struct {
	RepoID    int64 `gorm:"primaryKey;autoIncrement:false"`
	DoerID    int64
	CloneAddr string
	// AuthUsername and AuthSecret (the password, or the token) log in
	// to the source; AuthSecret is kept sealed with the instance secret
	// key and handed back in clear.
	AuthUsername string
	AuthSecret   string
	Service      string
	// Items are what the migration brings beyond the git data, from
	// the source's API (MigrationItems, comma-separated).
	Items     string
	CreatedAt time.Time
}

// RepoMigrationStore keeps the migrations under way.
type RepoMigrationStore interface {
	Create(ctx context.Context, m *RepoMigration) error
	// Find is ErrNotFound when repoID has no migration under way.
	Find(ctx context.Context, repoID int64) (*RepoMigration, error)
	// Finish deletes the migration and marks its repository ready;
	// ErrNotFound when repoID has no migration under way (another run of
	// it finished it first). Its row lock, on PostgreSQL, makes a
	// concurrent Finish of the same migration wait for this transaction.
	Finish(ctx context.Context, repoID int64) error
	// Abandon deletes the migration of a run that failed, reporting
	// whether it was still there: false when another run of it finished
	// (or abandoned) it first. It waits for such a run's transaction, so
	// the answer is never read from before that run committed.
	Abandon(ctx context.Context, repoID int64) (bool, error)
}
