// Package githttp serves git's smart HTTP protocol (clone, fetch and push at
// /{owner}/{repo}.git) behind the API's authentication and permission
// rules, with branch protection enforced on push.
//
// Fetches and clones are git's own: `git upload-pack --stateless-rpc` on
// the bare repository advertises the references and answers each request
// (gitstore.Store.UploadPack), as over SSH, in the protocol version the
// client's Git-Protocol header asks for. Pushes are read by
// gitstore.GitRepo.ReadPush (git stores the pack in a quarantine), and the
// ref updates go through impl/refs like every other ref change.
package githttp

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"repohost/impl/apierr"
	"repohost/impl/app"
	"repohost/impl/auth"
	"repohost/impl/requestid"
	"repohost/store"
	"repohost/store/gitstore"
)

// Handler serves the three smart-HTTP routes.
type Handler struct {
	d     *app.Deps
	authn *auth.Authenticator
	git   *Transport
}

// New returns the git handler; authn is the API's authenticator, so git
// accepts exactly the credentials the API does.
func New(d *app.Deps, authn *auth.Authenticator) *Handler {
	return &Handler{d: d, authn: authn, git: NewTransport(d)}
}

// maxNegotiation bounds a fetch request (wants and haves, no pack data).
const maxNegotiation = 64 << 20

// request is a resolved request: who asks, for which repository.
type request struct {
	p    *auth.Principal
	repo *store.Repository
}

// refuse writes a plain-text refusal (git shows the body) and, for 401, the
// challenge that makes git send or ask for credentials.
func refuse(w http.ResponseWriter, status int, msg string) {
	if status == http.StatusUnauthorized {
		w.Header().Set("WWW-Authenticate", `Basic realm="repohost"`)
	}
	http.Error(w, msg, status)
}

// resolve authenticates r and loads the repository it names through the
// shared Transport.Authorize, answering the refusal itself when it returns
// false.
func (h *Handler) resolve(w http.ResponseWriter, r *http.Request, write bool) (*request, bool) {
	p, err := h.authn.Authenticate(r)
	if err != nil {
		var e *apierr.Error
		if errors.As(err, &e) && e.Status < 500 {
			refuse(w, e.Status, e.Message)
			return nil, false
		}
		h.d.Log.ErrorContext(r.Context(), "git http authentication", "err", err)
		refuse(w, http.StatusInternalServerError, "internal server error")
		return nil, false
	}
	rp, err := h.git.Authorize(r.Context(), Caller{Principal: p}, r.PathValue("owner"), r.PathValue("repo"), write)
	var no *Refusal
	if errors.As(err, &no) {
		refuse(w, no.Status, no.Message)
		return nil, false
	}
	if err != nil {
		h.d.Log.ErrorContext(r.Context(), "git http repository lookup", "err", err)
		refuse(w, http.StatusInternalServerError, "internal server error")
		return nil, false
	}
	return &request{p: p, repo: rp}, true
}

func noCache(w http.ResponseWriter) {
	w.Header().Set("Expires", "Fri, 01 Jan 1980 00:00:00 GMT")
	w.Header().Set("Pragma", "no-cache")
	w.Header().Set("Cache-Control", "no-cache, max-age=0, must-revalidate")
}

// InfoRefs answers GET /{owner}/{repo}/info/refs?service=...: the reference
// advertisement that starts every clone, fetch and push.
func (h *Handler) InfoRefs(w http.ResponseWriter, r *http.Request) {
	service := r.URL.Query().Get("service")
	if service != gitstore.ServiceUploadPack && service != gitstore.ServiceReceivePack {
		refuse(w, http.StatusForbidden, "only git's smart HTTP protocol is supported; use git 1.6.6 or later")
		return
	}
	req, ok := h.resolve(w, r, service == gitstore.ServiceReceivePack)
	if !ok {
		return
	}
	// Built in memory first, so a failure is still a clean 500.
	var buf bytes.Buffer
	if service == gitstore.ServiceUploadPack {
		// git's own upload-pack advertises what it then serves (see
		// UploadPack).
		if err := h.d.Git.UploadPack(r.Context(), req.repo.Owner.Name, req.repo.Name, gitstore.UploadPackAdvertise, r.Header.Get("Git-Protocol"), nil, &buf, nil); err != nil {
			h.fail(w, "advertise references", err)
			return
		}
	} else {
		g, err := h.d.Git.OpenGit(req.repo.Owner.Name, req.repo.Name)
		if err != nil {
			h.fail(w, "open repository", err)
			return
		}
		if err := g.AdvertiseReceivePack(r.Context(), &buf); err != nil {
			h.fail(w, "advertise references", err)
			return
		}
	}
	noCache(w)
	w.Header().Set("Content-Type", "application/x-"+service+"-advertisement")
	_, _ = w.Write(buf.Bytes())
}

