// Package packages is the package registry: its storage (files as
// content-addressed blobs under the data directory, rows for packages,
// versions, files and blobs), the registries' own protocols outside the
// API (generic, npm), and the package API with its converters.
package packages

import (
	"context"
	"crypto/md5"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	"repohost/impl/apierr"
	"repohost/impl/app"
	"repohost/impl/events"
	"repohost/store"
	"repohost/store/objects"
)

// Types are the package types the reference knows, in its order.
var Types = []string{"alpine", "cargo", "chef", "composer", "conan", "conda", "container", "cran", "debian",
	"generic", "go", "helm", "maven", "npm", "nuget", "pub", "pypi", "rpm", "rubygems", "swift", "terraform", "vagrant"}

// KnownType tells whether t is one of Types.
func KnownType(t string) bool {
	for _, k := range Types {
		if k == t {
			return true
		}
	}
	return false
}

// Service is the only place that writes packages and their blobs.
type Service struct {
	*app.Deps
}

// staleUploadAge is how old a temporary upload file must be before the
// cleanup removes it: an upload in progress keeps writing to its file, so
// one untouched this long belongs to a process that died.
const staleUploadAge = 24 * time.Hour

// blobsPrefix is the part of every blob key before its hash.
const blobsPrefix = "blobs/"

// BlobKey is where the bytes with this SHA-256 (hex) live in
// Objects.Packages: two levels by prefix keep any one directory of the
// local disk small (PACKAGES/blobs/ab/cd/<sha256>, as always).
func BlobKey(sha string) string {
	return blobsPrefix + sha[0:2] + "/" + sha[2:4] + "/" + sha
}

// FileUpload is one file to add to a package version.
type FileUpload struct {
	Owner   *store.User
	Creator *store.User
	Type    string
	Name    string
	Version string
	// Metadata is stored with the version when this upload creates it.
	Metadata string
	// NewVersion refuses the upload (ErrDuplicate) when the version exists
	// already, as npm publishes whole versions; otherwise files are added
	// to the version, which is created with the first one.
	NewVersion bool
	Filename   string
	Body       io.Reader
	// Size is the announced length of Body, -1 when unknown; it lets a
	// limit refuse the upload before any of it is read.
	Size int64
}

// tempBlob is an upload written to a temporary file, with its hashes.
type tempBlob struct {
	path string
	blob store.PackageBlob
}

// readError marks a failure to read the client's body (as opposed to
// writing the file): cut off or too large.
type readError struct{ err error }

func (e readError) Error() string { return "read the upload: " + e.err.Error() }
func (e readError) Unwrap() error { return e.err }

type bodyReader struct{ r io.Reader }

func (b bodyReader) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	if err != nil && err != io.EOF {
		err = readError{err}
	}
	return n, err
}

// FileLimit is the largest file a package of type typ may have (-1: no
// limit): its Config.PackageTypeLimits entry, else MaxPackageFileBytes.
func (s Service) FileLimit(typ string) int64 {
	if l, ok := s.Config.PackageTypeLimits[typ]; ok {
		return l
	}
	return s.Config.MaxPackageFileBytes
}

// FileTooLarge is the refusal of a file of type typ past FileLimit.
func (s Service) FileTooLarge(typ string) error {
	return apierr.PayloadTooLarge("the package file is larger than the %d bytes allowed", s.FileLimit(typ))
}

// The longest package name and version any registry accepts: npm's
// limits (214 for names, 256 for versions), which also keep every
// name and version within its database index.
const (
	MaxPackageName    = 214
	MaxPackageVersion = 256
)

// checkNameAndVersion refuses names and versions past those limits.
func checkNameAndVersion(name, version string) error {
	switch {
	case len(name) > MaxPackageName:
		return apierr.BadRequest("the package name is longer than %d bytes", MaxPackageName)
	case len(version) > MaxPackageVersion:
		return apierr.BadRequest("the package version is longer than %d bytes", MaxPackageVersion)
	}
	return nil
}

