// Package lfs serves Git LFS as the reference does: the batch API with the
// basic transfer (upload, download, verify), the locks API, and the tokens
// git-lfs-authenticate hands out over SSH. Object bytes live in the LFS
// object store (app.Deps.Objects.LFS) under oid[0:2]/oid[2:4]/oid[4:];
// lfs_meta_objects rows say which repositories may serve them.
package lfs

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-jose/go-jose/v4/jwt"

	"repohost/impl/access"
	"repohost/impl/app"
	"repohost/impl/auth"
	"repohost/impl/oauth2"
	"repohost/store"
	"repohost/store/objects"
)

// MediaType is the LFS API's content type.
const MediaType = "application/vnd.git-lfs+json"

var oidPattern = regexp.MustCompile(`^[a-f0-9]{64}$`)

// Pointer is an object as the API names it.
type Pointer struct {
	Oid  string `json:"oid"`
	Size int64  `json:"size"`
}

// Valid is the reference's check: a SHA-256 in lowercase hex, a size not
// below 0.
func (p Pointer) Valid() bool { return oidPattern.MatchString(p.Oid) && p.Size >= 0 }

// Key is where the object's bytes are kept, laid out as the reference
// lays out its LFS directory.
func Key(oid string) string { return oid[0:2] + "/" + oid[2:4] + "/" + oid[4:] }

// Service is the transport-independent part of LFS.
type Service struct {
	d *app.Deps

	keysOnce sync.Once
	keys     *oauth2.Keys
	keysErr  error
}

// NewService returns the LFS service over d.
func NewService(d *app.Deps) *Service { return &Service{d: d} }

// audience marks a JWT as an LFS token, so that no other token signed
// with the same key (an OpenID Connect ID token) is taken for one.
const audience = "repohost-lfs"

// Claims are what an LFS token grants: op ("upload" or "download") on one
// repository, as one user (the reference's lfs.Claims).
type Claims struct {
	RepoID int64  `json:"repo_id"`
	Op     string `json:"op"`
	UserID int64  `json:"user_id"`
}

func (s *Service) signingKeys() (*oauth2.Keys, error) {
	s.keysOnce.Do(func() { s.keys, s.keysErr = oauth2.LoadKeys(s.d.OAuth2KeyFile) })
	return s.keys, s.keysErr
}

// Token is the answer to git-lfs-authenticate: where the LFS API of the
// repository is, with the header that authenticates there until expires.
type Token struct {
	Header    map[string]string `json:"header"`
	Href      string            `json:"href"`
	ExpiresAt time.Time         `json:"expires_at"`
}

// IssueToken signs a token for userID to op on repo.
func (s *Service) IssueToken(repo *store.Repository, userID int64, op string, root string) (*Token, error) {
	keys, err := s.signingKeys()
	if err != nil {
		return nil, err
	}
	now := s.d.Clock.Now()
	exp := now.Add(s.d.Config.LFSAuthExpiry)
	signed, err := keys.Sign(jwt.Claims{
		Audience:  jwt.Audience{audience},
		NotBefore: jwt.NewNumericDate(now.Add(-time.Minute)),
		IssuedAt:  jwt.NewNumericDate(now),
		Expiry:    jwt.NewNumericDate(exp),
	}, Claims{RepoID: repo.ID, Op: op, UserID: userID})
	if err != nil {
		return nil, err
	}
	return &Token{
		Header:    map[string]string{"Authorization": "Bearer " + signed},
		Href:      fmt.Sprintf("%s%s/%s.git/info/lfs", root, pathEscape(repo.Owner.Name), pathEscape(repo.Name)),
		ExpiresAt: exp.UTC().Truncate(time.Second),
	}, nil
}

// ParseToken reads a token IssueToken signed; an error when it is not
// one, or no longer valid.
func (s *Service) ParseToken(raw string) (*Claims, error) {
	keys, err := s.signingKeys()
	if err != nil {
		return nil, err
	}
	var std jwt.Claims
	var c Claims
	if err := keys.Verify(raw, &std, &c); err != nil {
		return nil, err
	}
	if err := std.ValidateWithLeeway(jwt.Expected{AnyAudience: jwt.Audience{audience}, Time: s.d.Clock.Now()}, 0); err != nil {
		return nil, err
	}
	if c.RepoID <= 0 || c.UserID <= 0 || (c.Op != "upload" && c.Op != "download") {
		return nil, errors.New("not an LFS token")
	}
	return &c, nil
}

