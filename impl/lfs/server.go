package lfs

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"repohost/impl/apierr"
	"repohost/impl/app"
	"repohost/impl/auth"
	"repohost/impl/githttp"
	"repohost/impl/requestid"
	"repohost/impl/rooturl"
	"repohost/store"
)

// Handlers serve the LFS routes under /{owner}/{repo}/info/lfs ({repo}
// may end in ".git"). They authenticate as git over HTTP does (the same
// authenticator, the same Transport.Authorize), and also accept the
// tokens git-lfs-authenticate hands out over SSH.
type Handlers struct {
	d     *app.Deps
	authn *auth.Authenticator
	git   *githttp.Transport
	svc   *Service
}

// NewHandlers returns the LFS handlers over d, authenticating with authn.
func NewHandlers(d *app.Deps, authn *auth.Authenticator, svc *Service) *Handlers {
	return &Handlers{d: d, authn: authn, git: githttp.NewTransport(d), svc: svc}
}

// Mount registers the routes on mux, as the reference registers them.
func (h *Handlers) Mount(mux *http.ServeMux) {
	const base = "/{owner}/{repo}/info/lfs"
	mux.HandleFunc("POST "+base+"/objects/batch", h.accepting(h.Batch))
	mux.HandleFunc("PUT "+base+"/objects/{oid}/{size}", h.Upload)
	mux.HandleFunc("GET "+base+"/objects/{oid}", h.Download)
	mux.HandleFunc("GET "+base+"/objects/{oid}/{filename}", h.Download)
	mux.HandleFunc("POST "+base+"/verify", h.accepting(h.Verify))
	mux.HandleFunc("GET "+base+"/locks", h.accepting(h.ListLocks))
	mux.HandleFunc("POST "+base+"/locks", h.accepting(h.CreateLock))
	mux.HandleFunc("POST "+base+"/locks/verify", h.accepting(h.VerifyLocks))
	mux.HandleFunc("POST "+base+"/locks/{id}/unlock", h.accepting(h.Unlock))
}

// maxBatchObjects bounds one batch request (the reference's
// LFS_MAX_BATCH_SIZE, which it leaves unlimited; git-lfs sends 100).
const maxBatchObjects = 1000

// maxJSONBody bounds the JSON requests.
const maxJSONBody = 8 << 20

// locksPageSize is the reference's LFS_LOCKS_PAGING_NUM.
const locksPageSize = 50

// errorBody is the LFS API's error shape.
type errorBody struct {
	Message          string `json:"message"`
	DocumentationURL string `json:"documentation_url,omitempty"`
	RequestID        string `json:"request_id,omitempty"`
}

func (h *Handlers) writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", MediaType)
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// writeError answers status with msg in the LFS error shape; a 401 also
// carries the challenges git-lfs looks for.
func (h *Handlers) writeError(w http.ResponseWriter, status int, msg string) {
	if status == http.StatusUnauthorized {
		w.Header().Set("LFS-Authenticate", `Basic realm="repohost"`)
		w.Header().Set("WWW-Authenticate", `Basic realm="repohost"`)
	}
	if msg == "" {
		msg = http.StatusText(status)
	}
	h.writeJSON(w, status, errorBody{Message: msg, RequestID: requestid.FromWriter(w)})
}

func (h *Handlers) internal(w http.ResponseWriter, r *http.Request, what string, err error) {
	if errors.Is(err, store.ErrInvalid) {
		h.writeError(w, http.StatusUnprocessableEntity, "invalid characters in the request")
		return
	}
	h.d.Log.ErrorContext(r.Context(), "lfs: "+what, "err", err)
	h.writeError(w, http.StatusInternalServerError, "")
}

// accepting refuses a request whose Accept is not the LFS media type, as
// the reference does (415).
func (h *Handlers) accepting(next http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		media, _, _ := strings.Cut(r.Header.Get("Accept"), ";")
		if strings.TrimSpace(media) != MediaType {
			h.writeError(w, http.StatusUnsupportedMediaType, "")
			return
		}
		next(w, r)
	}
}

// request is a resolved LFS request.
type request struct {
	p    *auth.Principal
	repo *store.Repository
	// authorization is the caller's Authorization header, repeated on
	// the actions a batch answer links to.
	authorization string
}

