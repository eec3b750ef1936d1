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

// archiveJob is an archive ready to be written: the ref is resolved,
// every check done and a heavy-request slot taken, so nothing but I/O can
// fail once bytes are sent. release frees the slot; call it once written.
type archiveJob struct {
	header  http.Header
	write   func(io.Writer) error
	release func()
	// redirect, when set, is the presigned address of the kept archive
	// (its store serves downloads direct); nothing else is set then.
	redirect string
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
	// A whole commit's archive is kept for the next download, which its
	// store may serve itself.
	key := ""
	if len(keep) == 0 && h.Objects.Archives != nil {
		key = archiveKey(r.ID, ref.Commit.Hash.String(), format, prefix)
		if u := keptArchiveURL(ctx, h.Deps, key, download); u != "" {
			return &archiveJob{redirect: u}, nil
		}
	}
	// Last, so a refused or missing archive never waits for a slot.
	release, err := h.Heavy().Acquire(ctx)
	if err != nil {
		return nil, err
	}
	write := func(w io.Writer) error { return g.WriteArchive(w, ref.Commit, format, prefix, keep) }
	if key != "" {
		build := write
		write = func(w io.Writer) error { return cachedArchive(ctx, h.Deps, w, key, build) }
	}
	return &archiveJob{header: hdr, release: release, write: write}, nil
}

// archiveStream is the payload of the API's archive route: the producer
// hands it the response (io.WriterTo), so the archive is written straight
// to the client as it is made, one blob at a time, and never held in
// memory; it always closes it, which frees the slot. Read serves a caller
// that only reads, through a pipe.
type archiveStream struct {
	job  *archiveJob
	pr   *io.PipeReader
	done chan struct{}
}

func (s *archiveStream) WriteTo(w io.Writer) (int64, error) {
	cw := &countingWriter{w: w}
	err := s.job.write(cw)
	return cw.n, err
}

func (s *archiveStream) Read(p []byte) (int, error) {
	if s.pr == nil {
		pr, pw := io.Pipe()
		s.pr, s.done = pr, make(chan struct{})
		go func() {
			defer close(s.done)
			pw.CloseWithError(s.job.write(pw))
		}()
	}
	return s.pr.Read(p)
}

// Close stops a pipe's writer (a client that went away) and frees the slot.
func (s *archiveStream) Close() error {
	if s.pr != nil {
		s.pr.Close()
		<-s.done
	}
	s.job.release()
	return nil
}

type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

func (h Handlers) RepoGetArchive(ctx context.Context, params repository.RepoGetArchiveParams) middleware.Responder {
	job, err := h.prepareArchive(ctx, auth.FromContext(ctx), params.Owner, params.Repo, params.Archive, params.Path)
	if err != nil {
		return h.Fail(err)
	}
	if job.redirect != "" {
		return repository.NewRepoGetArchiveSeeOther().WithLocation(job.redirect)
	}
	return h.download(job.header, repository.NewRepoGetArchiveOK().WithPayload(&archiveStream{job: job}))
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
	if job.redirect != "" {
		http.Redirect(w, req, job.redirect, http.StatusSeeOther)
		return
	}
	defer job.release()
	for k, vs := range job.header {
		w.Header()[k] = vs
	}
	if err := job.write(w); err != nil {
		// The status is already sent: cut the connection, so the client
		// sees a broken archive rather than a short one that looks whole.
		h.Log.InfoContext(ctx, "download cut off", "path", req.URL.Path, "err", err)
		panic(http.ErrAbortHandler)
	}
}
