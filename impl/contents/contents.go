package contents

import (
	"context"
	"encoding/base64"
	"errors"
	"io"
	"log/slog"
	"net/http"
	goruntime "runtime"
	"strconv"
	"strings"
	"time"

	"github.com/go-git/go-git/v6/plumbing/object"
	"github.com/go-openapi/runtime"
	"github.com/go-openapi/runtime/middleware"
	"github.com/go-openapi/strfmt"
	"github.com/go-openapi/swag/conv"

	"repohost/impl/apierr"
	"repohost/impl/app"
	"repohost/impl/auth"
	"repohost/impl/convert"
	"repohost/impl/lfs"
	"repohost/models"
	"repohost/restapi/operations/repository"
	"repohost/store"
	"repohost/store/gitstore"
)

// treePath validates the file path of a write (422 for "..", ".git",
// control characters and the like).
func treePath(p string) (string, error) {
	clean, err := gitstore.CleanTreePath(p)
	if err != nil {
		return "", apierr.Validation("[Filepath]: invalid path %q", p)
	}
	return clean, nil
}

// readPath validates the file path of a read: a path no tree can hold is
// simply not there (404).
func readPath(p string) (string, error) {
	clean, err := gitstore.CleanTreePath(p)
	if err != nil {
		return "", apierr.NotFound("not found")
	}
	return clean, nil
}

// contentsOf renders entry e (file or not) at ref, with content for files.
func contentsOf(g *gitstore.GitRepo, ref *gitstore.Resolved, e *gitstore.Entry, last *object.Commit, withContent bool, maxBlob int64) (convert.ContentsEntry, error) {
	ce := convert.ContentsEntry{Ref: ref, Entry: e, Last: last}
	switch e.Type {
	case gitstore.EntryFile:
		if withContent && e.Size <= maxBlob {
			b, err := g.ReadBlob(e.Hash)
			if err != nil {
				return ce, err
			}
			ce.Content, ce.HasContent = b, true
			if ptr, ok := lfs.ReadPointer(b); ok {
				ce.LFSOid, ce.LFSSize = ptr.Oid, ptr.Size
			}
		}
	case gitstore.EntrySymlink:
		t, err := g.SymlinkTarget(e)
		if err != nil {
			return ce, err
		}
		ce.Target = t
		if withContent {
			ce.Content, ce.HasContent = []byte(t), true
		}
	}
	return ce, nil
}

// listDir renders every entry of directory dir at ref, with the last commit
// of each from one history walk.
func (h Handlers) listDir(base string, r *store.Repository, g *gitstore.GitRepo, ref *gitstore.Resolved, dir string) ([]*models.ContentsResponse, error) {
	entries, err := g.ReadDir(ref.Commit, dir)
	if err != nil {
		return nil, err
	}
	names := make([]string, 0, len(entries))
	for _, e := range entries {
		names = append(names, e.Name)
	}
	last, err := g.LastCommits(ref.Commit, dir, names)
	if err != nil {
		return nil, err
	}
	out := make([]*models.ContentsResponse, 0, len(entries))
	for _, e := range entries {
		ce, err := contentsOf(g, ref, e, last[e.Name], false, h.Config.MaxContentsBlob)
		if err != nil {
			return nil, err
		}
		out = append(out, convert.Contents(base, r, ce))
	}
	return out, nil
}

// contents answers GET contents for p ("" is the root): an object for a
// file, an array for a directory.
func (h Handlers) contents(ctx context.Context, req *http.Request, owner, name, rawPath string, refParam *string) (any, error) {
	p := auth.FromContext(ctx)
	r, _, err := h.UnitRepo(ctx, p, owner, name, app.CodeUnit)
	if err != nil {
		return nil, err
	}
	path, err := readPath(rawPath)
	if err != nil {
		return nil, err
	}
	g, err := h.OpenGit(r)
	if err != nil {
		return nil, err
	}
	ref, err := g.Resolve(conv.Value(refParam))
	if err != nil {
		// An empty repository has an empty top directory, not a missing one.
		if empty, _ := g.IsEmpty(); empty && path == "" && conv.Value(refParam) == "" {
			return []*models.ContentsResponse{}, nil
		}
		return nil, err
	}
	base := app.BaseURL(req)
	e, err := g.Lookup(ref.Commit, path)
	if err != nil {
		return nil, err
	}
	if e.Type == gitstore.EntryDir {
		return h.listDir(base, r, g, ref, path)
	}
	last, err := g.LastCommits(ref.Commit, parentDir(path), []string{e.Name})
	if err != nil {
		return nil, err
	}
	ce, err := contentsOf(g, ref, e, last[e.Name], true, h.Config.MaxContentsBlob)
	if err != nil {
		return nil, err
	}
	return convert.Contents(base, r, ce), nil
}

