package branch

import (
	"context"
	"errors"
	"strings"

	"github.com/go-git/go-git/v6/plumbing"
	"github.com/go-git/go-git/v6/plumbing/object"
	"github.com/go-openapi/runtime/middleware"
	"github.com/go-openapi/strfmt"
	"github.com/go-openapi/swag/conv"

	"repohost/impl/access"
	"repohost/impl/apierr"
	"repohost/impl/app"
	"repohost/impl/auth"
	"repohost/impl/convert"
	"repohost/impl/names"
	"repohost/impl/paging"
	"repohost/impl/refs"
	"repohost/models"
	"repohost/restapi/operations/repository"
	"repohost/store"
	"repohost/store/gitstore"
)

// The reference's messages for branch refusals.
const (
	msgRepoEmpty    = "Git Repository is empty."
	msgRepoMirror   = "Git Repository is a mirror."
	msgNoBranch     = "Branch doesn't exist."
	msgBranchExists = "The branch already exists."
	msgRenameTarget = "Cannot rename a branch using the same name or rename to a branch that already exists."
)

// nameClash tells whether name cannot coexist with an existing branch
// because one would be a directory of the other ("a" and "a/b").
func nameClash(existing []string, name string) bool {
	for _, e := range existing {
		if strings.HasPrefix(name, e+"/") || strings.HasPrefix(e, name+"/") {
			return true
		}
	}
	return false
}

// payloadCommit renders a commit, with the verdict on its signature, as
// the branch API shows it.
func payloadCommit(base string, r *store.Repository, c *object.Commit, v *models.PayloadCommitVerification) *models.PayloadCommit {
	if c == nil {
		return nil
	}
	id := c.Hash.String()
	return &models.PayloadCommit{
		ID:           id,
		Message:      c.Message,
		URL:          base + r.FullName() + "/commit/" + id,
		Author:       &models.PayloadUser{Name: c.Author.Name, Email: strfmt.Email(c.Author.Email)},
		Committer:    &models.PayloadUser{Name: c.Committer.Name, Email: strfmt.Email(c.Committer.Email)},
		Timestamp:    convert.TimeOf(c.Author.When),
		Added:        []string{},
		Removed:      []string{},
		Modified:     []string{},
		Verification: v,
	}
}

// rendered is a branch with the verdict on its tip's signature.
type rendered struct {
	info *gitstore.BranchInfo
	v    *models.PayloadCommitVerification
}

// withVerifications judges the tips of bs at once (a fixed number of
// statements for a page of branches).
func (h Handlers) withVerifications(ctx context.Context, base string, p *auth.Principal, bs []*gitstore.BranchInfo) ([]rendered, error) {
	tips := make([]*object.Commit, len(bs))
	for i, b := range bs {
		tips[i] = b.Commit
	}
	vs, err := h.Verifier().Verify(ctx, tips)
	if err != nil {
		return nil, err
	}
	out := make([]rendered, len(bs))
	for i, b := range bs {
		out[i] = rendered{info: b, v: convert.Verification(base, vs[i], app.Viewer(p))}
	}
	return out, nil
}

// renderOne renders one branch for p.
func (h Handlers) renderOne(ctx context.Context, base string, p *auth.Principal, r *store.Repository, b *gitstore.BranchInfo,
	pp *access.PushPolicy, perm access.Permission) (*models.Branch, error) {
	rs, err := h.withVerifications(ctx, base, p, []*gitstore.BranchInfo{b})
	if err != nil {
		return nil, err
	}
	return renderBranch(base, r, rs[0], pp, perm), nil
}

// renderBranch converts b with what the caller may do to it.
func renderBranch(base string, r *store.Repository, rb rendered, pp *access.PushPolicy, perm access.Permission) *models.Branch {
	b := rb.info
	out := &models.Branch{
		Name:                b.Name,
		Commit:              payloadCommit(base, r, b.Commit, rb.v),
		StatusCheckContexts: []string{},
		UserCanPush:         perm.CanWrite(access.UnitCode) && pp.CanPush(b.Name),
		UserCanMerge:        perm.CanWrite(access.UnitPulls) && pp.CanMerge(b.Name),
	}
	if rule := pp.Rule(b.Name); rule != nil {
		out.Protected = true
		out.EffectiveBranchProtectionName = rule.RuleName
		out.RequiredApprovals = rule.RequiredApprovals
		out.EnableStatusCheck = rule.EnableStatusCheck
		out.StatusCheckContexts = nonNil(rule.StatusCheckContexts)
	}
	return out
}