// resolve authenticates r (an LFS token, or whatever git over HTTP
// accepts) and loads the repository for reading or (write) for pushing,
// answering the refusal itself when it returns false.
func (h *Handlers) resolve(w http.ResponseWriter, r *http.Request, write bool) (*request, bool) {
	authz := r.Header.Get("Authorization")
	var p *auth.Principal
	var claims *Claims
	scheme, value, _ := strings.Cut(strings.TrimSpace(authz), " ")
	if (strings.EqualFold(scheme, "bearer") || scheme == "token") && strings.Count(value, ".") == 2 {
		c, err := h.svc.ParseToken(strings.TrimSpace(value))
		if err != nil {
			h.writeError(w, http.StatusUnauthorized, "invalid or expired LFS token")
			return nil, false
		}
		u, err := h.d.Store.Users().FindByID(r.Context(), c.UserID)
		if err != nil || auth.AccountState(u) != nil {
			h.writeError(w, http.StatusUnauthorized, "invalid or expired LFS token")
			return nil, false
		}
		p, claims = &auth.Principal{User: u, Signer: u}, c
	} else {
		var err error
		p, err = h.authn.Authenticate(r)
		if err != nil {
			var e *apierr.Error
			if errors.As(err, &e) && e.Status < 500 {
				h.writeError(w, e.Status, e.Message)
				return nil, false
			}
			h.internal(w, r, "authentication", err)
			return nil, false
		}
	}
	rp, err := h.git.Authorize(r.Context(), githttp.Caller{Principal: p}, r.PathValue("owner"), r.PathValue("repo"), write)
	var no *githttp.Refusal
	if errors.As(err, &no) {
		h.writeError(w, no.Status, no.Message)
		return nil, false
	}
	if err != nil {
		h.internal(w, r, "repository lookup", err)
		return nil, false
	}
	if claims != nil && (claims.RepoID != rp.ID || (write && claims.Op != "upload")) {
		h.writeError(w, http.StatusUnauthorized, "the LFS token is not valid for this repository or operation")
		return nil, false
	}
	return &request{p: p, repo: rp, authorization: authz}, true
}

// decode reads a JSON body of at most maxJSONBody bytes into v.
func decode(w http.ResponseWriter, r *http.Request, v any) error {
	return json.NewDecoder(http.MaxBytesReader(w, r.Body, maxJSONBody)).Decode(v)
}

// link is an action of a batch answer.
type link struct {
	Href      string            `json:"href"`
	Header    map[string]string `json:"header,omitempty"`
	ExpiresAt *time.Time        `json:"expires_at,omitempty"`
}

type objectError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

type objectResponse struct {
	Pointer
	Actions map[string]*link `json:"actions,omitempty"`
	Error   *objectError     `json:"error,omitempty"`
}

type batchRequest struct {
	Operation string    `json:"operation"`
	Transfers []string  `json:"transfers,omitempty"`
	Objects   []Pointer `json:"objects"`
}

type batchResponse struct {
	Transfer string            `json:"transfer,omitempty"`
	Objects  []*objectResponse `json:"objects"`
}

// objectsURL is the repository's objects address.
func (h *Handlers) objectsURL(r *http.Request, repo *store.Repository) string {
	return fmt.Sprintf("%s%s/%s.git/info/lfs/", h.root(r), pathEscape(repo.Owner.Name), pathEscape(repo.Name))
}

// serveDirectTTL is how long a presigned download address lasts.
const serveDirectTTL = time.Hour

