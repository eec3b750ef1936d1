package convert

import (
	"net/url"

	"github.com/go-openapi/strfmt"

	"repohost/impl/access"
	"repohost/models"
	"repohost/store"
)

// PackageHTMLURL is the web page of a package version, where the
// reference puts it.
func PackageHTMLURL(base string, v *store.PackageVersion) string {
	return base + v.Owner.Name + "/-/packages/" + v.Type + "/" + url.PathEscape(v.Package.LowerName) + "/" + url.PathEscape(v.LowerVersion)
}

// Package renders a package version (with its package, owner and creator
// loaded); its repository only when repoPerm lets the viewer see it.
func Package(links Links, v *store.PackageVersion, repoPerm access.Permission, viewer *store.User) *models.Package {
	base := links.Root
	creator := v.Creator
	if creator == nil {
		creator = Ghost()
	}
	out := &models.Package{
		ID:        v.ID,
		Owner:     User(base, v.Owner, viewer),
		Creator:   User(base, creator, viewer),
		Type:      v.Type,
		Name:      v.Package.Name,
		Version:   v.Version,
		HTMLURL:   PackageHTMLURL(base, v),
		CreatedAt: strfmt.DateTime(v.CreatedAt.UTC()),
	}
	if v.Repo != nil && repoPerm.Pull {
		out.Repository = Repo(links, v.Repo, repoPerm, viewer)
	}
	return out
}

// PackageFile renders a file of a package version (its blob loaded).
func PackageFile(f *store.PackageFile) *models.PackageFile {
	return &models.PackageFile{
		ID:         f.ID,
		Name:       f.Name,
		Size:       f.Blob.Size,
		HashMD5:    f.Blob.HashMD5,
		HashSHA1:   f.Blob.HashSHA1,
		HashSHA256: f.Blob.HashSHA256,
		HashSHA512: f.Blob.HashSHA512,
	}
}
