package release

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/go-openapi/runtime"
	"github.com/go-openapi/runtime/middleware"
	"github.com/go-openapi/swag/conv"

	"repohost/impl/apierr"
	"repohost/impl/app"
	"repohost/impl/auth"
	"repohost/impl/convert"
	"repohost/impl/paging"
	"repohost/restapi/operations/repository"
	"repohost/store"
)

// MaxAttachmentSize is the largest release file accepted, the reference's
// default ([repository.release] FILE_MAX_SIZE, 2 GiB).
const MaxAttachmentSize = 2 << 30

// removeAttachmentFile deletes a file whose row is gone; a failure only
// leaves an unreachable file behind, so it is logged.
func (h Handlers) removeAttachmentFile(a *store.ReleaseAttachment) {
	if err := os.Remove(h.AttachmentPath(a.RepoID, a.UUID)); err != nil && !errors.Is(err, os.ErrNotExist) {
		h.Log.Error("remove attachment file", "uuid", a.UUID, "err", err)
	}
}

func newUUID() (string, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16]), nil
}

// checkAttachmentName refuses names that look like paths: the name is only
// shown and offered as a download name, but exports and clients may use it
// as a file name.
func checkAttachmentName(name string) error {
	switch {
	case name == "":
		return apierr.BadRequest("Could not determine name of attachment.")
	case len(name) > 255:
		return apierr.Validation("[Name]: MaxSize")
	case name == "." || name == ".." || strings.ContainsAny(name, "/\\\x00"):
		return apierr.Validation("[Name]: invalid attachment name %q", name)
	}
	return nil
}

// storeAttachmentFile copies an upload to a new file under the repository's
// directory and returns its UUID and size. The bytes land in a temporary
// file first, so a half-written upload never carries a UUID.
func (h Handlers) storeAttachmentFile(repoID int64, src io.Reader) (string, int64, error) {
	id, err := newUUID()
	if err != nil {
		return "", 0, err
	}
	final := h.AttachmentPath(repoID, id)
	if err := os.MkdirAll(filepath.Dir(final), 0o755); err != nil {
		return "", 0, err
	}
	tmp, err := os.CreateTemp(filepath.Dir(final), ".upload-*")
	if err != nil {
		return "", 0, err
	}
	defer os.Remove(tmp.Name())
	n, err := io.Copy(tmp, io.LimitReader(src, MaxAttachmentSize+1))
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "", 0, err
	}
	if n > MaxAttachmentSize {
		return "", 0, &apierr.Error{Status: http.StatusRequestEntityTooLarge, Message: "attachment is too large"}
	}
	if err := os.Rename(tmp.Name(), final); err != nil {
		return "", 0, err
	}
	return id, n, nil
}

func (h Handlers) RepoListReleaseAttachments(ctx context.Context, params repository.RepoListReleaseAttachmentsParams) middleware.Responder {
	_, rel, err := h.readRelease(ctx, auth.FromContext(ctx), params.Owner, params.Repo, byID(params.ID))
	if err != nil {
		return h.Fail(err)
	}
	pg := h.Page(params.Page, params.Limit)
	atts, total, err := h.Store.ReleaseAttachments().ListByRelease(ctx, rel.ID, pg.Store())
	if err != nil {
		return h.Fail(err)
	}
	return repository.NewRepoListReleaseAttachmentsOK().
		WithPayload(convert.ReleaseAttachments(app.BaseURL(params.HTTPRequest), atts)).
		WithXTotalCount(total).WithLink(paging.Link(params.HTTPRequest, pg, total))
}

func (h Handlers) RepoGetReleaseAttachment(ctx context.Context, params repository.RepoGetReleaseAttachmentParams) middleware.Responder {
	_, rel, err := h.readRelease(ctx, auth.FromContext(ctx), params.Owner, params.Repo, byID(params.ID))
	if err != nil {
		return h.Fail(err)
	}
	a, err := h.Store.ReleaseAttachments().FindByID(ctx, rel.ID, params.AttachmentID)
	if err != nil {
		return h.Fail(err)
	}
	return repository.NewRepoGetReleaseAttachmentOK().WithPayload(convert.ReleaseAttachment(app.BaseURL(params.HTTPRequest), a))
}