// Batch answers POST …/info/lfs/objects/batch: for each object, where to
// upload or download it, or why not.
func (h *Handlers) Batch(w http.ResponseWriter, r *http.Request) {
	var br batchRequest
	if err := decode(w, r, &br); err != nil {
		h.writeError(w, http.StatusBadRequest, "malformed batch request: "+err.Error())
		return
	}
	var upload bool
	switch br.Operation {
	case "upload":
		upload = true
	case "download":
	default:
		h.writeError(w, http.StatusBadRequest, `operation must be "upload" or "download"`)
		return
	}
	req, ok := h.resolve(w, r, upload)
	if !ok {
		return
	}
	if len(br.Objects) > maxBatchObjects {
		h.writeError(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("a batch may name at most %d objects", maxBatchObjects))
		return
	}
	ctx := r.Context()
	header := map[string]string{}
	if req.authorization != "" {
		header["Authorization"] = req.authorization
	}
	base := h.objectsURL(r, req.repo)
	out := make([]*objectResponse, 0, len(br.Objects))
	for _, p := range br.Objects {
		if !p.Valid() {
			out = append(out, &objectResponse{Pointer: p, Error: &objectError{Code: http.StatusUnprocessableEntity, Message: "Oid or size are invalid"}})
			continue
		}
		exists, err := h.svc.Exists(ctx, p)
		if err != nil {
			h.internal(w, r, "object lookup", err)
			return
		}
		meta, err := h.svc.Meta(ctx, req.repo, p.Oid)
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			h.internal(w, r, "object link lookup", err)
			return
		}
		if meta != nil && meta.Size != p.Size {
			out = append(out, &objectResponse{Pointer: p, Error: &objectError{Code: http.StatusUnprocessableEntity,
				Message: fmt.Sprintf("Object %s is not %d bytes", p.Oid, p.Size)}})
			continue
		}
		res := &objectResponse{Pointer: p, Actions: map[string]*link{}}
		if upload {
			if exists && meta == nil {
				// Stored for another repository: linked here when the
				// caller may read one that has it, else sent again.
				accessible, err := h.svc.Accessible(ctx, req.p, p.Oid)
				if err != nil {
					h.internal(w, r, "object access", err)
					return
				}
				if accessible {
					err := h.svc.Link(ctx, req.repo, p)
					var big *ErrTooLarge
					if errors.As(err, &big) {
						out = append(out, &objectResponse{Pointer: p, Error: &objectError{Code: http.StatusRequestEntityTooLarge, Message: big.Message}})
						continue
					}
					if err != nil {
						h.internal(w, r, "link object", err)
						return
					}
					meta = &store.LFSMetaObject{Oid: p.Oid, Size: p.Size}
				} else {
					exists = false
				}
			}
			if !exists || meta == nil {
				if err := h.svc.CheckLimits(ctx, req.repo, p.Size); err != nil {
					var big *ErrTooLarge
					if !errors.As(err, &big) {
						h.internal(w, r, "limits", err)
						return
					}
					out = append(out, &objectResponse{Pointer: p, Error: &objectError{Code: http.StatusRequestEntityTooLarge, Message: big.Message}})
					continue
				}
				res.Actions["upload"] = &link{Href: base + "objects/" + p.Oid + "/" + strconv.FormatInt(p.Size, 10), Header: header}
				verifyHeader := map[string]string{"Accept": MediaType}
				for k, v := range header {
					verifyHeader[k] = v
				}
				res.Actions["verify"] = &link{Href: base + "verify", Header: verifyHeader}
			}
		} else {
			if !exists || meta == nil {
				res.Actions = nil
				res.Error = &objectError{Code: http.StatusNotFound, Message: http.StatusText(http.StatusNotFound)}
			} else {
				res.Actions["download"] = h.downloadLink(r, base, p, header)
			}
		}
		out = append(out, res)
	}
	h.writeJSON(w, http.StatusOK, batchResponse{Transfer: "basic", Objects: out})
}

// downloadLink is the object's presigned address where the store has one
// (the reference's SERVE_DIRECT), else this server's.
func (h *Handlers) downloadLink(r *http.Request, base string, p Pointer, header map[string]string) *link {
	if u, err := h.d.Objects.LFS.URL(r.Context(), Key(p.Oid), p.Oid, serveDirectTTL); err == nil && u != "" {
		exp := h.d.Clock.Now().Add(serveDirectTTL).UTC().Truncate(time.Second)
		return &link{Href: u, ExpiresAt: &exp}
	}
	return &link{Href: base + "objects/" + p.Oid, Header: header}
}