// body is a request body as git sent it: plain or chunked (net/http
// removes the chunking), and gunzipped when git compressed it
// (Content-Encoding: gzip). limit, when not 0, bounds the bytes read from
// it after decompression, and gzipLimit bounds a compressed body's
// decompressed size, so a small gzip bomb cannot expand without end; past
// either the body reads as an error and tooLarge reports it.
type body struct {
	r        io.Reader
	closers  []io.Closer
	left     int64 // -1: unbounded
	exceeded bool
}

func openBody(r *http.Request, limit, gzipLimit int64) (*body, error) {
	b := &body{r: r.Body, closers: []io.Closer{r.Body}, left: -1}
	if limit > 0 {
		b.left = limit
	}
	switch enc := strings.ToLower(strings.TrimSpace(r.Header.Get("Content-Encoding"))); enc {
	case "", "identity":
	case "gzip", "x-gzip":
		zr, err := gzip.NewReader(r.Body)
		if err != nil {
			return nil, err
		}
		b.r = zr
		b.closers = append(b.closers, zr)
		if gzipLimit > 0 && (b.left < 0 || gzipLimit < b.left) {
			b.left = gzipLimit
		}
	default:
		return nil, fmt.Errorf("unsupported Content-Encoding %q", enc)
	}
	return b, nil
}

// errTooLarge is what a body past its bound reads as.
var errTooLarge = errors.New("request body too large")

