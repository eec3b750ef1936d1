package store

import (
	"context"
	"time"
)

// Release is a published or draft release of a repository. Its git tag lives
// in the repository; a draft's tag is created only when it is published.
type Release struct {
	ID           int64 `gorm:"primaryKey"`
	RepoID       int64
	PublisherID  int64
	TagName      string
	Target       string // branch or commit the tag is made at
	Title        string
	Note         string
	Sha1         string // commit the tag named when the release was last published
	IsDraft      bool
	IsPrerelease bool
	CreatedAt    time.Time
	UpdatedAt    time.Time
	PublishedAt  *time.Time

	// Publisher and Attachments are filled by the store's loaders, never
	// written.
	Publisher   *User                `gorm:"-"`
	Attachments []*ReleaseAttachment `gorm:"-"`
}

// ReleaseAttachment is a file uploaded to a release. Its bytes live on disk
// under the attachments directory, named by UUID; Name is only shown.
type ReleaseAttachment struct {
	ID            int64 `gorm:"primaryKey"`
	UUID          string
	RepoID        int64
	ReleaseID     int64
	UploaderID    int64
	Name          string
	Size          int64
	DownloadCount int64
	CreatedAt     time.Time
}

// TableName keeps release files apart from any other kind of attachment.
func (ReleaseAttachment) TableName() string { return "release_attachments" }

// ReleaseSearch filters a repository's releases. Nil pointers mean "any".
type ReleaseSearch struct {
	RepoID int64
	// IncludeDrafts is false for callers who may not see drafts; IsDraft
	// then cannot bring them back.
	IncludeDrafts bool
	IsDraft       *bool
	IsPrerelease  *bool
}

// ReleaseStore reads and writes releases. Every method that returns
// releases loads their publisher and attachments in a fixed number of
// statements.
type ReleaseStore interface {
	// Create fails with ErrDuplicate when the repository already has a
	// release for the tag.
	Create(ctx context.Context, r *Release) error
	FindByID(ctx context.Context, repoID, id int64) (*Release, error)
	// FindByIDs is the releases among ids that exist, by id, without
	// their attachments.
	FindByIDs(ctx context.Context, ids []int64) (map[int64]*Release, error)
	FindByTag(ctx context.Context, repoID int64, tag string) (*Release, error)
	// FindLatest is the newest published release that is neither a draft nor
	// a pre-release.
	FindLatest(ctx context.Context, repoID int64) (*Release, error)
	// List returns one page, newest first, and the size of the filtered set.
	List(ctx context.Context, q ReleaseSearch, p Page) ([]*Release, int64, error)
	// Update writes every column of r.
	Update(ctx context.Context, r *Release) error
	// Delete removes the release and (by cascade) its attachment rows, and
	// returns those rows so the caller can remove their files.
	Delete(ctx context.Context, repoID, id int64) ([]*ReleaseAttachment, error)
}

// ReleaseAttachmentStore reads and writes release attachments.
type ReleaseAttachmentStore interface {
	Create(ctx context.Context, a *ReleaseAttachment) error
	FindByID(ctx context.Context, releaseID, id int64) (*ReleaseAttachment, error)
	FindByUUID(ctx context.Context, uuid string) (*ReleaseAttachment, error)
	ListByRelease(ctx context.Context, releaseID int64, p Page) ([]*ReleaseAttachment, int64, error)
	Delete(ctx context.Context, id int64) error
	CountDownload(ctx context.Context, id int64) error
}

// ReleaseData bundles the stores of releases and their attachments.
type ReleaseData interface {
	Releases() ReleaseStore
	ReleaseAttachments() ReleaseAttachmentStore
}