func parentDir(p string) string {
	if i := strings.LastIndexByte(p, '/'); i >= 0 {
		return p[:i]
	}
	return ""
}

func (h Handlers) RepoGetContentsList(ctx context.Context, params repository.RepoGetContentsListParams) middleware.Responder {
	out, err := h.contents(ctx, params.HTTPRequest, params.Owner, params.Repo, "", params.Ref)
	if err != nil {
		return h.Fail(err)
	}
	list, ok := out.([]*models.ContentsResponse)
	if !ok {
		return h.Fail(errors.New("top directory is not a directory"))
	}
	return repository.NewRepoGetContentsListOK().WithPayload(list)
}

func (h Handlers) RepoGetContents(ctx context.Context, params repository.RepoGetContentsParams) middleware.Responder {
	out, err := h.contents(ctx, params.HTTPRequest, params.Owner, params.Repo, params.Filepath, params.Ref)
	if err != nil {
		return h.Fail(err)
	}
	return repository.NewRepoGetContentsOK().WithPayload(out)
}

// download sets extra headers before a typed responder writes, for
// downloads that need a content type or file name of their own. A download
// that fails midway (the client went away, a read failed) has sent its
// status already, so the connection is cut (http.ErrAbortHandler) for the
// client to see a broken body rather than a short one that looks whole;
// the generated responder's own panic would do the same, with a stack
// trace in the log for a client that merely left.
type download struct {
	header http.Header
	next   middleware.Responder
	log    *slog.Logger
}

func (h Handlers) download(header http.Header, next middleware.Responder) download {
	return download{header: header, next: next, log: h.Log}
}

func (d download) WriteResponse(rw http.ResponseWriter, p runtime.Producer) {
	for k, vs := range d.header {
		rw.Header()[k] = vs
	}
	defer func() {
		if v := recover(); v != nil {
			err, isErr := v.(error)
			if _, bug := v.(goruntime.Error); !isErr || bug || err == http.ErrAbortHandler {
				panic(v)
			}
			d.log.Info("download cut off", "err", err)
			panic(http.ErrAbortHandler)
		}
	}()
	d.next.WriteResponse(rw, p)
}

func (h Handlers) RepoGetRawFile(ctx context.Context, params repository.RepoGetRawFileParams) middleware.Responder {
	return h.rawFile(ctx, params.Owner, params.Repo, conv.Value(params.Ref), params.Filepath, false, func(body io.ReadCloser) middleware.Responder {
		return repository.NewRepoGetRawFileOK().WithPayload(body)
	})
}

// RepoGetRawFileOrLFS is raw, except that a file that is an LFS pointer
// answers with the LFS object it names, when the repository has it (the
// reference's media route).
func (h Handlers) RepoGetRawFileOrLFS(ctx context.Context, params repository.RepoGetRawFileOrLFSParams) middleware.Responder {
	return h.rawFile(ctx, params.Owner, params.Repo, conv.Value(params.Ref), params.Filepath, true, func(body io.ReadCloser) middleware.Responder {
		return repository.NewRepoGetRawFileOrLFSOK().WithPayload(body)
	})
}

// rawFile serves a file of owner/repo at refName (or at the ref rawPath
// starts with); with media, an LFS pointer's object instead of the
// pointer.
func (h Handlers) rawFile(ctx context.Context, owner, repo, refName, rawPath string, media bool, ok func(io.ReadCloser) middleware.Responder) middleware.Responder {
	p := auth.FromContext(ctx)
	rp, g, err := h.CodeRepo(ctx, p, owner, repo)
	if err != nil {
		return h.Fail(err)
	}
	if refName == "" {
		// Without ?ref the path may start with the ref, as clients of the
		// reference send it ("main/docs/a.md").
		if ref, rest, ok := g.SplitRefPath(rawPath); ok {
			refName, rawPath = ref, rest
		}
	}
	path, err := readPath(rawPath)
	if err != nil {
		return h.Fail(err)
	}
	if path == "" {
		return h.Fail(apierr.NotFound("not found"))
	}
	ref, err := g.Resolve(refName)
	if err != nil {
		return h.Fail(err)
	}
	e, err := g.Lookup(ref.Commit, path)
	if err != nil {
		return h.Fail(err)
	}
	if e.Type != gitstore.EntryFile && e.Type != gitstore.EntrySymlink {
		return h.Fail(apierr.NotFound("not found"))
	}
	if media && e.Size <= lfs.PointerMaxSize {
		if resp, served := h.lfsContent(ctx, rp, g, e, ok); served {
			return resp
		}
	}
	// A large blob streams from disk, but the download is heavy all the
	// same: it takes one of the few slots archives use.
	release := func() {}
	if e.Size > h.Config.LargeBlobBytes {
		if release, err = h.Heavy().Acquire(ctx); err != nil {
			return h.Fail(err)
		}
	}
	rd, size, err := g.Blob(e.Hash)
	if err != nil {
		release()
		return h.Fail(err)
	}
	hdr := http.Header{}
	// Served as bytes, never rendered: a hosted HTML or SVG file must not
	// run in the API's origin.
	hdr.Set("Content-Type", "application/octet-stream")
	hdr.Set("X-Content-Type-Options", "nosniff")
	hdr.Set("Content-Length", strconv.FormatInt(size, 10))
	hdr.Set("Content-Disposition", app.ContentDisposition("inline", e.Name))
	return h.download(hdr, ok(releasingReader{rd, release}))
}

