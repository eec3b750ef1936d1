package contents

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	goruntime "runtime"
	"strconv"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-openapi/runtime"
	"github.com/go-openapi/runtime/middleware"
	"github.com/go-openapi/strfmt"
	"github.com/go-openapi/swag/conv"

	"repohost/impl/access"
	"repohost/impl/apierr"
	"repohost/impl/app"
	"repohost/impl/auth"
	"repohost/impl/convert"
	"repohost/impl/names"
	"repohost/impl/refs"
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
	p := auth.FromContext(ctx)
	_, g, err := h.CodeRepo(ctx, p, params.Owner, params.Repo)
	if err != nil {
		return h.Fail(err)
	}
	refName, rawPath := conv.Value(params.Ref), params.Filepath
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
	return h.download(hdr, repository.NewRepoGetRawFileOK().WithPayload(releasingReader{rd, release}))
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

// fileWrite is what create, update and delete share.
type fileWrite struct {
	op                   gitstore.FileOp
	branch, newBranch    *string
	force, signoff       *bool
	message              *string
	author, committer    *models.Identity
	dates                *models.CommitDateOptions
	path, fromPath, sha  string
	content              []byte
	defaultVerb, rawPath string
}

// identity is who a commit names: the given identity when it has an
// email, else fallback.
func identity(id *models.Identity, fallback *object.Signature) *object.Signature {
	if id == nil || id.Email == "" {
		return fallback
	}
	name := id.Name
	if name == "" {
		name, _, _ = strings.Cut(string(id.Email), "@")
	}
	return &object.Signature{Name: name, Email: string(id.Email)}
}

func dateOr(d *strfmt.DateTime, now time.Time) time.Time {
	// Clients built on the reference's SDK send the zero time for "unset".
	if d == nil || time.Time(*d).IsZero() || time.Time(*d).Year() <= 1 {
		return now
	}
	return time.Time(*d)
}

// commitFile makes the one commit of a contents write, after the checks that
// need neither git nor the database, and moves its branch through
// impl/refs.
func (h Handlers) commitFile(ctx context.Context, p *auth.Principal, r *store.Repository, w fileWrite) (*gitstore.GitRepo, *gitstore.ChangeResult, error) {
	path, err := treePath(w.rawPath)
	if err != nil {
		return nil, nil, err
	}
	if path == "" {
		return nil, nil, apierr.Validation("[Filepath]: a file path is required")
	}
	w.path = path
	if w.fromPath != "" {
		if w.fromPath, err = treePath(w.fromPath); err != nil {
			return nil, nil, apierr.Validation("[FromPath]: invalid path")
		}
	}
	if w.branch != nil && *w.branch != "" {
		if err := names.CheckBranch("Branch", *w.branch); err != nil {
			return nil, nil, err
		}
	}
	if w.newBranch != nil && *w.newBranch != "" {
		if err := names.CheckNewBranch("NewBranch", *w.newBranch); err != nil {
			return nil, nil, err
		}
	}
	g, err := h.OpenGit(r)
	if err != nil {
		return nil, nil, err
	}
	base := conv.Value(w.branch)
	if base == "" {
		base = r.DefaultBranch
	}
	now := h.Clock.Now()
	doer := app.Signature(p.User, h.Clock.Now())
	author := *identity(w.author, identity(w.committer, &doer))
	committer := *identity(w.committer, &author)
	author.When = dateOr(datesAuthor(w.dates), now)
	committer.When = dateOr(datesCommitter(w.dates), now)
	msg := conv.Value(w.message)
	if strings.TrimSpace(msg) == "" {
		msg = w.defaultVerb + " " + path
	}
	if conv.Value(w.signoff) {
		msg = strings.TrimRight(msg, "\n") + "\n\nSigned-off-by: " + committer.Name + " <" + committer.Email + ">"
	}
	// Writers to one branch queue here rather than race: each builds on
	// the tip the previous one left. Anything else that moves the branch
	// meanwhile (a push, another process) is met by the retry below.
	target := base
	if nb := conv.Value(w.newBranch); nb != "" {
		target = nb
	}
	unlock, err := h.BranchLocks.Lock(ctx, strconv.FormatInt(r.ID, 10)+"\x00"+target)
	if err != nil {
		return nil, nil, err
	}
	defer unlock()
	fc := gitstore.FileChange{
		Op: w.op, Branch: base, NewBranch: conv.Value(w.newBranch), Force: conv.Value(w.force),
		Path: path, FromPath: w.fromPath, Content: w.content, SHA: w.sha,
		Author: author, Committer: committer, Message: msg, Signer: h.CommitSigner(),
	}
	for attempt := 1; ; attempt++ {
		res, err := g.ChangeFile(fc)
		if err != nil {
			if attempt > 1 && noLongerApplies(err) {
				// It applied to the tip it was first built on; a
				// concurrent change of the branch took that away.
				return nil, nil, apierr.Conflict("branch %s moved meanwhile and the change no longer applies: %v", target, err)
			}
			return nil, nil, err
		}
		// The commit is published like a push of it: the one push policy
		// (a new_branch with force_push that rewrites a branch is a force
		// push), a compare-and-swap from the tip the commit was built on,
		// and the repository row and event that go with a ref change.
		_, err = refs.New(h.Deps).Apply(ctx, refs.Change{Repo: r, Doer: p, Git: g, Atomic: true,
			Updates: []*gitstore.RefUpdate{res.Update()}})
		if err == nil {
			return g, res, nil
		}
		if attempt < maxCommitAttempts && lostRace(g, res, err) {
			// Another writer moved the branch between reading its tip and
			// the compare-and-swap: build the same change again on the new
			// tip, as a rebase would, as long as it still applies there.
			if err := backoff(ctx, attempt); err != nil {
				return nil, nil, err
			}
			continue
		}
		var refused *access.Refusal
		switch {
		case errors.As(err, &refused) && refused.Reason == access.PushNotAllowed:
			return nil, nil, apierr.Forbidden("user cannot commit to protected branch %q", res.Branch)
		case errors.Is(err, gitstore.ErrBranchExists) && res.Branch == base:
			// Another writer made the repository's first commit meanwhile.
			return nil, nil, fmt.Errorf("branch %s: %w", base, store.ErrConflict)
		}
		return nil, nil, err
	}
}