// Upload answers PUT …/info/lfs/objects/{oid}/{size}: the object's bytes.
func (h *Handlers) Upload(w http.ResponseWriter, r *http.Request) {
	p := Pointer{Oid: r.PathValue("oid")}
	size, err := strconv.ParseInt(r.PathValue("size"), 10, 64)
	if err != nil {
		h.writeError(w, http.StatusUnprocessableEntity, "size is not a number")
		return
	}
	p.Size = size
	req, ok := h.resolveObject(w, r, p, true)
	if !ok {
		return
	}
	defer r.Body.Close()
	err = h.svc.Upload(r.Context(), req.p, req.repo, p, r.Body)
	var big *ErrTooLarge
	switch {
	case err == nil:
		h.writeError(w, http.StatusOK, "")
	case errors.As(err, &big):
		h.writeError(w, http.StatusRequestEntityTooLarge, big.Message)
	case errors.Is(err, ErrMismatch):
		h.writeError(w, http.StatusUnprocessableEntity, ErrMismatch.Error())
	case r.Context().Err() != nil:
		h.d.Log.InfoContext(r.Context(), "lfs: upload ended by the client", "repo", req.repo.FullName(), "err", err)
	default:
		h.internal(w, r, "upload", err)
	}
}

// resolveObject refuses an invalid pointer (422), then resolves the
// request as resolve does.
func (h *Handlers) resolveObject(w http.ResponseWriter, r *http.Request, p Pointer, write bool) (*request, bool) {
	if !p.Valid() {
		h.writeError(w, http.StatusUnprocessableEntity, "Oid or size are invalid")
		return nil, false
	}
	return h.resolve(w, r, write)
}

// meta resolves the object a request names for repo, answering 422 or
// 404 itself.
func (h *Handlers) meta(w http.ResponseWriter, r *http.Request, req *request, p Pointer) (*store.LFSMetaObject, bool) {
	m, err := h.svc.Meta(r.Context(), req.repo, p.Oid)
	if errors.Is(err, store.ErrNotFound) {
		h.writeError(w, http.StatusNotFound, "")
		return nil, false
	}
	if err != nil {
		h.internal(w, r, "object link lookup", err)
		return nil, false
	}
	return m, true
}

// Download answers GET …/info/lfs/objects/{oid}: the object's bytes, with
// ranges.
func (h *Handlers) Download(w http.ResponseWriter, r *http.Request) {
	p := Pointer{Oid: r.PathValue("oid")}
	req, ok := h.resolveObject(w, r, p, false)
	if !ok {
		return
	}
	if _, ok := h.meta(w, r, req, p); !ok {
		return
	}
	obj, err := h.d.Objects.LFS.Open(r.Context(), Key(p.Oid))
	if isNotExist(err) {
		h.writeError(w, http.StatusNotFound, "")
		return
	}
	if err != nil {
		h.internal(w, r, "open object", err)
		return
	}
	defer obj.Close()
	w.Header().Set("Content-Type", "application/octet-stream")
	http.ServeContent(w, r, "", obj.ModTime(), obj)
}

// Verify answers POST …/info/lfs/verify: whether the upload arrived.
func (h *Handlers) Verify(w http.ResponseWriter, r *http.Request) {
	var p Pointer
	if err := decode(w, r, &p); err != nil {
		h.writeError(w, http.StatusUnprocessableEntity, "malformed verify request: "+err.Error())
		return
	}
	req, ok := h.resolveObject(w, r, p, true)
	if !ok {
		return
	}
	m, ok := h.meta(w, r, req, p)
	if !ok {
		return
	}
	if m.Size != p.Size {
		h.writeError(w, http.StatusUnprocessableEntity, fmt.Sprintf("Object %s is not %d bytes", p.Oid, p.Size))
		return
	}
	exists, err := h.svc.Exists(r.Context(), p)
	if err != nil {
		h.internal(w, r, "verify", err)
		return
	}
	if !exists {
		h.writeError(w, http.StatusNotFound, "")
		return
	}
	h.writeError(w, http.StatusOK, "")
}

// root is the server's public address: the configured one, else the one
// the request came to.
func (h *Handlers) root(r *http.Request) string {
	if h.d.Config.RootURL != "" {
		return rooturl.Normalize(h.d.Config.RootURL)
	}
	return rooturl.From(r)
}
