package store

import (
	"context"
	"time"
)

// Mirror is where a pull mirror comes from: a repository whose IsMirror
// is set has one, and its branches and tags are copies of the remote's,
// brought over by the mirror_sync consumer.
type Mirror struct {
	ID            int64 `gorm:"primaryKey"`
	RepoID        int64
	RemoteAddress string
	// AuthUsername and AuthSecret log in to the remote; AuthSecret is
	// kept sealed with the instance secret key and handed back in clear.
	AuthUsername string
	AuthSecret   string
	// EnablePrune removes the branches and tags the remote no longer has.
	EnablePrune bool
	// NextUpdate is when update_mirrors next queues a sync; nil (with
	// the repository's MirrorInterval 0) is never.
	NextUpdate *time.Time
	CreatedAt  time.Time
}

// PushMirror is a remote a repository is pushed to ("git push --mirror"),
// on every ref change when SyncOnCommit, and every Interval.
type PushMirror struct {
	ID            int64 `gorm:"primaryKey"`
	RepoID        int64
	RemoteName    string
	RemoteAddress string
	// AuthUsername and AuthSecret log in to the remote; AuthSecret is
	// kept sealed with the instance secret key and handed back in clear.
	AuthUsername string
	AuthSecret   string
	Interval     time.Duration
	SyncOnCommit bool
	// NextUpdate is when update_mirrors next queues a push (nil, with
	// Interval 0: never).
	NextUpdate *time.Time
	// LastUpdate is when the last push ended, LastError why it failed
	// ("" when it succeeded).
	LastUpdate *time.Time
	LastError  string
	CreatedAt  time.Time
}

// MirrorStore keeps pull and push mirrors.
type MirrorStore interface {
	// Create records r's pull mirror.
	Create(ctx context.Context, m *Mirror) error
	// Find is ErrNotFound when repoID is not a pull mirror.
	Find(ctx context.Context, repoID int64) (*Mirror, error)
	// Schedule sets when repoID's pull mirror is next due.
	Schedule(ctx context.Context, repoID int64, next *time.Time) error
	// Synced records a sync of repoID that ended at: the repository's
	// mirror_updated, and the next time it is due; the repository is
	// ready (the first sync ends a mirror's creation).
	Synced(ctx context.Context, repoID int64, at time.Time, next *time.Time) error
	// Due lists up to limit repositories whose pull mirror is due at now.
	Due(ctx context.Context, now time.Time, limit int) ([]int64, error)

	CreatePush(ctx context.Context, m *PushMirror) error
	// ListPush is page p of repoID's push mirrors, oldest first, and how
	// many it has.
	ListPush(ctx context.Context, repoID int64, p Page) ([]*PushMirror, int64, error)
	// AllPush is every push mirror of repoID (a repository has a few).
	AllPush(ctx context.Context, repoID int64) ([]*PushMirror, error)
	// FindPush is ErrNotFound when repoID has no push mirror so named.
	FindPush(ctx context.Context, repoID int64, remoteName string) (*PushMirror, error)
	// DeletePush is ErrNotFound when there is nothing to delete.
	DeletePush(ctx context.Context, repoID int64, remoteName string) error
	// Pushed records how push mirror id's push that ended at went, and
	// when it is next due.
	Pushed(ctx context.Context, id int64, at time.Time, lastError string, next *time.Time) error
	// SchedulePush sets when push mirror id is next due.
	SchedulePush(ctx context.Context, id int64, next *time.Time) error
	// DuePush lists up to limit push mirrors due at now.
	DuePush(ctx context.Context, now time.Time, limit int) ([]*PushMirror, error)
}

// TableName keeps pull mirrors apart from push mirrors.
func (Mirror) TableName() string { return "repo_mirrors" }