func (h Handlers) RepoListBranches(ctx context.Context, params repository.RepoListBranchesParams) middleware.Responder {
	p := auth.FromContext(ctx)
	r, perm, err := h.Repo(ctx, p, params.Owner, params.Repo)
	if err != nil {
		return h.Fail(err)
	}
	pg := h.Page(params.Page, params.Limit)
	g, err := h.OpenGit(r)
	if err != nil {
		return h.Fail(err)
	}
	names, err := g.BranchNames()
	if err != nil {
		return h.Fail(err)
	}
	if kw := strings.ToLower(strings.TrimSpace(conv.Value(params.Q))); kw != "" {
		kept := names[:0]
		for _, n := range names {
			if strings.Contains(strings.ToLower(n), kw) {
				kept = append(kept, n)
			}
		}
		names = kept
	}
	// The reference's order, newest commit first, needs every tip.
	all, err := g.BranchesNewestFirst(names)
	if err != nil {
		return h.Fail(err)
	}
	total := int64(len(all))
	win := pg.Store()
	infos := all[min(win.Offset, len(all)):min(win.Offset+win.Limit, len(all))]
	pp, err := h.Access.PushPolicy(ctx, r, p)
	if err != nil {
		return h.Fail(err)
	}
	base := app.BaseURL(params.HTTPRequest)
	rs, err := h.withVerifications(ctx, base, p, infos)
	if err != nil {
		return h.Fail(err)
	}
	out := make([]*models.Branch, 0, len(rs))
	for _, rb := range rs {
		out = append(out, renderBranch(base, r, rb, pp, perm))
	}
	return repository.NewRepoListBranchesOK().WithPayload(out).
		WithXTotalCount(total).WithLink(paging.Link(params.HTTPRequest, pg, total))
}

func (h Handlers) RepoGetBranch(ctx context.Context, params repository.RepoGetBranchParams) middleware.Responder {
	p := auth.FromContext(ctx)
	r, perm, err := h.Repo(ctx, p, params.Owner, params.Repo)
	if err != nil {
		return h.Fail(err)
	}
	g, err := h.OpenGit(r)
	if err != nil {
		return h.Fail(err)
	}
	b, err := g.GetBranch(params.Branch)
	if errors.Is(err, store.ErrNotFound) {
		return h.Fail(apierr.NotFound(msgNoBranch))
	}
	if err != nil {
		return h.Fail(err)
	}
	pp, err := h.Access.PushPolicy(ctx, r, p)
	if err != nil {
		return h.Fail(err)
	}
	out, err := h.renderOne(ctx, app.BaseURL(params.HTTPRequest), p, r, b, pp, perm)
	if err != nil {
		return h.Fail(err)
	}
	return repository.NewRepoGetBranchOK().WithPayload(out)
}

func (h Handlers) RepoCreateBranch(ctx context.Context, params repository.RepoCreateBranchParams) middleware.Responder {
	p, r, perm, err := h.WriterRepo(ctx, params.Owner, params.Repo)
	if err != nil {
		return h.Fail(err)
	}
	o := params.Body
	if o == nil || o.BranchName == nil {
		return h.Fail(apierr.Validation("[BranchName]: Required"))
	}
	name := *o.BranchName
	if err := names.CheckNewBranch("BranchName", name); err != nil {
		return h.Fail(err)
	}
	if r.IsMirror {
		return h.Fail(apierr.Forbidden(msgRepoMirror))
	}
	g, err := h.OpenGit(r)
	if err != nil {
		return h.Fail(err)
	}
	if empty, err := g.IsEmpty(); err != nil {
		return h.Fail(err)
	} else if empty {
		return h.Fail(apierr.NotFound(msgRepoEmpty))
	}
	from, err := startPoint(g, r, o)
	if err != nil {
		return h.Fail(err)
	}
	names, err := g.BranchNames()
	if err != nil {
		return h.Fail(err)
	}
	if nameClash(names, name) {
		return h.Fail(apierr.Conflict("The branch with the same name already exists."))
	}
	_, err = refs.New(h.Deps).Apply(ctx, refs.Change{Repo: r, Doer: p, Git: g, Atomic: true,
		Updates: []*gitstore.RefUpdate{{Name: plumbing.NewBranchReferenceName(name), New: from}}})
	switch {
	case errors.Is(err, gitstore.ErrBranchExists), errors.Is(err, store.ErrConflict):
		return h.Fail(apierr.Conflict(msgBranchExists))
	case err != nil:
		return h.Fail(err)
	}
	b, err := g.GetBranch(name)
	if err != nil {
		return h.Fail(err)
	}
	pp, err := h.Access.PushPolicy(ctx, r, p)
	if err != nil {
		return h.Fail(err)
	}
	out, err := h.renderOne(ctx, app.BaseURL(params.HTTPRequest), p, r, b, pp, perm)
	if err != nil {
		return h.Fail(err)
	}
	return repository.NewRepoCreateBranchCreated().WithPayload(out)
}

