package sqlstore

import (
	"context"
	"errors"
	"strings"

	"gorm.io/gorm/clause"

	"repohost/store"
)

func (d *DB) Packages() store.PackageStore { return packageStore{d} }

type packageStore struct{ d *DB }

func (s packageStore) FindOrCreate(ctx context.Context, p *store.Package) error {
	p.LowerName = strings.ToLower(p.Name)
	return s.d.WithTx(ctx, func(ctx context.Context) error {
		// ON CONFLICT DO NOTHING: two first uploads of one package at once
		// both end up with the one row instead of one failing.
		res := s.d.conn(ctx).Clauses(clause.OnConflict{DoNothing: true}).Create(p)
		if res.Error != nil {
			return translate(res.Error, "create package")
		}
		if res.RowsAffected == 1 {
			return nil
		}
		found, err := s.Find(ctx, p.OwnerID, p.Type, p.Name)
		if err != nil {
			return err
		}
		*p = *found
		return nil
	})
}

func (s packageStore) Find(ctx context.Context, ownerID int64, typ, name string) (*store.Package, error) {
	var p store.Package
	err := s.d.conn(ctx).Where("owner_id = ? AND type = ? AND lower_name = ?", ownerID, typ, strings.ToLower(name)).Take(&p).Error
	if err != nil {
		return nil, translate(err, "find package")
	}
	return &p, nil
}

func (s packageStore) SetRepo(ctx context.Context, packageID, repoID int64) error {
	res := s.d.conn(ctx).Model(&store.Package{}).Where("id = ?", packageID).Update("repo_id", repoID)
	return affected(res, "link package")
}

func (s packageStore) Delete(ctx context.Context, id int64) error {
	return affected(s.d.conn(ctx).Where("id = ?", id).Delete(&store.Package{}), "delete package")
}

func (s packageStore) CreateVersion(ctx context.Context, v *store.PackageVersion) error {
	v.LowerVersion = strings.ToLower(v.Version)
	return translate(s.d.conn(ctx).Create(v).Error, "create package version")
}

func (s packageStore) findVersion(ctx context.Context, what, query string, args ...any) (*store.PackageVersion, error) {
	var v store.PackageVersion
	if err := s.d.conn(ctx).Where(query, args...).Order("created_at DESC, id DESC").Take(&v).Error; err != nil {
		return nil, translate(err, what)
	}
	if err := s.load(ctx, []*store.PackageVersion{&v}); err != nil {
		return nil, err
	}
	return &v, nil
}

func (s packageStore) FindVersion(ctx context.Context, packageID int64, version string) (*store.PackageVersion, error) {
	return s.findVersion(ctx, "find package version", "package_id = ? AND lower_version = ?", packageID, strings.ToLower(version))
}

func (s packageStore) FindVersionByID(ctx context.Context, id int64) (*store.PackageVersion, error) {
	return s.findVersion(ctx, "find package version", "id = ?", id)
}

func (s packageStore) FindLatestVersion(ctx context.Context, packageID int64) (*store.PackageVersion, error) {
	return s.findVersion(ctx, "find latest package version", "package_id = ?", packageID)
}

func (s packageStore) DeleteVersion(ctx context.Context, v *store.PackageVersion) (int64, error) {
	var left int64
	err := s.d.WithTx(ctx, func(ctx context.Context) error {
		if err := affected(s.d.conn(ctx).Where("id = ?", v.ID).Delete(&store.PackageVersion{}), "delete package version"); err != nil {
			return err
		}
		err := s.d.conn(ctx).Model(&store.PackageVersion{}).Where("package_id = ?", v.PackageID).Count(&left).Error
		return translate(err, "count package versions")
	})
	return left, err
}

func (s packageStore) SearchVersions(ctx context.Context, q store.PackageSearch, p store.Page) ([]*store.PackageVersion, int64, error) {
	db := s.d.conn(ctx).Model(&store.PackageVersion{})
	if q.OwnerID != 0 {
		db = db.Where("package_versions.owner_id = ?", q.OwnerID)
	}
	if q.PackageID != 0 {
		db = db.Where("package_versions.package_id = ?", q.PackageID)
	}
	if q.Type != "" {
		db = db.Where("package_versions.type = ?", q.Type)
	}
	if q.Query != "" {
		db = db.Where("package_versions.package_id IN (SELECT id FROM packages WHERE lower_name LIKE ? ESCAPE '\\')",
			likePattern(q.Query))
	}
	if q.LatestOnly {
		// A version is its package's newest when it is the first of its
		// package in the list order: one probe of the package's
		// (package_id, created_at, id) index per candidate. Not NOT
		// EXISTS, which PostgreSQL turns into an anti-join that hashes
		// every version.
		db = db.Where(`package_versions.id = (SELECT newest.id FROM package_versions newest
			WHERE newest.package_id = package_versions.package_id
			ORDER BY newest.created_at DESC, newest.id DESC LIMIT 1)`)
	}
	var total int64
	if err := db.Count(&total).Error; err != nil {
		return nil, 0, translate(err, "count package versions")
	}
	order := listOrder{{"package_versions.created_at", true}, {"package_versions.id", true}}
	out, err := readPage[store.PackageVersion](db, order, p, total)
	if err != nil {
		return nil, 0, translate(err, "list package versions")
	}
	return out, total, s.load(ctx, out)
}

