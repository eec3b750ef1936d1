package contents

import (
	"context"
	"io"
	"net/http"
	"strings"

	"github.com/go-openapi/runtime/middleware"

	"repohost/impl/apierr"
	"repohost/impl/app"
	"repohost/impl/auth"
	"repohost/restapi/operations/repository"
	"repohost/store/gitstore"
)

// archiveJob is an archive ready to be written: the ref is resolved and
// every check done, so nothing but I/O can fail once bytes are sent.
type archiveJob struct {
	header http.Header
	write  func(io.Writer) error
}

// prepareArchive checks p's access and resolves file ("<ref>.tar.gz" or
// "<ref>.zip"); paths, when given, limit the archive to those subtrees.
func (h Handlers) prepareArchive(ctx context.Context, p *auth.Principal, owner, name, file string, paths []string) (*archiveJob, error) {
	r, _, err := h.UnitRepo(ctx, p, owner, name, app.CodeUnit)
	if err != nil {
		return nil, err
	}
	refName, format, ok := gitstore.ParseArchiveName(file)
	if !ok {
		return nil, apierr.NotFound("unknown archive format")
	}
	var keep []string
	for _, sp := range paths {
		clean, err := gitstore.CleanTreePath(sp)
		if err != nil {
			return nil, apierr.Validation("[Path]: invalid path %q", sp)
		}
		if clean != "" {
			keep = append(keep, clean)
		}
	}
	g, err := h.OpenGit(r)
	if err != nil {
		return nil, err
	}
	ref, err := g.Resolve(refName)
	if err != nil {
		return nil, err
	}
	hdr := http.Header{}
	hdr.Set("Content-Type", "application/gzip")
	if format == gitstore.ArchiveZip {
		hdr.Set("Content-Type", "application/zip")
	}
	// The file is named <repo>-<ref>, with a ref's slashes flattened so
	// the name is never a path.
	download := r.Name + "-" + strings.ReplaceAll(refName, "/", "-") + "." + string(format)
	hdr.Set("Content-Disposition", app.ContentDisposition("attachment", download))
	prefix := r.Name + "/"
	return &archiveJob{header: hdr, write: func(w io.Writer) error {
		return g.WriteArchive(w, ref.Commit, format, prefix, keep)
	}}, nil
}

// stream runs the job into a pipe, so the typed responder can copy the
// archive out as it is made instead of holding it in memory. A client that
// goes away closes the reader, which stops the writer.
func (h Handlers) stream(job *archiveJob) io.ReadCloser {
	pr, pw := io.Pipe()
	go func() {
		pw.CloseWithError(job.write(pw))
	}()
	return pr
}

func (h Handlers) RepoGetArchive(ctx context.Context, params repository.RepoGetArchiveParams) middleware.Responder {
	job, err := h.prepareArchive(ctx, auth.FromContext(ctx), params.Owner, params.Repo, params.Archive, params.Path)
	if err != nil {
		return h.Fail(err)
	}
	return withHeaders{job.header, repository.NewRepoGetArchiveOK().WithPayload(h.stream(job))}
}

// ServeArchive answers GET /{owner}/{repo}/archive/{file...}, where a
// release's or tag's tarball_url and zipball_url point, as the reference
// serves them outside the API.
func (h Handlers) ServeArchive(w http.ResponseWriter, req *http.Request) {
	ctx := req.Context()
	p := auth.FromContext(ctx)
	if err := app.WebScope(p); err != nil {
		h.Errors.Write(w, err)
		return
	}
	job, err := h.prepareArchive(ctx, p, req.PathValue("owner"), req.PathValue("repo"), req.PathValue("file"), req.URL.Query()["path"])
	if err != nil {
		h.Errors.Write(w, err)
		return
	}
	for k, vs := range job.header {
		w.Header()[k] = vs
	}
	if err := job.write(w); err != nil {
		// The status is already sent; all that is left is the log.
		h.Log.Error("write archive", "path", req.URL.Path, "err", err)
	}
}