// Accessible tells whether the caller may read some repository that links
// oid, which proves it may have the object's bytes (the reference's
// LFSObjectAccessible): then linking it to another repository needs no
// upload.
func (s *Service) Accessible(ctx context.Context, p *auth.Principal, oid string) (bool, error) {
	ids, err := s.d.Store.LFS().ReposWith(ctx, oid, 50)
	if err != nil || len(ids) == 0 {
		return false, err
	}
	if p.IsAdmin() {
		return true, nil
	}
	repos, err := s.d.Store.Repos().FindByIDs(ctx, ids)
	if err != nil {
		return false, err
	}
	perms, err := s.d.Access.Repos(ctx, p, repos)
	if err != nil {
		return false, err
	}
	for _, perm := range perms {
		if perm.CanRead(access.UnitCode) {
			return true, nil
		}
	}
	return false, nil
}

// Meta is repo's link to oid. A fork also serves the objects of the
// repository it was forked from (the reference copies its base's links
// when it forks); the first time, the link is recorded on the fork.
func (s *Service) Meta(ctx context.Context, repo *store.Repository, oid string) (*store.LFSMetaObject, error) {
	m, err := s.d.Store.LFS().Meta(ctx, repo.ID, oid)
	if !errors.Is(err, store.ErrNotFound) || !repo.IsFork || repo.ForkID == 0 {
		return m, err
	}
	base, err2 := s.d.Store.LFS().Meta(ctx, repo.ForkID, oid)
	if err2 != nil {
		return nil, err
	}
	if err := s.d.Store.LFS().Link(ctx, repo.ID, oid, base.Size); err != nil {
		return nil, err
	}
	return s.d.Store.LFS().Meta(ctx, repo.ID, oid)
}

// Exists tells whether the store holds the object's bytes at its size.
func (s *Service) Exists(ctx context.Context, p Pointer) (bool, error) {
	size, err := s.d.Objects.LFS.Stat(ctx, Key(p.Oid))
	switch {
	case err == nil:
		return size == p.Size, nil
	case isNotExist(err):
		return false, nil
	default:
		return false, err
	}
}

// ErrTooLarge is an object past LFSMaxFileBytes or the owner's limit.
type ErrTooLarge struct{ Message string }

func (e *ErrTooLarge) Error() string { return e.Message }

// CheckLimits refuses an object new to repo that would pass the largest
// object or the owner's total.
func (s *Service) CheckLimits(ctx context.Context, repo *store.Repository, size int64) error {
	if max := s.d.Config.LFSMaxFileBytes; max >= 0 && size > max {
		return &ErrTooLarge{fmt.Sprintf("Size must be less than or equal to %d", max)}
	}
	if max := s.d.Config.LFSOwnerBytes; max >= 0 {
		used, err := s.d.Store.LFS().OwnerBytes(ctx, repo.OwnerID)
		if err != nil {
			return err
		}
		if used+size > max {
			return &ErrTooLarge{fmt.Sprintf("the LFS objects of %s would take more than the %d bytes allowed", repo.Owner.Name, max)}
		}
	}
	return nil
}

// ErrMismatch is an upload whose content is not the object it claims.
var ErrMismatch = errors.New("content does not match the object's oid and size")

// Upload stores body as the object p of repo and links it. An object the
// store has already, of a repository the caller may read, is only linked;
// one the caller may not read must be sent in full, and is hashed to
// prove the caller has it. The body is hashed as it streams; a mismatch
// stores nothing.
func (s *Service) Upload(ctx context.Context, caller *auth.Principal, repo *store.Repository, p Pointer, body io.Reader) error {
	exists, err := s.Exists(ctx, p)
	if err != nil {
		return err
	}
	if exists {
		ok, err := s.Accessible(ctx, caller, p.Oid)
		if err != nil {
			return err
		}
		if !ok {
			v := newVerifier(body, p)
			if _, err := io.Copy(io.Discard, v); err != nil {
				return err
			}
		}
	} else {
		if _, err := s.d.Store.LFS().Meta(ctx, repo.ID, p.Oid); errors.Is(err, store.ErrNotFound) {
			if err := s.CheckLimits(ctx, repo, p.Size); err != nil {
				return err
			}
		}
		if err := s.d.Objects.LFS.Put(ctx, Key(p.Oid), newVerifier(body, p), p.Size); err != nil {
			if errors.Is(err, ErrMismatch) || isShort(err) {
				return ErrMismatch
			}
			return err
		}
	}
	return s.Link(ctx, repo, p)
}