func (s Service) ownerFull() error {
	return apierr.PayloadTooLarge("the owner's packages would take more than the %d bytes allowed", s.Config.MaxPackageOwnerBytes)
}

// checkOwnerQuota refuses adding size bytes to the owner's packages past
// Config.MaxPackageOwnerBytes.
func (s Service) checkOwnerQuota(ctx context.Context, ownerID, size int64) error {
	if s.Config.MaxPackageOwnerBytes < 0 {
		return nil
	}
	used, err := s.Store.Packages().OwnerUsage(ctx, ownerID)
	if err != nil {
		return err
	}
	if used+size > s.Config.MaxPackageOwnerBytes {
		return s.ownerFull()
	}
	return nil
}

// writeTemp streams body into a temporary file, hashing it on the way and
// holding at most a copy buffer in memory. The file is removed again unless
// the whole body arrived within the per-file limit.
func (s Service) writeTemp(body io.Reader, limit int64, typ string) (_ *tempBlob, err error) {
	f, err := s.TempFile()
	if err != nil {
		return nil, err
	}
	defer func() {
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			os.Remove(f.Name())
		}
	}()
	h256, h512, h1, h5 := sha256.New(), sha512.New(), sha1.New(), md5.New()
	src := bodyReader{body}
	var r io.Reader = src
	if limit >= 0 {
		r = io.LimitReader(src, limit+1)
	}
	n, err := io.Copy(io.MultiWriter(f, h256, h512, h1, h5), r)
	if err != nil {
		return nil, err
	}
	if limit >= 0 && n > limit {
		return nil, s.FileTooLarge(typ)
	}
	return &tempBlob{path: f.Name(), blob: store.PackageBlob{
		HashSHA256: hex.EncodeToString(h256.Sum(nil)),
		HashSHA512: hex.EncodeToString(h512.Sum(nil)),
		HashSHA1:   hex.EncodeToString(h1.Sum(nil)),
		HashMD5:    hex.EncodeToString(h5.Sum(nil)),
		Size:       n,
	}}, nil
}

// UploadError turns a failure to read an upload into the client's error:
// 413 past a body limit, 400 for a body that broke off.
func UploadError(err error) error {
	var mbe *http.MaxBytesError
	var re readError
	switch {
	case errors.As(err, &mbe):
		return apierr.PayloadTooLarge("the request body is larger than the %d bytes allowed", mbe.Limit)
	case errors.As(err, &re):
		return apierr.BadRequest("the upload could not be read: %v", re.err)
	}
	return err
}

// AddFile stores one uploaded file. The bytes go to a temporary file
// first (hashed on the way); only a complete upload within the limits is
// put in the store under its blob's key (unless the same bytes are there
// already) and recorded, all under
// the blob's lock, so a failed, aborted or refused upload leaves no file
// and no row behind, and the cleanup never removes a blob being recorded.
func (s Service) AddFile(ctx context.Context, in FileUpload) (*store.PackageVersion, *store.PackageFile, error) {
	if err := checkNameAndVersion(in.Name, in.Version); err != nil {
		return nil, nil, err
	}
	limit := s.FileLimit(in.Type)
	if in.Size > limit && limit >= 0 {
		return nil, nil, s.FileTooLarge(in.Type)
	}
	if in.Size > 0 {
		if err := s.checkOwnerQuota(ctx, in.Owner.ID, in.Size); err != nil {
			return nil, nil, err
		}
	}
	// Refuse a duplicate before reading what may be gigabytes.
	if err := s.checkNew(ctx, in); err != nil {
		return nil, nil, err
	}
	tmp, err := s.writeTemp(in.Body, limit, in.Type)
	if err != nil {
		return nil, nil, UploadError(err)
	}
	defer os.Remove(tmp.path) // gone already once moved into place
	blob := tmp.blob
	unlock, err := s.BlobLocks.Lock(ctx, blob.HashSHA256)
	if err != nil {
		return nil, nil, err
	}
	defer unlock()
	key := BlobKey(blob.HashSHA256)
	placed := false
	if _, err := s.Objects.Packages.Stat(ctx, key); objects.IsNotExist(err) {
		if err := objects.PutFile(ctx, s.Objects.Packages, key, tmp.path); err != nil {
			return nil, nil, err
		}
		placed = true
	} else if err != nil {
		return nil, nil, err
	}
	v, f, err := s.record(ctx, in, &blob)
	if err != nil && placed {
		// Nothing refers to the bytes this upload brought.
		bg := context.WithoutCancel(ctx)
		if exists, xerr := s.Store.Packages().BlobExists(bg, blob.HashSHA256); xerr == nil && !exists {
			_ = s.Objects.Packages.Delete(bg, key)
		}
	}
	return v, f, err
}

