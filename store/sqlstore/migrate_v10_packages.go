package sqlstore

import (
	"time"

	"gorm.io/gorm"
)

// migrateV10 creates the package registry's tables. Versions, files and
// tags go with their package (ON DELETE CASCADE), packages with their
// owner; a blob stays until no file uses it and the cleanup removes it,
// and a file cannot point at a blob that is gone (the foreign key without
// cascade).
func migrateV10(tx *gorm.DB) error {
	type User struct {
		ID int64 `gorm:"primaryKey"`
	}
	type Package struct {
		ID        int64  `gorm:"primaryKey"`
		OwnerID   int64  `gorm:"not null;uniqueIndex:idx_package_owner_type_name,priority:1"`
		Owner     *User  `gorm:"foreignKey:OwnerID;constraint:OnDelete:CASCADE"`
		Type      string `gorm:"not null;uniqueIndex:idx_package_owner_type_name,priority:2"`
		LowerName string `gorm:"not null;uniqueIndex:idx_package_owner_type_name,priority:3"`
		Name      string `gorm:"not null"`
		RepoID    int64  `gorm:"not null;default:0"`
		CreatedAt time.Time
	}
	type PackageVersion struct {
		ID           int64    `gorm:"primaryKey"`
		PackageID    int64    `gorm:"not null;uniqueIndex:idx_package_version_package_version,priority:1"`
		Package      *Package `gorm:"foreignKey:PackageID;constraint:OnDelete:CASCADE"`
		LowerVersion string   `gorm:"not null;uniqueIndex:idx_package_version_package_version,priority:2"`
		Version      string   `gorm:"not null"`
		OwnerID      int64    `gorm:"not null"`
		Type         string   `gorm:"not null"`
		CreatorID    int64    `gorm:"not null;default:0"`
		Metadata     string   `gorm:"type:text;not null;default:''"`
		CreatedAt    time.Time
	}
	type PackageBlob struct {
		ID         int64  `gorm:"primaryKey"`
		HashSHA256 string `gorm:"column:hash_sha256;not null;uniqueIndex"`
		HashSHA512 string `gorm:"column:hash_sha512;not null"`
		HashSHA1   string `gorm:"column:hash_sha1;not null"`
		HashMD5    string `gorm:"column:hash_md5;not null"`
		Size       int64  `gorm:"not null"`
		CreatedAt  time.Time
	}
	type PackageFile struct {
		ID        int64           `gorm:"primaryKey"`
		VersionID int64           `gorm:"not null;uniqueIndex:idx_package_file_version_name,priority:1"`
		Version   *PackageVersion `gorm:"foreignKey:VersionID;constraint:OnDelete:CASCADE"`
		LowerName string          `gorm:"not null;uniqueIndex:idx_package_file_version_name,priority:2"`
		Name      string          `gorm:"not null"`
		BlobID    int64           `gorm:"not null;index"`
		Blob      *PackageBlob    `gorm:"foreignKey:BlobID"`
		CreatedAt time.Time
	}
	type PackageTag struct {
		PackageID int64           `gorm:"primaryKey;autoIncrement:false"`
		Package   *Package        `gorm:"foreignKey:PackageID;constraint:OnDelete:CASCADE"`
		Tag       string          `gorm:"primaryKey"`
		VersionID int64           `gorm:"not null;index"`
		Version   *PackageVersion `gorm:"foreignKey:VersionID;constraint:OnDelete:CASCADE"`
	}
	if err := tx.Migrator().CreateTable(&Package{}, &PackageVersion{}, &PackageBlob{}, &PackageFile{}, &PackageTag{}); err != nil {
		return err
	}
	for _, stmt := range packageIndexesV10 {
		if err := tx.Exec(stmt).Error; err != nil {
			return err
		}
	}
	return nil
}

// packageIndexesV10 serve the lists of versions, newest first: of every
// owner (GET /admin/packages), of one owner (GET /packages/{owner}), each
// also by type, and of one package. Frozen with the migration.
var packageIndexesV10 = []string{
	`CREATE INDEX idx_package_version_created ON package_versions (created_at, id)`,
	`CREATE INDEX idx_package_version_type_created ON package_versions (type, created_at, id)`,
	`CREATE INDEX idx_package_version_owner_created ON package_versions (owner_id, created_at, id)`,
	`CREATE INDEX idx_package_version_owner_type_created ON package_versions (owner_id, type, created_at, id)`,
	`CREATE INDEX idx_package_version_package_created ON package_versions (package_id, created_at, id)`,
}
