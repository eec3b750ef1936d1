package branch

import (
	"context"
	"errors"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
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
	"repohost/models"
	"repohost/restapi/operations/repository"
	"repohost/store"
	"repohost/store/gitstore"
)

// maxNewBranchLength is the reference's limit for names given to branches
// through the API.
const maxNewBranchLength = 100

// The reference's messages for branch refusals.
const (
	msgRepoEmpty     = "Git Repository is empty."
	msgRepoMirror    = "Git Repository is a mirror."
	msgNoBranch      = "Branch doesn't exist."
	msgBranchExists  = "The branch already exists."
	msgRenameTarget  = "Cannot rename a branch using the same name or rename to a branch that already exists."
	msgRenameDefault = "User must be a repo or site admin to rename default or protected branches."
	msgRenameGlob    = "Branch is protected by glob-based protection rules."
)

func checkNewBranchName(field, name string) error {
	if len(name) > maxNewBranchLength {
		return apierr.Validation("[%s]: MaxSize", field)
	}
	return names.CheckBranch(field, name)
}

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

// payloadCommit renders a commit as the branch API shows it.
func payloadCommit(base string, r *store.Repository, c *object.Commit) *models.PayloadCommit {
	if c == nil {
		return nil
	}
	id := c.Hash.String()
	return &models.PayloadCommit{
		ID:        id,
		Message:   c.Message,
		URL:       base + r.FullName() + "/commit/" + id,
		Author:    &models.PayloadUser{Name: c.Author.Name, Email: strfmt.Email(c.Author.Email)},
		Committer: &models.PayloadUser{Name: c.Committer.Name, Email: strfmt.Email(c.Committer.Email)},
		Timestamp: convert.TimeOf(c.Author.When),
		Added:     []string{},
		Removed:   []string{},
		Modified:  []string{},
		// Signatures are not verified by this server.
		Verification: &models.PayloadCommitVerification{Reason: "gpg.error.not_signed_commit"},
	}
}