// lfsContent answers with the LFS object the blob e points at, when it is
// a pointer and the repository has the object; served is false
// otherwise.
func (h Handlers) lfsContent(ctx context.Context, rp *store.Repository, g *gitstore.GitRepo, e *gitstore.Entry, ok func(io.ReadCloser) middleware.Responder) (resp middleware.Responder, served bool) {
	rd, _, err := g.Blob(e.Hash)
	if err != nil {
		return h.Fail(err), true
	}
	raw, err := io.ReadAll(io.LimitReader(rd, lfs.PointerMaxSize+1))
	rd.Close()
	if err != nil {
		return h.Fail(err), true
	}
	ptr, isPointer := lfs.ReadPointer(raw)
	if !isPointer {
		return nil, false
	}
	obj, found, err := lfs.NewService(h.Deps).OpenContent(ctx, rp, ptr)
	if err != nil {
		return h.Fail(err), true
	}
	if !found {
		return nil, false
	}
	release, err := h.Heavy().Acquire(ctx)
	if err != nil {
		obj.Close()
		return h.Fail(err), true
	}
	hdr := http.Header{}
	hdr.Set("Content-Type", "application/octet-stream")
	hdr.Set("X-Content-Type-Options", "nosniff")
	hdr.Set("Content-Length", strconv.FormatInt(obj.Size(), 10))
	hdr.Set("Content-Disposition", app.ContentDisposition("inline", e.Name))
	return h.download(hdr, ok(releasingReader{obj, release})), true
}

// releasingReader frees a heavy-request slot when the producer, which
// always closes its payload, is done with the blob.
type releasingReader struct {
	io.ReadCloser
	release func()
}

func (r releasingReader) Close() error {
	err := r.ReadCloser.Close()
	r.release()
	return err
}

// fileWrite is the part of a FileWrite that every contents write's
// options carry alike.
func fileWrite(branch, newBranch *string, force, signoff *bool, message *string, author, committer *models.Identity, dates *models.CommitDateOptions) FileWrite {
	w := FileWrite{Branch: conv.Value(branch), NewBranch: conv.Value(newBranch), Force: conv.Value(force),
		Signoff: conv.Value(signoff), Message: conv.Value(message), Author: identityOf(author), Committer: identityOf(committer)}
	if dates != nil {
		w.AuthorDate, w.CommitterDate = timeOf(dates.Author), timeOf(dates.Committer)
	}
	return w
}

func identityOf(id *models.Identity) *Identity {
	if id == nil {
		return nil
	}
	return &Identity{Name: id.Name, Email: string(id.Email)}
}

func timeOf(d *strfmt.DateTime) time.Time {
	if d == nil {
		return time.Time{}
	}
	return time.Time(*d)
}

// verification is the verdict on the signature of a commit the server
// made: verified when the instance key signed it.
func (h Handlers) verification(ctx context.Context, base string, p *auth.Principal, c *object.Commit) (*models.PayloadCommitVerification, error) {
	vs, err := h.Verifier().Verify(ctx, []*object.Commit{c})
	if err != nil {
		return nil, err
	}
	return convert.Verification(base, vs[0], app.Viewer(p)), nil
}

// fileResponse renders the file after a write, with the commit that made it.
func (h Handlers) fileResponse(ctx context.Context, base string, p *auth.Principal, r *store.Repository, g *gitstore.GitRepo, res *gitstore.ChangeResult) (*models.FileResponse, error) {
	v, err := h.verification(ctx, base, p, res.Commit)
	if err != nil {
		return nil, err
	}
	out := &models.FileResponse{Commit: convert.FileCommit(base, r, res.Commit), Verification: v}
	ref := &gitstore.Resolved{Name: res.Branch, Kind: gitstore.RefBranch, Commit: res.Commit}
	ce, err := contentsOf(g, ref, res.Entry, res.Commit, true, h.Config.MaxContentsBlob)
	if err != nil {
		return nil, err
	}
	out.Content = convert.Contents(base, r, ce)
	return out, nil
}

