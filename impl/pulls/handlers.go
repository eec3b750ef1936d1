package pulls

import (
	"bytes"
	"context"
	"errors"

	"github.com/go-git/go-git/v6/plumbing"
	"github.com/go-openapi/runtime/middleware"
	"github.com/go-openapi/swag/conv"

	"repohost/impl/access"
	"repohost/impl/apierr"
	"repohost/impl/app"
	"repohost/impl/auth"
	"repohost/impl/commits"
	"repohost/impl/issue"
	"repohost/impl/paging"
	"repohost/models"
	"repohost/restapi/operations/repository"
	"repohost/store"
	"repohost/store/gitstore"
)

// Handlers implements the pull request, fork-independent review and
// review request operations of the repository tag.
type Handlers struct {
	*app.Deps
}

func (h Handlers) svc() Service { return Service{h.Deps} }

// pullsRepo loads a repository for its pull requests: 404 when the caller
// may not see it, or its pull requests are off or unreadable to the caller
// (the reference's mustAllowPulls).
func (h Handlers) pullsRepo(ctx context.Context, p *auth.Principal, owner, name string) (*store.Repository, access.Permission, error) {
	r, perm, err := h.Repo(ctx, p, owner, name)
	if err != nil {
		return nil, access.None, err
	}
	if !access.Enabled(r, access.UnitPulls) || !perm.CanRead(access.UnitPulls) {
		return nil, access.None, apierr.NotFound("not found")
	}
	return r, perm, nil
}

// pull is one loaded pull request with its repository.
type pull struct {
	p    *auth.Principal
	r    *store.Repository
	perm access.Permission
	is   *store.Issue
	pr   *store.PullRequest
}

func (h Handlers) load(ctx context.Context, owner, name string, index int64) (*pull, error) {
	p := auth.FromContext(ctx)
	r, perm, err := h.pullsRepo(ctx, p, owner, name)
	if err != nil {
		return nil, err
	}
	is, err := h.Store.Issues().FindByIndex(ctx, r.ID, index)
	if err != nil {
		return nil, err
	}
	if !is.IsPull {
		return nil, apierr.NotFound("pull request %d does not exist", index)
	}
	pr, err := h.Store.Pulls().FindByIssueID(ctx, is.ID)
	if err != nil {
		return nil, err
	}
	return &pull{p: p, r: r, perm: perm, is: is, pr: pr}, nil
}

// loadSignedIn is load for a signed-in caller.
func (h Handlers) loadSignedIn(ctx context.Context, owner, name string, index int64) (*pull, error) {
	if _, err := auth.RequireUser(ctx); err != nil {
		return nil, err
	}
	return h.load(ctx, owner, name, index)
}

func (h Handlers) RepoListPullRequests(ctx context.Context, params repository.RepoListPullRequestsParams) middleware.Responder {
	p := auth.FromContext(ctx)
	r, _, err := h.pullsRepo(ctx, p, params.Owner, params.Repo)
	if err != nil {
		return h.Fail(err)
	}
	f := store.PullFilter{RepoID: r.ID, BaseBranch: conv.Value(params.BaseBranch), MilestoneID: conv.Value(params.Milestone),
		LabelIDs: params.Labels, Sort: conv.Value(params.Sort)}
	switch conv.Value(params.State) {
	case "", "open":
		no := false
		f.IsClosed = &no
	case "closed":
		yes := true
		f.IsClosed = &yes
	}
	pg := h.Page(params.Page, params.Limit)
	var list []*store.PullRequest
	var issues map[int64]*store.Issue
	var total int64
	if poster := conv.Value(params.Poster); poster != "" {
		u, err := h.Store.Users().FindByName(ctx, poster)
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			return h.Fail(err)
		}
		if u == nil {
			return repository.NewRepoListPullRequestsOK().WithPayload([]*models.PullRequest{}).WithXTotalCount(0)
		}
		f.PosterID = u.ID
	}
	if list, issues, total, err = h.Store.Pulls().List(ctx, f, pg.Store()); err != nil {
		return h.Fail(err)
	}
	out, err := h.render(ctx, p, app.BaseURL(params.HTTPRequest), r, list, issues)
	if err != nil {
		return h.Fail(err)
	}
	return repository.NewRepoListPullRequestsOK().WithPayload(out).WithXTotalCount(total).
		WithLink(paging.Link(params.HTTPRequest, pg, total))
}