// load fills the package, owner, creator and linked repository of vs in
// three statements, whatever len(vs) is.
func (s packageStore) load(ctx context.Context, vs []*store.PackageVersion) error {
	if len(vs) == 0 {
		return nil
	}
	pkgIDs := make([]int64, 0, len(vs))
	for _, v := range vs {
		pkgIDs = append(pkgIDs, v.PackageID)
	}
	var pkgs []*store.Package
	if err := s.d.conn(ctx).Where("id IN ?", pkgIDs).Find(&pkgs).Error; err != nil {
		return translate(err, "list packages")
	}
	byID := make(map[int64]*store.Package, len(pkgs))
	var userIDs, repoIDs []int64
	for _, p := range pkgs {
		byID[p.ID] = p
		if p.RepoID != 0 {
			repoIDs = append(repoIDs, p.RepoID)
		}
	}
	for _, v := range vs {
		userIDs = append(userIDs, v.OwnerID, v.CreatorID)
	}
	users, err := s.d.Users().FindByIDs(ctx, userIDs)
	if err != nil {
		return err
	}
	repos := map[int64]*store.Repository{}
	if len(repoIDs) > 0 {
		var rs []*store.Repository
		if err := s.d.conn(ctx).Where("id IN ?", repoIDs).Find(&rs).Error; err != nil {
			return translate(err, "list repositories")
		}
		for _, r := range rs {
			repos[r.ID] = r
		}
	}
	for _, v := range vs {
		v.Package = byID[v.PackageID]
		v.Owner = users[v.OwnerID]
		v.Creator = users[v.CreatorID]
		// Only a repository of the package's owner is ever linked, so the
		// owner loaded above is the repository's too.
		if v.Package != nil {
			if r := repos[v.Package.RepoID]; r != nil && r.OwnerID == v.OwnerID {
				r.Owner = v.Owner
				v.Repo = r
			}
		}
	}
	return nil
}

func (s packageStore) AllVersions(ctx context.Context, packageID int64) ([]*store.PackageVersion, map[int64][]*store.PackageFile, error) {
	var vs []*store.PackageVersion
	if err := s.d.conn(ctx).Where("package_id = ?", packageID).Order("created_at, id").Find(&vs).Error; err != nil {
		return nil, nil, translate(err, "list package versions")
	}
	if err := s.load(ctx, vs); err != nil {
		return nil, nil, err
	}
	files := map[int64][]*store.PackageFile{}
	if len(vs) == 0 {
		return vs, files, nil
	}
	var fs []*store.PackageFile
	err := s.d.conn(ctx).Where("version_id IN (SELECT id FROM package_versions WHERE package_id = ?)", packageID).
		Order("lower_name").Find(&fs).Error
	if err != nil {
		return nil, nil, translate(err, "list package files")
	}
	if err := s.loadBlobs(ctx, fs); err != nil {
		return nil, nil, err
	}
	for _, f := range fs {
		files[f.VersionID] = append(files[f.VersionID], f)
	}
	return vs, files, nil
}

func (s packageStore) FindOrCreateBlob(ctx context.Context, b *store.PackageBlob) error {
	return s.d.WithTx(ctx, func(ctx context.Context) error {
		res := s.d.conn(ctx).Clauses(clause.OnConflict{DoNothing: true}).Create(b)
		if res.Error != nil {
			return translate(res.Error, "create package blob")
		}
		if res.RowsAffected == 1 {
			return nil
		}
		var found store.PackageBlob
		if err := s.d.conn(ctx).Where("hash_sha256 = ?", b.HashSHA256).Take(&found).Error; err != nil {
			return translate(err, "find package blob")
		}
		*b = found
		return nil
	})
}

func (s packageStore) CreateFile(ctx context.Context, f *store.PackageFile) error {
	f.LowerName = strings.ToLower(f.Name)
	return translate(s.d.conn(ctx).Create(f).Error, "create package file")
}

