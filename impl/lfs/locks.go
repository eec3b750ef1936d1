package lfs

import (
	"errors"
	"io"
	"net/http"
	"path"
	"strconv"
	"strings"
	"time"

	"repohost/store"
)

// lockJSON is a lock as the LFS locks API shows it.
type lockJSON struct {
	ID       string    `json:"id"`
	Path     string    `json:"path"`
	LockedAt time.Time `json:"locked_at"`
	Owner    lockOwner `json:"owner"`
}

type lockOwner struct {
	Name string `json:"name"`
}

type lockList struct {
	Locks []lockJSON `json:"locks"`
	Next  string     `json:"next_cursor,omitempty"`
}

type lockResponse struct {
	Lock lockJSON `json:"lock"`
}

type lockError struct {
	Lock      *lockJSON `json:"lock,omitempty"`
	Message   string    `json:"message"`
	RequestID string    `json:"request_id,omitempty"`
}

func toLock(l *store.LFSLock) lockJSON {
	out := lockJSON{ID: strconv.FormatInt(l.ID, 10), Path: l.Path, LockedAt: l.CreatedAt.UTC().Truncate(time.Second)}
	if l.Owner != nil {
		out.Owner.Name = l.Owner.Name
	}
	return out
}

// cleanLockPath is the reference's PathJoinRel: slash-separated, relative,
// with no "." or ".." left.
func cleanLockPath(p string) string {
	p = strings.ReplaceAll(p, "\\", "/")
	return strings.TrimPrefix(path.Clean("/"+p), "/")
}

// lockPage reads a cursor (a page number from 0, as the reference's) and
// a limit (at most, and by default, locksPageSize).
func lockPage(cursor string, limit int) (offset, size, page int) {
	page, _ = strconv.Atoi(cursor)
	page = max(page, 0)
	if limit <= 0 || limit > locksPageSize {
		limit = locksPageSize
	}
	return page * limit, limit, page
}

// signedIn refuses an anonymous caller: locks belong to users.
func (h *Handlers) signedIn(w http.ResponseWriter, req *request, msg string) bool {
	if req.p == nil {
		h.writeError(w, http.StatusUnauthorized, msg)
		return false
	}
	return true
}

// ListLocks answers GET …/info/lfs/locks: one lock by id or path, or a
// page of them.
func (h *Handlers) ListLocks(w http.ResponseWriter, r *http.Request) {
	req, ok := h.resolve(w, r, false)
	if !ok || !h.signedIn(w, req, "You must have pull access to list locks") {
		return
	}
	ctx, q := r.Context(), r.URL.Query()
	one := func(l *store.LFSLock, err error) {
		switch {
		case errors.Is(err, store.ErrNotFound):
			h.writeJSON(w, http.StatusOK, lockList{Locks: []lockJSON{}})
		case err != nil:
			h.internal(w, r, "find lock", err)
		default:
			h.writeJSON(w, http.StatusOK, lockList{Locks: []lockJSON{toLock(l)}})
		}
	}
	if id := q.Get("id"); id != "" {
		n, err := strconv.ParseInt(id, 10, 64)
		if err != nil {
			h.writeError(w, http.StatusBadRequest, "bad request : "+err.Error())
			return
		}
		one(h.d.Store.LFS().Lock(ctx, req.repo.ID, n))
		return
	}
	if p := q.Get("path"); p != "" {
		one(h.d.Store.LFS().LockByPath(ctx, req.repo.ID, cleanLockPath(p)))
		return
	}
	limit, _ := strconv.Atoi(q.Get("limit"))
	offset, size, page := lockPage(q.Get("cursor"), limit)
	locks, err := h.d.Store.LFS().Locks(ctx, req.repo.ID, offset, size)
	if err != nil {
		h.internal(w, r, "list locks", err)
		return
	}
	out := lockList{Locks: make([]lockJSON, 0, len(locks))}
	for _, l := range locks {
		out.Locks = append(out.Locks, toLock(l))
	}
	if len(locks) == size {
		out.Next = strconv.Itoa(page + 1)
	}
	h.writeJSON(w, http.StatusOK, out)
}