func (h Handlers) RepoCreatePullRequest(ctx context.Context, params repository.RepoCreatePullRequestParams) middleware.Responder {
	p, err := auth.RequireUser(ctx)
	if err != nil {
		return h.Fail(err)
	}
	r, perm, err := h.pullsRepo(ctx, p, params.Owner, params.Repo)
	if err != nil {
		return h.Fail(err)
	}
	o := params.Body
	if o == nil || conv.Value(o.Head) == "" || conv.Value(o.Base) == "" {
		return h.Fail(apierr.Validation("[Head] [Base]: Required"))
	}
	if conv.Value(o.Title) == "" {
		return h.Fail(apierr.Validation("[Title]: Required"))
	}
	head, err := h.svc().ParseHead(ctx, p, r, *o.Head)
	if err != nil {
		return h.Fail(err)
	}
	assignees := o.Assignees
	if a := conv.Value(o.Assignee); a != "" {
		assignees = append([]string{a}, assignees...)
	}
	is, pr, err := h.svc().Create(ctx, p, r, perm, CreateInput{
		Head: head, Base: *o.Base, Title: *o.Title, Body: conv.Value(o.Body), Assignees: assignees,
		LabelIDs: o.Labels, MilestoneID: conv.Value(o.Milestone), Deadline: issue.QueryTime(o.Deadline),
		AllowMaintainerEdit: conv.Value(o.AllowMaintainerEdit), Reviewers: o.Reviewers, TeamReviewers: o.TeamReviewers,
	})
	if err != nil {
		return h.Fail(err)
	}
	out, err := h.renderOne(ctx, p, app.BaseURL(params.HTTPRequest), r, is, pr)
	if err != nil {
		return h.Fail(err)
	}
	return repository.NewRepoCreatePullRequestCreated().WithPayload(out)
}

func (h Handlers) RepoGetPullRequest(ctx context.Context, params repository.RepoGetPullRequestParams) middleware.Responder {
	l, err := h.load(ctx, params.Owner, params.Repo, params.Index)
	if err != nil {
		return h.Fail(err)
	}
	out, err := h.renderOne(ctx, l.p, app.BaseURL(params.HTTPRequest), l.r, l.is, l.pr)
	if err != nil {
		return h.Fail(err)
	}
	return repository.NewRepoGetPullRequestOK().WithPayload(out)
}

func (h Handlers) RepoGetPullRequestByBaseHead(ctx context.Context, params repository.RepoGetPullRequestByBaseHeadParams) middleware.Responder {
	p := auth.FromContext(ctx)
	r, _, err := h.pullsRepo(ctx, p, params.Owner, params.Repo)
	if err != nil {
		return h.Fail(err)
	}
	head, err := h.svc().ParseHead(ctx, p, r, params.Head)
	if err != nil {
		return h.Fail(err)
	}
	pr, err := h.Store.Pulls().FindNewest(ctx, head.Repo.ID, head.Branch, r.ID, params.Base)
	if err != nil {
		return h.Fail(err)
	}
	is, err := h.Store.Issues().FindByID(ctx, pr.IssueID)
	if err != nil {
		return h.Fail(err)
	}
	out, err := h.renderOne(ctx, p, app.BaseURL(params.HTTPRequest), r, is, pr)
	if err != nil {
		return h.Fail(err)
	}
	return repository.NewRepoGetPullRequestByBaseHeadOK().WithPayload(out)
}