func (b *body) Read(p []byte) (int, error) {
	if b.left < 0 {
		return b.r.Read(p)
	}
	if b.left == 0 {
		// One byte more tells a body of exactly the bound from a larger one.
		var one [1]byte
		n, err := b.r.Read(one[:])
		if n > 0 {
			b.exceeded = true
			return 0, errTooLarge
		}
		return 0, err
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.r.Read(p)
	b.left -= int64(n)
	return n, err
}

func (b *body) Close() error {
	for i := len(b.closers) - 1; i >= 0; i-- {
		_ = b.closers[i].Close()
	}
	return nil
}

// tooLarge answers 413 when the body went past its bound and tells
// whether it did.
func (b *body) tooLarge(w http.ResponseWriter) bool {
	if !b.exceeded {
		return false
	}
	refuse(w, http.StatusRequestEntityTooLarge, errTooLarge.Error())
	return true
}

// countingWriter tells whether anything reached the client, after which a
// failure can only be logged.
type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(b []byte) (int, error) {
	n, err := c.w.Write(b)
	c.n += int64(n)
	return n, err
}

func (h *Handler) fail(w http.ResponseWriter, what string, err error) {
	if errors.Is(err, store.ErrNotFound) {
		refuse(w, http.StatusNotFound, "repository not found")
		return
	}
	h.d.Log.Error("git http: "+what, "err", err, "request_id", requestid.FromWriter(w))
	refuse(w, http.StatusInternalServerError, "internal server error")
}

// checkContentType refuses a POST that is not the service's request.
func checkContentType(w http.ResponseWriter, r *http.Request, service string) bool {
	if r.Header.Get("Content-Type") != "application/x-"+service+"-request" {
		refuse(w, http.StatusUnsupportedMediaType, "expected a "+service+" request")
		return false
	}
	return true
}

// UploadPack answers POST /{owner}/{repo}/git-upload-pack: one round of a
// clone or fetch, served by git's own `git upload-pack --stateless-rpc` on
// the bare repository (as git over SSH is), which reuses the deltas stored
// in the repository's packs instead of searching for new ones on every
// request. The body streams into git and its answer back out; the
// advertisement came from git too, in the protocol version the client's
// Git-Protocol header asks for on both requests (0 without it, 2 with
// "version=2").
func (h *Handler) UploadPack(w http.ResponseWriter, r *http.Request) {
	req, ok := h.resolve(w, r, false)
	if !ok || !checkContentType(w, r, gitstore.ServiceUploadPack) {
		return
	}
	in, err := openBody(r, maxNegotiation, 0)
	if err != nil {
		refuse(w, http.StatusBadRequest, "malformed request body: "+err.Error())
		return
	}
	defer in.Close()
	noCache(w)
	w.Header().Set("Content-Type", "application/x-git-upload-pack-result")
	out := &countingWriter{w: w}
	err = h.d.Git.UploadPack(r.Context(), req.repo.Owner.Name, req.repo.Name, gitstore.UploadPackRequest, r.Header.Get("Git-Protocol"), in, out, nil)
	h.d.Metrics.GitOperation("upload-pack", err)
	switch {
	case err == nil:
	case out.n == 0 && in.tooLarge(w):
	case out.n == 0 && errors.Is(err, gitstore.ErrProtocol):
		refuse(w, http.StatusBadRequest, err.Error())
	case out.n == 0:
		h.fail(w, "upload-pack", err)
	default:
		// The answer has started; the client sees a truncated pack.
		h.d.Log.ErrorContext(r.Context(), "git http: upload-pack", "repo", req.repo.FullName(), "err", err)
	}
}

// ReceivePack answers POST /{owner}/{repo}/git-receive-pack: a push. The
// objects are stored, then the ref updates go through impl/refs (the one
// push policy, compare-and-swap, one event for the push); refused ones are
// reported to the client ("ng") and the rest applied.
func (h *Handler) ReceivePack(w http.ResponseWriter, r *http.Request) {
	req, ok := h.resolve(w, r, true)
	if !ok || !checkContentType(w, r, gitstore.ServiceReceivePack) {
		return
	}
	// A push of any size streams through: only a compressed body is
	// bounded, by its decompressed size.
	in, err := openBody(r, 0, h.d.Config.MaxGitInflatedBody)
	if err != nil {
		refuse(w, http.StatusBadRequest, "malformed request body: "+err.Error())
		return
	}
	defer in.Close()
	g, err := h.d.Git.OpenGit(req.repo.Owner.Name, req.repo.Name)
	if err != nil {
		h.fail(w, "open repository", err)
		return
	}
	// Waiting for a free receive slot is the server's delay, not the
	// client's stall: the read deadline rests meanwhile.
	ctx := gitstore.WithSlotWait(r.Context(), func(waiting bool) {
		rc := http.NewResponseController(w)
		if waiting {
			_ = rc.SetReadDeadline(time.Time{})
			_ = rc.SetWriteDeadline(time.Time{})
		} else if stall := h.d.Config.StallTimeout; stall > 0 {
			_ = rc.SetReadDeadline(time.Now().Add(stall))
			_ = rc.SetWriteDeadline(time.Now().Add(5 * stall))
		}
	})
	push, err := h.git.ReceivePack(ctx, Caller{Principal: req.p}, req.repo, g, in, func() bool { return in.exceeded })
	if errors.Is(err, ErrCutShort) && in.tooLarge(w) {
		// Nothing is applied: the pack was cut short.
		return
	}
	if errors.Is(err, gitstore.ErrProtocol) {
		refuse(w, http.StatusBadRequest, err.Error())
		return
	}
	if err != nil && r.Context().Err() != nil {
		// Reading the pack failed (net/http ends the request's context
		// on a read error): the client stalled past the stall timeout
		// or went away. Nothing was applied; the fault is not the
		// server's.
		h.d.Log.InfoContext(r.Context(), "git http: receive-pack ended by the client", "repo", req.repo.FullName(), "err", err)
		refuse(w, http.StatusRequestTimeout, "the push stopped arriving before its end")
		return
	}
	if err != nil {
		h.fail(w, "receive-pack", err)
		return
	}
	noCache(w)
	w.Header().Set("Content-Type", "application/x-git-receive-pack-result")
	if err := push.WriteReport(w); err != nil {
		h.d.Log.ErrorContext(r.Context(), "git http: receive-pack report", "repo", req.repo.FullName(), "err", err)
	}
}
