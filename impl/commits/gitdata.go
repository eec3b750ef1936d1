package commits

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"net/url"
	"strings"

	"github.com/go-git/go-git/v6/plumbing"
	"github.com/go-openapi/runtime/middleware"
	"github.com/go-openapi/strfmt"
	"github.com/go-openapi/swag/conv"

	"repohost/impl/apierr"
	"repohost/impl/app"
	"repohost/impl/auth"
	"repohost/impl/signing"
	"repohost/models"
	"repohost/restapi/operations/repository"
	"repohost/store"
	"repohost/store/gitstore"
)

// The reference's limits on the git data API.
const (
	// treePageSize is the default and largest page of a tree listing.
	treePageSize = 1000
	// maxBlobContent is the largest blob sent whole; a larger one is
	// described without its content.
	maxBlobContent = 10 << 20
)

func repoAPIURL(base string, r *store.Repository) string {
	return base + "api/v1/repos/" + url.PathEscape(r.Owner.Name) + "/" + url.PathEscape(r.Name)
}

// objectID reads a full object id from the path, refusing anything else
// with the reference's 400.
func objectID(s string) (string, error) {
	h, ok := gitstore.ParseID(s)
	if !ok {
		return "", apierr.BadRequest("sha %q is not a full object id", s)
	}
	return h.String(), nil
}

// object is the repository owner/name the caller may read the code of,
// and the object id sha names (a full id: 400 otherwise).
func (h Handlers) object(ctx context.Context, owner, name, sha string) (*store.Repository, *gitstore.GitRepo, string, plumbing.Hash, error) {
	r, g, err := h.CodeRepo(ctx, auth.FromContext(ctx), owner, name)
	if err != nil {
		return nil, nil, "", plumbing.ZeroHash, err
	}
	id, err := objectID(sha)
	if err != nil {
		return nil, nil, "", plumbing.ZeroHash, err
	}
	hash, _ := gitstore.ParseID(id)
	return r, g, id, hash, nil
}

func (h Handlers) RepoDownloadCommitDiffOrPatch(ctx context.Context, params repository.RepoDownloadCommitDiffOrPatchParams) middleware.Responder {
	_, g, err := h.CodeRepo(ctx, auth.FromContext(ctx), params.Owner, params.Repo)
	if err != nil {
		return h.Fail(err)
	}
	c, err := g.Resolve(params.Sha)
	if err != nil {
		return h.Fail(err)
	}
	var buf bytes.Buffer
	if err := g.WriteCommitDiff(ctx, &buf, c.Commit, params.DiffType == "patch"); err != nil {
		return h.Fail(err)
	}
	return repository.NewRepoDownloadCommitDiffOrPatchOK().WithPayload(buf.String())
}

// refs lists r's refs starting with prefix as the reference shows them;
// none is a 404.
func (h Handlers) refs(ctx context.Context, base, owner, repo, prefix string) ([]*models.Reference, error) {
	r, g, err := h.CodeRepo(ctx, auth.FromContext(ctx), owner, repo)
	if err != nil {
		return nil, err
	}
	list, err := g.Refs(prefix)
	if err != nil {
		return nil, err
	}
	if len(list) == 0 {
		return nil, apierr.NotFound("no ref matches %q", prefix)
	}
	api := repoAPIURL(base, r)
	out := make([]*models.Reference, 0, len(list))
	for _, ref := range list {
		out = append(out, &models.Reference{
			Ref: ref.Name.String(),
			URL: api + "/git/" + escapeSegments(ref.Name.String()),
			Object: &models.GitObject{SHA: ref.ID.String(), Type: ref.Type,
				URL: api + "/git/" + ref.Type + "s/" + ref.ID.String()},
		})
	}
	return out, nil
}

func escapeSegments(p string) string {
	parts := strings.Split(p, "/")
	for i := range parts {
		parts[i] = url.PathEscape(parts[i])
	}
	return strings.Join(parts, "/")
}

func (h Handlers) RepoListAllGitRefs(ctx context.Context, params repository.RepoListAllGitRefsParams) middleware.Responder {
	out, err := h.refs(ctx, app.BaseURL(params.HTTPRequest), params.Owner, params.Repo, "")
	if err != nil {
		return h.Fail(err)
	}
	return repository.NewRepoListAllGitRefsOK().WithPayload(out)
}

// RepoListGitRefs lists the refs whose name starts with refs/{ref}, as the
// reference matches them (by string prefix: heads/fea finds
// refs/heads/feature). Clients may send the ref with its refs/ already.
func (h Handlers) RepoListGitRefs(ctx context.Context, params repository.RepoListGitRefsParams) middleware.Responder {
	prefix := "refs/" + strings.TrimPrefix(strings.Trim(params.Ref, "/"), "refs/")
	out, err := h.refs(ctx, app.BaseURL(params.HTTPRequest), params.Owner, params.Repo, prefix)
	if err != nil {
		return h.Fail(err)
	}
	return repository.NewRepoListGitRefsOK().WithPayload(out)
}