// startPoint is the commit a new branch starts at: the old ref (a branch,
// tag or commit), else the old branch, else the default branch; a missing
// one is a 404 with the reference's message.
func startPoint(g *gitstore.GitRepo, r *store.Repository, o *models.CreateBranchRepoOption) (plumbing.Hash, error) {
	if ref := conv.Value(o.OldRefName); ref != "" {
		res, err := g.Resolve(ref)
		if errors.Is(err, store.ErrNotFound) || errors.Is(err, gitstore.ErrNotACommit) {
			return plumbing.ZeroHash, apierr.NotFound("The old ref does not exist")
		}
		if err != nil {
			return plumbing.ZeroHash, err
		}
		return res.Commit.Hash, nil
	}
	branch, missing := r.DefaultBranch, "The default branch does not exist"
	if b := conv.Value(o.OldBranchName); b != "" {
		branch, missing = b, "The old branch does not exist"
	}
	b, err := g.GetBranch(branch)
	if errors.Is(err, store.ErrNotFound) || errors.Is(err, gitstore.ErrNotACommit) {
		return plumbing.ZeroHash, apierr.NotFound("%s", missing)
	}
	if err != nil {
		return plumbing.ZeroHash, err
	}
	return b.Commit.Hash, nil
}

// existingBranch opens r for a change of its branch name: 403 for a mirror,
// 404 when the branch does not exist; it returns where the branch points.
func (h Handlers) existingBranch(r *store.Repository, name string) (*gitstore.GitRepo, plumbing.Hash, error) {
	if r.IsMirror {
		return nil, plumbing.ZeroHash, apierr.Forbidden(msgRepoMirror)
	}
	g, err := h.OpenGit(r)
	if err != nil {
		return nil, plumbing.ZeroHash, err
	}
	cur, err := g.BranchHash(name)
	if err != nil {
		return nil, plumbing.ZeroHash, err
	}
	if cur.IsZero() {
		return nil, plumbing.ZeroHash, apierr.NotFound(msgNoBranch)
	}
	return g, cur, nil
}

func (h Handlers) RepoUpdateBranch(ctx context.Context, params repository.RepoUpdateBranchParams) middleware.Responder {
	p, r, _, err := h.WriterRepo(ctx, params.Owner, params.Repo)
	if err != nil {
		return h.Fail(err)
	}
	o := params.Body
	if o == nil || o.NewCommitID == nil || *o.NewCommitID == "" {
		return h.Fail(apierr.Validation("[NewCommitID]: Required"))
	}
	g, cur, err := h.existingBranch(r, params.Branch)
	if err != nil {
		return h.Fail(err)
	}
	target, err := g.Resolve(*o.NewCommitID)
	if err != nil {
		if errors.Is(err, store.ErrNotFound) || errors.Is(err, gitstore.ErrNotACommit) {
			return h.Fail(apierr.Validation("[NewCommitID]: commit %q does not exist", *o.NewCommitID))
		}
		return h.Fail(err)
	}
	if old := conv.Value(o.OldCommitID); old != "" && !strings.EqualFold(old, cur.String()) {
		return h.Fail(apierr.Validation("branch commit does not match [expected: %s, given: %s]", cur, old))
	}
	to := target.Commit.Hash
	if to == cur {
		return repository.NewRepoUpdateBranchNoContent()
	}
	ff, err := g.IsAncestor(cur, to)
	if err != nil {
		return h.Fail(err)
	}
	if !ff && !conv.Value(o.Force) {
		return h.Fail(apierr.Validation("Force push %s need a confirm force parameter", params.Branch))
	}
	// On this route a protection rule's refusal has always answered 409.
	_, err = refs.New(h.Deps).Apply(ctx, refs.Change{Repo: r, Doer: p, Git: g, Atomic: true,
		Updates: []*gitstore.RefUpdate{{Name: plumbing.NewBranchReferenceName(params.Branch), Old: cur, New: to}}})
	switch {
	case errors.Is(err, gitstore.ErrRefused):
		return h.Fail(apierr.Conflict("%s", err.Error()))
	case errors.Is(err, store.ErrConflict):
		return h.Fail(apierr.Conflict("the branch was changed meanwhile; try again"))
	case err != nil:
		return h.Fail(err)
	}
	return repository.NewRepoUpdateBranchNoContent()
}