func (h Handlers) RepoEditPullRequest(ctx context.Context, params repository.RepoEditPullRequestParams) middleware.Responder {
	l, err := h.loadSignedIn(ctx, params.Owner, params.Repo, params.Index)
	if err != nil {
		return h.Fail(err)
	}
	var in EditInput
	if o := params.Body; o != nil {
		in.Title, in.Body, in.State, in.ContentVersion = o.Title, o.Body, o.State, o.ContentVersion
		in.Milestone, in.Base, in.AllowMaintainerEdit = o.Milestone, o.Base, o.AllowMaintainerEdit
		// The official SDK always sends "base": "", "milestone": 0 and
		// "assignee": ""; the reference reads each empty value as "no
		// change" (a pull request's milestone is not cleared by 0).
		if conv.Value(in.Base) == "" {
			in.Base = nil
		}
		if conv.Value(in.Milestone) == 0 {
			in.Milestone = nil
		}
		in.UnsetDeadline = conv.Value(o.RemoveDeadline)
		in.Deadline = issue.QueryTime(o.Deadline)
		if o.Assignees != nil || conv.Value(o.Assignee) != "" {
			in.SetAssignees, in.Assignees = true, o.Assignees
			if a := conv.Value(o.Assignee); a != "" && o.Assignees == nil {
				in.Assignees = []string{a}
			}
		}
	}
	is, err := h.svc().Edit(ctx, l.p, l.r, l.perm, l.is, l.pr, in)
	if err != nil {
		return h.Fail(err)
	}
	if o := params.Body; o != nil && o.Labels != nil {
		if _, err := (issue.Service{Deps: h.Deps}).Relabel(ctx, l.p.User, l.r, l.perm, is.Index, issue.LabelsReplace, issue.LabelRefs{IDs: o.Labels}); err != nil {
			return h.Fail(err)
		}
	}
	pr, err := h.Store.Pulls().FindByIssueID(ctx, is.ID)
	if err != nil {
		return h.Fail(err)
	}
	if is, err = h.Store.Issues().FindByID(ctx, is.ID); err != nil {
		return h.Fail(err)
	}
	out, err := h.renderOne(ctx, l.p, app.BaseURL(params.HTTPRequest), l.r, is, pr)
	if err != nil {
		return h.Fail(err)
	}
	return repository.NewRepoEditPullRequestCreated().WithPayload(out)
}

// diffSides are the commits a pull request's diff runs between, from the
// base repository (the head is refs/pull/N/head's commit).
func diffSides(pr *store.PullRequest) (from, to plumbing.Hash) {
	from = plumbing.NewHash(pr.MergeBase)
	if pr.MergeBase == "" {
		from = plumbing.NewHash(pr.BaseCommitID)
	}
	return from, plumbing.NewHash(pr.HeadCommitID)
}

func (h Handlers) RepoDownloadPullDiffOrPatch(ctx context.Context, params repository.RepoDownloadPullDiffOrPatchParams) middleware.Responder {
	l, err := h.load(ctx, params.Owner, params.Repo, params.Index)
	if err != nil {
		return h.Fail(err)
	}
	g, err := h.OpenGit(l.r)
	if err != nil {
		return h.Fail(err)
	}
	from, to := diffSides(l.pr)
	var buf bytes.Buffer
	binary := conv.Value(params.Binary)
	if params.DiffType == "patch" {
		err = g.WritePatch(ctx, &buf, from, to)
	} else {
		err = g.WriteDiff(ctx, &buf, from, to, binary)
	}
	if err != nil {
		return h.Fail(err)
	}
	return repository.NewRepoDownloadPullDiffOrPatchOK().WithPayload(buf.String())
}

func (h Handlers) RepoGetPullRequestCommits(ctx context.Context, params repository.RepoGetPullRequestCommitsParams) middleware.Responder {
	l, err := h.load(ctx, params.Owner, params.Repo, params.Index)
	if err != nil {
		return h.Fail(err)
	}
	g, err := h.OpenGit(l.r)
	if err != nil {
		return h.Fail(err)
	}
	from, to := diffSides(l.pr)
	all, err := g.Between(ctx, from, to, true)
	if err != nil {
		return h.Fail(err)
	}
	pg := h.Page(params.Page, params.Limit)
	page := pageOf(all, pg.Store())
	no := false
	out, err := commits.Render(ctx, h.Deps, app.BaseURL(params.HTTPRequest), l.p, l.r, g, page, &no, params.Verification, params.Files)
	if err != nil {
		return h.Fail(err)
	}
	total := int64(len(all))
	return repository.NewRepoGetPullRequestCommitsOK().WithPayload(out).WithXTotalCount(total).
		WithLink(paging.Link(params.HTTPRequest, pg, total))
}

