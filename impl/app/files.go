package app

import (
	"mime"
	"path/filepath"
	"strconv"

	"repohost/impl/apierr"
	"repohost/impl/auth"
)

// RepoAttachmentsDir holds every release file of one repository, so
// deleting a repository's files is one RemoveAll.
func (d *Deps) RepoAttachmentsDir(repoID int64) string {
	return filepath.Join(d.AttachmentsDir, strconv.FormatInt(repoID, 10))
}

// AttachmentPath is where an attachment's bytes live: in its repository's
// directory, named by its UUID, never by the name the uploader chose.
func (d *Deps) AttachmentPath(repoID int64, uuid string) string {
	return filepath.Join(d.RepoAttachmentsDir(repoID), uuid)
}

// WebScope applies a token's scopes to a route outside the API (downloads),
// where the authentication middleware cannot tell the category from the
// path: reading repository content needs repository read access.
func WebScope(p *auth.Principal) error {
	if p != nil && p.Token != nil && !p.Scopes.Allows("repository", "read") {
		return apierr.Forbidden("token does not have at least one of required scope(s), required=[read:repository], token scope=%s", p.Scopes.String())
	}
	return nil
}

// ContentDisposition names a download; the name is quoted and encoded by
// the standard library, so no name can break out of the header.
func ContentDisposition(kind, name string) string {
	return mime.FormatMediaType(kind, map[string]string{"filename": name})
}