// renderBranch converts b with what the caller may do to it.
func renderBranch(base string, r *store.Repository, b *gitstore.BranchInfo, pp *access.PushPolicy, perm access.Permission) *models.Branch {
	out := &models.Branch{
		Name:                b.Name,
		Commit:              payloadCommit(base, r, b.Commit),
		StatusCheckContexts: []string{},
		UserCanPush:         perm.Push && pp.CanPush(b.Name),
		UserCanMerge:        perm.Push && pp.CanMerge(b.Name),
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
	total := int64(len(names))
	win := pg.Store()
	page := names[min(win.Offset, len(names)):min(win.Offset+win.Limit, len(names))]
	pp, err := h.Access.PushPolicy(ctx, r, p)
	if err != nil {
		return h.Fail(err)
	}
	base := app.BaseURL(params.HTTPRequest)
	out := make([]*models.Branch, 0, len(page))
	for _, n := range page {
		b, err := g.GetBranch(n)
		if errors.Is(err, store.ErrNotFound) {
			continue // deleted since the names were read
		}
		if err != nil {
			return h.Fail(err)
		}
		out = append(out, renderBranch(base, r, b, pp, perm))
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
	return repository.NewRepoGetBranchOK().WithPayload(renderBranch(app.BaseURL(params.HTTPRequest), r, b, pp, perm))
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
	if err := checkNewBranchName("BranchName", name); err != nil {
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
	var from plumbing.Hash
	switch {
	case conv.Value(o.OldRefName) != "":
		res, err := g.Resolve(*o.OldRefName)
		if err != nil {
			return h.Fail(refError(err, "The old ref does not exist"))
		}
		from = res.Commit.Hash
	case conv.Value(o.OldBranchName) != "":
		b, err := g.GetBranch(*o.OldBranchName)
		if err != nil {
			return h.Fail(refError(err, "The old branch does not exist"))
		}
		from = b.Commit.Hash
	default:
		b, err := g.GetBranch(r.DefaultBranch)
		if err != nil {
			return h.Fail(refError(err, "The default branch does not exist"))
		}
		from = b.Commit.Hash
	}
	names, err := g.BranchNames()
	if err != nil {
		return h.Fail(err)
	}
	if nameClash(names, name) {
		return h.Fail(apierr.Conflict("The branch with the same name already exists."))
	}
	pp, err := h.Access.PushPolicy(ctx, r, p)
	if err != nil {
		return h.Fail(err)
	}
	if why := pp.Refusal(name, true, false, true); why != "" {
		return h.Fail(apierr.Forbidden("%s", why))
	}
	if err := g.CreateBranchAt(name, from); err != nil {
		if errors.Is(err, gitstore.ErrBranchExists) || errors.Is(err, store.ErrConflict) {
			return h.Fail(apierr.Conflict(msgBranchExists))
		}
		return h.Fail(err)
	}
	b, err := g.GetBranch(name)
	if err != nil {
		return h.Fail(err)
	}
	return repository.NewRepoCreateBranchCreated().WithPayload(renderBranch(app.BaseURL(params.HTTPRequest), r, b, pp, perm))
}

// refError turns a failed lookup of a ref the caller named into a 404 with
// msg; anything else stays an error.
func refError(err error, msg string) error {
	if errors.Is(err, store.ErrNotFound) || errors.Is(err, gitstore.ErrNotACommit) {
		return apierr.NotFound("%s", msg)
	}
	return err
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
	if r.IsMirror {
		return h.Fail(apierr.Forbidden(msgRepoMirror))
	}
	g, err := h.OpenGit(r)
	if err != nil {
		return h.Fail(err)
	}
	cur, err := g.BranchHash(params.Branch)
	if err != nil {
		return h.Fail(err)
	}
	if cur.IsZero() {
		return h.Fail(apierr.NotFound(msgNoBranch))
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
	pp, err := h.Access.PushPolicy(ctx, r, p)
	if err != nil {
		return h.Fail(err)
	}
	if why := pp.Refusal(params.Branch, false, false, ff); why != "" {
		return h.Fail(apierr.Conflict("%s", why))
	}
	if err := g.MoveBranch(params.Branch, cur, to); err != nil {
		if errors.Is(err, store.ErrConflict) {
			return h.Fail(apierr.Conflict("the branch was changed meanwhile; try again"))
		}
		return h.Fail(err)
	}
	return repository.NewRepoUpdateBranchNoContent()
}

func (h Handlers) RepoRenameBranch(ctx context.Context, params repository.RepoRenameBranchParams) middleware.Responder {
	_, r, perm, err := h.WriterRepo(ctx, params.Owner, params.Repo)
	if err != nil {
		return h.Fail(err)
	}
	if params.Body == nil || params.Body.Name == nil {
		return h.Fail(apierr.Validation("[Name]: Required"))
	}
	from, to := params.Branch, *params.Body.Name
	if err := checkNewBranchName("Name", to); err != nil {
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
	rules, err := h.Store.Protections().ListAll(ctx, r.ID)
	if err != nil {
		return h.Fail(err)
	}
	exact := false
	for _, rule := range rules {
		if !rule.IsGlob() && rule.RuleName == from {
			exact = true
		}
	}
	if (from == r.DefaultBranch || exact) && !perm.Admin {
		return h.Fail(apierr.Forbidden(msgRenameDefault))
	}
	for _, rule := range rules {
		if rule.IsGlob() && rule.Matches(from) {
			return h.Fail(apierr.Forbidden(msgRenameGlob))
		}
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
	if err := g.RenameBranch(from, to); err != nil {
		if errors.Is(err, gitstore.ErrBranchExists) || errors.Is(err, store.ErrConflict) {
			return h.Fail(apierr.Validation(msgRenameTarget))
		}
		return h.Fail(refError(err, msgNoBranch))
	}
	// The ref moved; the default branch and the rules named after the
	// branch follow in one transaction, or the ref moves back.
	err = h.Store.WithTx(ctx, func(ctx context.Context) error {
		if err := h.Store.GitRepos().RenameDefaultBranch(ctx, r.ID, from, to); err != nil {
			return err
		}
		return h.Store.Protections().Rename(ctx, r.ID, from, to)
	})
	if err != nil {
		if rbErr := g.RenameBranch(to, from); rbErr != nil {
			h.Log.Error("undo branch rename", "repo", r.FullName(), "branch", to, "err", rbErr)
		}
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
	if r.IsMirror {
		return h.Fail(apierr.Forbidden(msgRepoMirror))
	}
	if params.Branch == r.DefaultBranch {
		return h.Fail(apierr.Forbidden("can not delete default branch"))
	}
	g, err := h.OpenGit(r)
	if err != nil {
		return h.Fail(err)
	}
	cur, err := g.BranchHash(params.Branch)
	if err != nil {
		return h.Fail(err)
	}
	if cur.IsZero() {
		return h.Fail(apierr.NotFound(msgNoBranch))
	}
	pp, err := h.Access.PushPolicy(ctx, r, p)
	if err != nil {
		return h.Fail(err)
	}
	if pp.Rule(params.Branch) != nil {
		return h.Fail(apierr.Forbidden("branch protected"))
	}
	if err := g.DeleteBranch(params.Branch, cur); err != nil {
		if errors.Is(err, store.ErrConflict) {
			return h.Fail(apierr.Validation("the branch was changed meanwhile; try again"))
		}
		return h.Fail(refError(err, msgNoBranch))
	}
	return repository.NewRepoDeleteBranchNoContent()
}