// pageOf is one page of an in-memory list.
func pageOf[T any](all []T, p store.Page) []T {
	if p.Offset >= len(all) {
		return []T{}
	}
	end := min(p.Offset+p.Limit, len(all))
	return all[p.Offset:end]
}

func (h Handlers) RepoGetPullRequestFiles(ctx context.Context, params repository.RepoGetPullRequestFilesParams) middleware.Responder {
	l, err := h.load(ctx, params.Owner, params.Repo, params.Index)
	if err != nil {
		return h.Fail(err)
	}
	g, err := h.OpenGit(l.r)
	if err != nil {
		return h.Fail(err)
	}
	from, to := diffSides(l.pr)
	files, err := g.DiffFiles(ctx, from, to)
	if err != nil {
		return h.Fail(err)
	}
	if skip := conv.Value(params.SkipTo); skip != "" {
		for i, f := range files {
			if f.Name == skip {
				files = files[i:]
				break
			}
		}
	}
	pg := h.Page(params.Page, params.Limit)
	base := app.BaseURL(params.HTTPRequest)
	full := l.r.FullName()
	out := make([]*models.ChangedFile, 0, pg.Store().Limit)
	for _, f := range pageOf(files, pg.Store()) {
		if f.Status == "copied" {
			f.PreviousName = ""
		}
		out = append(out, &models.ChangedFile{
			Filename: f.Name, PreviousFilename: f.PreviousName, Status: changedFileStatus(f),
			Additions: f.Additions, Deletions: f.Deletions, Changes: f.Additions + f.Deletions,
			HTMLURL:     base + full + "/src/commit/" + l.pr.HeadCommitID + "/" + f.Name,
			ContentsURL: base + "api/v1/repos/" + full + "/contents/" + f.Name + "?ref=" + l.pr.HeadCommitID,
			RawURL:      base + full + "/raw/commit/" + l.pr.HeadCommitID + "/" + f.Name,
		})
	}
	total := int64(len(files))
	return repository.NewRepoGetPullRequestFilesOK().WithPayload(out).WithXTotalCount(total).
		WithLink(paging.Link(params.HTTPRequest, pg, total))
}

// changedFileStatus is a changed file's status in the reference's words:
// "changed" for a modified file ("unchanged" when only its mode changed),
// "added", "deleted", "renamed", "copied" (a copy has no previous name
// there).
func changedFileStatus(f gitstore.DiffFile) string {
	switch f.Status {
	case "added", "deleted", "renamed", "copied":
		return f.Status
	}
	if f.Additions == 0 && f.Deletions == 0 {
		return "unchanged"
	}
	return "changed"
}

func (h Handlers) RepoUpdatePullRequest(ctx context.Context, params repository.RepoUpdatePullRequestParams) middleware.Responder {
	l, err := h.loadSignedIn(ctx, params.Owner, params.Repo, params.Index)
	if err != nil {
		return h.Fail(err)
	}
	if err := h.svc().Update(ctx, l.p, l.r, l.is, l.pr, conv.Value(params.Style)); err != nil {
		return h.Fail(err)
	}
	return repository.NewRepoUpdatePullRequestOK()
}

func (h Handlers) RepoPullRequestIsMerged(ctx context.Context, params repository.RepoPullRequestIsMergedParams) middleware.Responder {
	l, err := h.load(ctx, params.Owner, params.Repo, params.Index)
	if err != nil {
		return h.Fail(err)
	}
	if !l.pr.HasMerged {
		return h.Fail(apierr.NotFound("pull request %d is not merged", params.Index))
	}
	return repository.NewRepoPullRequestIsMergedNoContent()
}