// Link records that repo has the object p. Under an owner's limit the
// check and the link are one transaction holding the owner's row, so
// concurrent uploads (of any process) cannot pass the limit together.
func (s *Service) Link(ctx context.Context, repo *store.Repository, p Pointer) error {
	if s.d.Config.LFSOwnerBytes < 0 {
		return s.d.Store.LFS().Link(ctx, repo.ID, p.Oid, p.Size)
	}
	return s.d.Store.WithTx(ctx, func(ctx context.Context) error {
		if _, err := s.d.Store.Users().FindByIDForUpdate(ctx, repo.OwnerID); err != nil {
			return err
		}
		_, err := s.d.Store.LFS().Meta(ctx, repo.ID, p.Oid)
		if err == nil {
			return nil
		}
		if !errors.Is(err, store.ErrNotFound) {
			return err
		}
		if err := s.CheckLimits(ctx, repo, p.Size); err != nil {
			return err
		}
		return s.d.Store.LFS().Link(ctx, repo.ID, p.Oid, p.Size)
	})
}

// verifier reads an upload, hashing it; at its end it reads as
// ErrMismatch unless it was exactly the object.
type verifier struct {
	r    io.Reader
	h    hash.Hash
	n    int64
	want Pointer
}

func newVerifier(r io.Reader, p Pointer) *verifier {
	return &verifier{r: r, h: sha256.New(), want: p}
}

func (v *verifier) Read(b []byte) (int, error) {
	n, err := v.r.Read(b)
	v.h.Write(b[:n])
	v.n += int64(n)
	if v.n > v.want.Size {
		return n, ErrMismatch
	}
	if errors.Is(err, io.EOF) && (v.n != v.want.Size || hex.EncodeToString(v.h.Sum(nil)) != v.want.Oid) {
		return n, ErrMismatch
	}
	return n, err
}

func pathEscape(s string) string { return url.PathEscape(s) }

func isNotExist(err error) bool { return objects.IsNotExist(err) }

func isShort(err error) bool { return errors.Is(err, objects.ErrShort) }

// GC is the gc_lfs task: it removes the stored objects no repository
// links any more (their repositories were deleted, or an upload was
// refused after its bytes arrived), once they are older than
// Config.LFSGCOlderThan, so that an upload whose link is still being
// recorded is never taken for an orphan.
func (s *Service) GC(ctx context.Context) error {
	cutoff := s.d.Clock.Now().Add(-s.d.Config.LFSGCOlderThan)
	removed := 0
	err := s.d.Objects.LFS.Walk(ctx, "", func(key string, _ int64, modified time.Time) error {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		oid := strings.ReplaceAll(key, "/", "")
		if !oidPattern.MatchString(oid) || Key(oid) != key || !modified.Before(cutoff) {
			return nil
		}
		linked, err := s.d.Store.LFS().Linked(ctx, oid)
		if err != nil || linked {
			return err
		}
		if err := s.d.Objects.LFS.Delete(ctx, key); err != nil {
			return err
		}
		removed++
		return nil
	})
	if removed > 0 {
		s.d.Log.Info("gc_lfs: removed objects no repository links", "count", removed)
	}
	return err
}

// PointerMaxSize is the largest blob read as a possible pointer (the
// reference's blobSizeCutoff).
const PointerMaxSize = 1024

const pointerVersion = "version https://git-lfs.github.com/spec/v1"

// ReadPointer reads an LFS pointer file: its version line, then "oid
// sha256:…" and "size …" lines (other keys are allowed, as the spec
// says); ok is false for anything else.
func ReadPointer(b []byte) (p Pointer, ok bool) {
	if len(b) > PointerMaxSize {
		return Pointer{}, false
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) < 3 || lines[0] != pointerVersion {
		return Pointer{}, false
	}
	haveSize := false
	for _, line := range lines[1:] {
		key, value, found := strings.Cut(line, " ")
		if !found {
			return Pointer{}, false
		}
		switch key {
		case "oid":
			oid, cut := strings.CutPrefix(value, "sha256:")
			if !cut {
				return Pointer{}, false
			}
			p.Oid = oid
		case "size":
			n, err := strconv.ParseInt(value, 10, 64)
			if err != nil {
				return Pointer{}, false
			}
			p.Size, haveSize = n, true
		}
	}
	return p, haveSize && p.Valid()
}

// OpenContent opens the LFS object a pointer of repo names, when repo
// links it; ok is false when it does not (the pointer is then served as
// it is, as the reference does).
func (s *Service) OpenContent(ctx context.Context, repo *store.Repository, p Pointer) (objects.Object, bool, error) {
	m, err := s.Meta(ctx, repo, p.Oid)
	if errors.Is(err, store.ErrNotFound) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	if m.Size != p.Size {
		return nil, false, nil
	}
	obj, err := s.d.Objects.LFS.Open(ctx, Key(p.Oid))
	if isNotExist(err) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	return obj, true, nil
}