func (h Handlers) RepoCreateReleaseAttachment(ctx context.Context, params repository.RepoCreateReleaseAttachmentParams) middleware.Responder {
	p, r, rel, err := h.writeRelease(ctx, params.Owner, params.Repo, byID(params.ID))
	if err != nil {
		return h.Fail(err)
	}
	if params.Attachment == nil {
		return h.Fail(apierr.BadRequest("the multipart field \"attachment\" is required"))
	}
	defer params.Attachment.Close()
	name := conv.Value(params.Name)
	if f, ok := params.Attachment.(*runtime.File); ok {
		if f.Header.Size > MaxAttachmentSize {
			return h.Fail(&apierr.Error{Status: http.StatusRequestEntityTooLarge, Message: "attachment is too large"})
		}
		if name == "" {
			name = f.Header.Filename
		}
	}
	if err := checkAttachmentName(name); err != nil {
		return h.Fail(err)
	}
	// The file first, then the row; if the row cannot be written the file
	// goes again.
	uuid, size, err := h.storeAttachmentFile(r.ID, params.Attachment)
	if err != nil {
		return h.Fail(err)
	}
	a := &store.ReleaseAttachment{UUID: uuid, RepoID: r.ID, ReleaseID: rel.ID, UploaderID: p.UserID(), Name: name, Size: size}
	if err := h.Store.WithTx(ctx, func(ctx context.Context) error {
		return h.Store.ReleaseAttachments().Create(ctx, a)
	}); err != nil {
		h.removeAttachmentFile(a)
		return h.Fail(err)
	}
	return repository.NewRepoCreateReleaseAttachmentCreated().WithPayload(convert.ReleaseAttachment(app.BaseURL(params.HTTPRequest), a))
}

func (h Handlers) RepoDeleteReleaseAttachment(ctx context.Context, params repository.RepoDeleteReleaseAttachmentParams) middleware.Responder {
	_, _, rel, err := h.writeRelease(ctx, params.Owner, params.Repo, byID(params.ID))
	if err != nil {
		return h.Fail(err)
	}
	a, err := h.Store.ReleaseAttachments().FindByID(ctx, rel.ID, params.AttachmentID)
	if err != nil {
		return h.Fail(err)
	}
	if err := h.Store.WithTx(ctx, func(ctx context.Context) error {
		return h.Store.ReleaseAttachments().Delete(ctx, a.ID)
	}); err != nil {
		return h.Fail(err)
	}
	h.removeAttachmentFile(a)
	return repository.NewRepoDeleteReleaseAttachmentNoContent()
}

// ServeAttachment answers GET /attachments/{uuid}, the browser_download_url
// of a release file: the same visibility as the release (drafts only for
// writers), counted as a download.
func (h Handlers) ServeAttachment(w http.ResponseWriter, req *http.Request) {
	ctx := req.Context()
	p := auth.FromContext(ctx)
	if err := app.WebScope(p); err != nil {
		h.Errors.Write(w, err)
		return
	}
	a, rel, err := h.downloadable(ctx, p, req.PathValue("uuid"))
	if err != nil {
		h.Errors.Write(w, err)
		return
	}
	f, err := os.Open(h.AttachmentPath(a.RepoID, a.UUID))
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			h.Log.Error("attachment file missing", "uuid", a.UUID, "release", rel.ID)
			err = apierr.NotFound("not found")
		}
		h.Errors.Write(w, err)
		return
	}
	defer f.Close()
	if err := h.Store.ReleaseAttachments().CountDownload(ctx, a.ID); err != nil {
		h.Log.Error("count attachment download", "uuid", a.UUID, "err", err)
	}
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("Content-Disposition", app.ContentDisposition("attachment", a.Name))
	http.ServeContent(w, req, "", a.CreatedAt.In(time.UTC), f)
}

// downloadable finds an attachment p may download; anything p may not see
// answers 404 exactly like a missing one.
func (h Handlers) downloadable(ctx context.Context, p *auth.Principal, uuid string) (*store.ReleaseAttachment, *store.Release, error) {
	a, err := h.Store.ReleaseAttachments().FindByUUID(ctx, uuid)
	if err != nil {
		return nil, nil, err
	}
	r, err := h.Store.Repos().FindByID(ctx, a.RepoID)
	if err != nil {
		return nil, nil, err
	}
	perm, err := h.Access.Repo(ctx, p, r)
	if err != nil {
		return nil, nil, err
	}
	if !perm.Pull || (!r.HasReleases && !perm.Admin) {
		return nil, nil, apierr.NotFound("not found")
	}
	rel, err := h.Store.Releases().FindByID(ctx, r.ID, a.ReleaseID)
	if rel, err = visibleRelease(rel, err, perm); err != nil {
		return nil, nil, err
	}
	return a, rel, nil
}