func (h Handlers) RepoRenameBranch(ctx context.Context, params repository.RepoRenameBranchParams) middleware.Responder {
	p, r, _, err := h.WriterRepo(ctx, params.Owner, params.Repo)
	if err != nil {
		return h.Fail(err)
	}
	if params.Body == nil || params.Body.Name == nil {
		return h.Fail(apierr.Validation("[Name]: Required"))
	}
	from, to := params.Branch, *params.Body.Name
	if err := names.CheckNewBranch("Name", to); err != nil {
		return h.Fail(err)
	}
	if r.IsEmpty {
		return h.Fail(apierr.NotFound(msgRepoEmpty))
	}
	if r.IsMirror {
		return h.Fail(apierr.Forbidden(msgRepoMirror))
	}
	g, err := h.OpenGit(r)
	if err != nil {
		return h.Fail(err)
	}
	names, err := g.BranchNames()
	if err != nil {
		return h.Fail(err)
	}
	exists := func(n string) bool {
		for _, e := range names {
			if e == n {
				return true
			}
		}
		return false
	}
	switch {
	case from == to || exists(to):
		return h.Fail(apierr.Validation(msgRenameTarget))
	case !exists(from):
		return h.Fail(apierr.NotFound(msgNoBranch))
	}
	others := make([]string, 0, len(names))
	for _, n := range names {
		if n != from {
			others = append(others, n)
		}
	}
	if nameClash(others, to) {
		return h.Fail(apierr.Validation("[Name]: %q clashes with an existing branch", to))
	}
	at, err := g.BranchHash(from)
	if err != nil {
		return h.Fail(err)
	}
	// Both refs move together, and the rules named after the branch follow
	// in the same transaction, or nothing changes. A renamed default branch
	// stays the default: refs makes the new name the default when the old
	// one is gone.
	_, err = refs.New(h.Deps).Apply(ctx, refs.Change{Repo: r, Doer: p, Git: g, Rename: true,
		Updates: []*gitstore.RefUpdate{
			{Name: plumbing.NewBranchReferenceName(to), New: at},
			{Name: plumbing.NewBranchReferenceName(from), Old: at},
		},
		Also: func(ctx context.Context) error { return h.Store.Protections().Rename(ctx, r.ID, from, to) },
	})
	switch {
	case errors.Is(err, gitstore.ErrBranchExists), errors.Is(err, store.ErrConflict):
		return h.Fail(apierr.Validation(msgRenameTarget))
	case err != nil:
		return h.Fail(err)
	}
	return repository.NewRepoRenameBranchNoContent()
}

func (h Handlers) RepoDeleteBranch(ctx context.Context, params repository.RepoDeleteBranchParams) middleware.Responder {
	p, r, _, err := h.WriterRepo(ctx, params.Owner, params.Repo)
	if err != nil {
		return h.Fail(err)
	}
	if r.IsEmpty {
		return h.Fail(apierr.NotFound(msgRepoEmpty))
	}
	g, cur, err := h.existingBranch(r, params.Branch)
	if err != nil {
		return h.Fail(err)
	}
	_, err = refs.New(h.Deps).Apply(ctx, refs.Change{Repo: r, Doer: p, Git: g, Atomic: true,
		Updates: []*gitstore.RefUpdate{{Name: plumbing.NewBranchReferenceName(params.Branch), Old: cur}}})
	// The reference's words for the policy's two refusals of a deletion.
	var refused *access.Refusal
	switch {
	case errors.As(err, &refused) && refused.Reason == access.DefaultBranchDeletion:
		return h.Fail(apierr.Forbidden("can not delete default branch"))
	case errors.As(err, &refused):
		return h.Fail(apierr.Forbidden("branch protected"))
	case errors.Is(err, store.ErrConflict):
		return h.Fail(apierr.Validation("the branch was changed meanwhile; try again"))
	case err != nil:
		return h.Fail(err)
	}
	return repository.NewRepoDeleteBranchNoContent()
}
