package store

import (
	"context"
	"time"
)

// LFSMetaObject links a Git LFS object (its SHA-256 and size) to one
// repository that may serve it. The object's bytes are kept once, by oid,
// in the LFS object store however many repositories link it.
type LFSMetaObject struct {
	ID           int64 `gorm:"primaryKey"`
	Oid          string
	Size         int64
	RepositoryID int64
	CreatedAt    time.Time
}

// TableName is the reference's name for the table.
func (LFSMetaObject) TableName() string { return "lfs_meta_objects" }

// LFSLock is a lock a user holds on a path of a repository (git lfs lock).
type LFSLock struct {
	ID        int64 `gorm:"primaryKey"`
	RepoID    int64
	OwnerID   int64
	Owner     *User `gorm:"foreignKey:OwnerID"`
	Path      string
	CreatedAt time.Time
}

// TableName keeps the locks beside the objects.
func (LFSLock) TableName() string { return "lfs_locks" }

// LFSStore keeps which repositories link which LFS objects, and the locks.
type LFSStore interface {
	// Link records that repoID has the object; linking it again is no
	// error and changes nothing.
	Link(ctx context.Context, repoID int64, oid string, size int64) error
	// Meta is repoID's link to oid; ErrNotFound when it has none.
	Meta(ctx context.Context, repoID int64, oid string) (*LFSMetaObject, error)
	// ReposWith lists up to limit repositories that link oid.
	ReposWith(ctx context.Context, oid string, limit int) ([]int64, error)
	// Linked tells whether any repository links oid.
	Linked(ctx context.Context, oid string) (bool, error)
	// OwnerBytes is the size of the objects the repositories of ownerID
	// link, each counted once per repository (as the reference counts a
	// repository's LFS size).
	OwnerBytes(ctx context.Context, ownerID int64) (int64, error)

	// CreateLock adds l; ErrDuplicate (with the existing lock returned)
	// when the path is locked already.
	CreateLock(ctx context.Context, l *LFSLock) (*LFSLock, error)
	// Lock is repoID's lock id; ErrNotFound when there is none.
	Lock(ctx context.Context, repoID, id int64) (*LFSLock, error)
	// LockByPath is repoID's lock of path; ErrNotFound when there is none.
	LockByPath(ctx context.Context, repoID int64, path string) (*LFSLock, error)
	// Locks lists repoID's locks, oldest first, skipping offset.
	Locks(ctx context.Context, repoID int64, offset, limit int) ([]*LFSLock, error)
	// DeleteLock removes repoID's lock id; ErrNotFound when there is none.
	DeleteLock(ctx context.Context, repoID, id int64) error
}
