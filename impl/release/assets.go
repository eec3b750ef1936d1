package release

import (
	"context"
	"crypto/rand"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/go-openapi/runtime"
	"github.com/go-openapi/runtime/middleware"
	"github.com/go-openapi/swag/conv"

	"repohost/impl/access"
	"repohost/impl/apierr"
	"repohost/impl/app"
	"repohost/impl/auth"
	"repohost/impl/convert"
	"repohost/impl/paging"
	"repohost/restapi/operations/repository"
	"repohost/store"
	"repohost/store/objects"
)

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

// RepoCreateReleaseAttachment serves an upload that reached the generated
// binding, which has read the whole multipart body already; multipart
// uploads are normally taken by UploadAsset first, which streams them.
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
		if f.Header.Size > h.Config.MaxAssetBytes {
			return h.Fail(h.svc().tooLarge())
		}
		if name == "" {
			name = f.Header.Filename
		}
	}
	a, err := h.svc().AddAsset(ctx, p, r, rel, name, params.Attachment)
	if err != nil {
		return h.Fail(err)
	}
	return repository.NewRepoCreateReleaseAttachmentCreated().WithPayload(convert.ReleaseAttachment(app.BaseURL(params.HTTPRequest), a))
}

// multipartSlack is what a multipart body may carry beyond its file:
// boundaries, part headers, a field or two.
const multipartSlack = 64 << 10

// UploadAsset answers POST /repos/{owner}/{repo}/releases/{id}/assets with a
// multipart body ahead of the generated binding, which would read the whole
// body first (32 MiB into memory, the rest into a temporary file, without
// any limit, before even the caller's permission is known). Here the
// checks come first, then the "attachment" part streams straight into its
// attachment file, cut off at Config.MaxAssetBytes (413). A body that is
// not multipart goes on to api, which refuses it as the contract says.
func (h Handlers) UploadAsset(api http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if mt, _, _ := mime.ParseMediaType(req.Header.Get("Content-Type")); mt != "multipart/form-data" {
			api.ServeHTTP(w, req)
			return
		}
		a, err := h.uploadAsset(req.Context(), w, req)
		if err != nil {
			h.Errors.Write(w, err)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		repository.NewRepoCreateReleaseAttachmentCreated().
			WithPayload(convert.ReleaseAttachment(app.BaseURL(req), a)).
			WriteResponse(w, runtime.JSONProducer())
	})
}

func (h Handlers) uploadAsset(ctx context.Context, w http.ResponseWriter, req *http.Request) (*store.ReleaseAttachment, error) {
	id, err := strconv.ParseInt(req.PathValue("id"), 10, 64)
	if err != nil {
		// As the generated binding words it.
		return nil, apierr.Validation("id in path must be of type int64: %q", req.PathValue("id"))
	}
	p, r, rel, err := h.writeRelease(ctx, req.PathValue("owner"), req.PathValue("repo"), byID(id))
	if err != nil {
		return nil, err
	}
	limit := h.Config.MaxAssetBytes + multipartSlack
	if req.ContentLength > limit {
		return nil, h.svc().tooLarge()
	}
	req.Body = http.MaxBytesReader(w, req.Body, limit)
	mr, err := req.MultipartReader()
	if err != nil {
		return nil, apierr.BadRequest("%v", err)
	}
	for {
		part, err := mr.NextPart()
		if err == io.EOF {
			return nil, apierr.BadRequest("the multipart field \"attachment\" is required")
		}
		if err != nil {
			return nil, h.svc().uploadStatus(uploadError{err})
		}
		if part.FormName() != "attachment" {
			continue // the next NextPart skips it
		}
		name := req.URL.Query().Get("name")
		if name == "" {
			name = part.FileName()
		}
		return h.svc().AddAsset(ctx, p, r, rel, name, part)
	}
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
	if err := h.svc().DeleteAsset(ctx, a); err != nil {
		return h.Fail(err)
	}
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
	key := app.AttachmentKey(a.RepoID, a.UUID)
	if _, err := h.Objects.Attachments.Stat(ctx, key); err != nil {
		if objects.IsNotExist(err) {
			h.Log.ErrorContext(ctx, "attachment file missing", "uuid", a.UUID, "release", rel.ID)
			err = apierr.NotFound("not found")
		}
		h.Errors.Write(w, err)
		return
	}
	if err := h.Store.ReleaseAttachments().CountDownload(ctx, a.ID); err != nil {
		h.Log.ErrorContext(ctx, "count attachment download", "uuid", a.UUID, "err", err)
	}
	err = h.ServeObject(w, req, app.Download{Store: h.Objects.Attachments, Direct: h.Objects.Direct.Attachments,
		Key: key, Name: a.Name, Modified: a.CreatedAt.In(time.UTC)})
	if err != nil {
		h.Errors.Write(w, err)
	}
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
	if !perm.CanRead(access.UnitReleases) {
		return nil, nil, apierr.NotFound("not found")
	}
	rel, err := h.Store.Releases().FindByID(ctx, r.ID, a.ReleaseID)
	if rel, err = visibleRelease(rel, err, perm); err != nil {
		return nil, nil, err
	}
	return a, rel, nil
}