func decodeContent(s *string) ([]byte, error) {
	if s == nil {
		return nil, apierr.Validation("[Content]: Required")
	}
	b, err := base64.StdEncoding.DecodeString(*s)
	if err != nil {
		return nil, apierr.Validation("[Content]: must be base64-encoded")
	}
	return b, nil
}

func (h Handlers) RepoCreateFile(ctx context.Context, params repository.RepoCreateFileParams) middleware.Responder {
	p, r, err := h.UnitWriteRepo(ctx, params.Owner, params.Repo, app.CodeUnit)
	if err != nil {
		return h.Fail(err)
	}
	o := params.Body
	content, err := decodeContent(o.ContentBase64)
	if err != nil {
		return h.Fail(err)
	}
	w := fileWrite(o.BranchName, o.NewBranchName, o.ForcePush, o.Signoff, o.Message, o.Author, o.Committer, o.Dates)
	w.Op, w.RawPath, w.Content, w.DefaultVerb = gitstore.OpCreate, params.Filepath, content, "Add"
	g, res, err := h.svc().Commit(ctx, p, r, w)
	if err != nil {
		return h.Fail(err)
	}
	out, err := h.fileResponse(ctx, app.BaseURL(params.HTTPRequest), p, r, g, res)
	if err != nil {
		return h.Fail(err)
	}
	return repository.NewRepoCreateFileCreated().WithPayload(out)
}

func (h Handlers) RepoUpdateFile(ctx context.Context, params repository.RepoUpdateFileParams) middleware.Responder {
	p, r, err := h.UnitWriteRepo(ctx, params.Owner, params.Repo, app.CodeUnit)
	if err != nil {
		return h.Fail(err)
	}
	o := params.Body
	content, err := decodeContent(o.ContentBase64)
	if err != nil {
		return h.Fail(err)
	}
	// Without a sha the reference creates the file (201); with one it
	// replaces the file that has that sha (200).
	w := fileWrite(o.BranchName, o.NewBranchName, o.ForcePush, o.Signoff, o.Message, o.Author, o.Committer, o.Dates)
	w.Op, w.RawPath, w.FromPath, w.SHA, w.Content, w.DefaultVerb = gitstore.OpUpdate, params.Filepath, conv.Value(o.FromPath), conv.Value(o.SHA), content, "Update"
	if w.SHA == "" {
		w.Op, w.FromPath, w.DefaultVerb = gitstore.OpCreate, "", "Add"
	}
	g, res, err := h.svc().Commit(ctx, p, r, w)
	if err != nil {
		return h.Fail(err)
	}
	out, err := h.fileResponse(ctx, app.BaseURL(params.HTTPRequest), p, r, g, res)
	if err != nil {
		return h.Fail(err)
	}
	if w.Op == gitstore.OpCreate {
		return repository.NewRepoUpdateFileCreated().WithPayload(out)
	}
	return repository.NewRepoUpdateFileOK().WithPayload(out)
}

func (h Handlers) RepoDeleteFile(ctx context.Context, params repository.RepoDeleteFileParams) middleware.Responder {
	p, r, err := h.UnitWriteRepo(ctx, params.Owner, params.Repo, app.CodeUnit)
	if err != nil {
		return h.Fail(err)
	}
	o := params.Body
	if conv.Value(o.SHA) == "" {
		return h.Fail(apierr.Validation("[SHA]: Required"))
	}
	w := fileWrite(o.BranchName, o.NewBranchName, o.ForcePush, o.Signoff, o.Message, o.Author, o.Committer, o.Dates)
	w.Op, w.RawPath, w.SHA, w.DefaultVerb = gitstore.OpDelete, params.Filepath, conv.Value(o.SHA), "Delete"
	_, res, err := h.svc().Commit(ctx, p, r, w)
	if err != nil {
		return h.Fail(err)
	}
	base := app.BaseURL(params.HTTPRequest)
	v, err := h.verification(ctx, base, p, res.Commit)
	if err != nil {
		return h.Fail(err)
	}
	return repository.NewRepoDeleteFileOK().WithPayload(&models.FileDeleteResponse{
		Commit: convert.FileCommit(base, r, res.Commit), Verification: v,
	})
}
