package store

import (
	"context"
	"time"
)

// Package is a named package of one owner and one type (generic, npm, …).
// Its versions carry the files; a package without versions does not last.
type Package struct {
	ID      int64 `gorm:"primaryKey"`
	OwnerID int64
	// RepoID links the package to a repository of the same owner; 0 when
	// it is not linked.
	RepoID    int64
	Type      string
	Name      string
	LowerName string
	CreatedAt time.Time
}

// PackageVersion is one version of a package. OwnerID and Type repeat the
// package's (they never change) so that the lists of an owner's or of every
// owner's versions, filtered by type, are read from one index in order.
type PackageVersion struct {
	ID           int64 `gorm:"primaryKey"`
	PackageID    int64
	OwnerID      int64
	Type         string
	CreatorID    int64
	Version      string
	LowerVersion string
	// Metadata is what the registry of the type keeps about the version
	// (npm: the version's package.json document), as JSON; "" when none.
	Metadata  string
	CreatedAt time.Time

	// Filled by the store's loaders, never written.
	Package *Package    `gorm:"-"`
	Owner   *User       `gorm:"-"`
	Creator *User       `gorm:"-"`
	Repo    *Repository `gorm:"-"`
}

// PackageBlob is the content of one or more package files, stored once
// under the data directory and named by its SHA-256.
type PackageBlob struct {
	ID         int64  `gorm:"primaryKey"`
	HashSHA256 string `gorm:"column:hash_sha256"`
	HashSHA512 string `gorm:"column:hash_sha512"`
	HashSHA1   string `gorm:"column:hash_sha1"`
	HashMD5    string `gorm:"column:hash_md5"`
	Size       int64
	CreatedAt  time.Time
}

// PackageFile is a named file of a package version; its bytes are a blob.
type PackageFile struct {
	ID        int64 `gorm:"primaryKey"`
	VersionID int64
	BlobID    int64
	Name      string
	LowerName string
	CreatedAt time.Time

	Blob *PackageBlob `gorm:"-"`
}

// PackageTag points a name at a version of a package (npm's dist-tags).
type PackageTag struct {
	PackageID int64  `gorm:"primaryKey;autoIncrement:false"`
	Tag       string `gorm:"primaryKey"`
	VersionID int64
}

// PackageSearch filters package versions. Zero values mean "any".
type PackageSearch struct {
	OwnerID   int64
	PackageID int64
	Type      string
	// Query keeps versions whose package name contains it, ignoring case.
	Query string
	// LatestOnly keeps each package's newest version only (by creation,
	// then id): one row per package, as a registry's search lists them.
	LatestOnly bool
}

// PackageStore reads and writes packages, their versions, files, blobs and
// tags. Every method returning versions loads their package, owner,
// creator and linked repository in a fixed number of statements.
type PackageStore interface {
	// FindOrCreate returns the owner's package of p's type and name,
	// creating it from p when there is none; p is filled either way.
	FindOrCreate(ctx context.Context, p *Package) error
	Find(ctx context.Context, ownerID int64, typ, name string) (*Package, error)
	// SetRepo links the package to repoID (0 unlinks).
	SetRepo(ctx context.Context, packageID, repoID int64) error
	// Delete removes the package with its versions, files and tags (the
	// blobs stay for CleanupBlobs to find).
	Delete(ctx context.Context, id int64) error

	// CreateVersion fails with ErrDuplicate when the version exists.
	CreateVersion(ctx context.Context, v *PackageVersion) error
	FindVersion(ctx context.Context, packageID int64, version string) (*PackageVersion, error)
	FindVersionByID(ctx context.Context, id int64) (*PackageVersion, error)
	// FindLatestVersion is the newest version by creation.
	FindLatestVersion(ctx context.Context, packageID int64) (*PackageVersion, error)
	// DeleteVersion removes the version with its files and the tags
	// pointing at it, and reports how many versions the package has left.
	DeleteVersion(ctx context.Context, v *PackageVersion) (left int64, err error)
	// SearchVersions returns one page, newest first, and the size of the
	// filtered set.
	SearchVersions(ctx context.Context, q PackageSearch, p Page) ([]*PackageVersion, int64, error)
	// AllVersions lists every version of a package, oldest first, each with
	// its files and their blobs (npm's package document names them all).
	AllVersions(ctx context.Context, packageID int64) ([]*PackageVersion, map[int64][]*PackageFile, error)

	// FindOrCreateBlob returns the blob with b's SHA-256, creating it from
	// b when there is none; b is filled either way.
	FindOrCreateBlob(ctx context.Context, b *PackageBlob) error
	// CreateFile fails with ErrDuplicate when the version has a file of
	// that name (ignoring case).
	CreateFile(ctx context.Context, f *PackageFile) error
	// FindFile loads the file with its blob.
	FindFile(ctx context.Context, versionID int64, name string) (*PackageFile, error)
	// ListFiles lists a version's files by name, each with its blob.
	ListFiles(ctx context.Context, versionID int64) ([]*PackageFile, error)
	DeleteFile(ctx context.Context, id int64) error
	// OwnerUsage is the total size of the files of the owner's packages.
	OwnerUsage(ctx context.Context, ownerID int64) (int64, error)
	// UnreferencedBlobs lists up to limit blobs no file uses.
	UnreferencedBlobs(ctx context.Context, limit int) ([]*PackageBlob, error)
	// DeleteBlobIfUnreferenced deletes the blob unless a file uses it
	// (again), and reports whether it did.
	DeleteBlobIfUnreferenced(ctx context.Context, id int64) (bool, error)
	// BlobExists tells whether a blob row has the SHA-256.
	BlobExists(ctx context.Context, sha256 string) (bool, error)

	SetTag(ctx context.Context, t *PackageTag) error
	RemoveTag(ctx context.Context, packageID int64, tag string) error
	ListTags(ctx context.Context, packageID int64) ([]*PackageTag, error)
}