// checkNew answers 409 when the file (or, for NewVersion, the version)
// exists already.
func (s Service) checkNew(ctx context.Context, in FileUpload) error {
	pkg, err := s.Store.Packages().Find(ctx, in.Owner.ID, in.Type, in.Name)
	if errors.Is(err, store.ErrNotFound) {
		return nil
	} else if err != nil {
		return err
	}
	v, err := s.Store.Packages().FindVersion(ctx, pkg.ID, in.Version)
	if errors.Is(err, store.ErrNotFound) {
		return nil
	} else if err != nil {
		return err
	}
	if in.NewVersion {
		return apierr.Conflict("package version %s of %s already exists", v.Version, pkg.Name)
	}
	_, err = s.Store.Packages().FindFile(ctx, v.ID, in.Filename)
	if err == nil {
		return apierr.Conflict("package file %s already exists", in.Filename)
	} else if !errors.Is(err, store.ErrNotFound) {
		return err
	}
	return nil
}

// record writes the rows of an upload whose blob is in place, in one
// transaction with its event.
func (s Service) record(ctx context.Context, in FileUpload, blob *store.PackageBlob) (*store.PackageVersion, *store.PackageFile, error) {
	var v *store.PackageVersion
	f := &store.PackageFile{Name: in.Filename, CreatedAt: s.Clock.Now()}
	err := s.Store.WithTx(ctx, func(ctx context.Context) error {
		if err := s.checkOwnerQuota(ctx, in.Owner.ID, blob.Size); err != nil {
			return err
		}
		ps := s.Store.Packages()
		pkg := &store.Package{OwnerID: in.Owner.ID, Type: in.Type, Name: in.Name, CreatedAt: s.Clock.Now()}
		if err := ps.FindOrCreate(ctx, pkg); err != nil {
			return err
		}
		var err error
		v, err = ps.FindVersion(ctx, pkg.ID, in.Version)
		created := false
		switch {
		case errors.Is(err, store.ErrNotFound):
			v = &store.PackageVersion{PackageID: pkg.ID, OwnerID: in.Owner.ID, Type: in.Type, CreatorID: in.Creator.ID,
				Version: in.Version, Metadata: in.Metadata, CreatedAt: s.Clock.Now()}
			if err := ps.CreateVersion(ctx, v); err != nil {
				return duplicate(err, "package version %s already exists", in.Version)
			}
			created = true
		case err != nil:
			return err
		case in.NewVersion:
			return apierr.Conflict("package version %s of %s already exists", v.Version, pkg.Name)
		}
		if blob.ID == 0 {
			blob.CreatedAt = s.Clock.Now()
			if err := ps.FindOrCreateBlob(ctx, blob); err != nil {
				return err
			}
		}
		f.VersionID, f.BlobID = v.ID, blob.ID
		if err := ps.CreateFile(ctx, f); err != nil {
			return duplicate(err, "package file %s already exists", in.Filename)
		}
		f.Blob = blob
		if !created {
			return nil
		}
		v.Package, v.Owner, v.Creator = pkg, in.Owner, in.Creator
		return s.emit(ctx, events.PackageCreated, in.Creator, v)
	})
	if err != nil {
		return nil, nil, err
	}
	return v, f, nil
}