func (s packageStore) FindFile(ctx context.Context, versionID int64, name string) (*store.PackageFile, error) {
	var f store.PackageFile
	if err := s.d.conn(ctx).Where("version_id = ? AND lower_name = ?", versionID, strings.ToLower(name)).Take(&f).Error; err != nil {
		return nil, translate(err, "find package file")
	}
	if err := s.loadBlobs(ctx, []*store.PackageFile{&f}); err != nil {
		return nil, err
	}
	return &f, nil
}

func (s packageStore) ListFiles(ctx context.Context, versionID int64) ([]*store.PackageFile, error) {
	fs := []*store.PackageFile{}
	if err := s.d.conn(ctx).Where("version_id = ?", versionID).Order("lower_name").Find(&fs).Error; err != nil {
		return nil, translate(err, "list package files")
	}
	return fs, s.loadBlobs(ctx, fs)
}

func (s packageStore) loadBlobs(ctx context.Context, fs []*store.PackageFile) error {
	if len(fs) == 0 {
		return nil
	}
	ids := make([]int64, 0, len(fs))
	for _, f := range fs {
		ids = append(ids, f.BlobID)
	}
	var bs []*store.PackageBlob
	if err := s.d.conn(ctx).Where("id IN ?", ids).Find(&bs).Error; err != nil {
		return translate(err, "list package blobs")
	}
	byID := make(map[int64]*store.PackageBlob, len(bs))
	for _, b := range bs {
		byID[b.ID] = b
	}
	for _, f := range fs {
		f.Blob = byID[f.BlobID]
		if f.Blob == nil {
			return errors.New("package file without its blob")
		}
	}
	return nil
}

func (s packageStore) DeleteFile(ctx context.Context, id int64) error {
	return affected(s.d.conn(ctx).Where("id = ?", id).Delete(&store.PackageFile{}), "delete package file")
}

func (s packageStore) OwnerUsage(ctx context.Context, ownerID int64) (int64, error) {
	var total int64
	err := s.d.conn(ctx).Raw(`SELECT COALESCE(SUM(b.size), 0) FROM package_files f
		JOIN package_blobs b ON b.id = f.blob_id
		JOIN package_versions v ON v.id = f.version_id
		WHERE v.owner_id = ?`, ownerID).Scan(&total).Error
	return total, translate(err, "sum package sizes")
}

func (s packageStore) UnreferencedBlobs(ctx context.Context, limit int) ([]*store.PackageBlob, error) {
	var bs []*store.PackageBlob
	err := s.d.conn(ctx).Where("NOT EXISTS (SELECT 1 FROM package_files f WHERE f.blob_id = package_blobs.id)").
		Order("id").Limit(limit).Find(&bs).Error
	return bs, translate(err, "list unreferenced package blobs")
}

func (s packageStore) DeleteBlobIfUnreferenced(ctx context.Context, id int64) (bool, error) {
	res := s.d.conn(ctx).Where("id = ? AND NOT EXISTS (SELECT 1 FROM package_files f WHERE f.blob_id = package_blobs.id)", id).
		Delete(&store.PackageBlob{})
	if res.Error != nil {
		return false, translate(res.Error, "delete package blob")
	}
	return res.RowsAffected == 1, nil
}

func (s packageStore) BlobExists(ctx context.Context, sha256 string) (bool, error) {
	var n int64
	err := s.d.conn(ctx).Model(&store.PackageBlob{}).Where("hash_sha256 = ?", sha256).Count(&n).Error
	return n > 0, translate(err, "find package blob")
}

func (s packageStore) SetTag(ctx context.Context, t *store.PackageTag) error {
	err := s.d.conn(ctx).Clauses(clause.OnConflict{
		Columns:   []clause.Column{{Name: "package_id"}, {Name: "tag"}},
		DoUpdates: clause.AssignmentColumns([]string{"version_id"}),
	}).Create(t).Error
	return translate(err, "set package tag")
}

func (s packageStore) RemoveTag(ctx context.Context, packageID int64, tag string) error {
	return affected(s.d.conn(ctx).Where("package_id = ? AND tag = ?", packageID, tag).Delete(&store.PackageTag{}), "delete package tag")
}

func (s packageStore) ListTags(ctx context.Context, packageID int64) ([]*store.PackageTag, error) {
	var ts []*store.PackageTag
	err := s.d.conn(ctx).Where("package_id = ?", packageID).Order("tag").Find(&ts).Error
	return ts, translate(err, "list package tags")
}
