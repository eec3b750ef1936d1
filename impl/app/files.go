package app

import (
	"errors"
	"mime"
	"net/http"
	"os"
	"path"
	"strconv"
	"time"

	"repohost/impl/apierr"
	"repohost/impl/auth"
	"repohost/store/objects"
)

// AttachmentKey is where an attachment's bytes live in Objects.Attachments:
// under its repository's id, named by its UUID, never by the name the
// uploader chose (on the local disk: ATTACHMENTS/<repo id>/<uuid>, as
// always).
func AttachmentKey(repoID int64, uuid string) string {
	return path.Join(strconv.FormatInt(repoID, 10), uuid)
}

// RepoKeyPrefix is the prefix of every key of one repository's files, in
// the attachments store and in the archives store.
func RepoKeyPrefix(repoID int64) string {
	return strconv.FormatInt(repoID, 10) + "/"
}

// TempFile is a new file for staging an upload (hashing it, learning its
// size) before it goes to its store; the caller removes it.
func (d *Deps) TempFile() (*os.File, error) {
	if err := os.MkdirAll(d.TempDir, 0o755); err != nil {
		return nil, err
	}
	return os.CreateTemp(d.TempDir, "upload-*")
}

// PresignTTL is how long a presigned download address stays valid.
const PresignTTL = 5 * time.Minute

// Download is one stored object to send to a client.
type Download struct {
	Store objects.Store
	// Direct redirects the client to the store's presigned address when
	// the store has one.
	Direct bool
	Key    string
	// Name is the file name the client saves the download as.
	Name string
	// ETag, when set, is sent (quoted) for conditional requests.
	ETag     string
	Modified time.Time
}

// ServeObject sends the object: a redirect to its presigned address when
// served direct, else its bytes with ranges and conditional requests
// (http.ServeContent over the seekable object). A missing object is 404
// (and logged: a row points at nothing). Nothing is written when it
// returns an error.
func (d *Deps) ServeObject(w http.ResponseWriter, r *http.Request, dl Download) error {
	ctx := r.Context()
	if dl.Direct {
		u, err := dl.Store.URL(ctx, dl.Key, dl.Name, PresignTTL)
		if err != nil {
			return err
		}
		if u != "" {
			// As the reference: 303 to the store's address.
			http.Redirect(w, r, u, http.StatusSeeOther)
			return nil
		}
	}
	body, err := dl.Store.Open(ctx, dl.Key)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			d.Log.ErrorContext(ctx, "stored object missing", "key", dl.Key)
			return apierr.NotFound("not found")
		}
		return err
	}
	defer body.Close()
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("Content-Disposition", ContentDisposition("attachment", dl.Name))
	if dl.ETag != "" {
		w.Header().Set("ETag", `"`+dl.ETag+`"`)
	}
	http.ServeContent(w, r, "", dl.Modified, body)
	return nil
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