// duplicate turns the store's ErrDuplicate into a 409 with a message.
func duplicate(err error, format string, args ...any) error {
	if errors.Is(err, store.ErrDuplicate) {
		return apierr.Conflict(format, args...)
	}
	return err
}

// emit announces a change of version v (its package and owner loaded); a
// package linked to a repository makes it an event of that repository.
func (s Service) emit(ctx context.Context, kind events.Kind, doer *store.User, v *store.PackageVersion) error {
	payload := events.Package{ID: v.ID, PackageID: v.PackageID, Type: v.Type, Version: v.Version,
		CreatorID: v.CreatorID, CreatedAt: v.CreatedAt.UTC()}
	if v.Owner != nil {
		payload.Owner = events.Named{ID: v.Owner.ID, Name: v.Owner.Name}
	}
	if v.Package != nil {
		payload.Name, payload.RepoID = v.Package.Name, v.Package.RepoID
	}
	return s.Events.Emit(ctx, kind, payload.RepoID, events.ActorID(doer), payload)
}

// DeleteFile removes one file of a version, and the version with its last
// file. Its blob stays until CleanupBlobs finds it unused.
func (s Service) DeleteFile(ctx context.Context, doer *store.User, v *store.PackageVersion, f *store.PackageFile) error {
	return s.Store.WithTx(ctx, func(ctx context.Context) error {
		if err := s.Store.Packages().DeleteFile(ctx, f.ID); err != nil {
			return err
		}
		left, err := s.Store.Packages().ListFiles(ctx, v.ID)
		if err != nil || len(left) > 0 {
			return err
		}
		return s.DeleteVersion(ctx, doer, v)
	})
}

// DeleteVersion removes a version with its files, and its package with
// its last version.
func (s Service) DeleteVersion(ctx context.Context, doer *store.User, v *store.PackageVersion) error {
	return s.Store.WithTx(ctx, func(ctx context.Context) error {
		left, err := s.Store.Packages().DeleteVersion(ctx, v)
		if err != nil {
			return err
		}
		if left == 0 {
			if err := s.Store.Packages().Delete(ctx, v.PackageID); err != nil {
				return err
			}
		}
		return s.emit(ctx, events.PackageDeleted, doer, v)
	})
}

// DeletePackage removes a package with every version and file.
func (s Service) DeletePackage(ctx context.Context, doer *store.User, pkg *store.Package) error {
	return s.Store.WithTx(ctx, func(ctx context.Context) error {
		vs, _, err := s.Store.Packages().AllVersions(ctx, pkg.ID)
		if err != nil {
			return err
		}
		if err := s.Store.Packages().Delete(ctx, pkg.ID); err != nil {
			return err
		}
		for _, v := range vs {
			if err := s.emit(ctx, events.PackageDeleted, doer, v); err != nil {
				return err
			}
		}
		return nil
	})
}

// cleanupBatch is how many unused blobs one round of CleanupBlobs reads.
const cleanupBatch = 100

// CleanupBlobs removes what no package file uses any more: blob rows
// without files and their bytes, blob files without a row (left by a
// crash between placing and recording one), and temporary uploads older
// than staleUploadAge. It is the cleanup_packages task; running it at any
// time is safe, as each blob is removed under its lock after checking once
// more that nothing uses it.
func (s Service) CleanupBlobs(ctx context.Context) error {
	for {
		blobs, err := s.Store.Packages().UnreferencedBlobs(ctx, cleanupBatch)
		if err != nil {
			return err
		}
		removed := 0
		for _, b := range blobs {
			ok, err := s.removeBlob(ctx, b.HashSHA256, func(ctx context.Context) (bool, error) {
				return s.Store.Packages().DeleteBlobIfUnreferenced(ctx, b.ID)
			})
			if err != nil {
				return err
			}
			if ok {
				removed++
			}
		}
		// A short batch was the last; one where nothing could go is
		// in use again and would come back unchanged.
		if len(blobs) < cleanupBatch || removed == 0 {
			break
		}
	}
	if err := s.sweepBlobFiles(ctx); err != nil {
		return err
	}
	return s.sweepTemp()
}