// maxCommitAttempts bounds how often one contents write is rebuilt on a
// branch that keeps moving under it before it answers 409.
const maxCommitAttempts = 10

// lostRace tells whether publishing res failed only because its branch no
// longer points where the commit was built (a compare-and-swap lost to a
// concurrent writer, or a first commit beaten by another), as opposed to a
// refusal that would stand on any tip.
func lostRace(g *gitstore.GitRepo, res *gitstore.ChangeResult, err error) bool {
	if !errors.Is(err, store.ErrConflict) && !errors.Is(err, gitstore.ErrBranchExists) {
		return false
	}
	cur, herr := g.BranchHash(res.Branch)
	return herr == nil && cur != res.Old
}

// noLongerApplies tells the errors of a change that does not apply to a
// branch's tip: the file changed, appeared or went away.
func noLongerApplies(err error) bool {
	return errors.Is(err, gitstore.ErrSHAMismatch) || errors.Is(err, gitstore.ErrFileExists) ||
		errors.Is(err, gitstore.ErrPathConflict) || errors.Is(err, gitstore.ErrBranchExists) ||
		errors.Is(err, store.ErrNotFound)
}

// backoff waits a random while before the next attempt, up to twice as
// long after each (5 ms, 10 ms, … at most 320 ms), so writers that collided
// spread out instead of colliding again in step.
func backoff(ctx context.Context, attempt int) error {
	limit := 5 * time.Millisecond << min(attempt-1, 6)
	d := limit/2 + time.Duration(rand.Int64N(int64(limit/2)))
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

func datesAuthor(d *models.CommitDateOptions) *strfmt.DateTime {
	if d == nil {
		return nil
	}
	return d.Author
}

func datesCommitter(d *models.CommitDateOptions) *strfmt.DateTime {
	if d == nil {
		return nil
	}
	return d.Committer
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
	g, res, err := h.commitFile(ctx, p, r, fileWrite{
		op: gitstore.OpCreate, branch: o.BranchName, newBranch: o.NewBranchName, force: o.ForcePush, signoff: o.Signoff,
		message: o.Message, author: o.Author, committer: o.Committer, dates: o.Dates,
		rawPath: params.Filepath, content: content, defaultVerb: "Add",
	})
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
	w := fileWrite{
		op: gitstore.OpUpdate, branch: o.BranchName, newBranch: o.NewBranchName, force: o.ForcePush, signoff: o.Signoff,
		message: o.Message, author: o.Author, committer: o.Committer, dates: o.Dates,
		rawPath: params.Filepath, fromPath: conv.Value(o.FromPath), sha: conv.Value(o.SHA), content: content, defaultVerb: "Update",
	}
	if w.sha == "" {
		w.op, w.fromPath, w.defaultVerb = gitstore.OpCreate, "", "Add"
	}
	g, res, err := h.commitFile(ctx, p, r, w)
	if err != nil {
		return h.Fail(err)
	}
	out, err := h.fileResponse(ctx, app.BaseURL(params.HTTPRequest), p, r, g, res)
	if err != nil {
		return h.Fail(err)
	}
	if w.op == gitstore.OpCreate {
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
	_, res, err := h.commitFile(ctx, p, r, fileWrite{
		op: gitstore.OpDelete, branch: o.BranchName, newBranch: o.NewBranchName, force: o.ForcePush, signoff: o.Signoff,
		message: o.Message, author: o.Author, committer: o.Committer, dates: o.Dates,
		rawPath: params.Filepath, sha: conv.Value(o.SHA), defaultVerb: "Delete",
	})
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