func (h Handlers) RepoMergePullRequest(ctx context.Context, params repository.RepoMergePullRequestParams) middleware.Responder {
	l, err := h.loadSignedIn(ctx, params.Owner, params.Repo, params.Index)
	if err != nil {
		return h.Fail(err)
	}
	o := params.Body
	if o == nil || o.Do == nil {
		return h.Fail(apierr.Validation("[Do]: Required"))
	}
	// Both spellings of the title, message and commit: the API's
	// snake_case and the official SDK's MergeTitleField (the reference's
	// form reads the latter).
	either := func(a, b *string) string {
		if v := conv.Value(a); v != "" {
			return v
		}
		return conv.Value(b)
	}
	scheduled, err := h.svc().Merge(ctx, l.p, l.r, l.perm, l.is, l.pr, MergeInput{
		Style: *o.Do, Title: either(o.MergeTitleField, o.MergeTitleFieldSDK), Message: either(o.MergeMessageField, o.MergeMessageFieldSDK),
		HeadCommitID: conv.Value(o.HeadCommitID), MergeCommitID: either(o.MergeCommitID, o.MergeCommitIDSDK),
		DeleteBranch: conv.Value(o.DeleteBranchAfterMerge), ForceMerge: conv.Value(o.ForceMerge),
		WhenChecksPass: conv.Value(o.MergeWhenChecksSucceed),
	})
	if err != nil {
		return h.Fail(err)
	}
	if scheduled {
		return repository.NewRepoMergePullRequestCreated()
	}
	return repository.NewRepoMergePullRequestOK()
}

func (h Handlers) RepoCancelScheduledAutoMerge(ctx context.Context, params repository.RepoCancelScheduledAutoMergeParams) middleware.Responder {
	l, err := h.loadSignedIn(ctx, params.Owner, params.Repo, params.Index)
	if err != nil {
		return h.Fail(err)
	}
	if l.r.IsArchived {
		return h.Fail(apierr.RepoArchived())
	}
	if err := h.svc().CancelScheduledMerge(ctx, l.p.User, l.perm.IsAdmin(), l.is); err != nil {
		return h.Fail(err)
	}
	return repository.NewRepoCancelScheduledAutoMergeNoContent()
}

func (h Handlers) RepoListPinnedIssues(ctx context.Context, params repository.RepoListPinnedIssuesParams) middleware.Responder {
	p := auth.FromContext(ctx)
	s := h.svc().issues()
	r, perm, err := s.Tracker(ctx, p, params.Owner, params.Repo)
	if err != nil {
		return h.Fail(err)
	}
	out, err := s.PinnedIssues(ctx, p, app.BaseURL(params.HTTPRequest), r, perm)
	if err != nil {
		return h.Fail(err)
	}
	return repository.NewRepoListPinnedIssuesOK().WithPayload(out)
}

func (h Handlers) RepoListPinnedPullRequests(ctx context.Context, params repository.RepoListPinnedPullRequestsParams) middleware.Responder {
	p := auth.FromContext(ctx)
	s := h.svc().issues()
	r, perm, err := s.Tracker(ctx, p, params.Owner, params.Repo)
	if err != nil {
		return h.Fail(err)
	}
	pinned, err := s.Pinned(ctx, r, perm, true)
	if err != nil {
		return h.Fail(err)
	}
	// At most issue.MaxPinned rows: one look-up each.
	list := make([]*store.PullRequest, 0, len(pinned))
	issues := map[int64]*store.Issue{}
	for _, is := range pinned {
		pr, err := h.Store.Pulls().FindByIssueID(ctx, is.ID)
		if err != nil {
			return h.Fail(err)
		}
		list = append(list, pr)
		issues[is.ID] = is
	}
	out, err := h.render(ctx, p, app.BaseURL(params.HTTPRequest), r, list, issues)
	if err != nil {
		return h.Fail(err)
	}
	return repository.NewRepoListPinnedPullRequestsOK().WithPayload(out)
}