// CreateLock answers POST …/info/lfs/locks: the caller locks a path.
func (h *Handlers) CreateLock(w http.ResponseWriter, r *http.Request) {
	req, ok := h.resolve(w, r, true)
	if !ok || !h.signedIn(w, req, "You must have push access to create locks") {
		return
	}
	var body struct {
		Path string `json:"path"`
	}
	if err := decode(w, r, &body); err != nil {
		h.writeError(w, http.StatusBadRequest, "malformed lock request: "+err.Error())
		return
	}
	p := cleanLockPath(body.Path)
	if p == "" {
		h.writeError(w, http.StatusUnprocessableEntity, "path is required")
		return
	}
	l, err := h.d.Store.LFS().CreateLock(r.Context(), &store.LFSLock{RepoID: req.repo.ID, OwnerID: req.p.User.ID, Path: p})
	if errors.Is(err, store.ErrDuplicate) && l != nil {
		lj := toLock(l)
		h.writeJSON(w, http.StatusConflict, lockError{Lock: &lj, Message: "already created lock"})
		return
	}
	if err != nil {
		h.internal(w, r, "create lock", err)
		return
	}
	h.writeJSON(w, http.StatusCreated, lockResponse{Lock: toLock(l)})
}

// VerifyLocks answers POST …/info/lfs/locks/verify: a page of the locks,
// split into the caller's and the others'.
func (h *Handlers) VerifyLocks(w http.ResponseWriter, r *http.Request) {
	req, ok := h.resolve(w, r, true)
	if !ok || !h.signedIn(w, req, "You must have push access to verify locks") {
		return
	}
	var body struct {
		Cursor string `json:"cursor"`
		Limit  int    `json:"limit"`
	}
	if err := decode(w, r, &body); err != nil {
		h.writeError(w, http.StatusBadRequest, "malformed verify request: "+err.Error())
		return
	}
	offset, size, page := lockPage(body.Cursor, body.Limit)
	locks, err := h.d.Store.LFS().Locks(r.Context(), req.repo.ID, offset, size)
	if err != nil {
		h.internal(w, r, "list locks", err)
		return
	}
	out := struct {
		Ours   []lockJSON `json:"ours"`
		Theirs []lockJSON `json:"theirs"`
		Next   string     `json:"next_cursor,omitempty"`
	}{Ours: []lockJSON{}, Theirs: []lockJSON{}}
	for _, l := range locks {
		if l.OwnerID == req.p.User.ID {
			out.Ours = append(out.Ours, toLock(l))
		} else {
			out.Theirs = append(out.Theirs, toLock(l))
		}
	}
	if len(locks) == size {
		out.Next = strconv.Itoa(page + 1)
	}
	h.writeJSON(w, http.StatusOK, out)
}

// Unlock answers POST …/info/lfs/locks/{id}/unlock: its owner removes a
// lock, or an administrator of the repository with force.
func (h *Handlers) Unlock(w http.ResponseWriter, r *http.Request) {
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil || id <= 0 {
		h.writeError(w, http.StatusUnprocessableEntity, "the lock id must be a positive number")
		return
	}
	req, ok := h.resolve(w, r, true)
	if !ok || !h.signedIn(w, req, "You must have push access to delete locks") {
		return
	}
	var body struct {
		Force bool `json:"force"`
	}
	if r.ContentLength != 0 {
		if err := decode(w, r, &body); err != nil && !errors.Is(err, io.EOF) {
			h.writeError(w, http.StatusBadRequest, "malformed unlock request: "+err.Error())
			return
		}
	}
	ctx := r.Context()
	l, err := h.d.Store.LFS().Lock(ctx, req.repo.ID, id)
	if errors.Is(err, store.ErrNotFound) {
		h.writeError(w, http.StatusNotFound, "lock not found")
		return
	}
	if err != nil {
		h.internal(w, r, "find lock", err)
		return
	}
	if l.OwnerID != req.p.User.ID {
		if !body.Force {
			h.writeError(w, http.StatusForbidden, "user doesn't own lock and force flag is not set")
			return
		}
		perm, err := h.d.Access.Repo(ctx, req.p, req.repo)
		if err != nil {
			h.internal(w, r, "permission", err)
			return
		}
		if !perm.IsAdmin() && !req.p.IsAdmin() {
			h.writeError(w, http.StatusForbidden, "only administrators of the repository may remove another user's lock")
			return
		}
	}
	if err := h.d.Store.LFS().DeleteLock(ctx, req.repo.ID, id); err != nil && !errors.Is(err, store.ErrNotFound) {
		h.internal(w, r, "delete lock", err)
		return
	}
	h.writeJSON(w, http.StatusOK, lockResponse{Lock: toLock(l)})
}