// GetTree lists one page of a tree's entries: page and per_page as the
// reference reads them (per_page at most treePageSize), truncated when the
// tree has more entries than one page holds.
func (h Handlers) GetTree(ctx context.Context, params repository.GetTreeParams) middleware.Responder {
	r, g, err := h.CodeRepo(ctx, auth.FromContext(ctx), params.Owner, params.Repo)
	if err != nil {
		return h.Fail(err)
	}
	t, err := g.ResolveTree(params.Sha)
	if err != nil {
		return h.Fail(err)
	}
	entries, err := g.TreeEntries(t, conv.Value(params.Recursive))
	if err != nil {
		return h.Fail(err)
	}
	page, perPage := conv.Value(params.Page), conv.Value(params.PerPage)
	if page < 1 {
		page = 1
	}
	if perPage < 1 || perPage > treePageSize {
		perPage = treePageSize
	}
	api := repoAPIURL(app.BaseURL(params.HTTPRequest), r)
	out := &models.GitTreeResponse{SHA: t.Hash.String(), URL: api + "/git/trees/" + t.Hash.String(),
		Page: page, TotalCount: int64(len(entries)), Entries: []*models.GitEntry{}, Truncated: int64(len(entries)) > perPage}
	start := (page - 1) * perPage
	if start < int64(len(entries)) {
		end := min(start+perPage, int64(len(entries)))
		for _, e := range entries[start:end] {
			ge := &models.GitEntry{Path: e.Path, Mode: fmt.Sprintf("%06o", uint32(e.Mode)), Type: e.Type, Size: e.Size, SHA: e.ID.String()}
			switch e.Type {
			case "tree":
				ge.URL = api + "/git/trees/" + e.ID.String()
			case "blob":
				ge.URL = api + "/git/blobs/" + e.ID.String()
			}
			// A submodule's commit is in another repository: no URL,
			// as the reference (and GitHub) send.
			out.Entries = append(out.Entries, ge)
		}
	}
	return repository.NewGetTreeOK().WithPayload(out)
}

func (h Handlers) GetBlob(ctx context.Context, params repository.GetBlobParams) middleware.Responder {
	r, g, id, hash, err := h.object(ctx, params.Owner, params.Repo, params.Sha)
	if err != nil {
		return h.Fail(err)
	}
	content, size, err := g.BlobByID(hash, maxBlobContent)
	if err != nil {
		return h.Fail(err)
	}
	out := &models.GitBlobResponse{SHA: id, Size: size, URL: repoAPIURL(app.BaseURL(params.HTTPRequest), r) + "/git/blobs/" + id}
	if content != nil {
		out.Content, out.Encoding = base64.StdEncoding.EncodeToString(content), "base64"
	}
	return repository.NewGetBlobOK().WithPayload(out)
}

func (h Handlers) GetAnnotatedTag(ctx context.Context, params repository.GetAnnotatedTagParams) middleware.Responder {
	r, g, id, hash, err := h.object(ctx, params.Owner, params.Repo, params.Sha)
	if err != nil {
		return h.Fail(err)
	}
	t, _, err := g.AnnotatedTag(hash)
	if err != nil {
		return h.Fail(err)
	}
	api := repoAPIURL(app.BaseURL(params.HTTPRequest), r)
	out := &models.AnnotatedTag{Tag: t.Name, SHA: id, URL: api + "/git/tags/" + id, Message: t.Message,
		Tagger: &models.CommitUser{Name: t.Tagger.Name, Email: strfmt.Email(t.Tagger.Email),
			Date: t.Tagger.When.UTC().Format("2006-01-02T15:04:05Z07:00")},
		Object: &models.AnnotatedTagObject{Type: t.TargetType.String(), SHA: t.Target.String(),
			URL: api + "/git/" + t.TargetType.String() + "s/" + t.Target.String()},
		Verification: tagVerification(t.Signature)}
	return repository.NewGetAnnotatedTagOK().WithPayload(out)
}

// tagVerification is the verdict on a tag object's signature. The
// verifier judges commits against their authors' keys; a tag's signature
// is not checked against any key here, so a signed tag is reported
// unverified with its signature, never as verified.
func tagVerification(signature string) *models.PayloadCommitVerification {
	if signature == "" {
		return &models.PayloadCommitVerification{Reason: signing.ReasonNotSigned}
	}
	return &models.PayloadCommitVerification{Reason: signing.ReasonNoKey, Signature: signature}
}