// removeBlob runs drop under the blob's lock and removes its file when
// drop says the row is gone.
func (s Service) removeBlob(ctx context.Context, sha string, drop func(ctx context.Context) (bool, error)) (bool, error) {
	unlock, err := s.BlobLocks.Lock(ctx, sha)
	if err != nil {
		return false, err
	}
	defer unlock()
	ok, err := drop(ctx)
	if err != nil || !ok {
		return false, err
	}
	if err := s.Objects.Packages.Delete(ctx, BlobKey(sha)); err != nil {
		return false, err
	}
	return true, nil
}

// sweepBlobFiles removes blob files that have no row.
func (s Service) sweepBlobFiles(ctx context.Context) error {
	// The keys are gathered first: a store's listing is not to be
	// changed under it.
	var orphans []string
	err := s.Objects.Packages.Walk(ctx, blobsPrefix, func(key string, _ int64, _ time.Time) error {
		if sha := path.Base(key); isSHA256(sha) && key == BlobKey(sha) {
			orphans = append(orphans, sha)
		}
		return nil
	})
	for _, sha := range orphans {
		if err != nil {
			break
		}
		_, err = s.removeBlob(ctx, sha, func(ctx context.Context) (bool, error) {
			exists, err := s.Store.Packages().BlobExists(ctx, sha)
			return !exists, err
		})
	}
	if err != nil {
		return fmt.Errorf("sweep package blobs: %w", err)
	}
	return nil
}

func (s Service) sweepTemp() error {
	entries, err := os.ReadDir(s.TempDir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	} else if err != nil {
		return err
	}
	for _, e := range entries {
		info, err := e.Info()
		if err != nil || !strings.HasPrefix(e.Name(), "upload-") || time.Since(info.ModTime()) < staleUploadAge {
			continue
		}
		if err := os.Remove(filepath.Join(s.TempDir, e.Name())); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	return nil
}

func isSHA256(name string) bool {
	if len(name) != 64 {
		return false
	}
	_, err := hex.DecodeString(name)
	return err == nil
}

// Link links pkg to the repository repoID of its owner, or unlinks it (0).
func (s Service) Link(ctx context.Context, doer *store.User, pkg *store.Package, repoID int64) error {
	return s.Store.WithTx(ctx, func(ctx context.Context) error {
		if err := s.Store.Packages().SetRepo(ctx, pkg.ID, repoID); err != nil {
			return err
		}
		return s.Events.Emit(ctx, events.PackageLinked, repoID, events.ActorID(doer), events.Named{ID: pkg.ID, Name: pkg.Name})
	})
}

// SetTag points the package's tag at version v (npm's dist-tags).
func (s Service) SetTag(ctx context.Context, doer *store.User, pkg *store.Package, tag string, v *store.PackageVersion) error {
	return s.Store.WithTx(ctx, func(ctx context.Context) error {
		if err := s.Store.Packages().SetTag(ctx, &store.PackageTag{PackageID: pkg.ID, Tag: tag, VersionID: v.ID}); err != nil {
			return err
		}
		return s.Events.Emit(ctx, events.PackageTagged, pkg.RepoID, events.ActorID(doer), events.Named{ID: pkg.ID, Name: pkg.Name})
	})
}

// RemoveTag removes a tag of the package.
func (s Service) RemoveTag(ctx context.Context, doer *store.User, pkg *store.Package, tag string) error {
	return s.Store.WithTx(ctx, func(ctx context.Context) error {
		if err := s.Store.Packages().RemoveTag(ctx, pkg.ID, tag); err != nil {
			return err
		}
		return s.Events.Emit(ctx, events.PackageTagged, pkg.RepoID, events.ActorID(doer), events.Named{ID: pkg.ID, Name: pkg.Name})
	})
}
