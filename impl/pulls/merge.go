package pulls

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/go-git/go-git/v6/plumbing"
	"github.com/go-git/go-git/v6/plumbing/object"

	"repohost/impl/access"
	"repohost/impl/apierr"
	"repohost/impl/app"
	"repohost/impl/auth"
	"repohost/impl/convert"
	"repohost/impl/events"
	"repohost/impl/refs"
	"repohost/impl/statuses"
	"repohost/store"
	"repohost/store/gitstore"
)

// The merge styles (MergePullRequestOption.Do).
const (
	StyleMerge          = "merge"
	StyleRebase         = "rebase"
	StyleRebaseMerge    = "rebase-merge"
	StyleSquash         = "squash"
	StyleFastForward    = "fast-forward-only"
	StyleManuallyMerged = "manually-merged"
)

// MergeInput is how to merge a pull request.
type MergeInput struct {
	Style string
	// Title and Message replace the default commit message's first line
	// and body.
	Title, Message string
	// HeadCommitID, when set, must be the head now (else 409).
	HeadCommitID string
	// MergeCommitID is the commit a manually merged pull request went in
	// with.
	MergeCommitID  string
	DeleteBranch   bool
	ForceMerge     bool
	WhenChecksPass bool
}

// mergeClaimTTL is how long a merge's claim keeps others out: a process
// that died while merging holds it no longer than this.
const mergeClaimTTL = 5 * time.Minute

// styleAllowed tells whether r allows style.
func styleAllowed(r *store.Repository, style string) bool {
	switch style {
	case StyleMerge:
		return r.AllowMerge
	case StyleRebase:
		return r.AllowRebase
	case StyleRebaseMerge:
		return r.AllowRebaseMerge
	case StyleSquash:
		return r.AllowSquash
	case StyleFastForward:
		return r.AllowFastForwardOnly
	case StyleManuallyMerged:
		return r.AllowManualMerge
	}
	return false
}

// Merge merges pull request is/pr of base for p in the style in asks for,
// and moves the base branch by compare-and-swap through impl/refs, in
// whose transaction the pull request is marked merged and closed with the
// issues it closes. Refusals answer as the reference does: 405 for what
// the caller or the rules do not allow, 409 for conflicts and a head or
// base that moved. With in.WhenChecksPass, a pull request whose head's
// checks are not all green yet is not merged but scheduled (scheduled is
// true; see automerge.go).
func (s Service) Merge(ctx context.Context, p *auth.Principal, base *store.Repository, perm access.Permission, is *store.Issue, pr *store.PullRequest, in MergeInput) (scheduled bool, err error) {
	err = s.merge(ctx, p, base, perm, is, pr, in, &scheduled)
	return scheduled, err
}

func (s Service) merge(ctx context.Context, p *auth.Principal, base *store.Repository, perm access.Permission, is *store.Issue, pr *store.PullRequest, in MergeInput, scheduled *bool) error {
	if base.IsArchived {
		return apierr.RepoArchived()
	}
	if pr.HasMerged {
		return apierr.MethodNotAllowed("The PR has already been merged")
	}
	if is.IsClosed {
		return apierr.MethodNotAllowed("The PR is closed")
	}
	if !styleAllowed(base, in.Style) {
		return apierr.MethodNotAllowed("The merge style %s is not allowed in this repository", in.Style)
	}
	pp, err := s.Access.PushPolicy(ctx, base, p)
	if err != nil {
		return err
	}
	if !perm.CanWrite(access.UnitCode) || !pp.CanMerge(pr.BaseBranch) {
		return apierr.MethodNotAllowed("User not allowed to merge PR")
	}
	if convert.IsWorkInProgress(is.Title) {
		return apierr.MethodNotAllowed("Work in progress PRs cannot be merged")
	}
	if base.EnableIssueDependencies {
		if n, err := s.issues().OpenDependencies(ctx, is); err != nil {
			return err
		} else if n > 0 {
			return apierr.Validation("is blocked by an open dependency")
		}
	}
	head, err := s.headRepo(ctx, base, pr)
	if err != nil {
		return err
	}
	// One merge of a pull request at a time, across processes: a second
	// one that read the first's merge as its base would merge again.
	now := s.Clock.Now()
	claimed, err := s.Store.Pulls().ClaimMerge(ctx, pr.ID, now, now.Add(-mergeClaimTTL))
	if err != nil {
		return err
	}
	if !claimed {
		if cur, err := s.Store.Pulls().FindByIssueID(ctx, is.ID); err == nil && cur.HasMerged {
			return apierr.MethodNotAllowed("The PR has already been merged")
		}
		return apierr.Conflict("the pull request is being merged")
	}
	merged := false
	defer func() {
		if !merged {
			if err := s.Store.Pulls().ReleaseMerge(context.WithoutCancel(ctx), pr.ID, pr.Status); err != nil {
				s.Log.ErrorContext(ctx, "release a merge claim", "pull", pr.ID, "err", err)
			}
		}
	}()
	g, err := s.OpenGit(base)
	if err != nil {
		return err
	}
	st, err := s.inspect(ctx, g, base, pr.BaseBranch, Head{Repo: head, Branch: pr.HeadBranch}, pr)
	if err != nil {
		return err
	}
	if in.HeadCommitID != "" && in.HeadCommitID != st.head.String() {
		return apierr.Conflict("the head of the pull request moved to %s; review and merge again", st.head)
	}
	if in.Style != StyleManuallyMerged && st.merge.Conflicts != nil {
		return apierr.Conflict("the pull request has merge conflicts in: %s", strings.Join(st.merge.Conflicts, ", "))
	}
	rule := pp.Rule(pr.BaseBranch)
	if in.WhenChecksPass {
		// As the reference: the branch's other rules are applied when the
		// scheduled merge is done, not when it is asked for; checks that
		// are green already merge now, under every rule.
		state, err := s.checksState(ctx, base.ID, rule, st.head.String())
		if err != nil {
			return err
		}
		if state != statuses.Success {
			*scheduled = true
			return s.schedule(ctx, p.User, base, is, in)
		}
	}
	if rule != nil {
		admin := perm.IsAdmin() && !rule.BlockAdminMergeOverride
		if in.ForceMerge && !admin {
			return apierr.MethodNotAllowed("only repository admins may force a merge past the branch protection")
		}
		if !in.ForceMerge {
			if err := s.checkProtection(ctx, base, rule, pr, st); err != nil {
				return err
			}
		}
	}
	doer := p.User
	var newBase plumbing.Hash
	switch in.Style {
	case StyleManuallyMerged:
		newBase, err = s.manualCommit(ctx, g, st, in.MergeCommitID)
	default:
		newBase, err = s.mergedCommit(ctx, g, base, is, pr, st, doer, in)
	}
	if err != nil {
		return err
	}
	t := s.Clock.Now()
	pr.HasMerged, pr.MergedAt, pr.MergerID, pr.MergedCommitID = true, &t, doer.ID, newBase.String()
	pr.UpdatedAt = t
	apply(pr, st)
	record := func(ctx context.Context) error {
		won, err := s.Store.Pulls().MarkMerged(ctx, pr)
		if err != nil {
			return err
		}
		if !won {
			return apierr.MethodNotAllowed("The PR has already been merged")
		}
		if err := s.Events.Emit(ctx, events.PullMerged, base.ID, doer.ID, events.Issue{ID: is.ID, Index: is.Index}); err != nil {
			return err
		}
		// A merge scheduled for later is done by this one, whoever made it.
		if _, err := s.Store.Statuses().DeleteScheduledMerge(ctx, is.ID); err != nil {
			return err
		}
		if _, err := s.issues().SetState(ctx, doer, base, is.Index, true); err != nil {
			return err
		}
		// As the reference: what the pull request's keywords ask of the
		// issues it names is done with the merge.
		return s.issues().ResolveRefs(ctx, doer, is)
	}
	if in.Style == StyleManuallyMerged {
		if err := s.Store.WithTx(ctx, record); err != nil {
			return err
		}
	} else {
		_, err = refs.New(s.Deps).Apply(ctx, refs.Change{Repo: base, Doer: p, Git: g, Atomic: true, Merge: true,
			Updates: []*gitstore.RefUpdate{{Name: plumbing.NewBranchReferenceName(pr.BaseBranch), Old: st.base, New: newBase}},
			Also:    record})
		if err != nil {
			var refErr *gitstore.RefError
			if errors.As(err, &refErr) && errors.Is(err, store.ErrConflict) {
				return apierr.Conflict("the base branch moved while merging; try again")
			}
			var refusal *access.Refusal
			if errors.As(err, &refusal) {
				return apierr.MethodNotAllowed("%s", refusal.Error())
			}
			return err
		}
	}
	merged = true
	if in.DeleteBranch && head.ID != base.ID || in.DeleteBranch && pr.HeadBranch != base.DefaultBranch {
		s.deleteHead(ctx, p, head, pr)
	}
	return nil
}

// checkProtection applies the base branch's rule to a merge: approvals,
// rejections, official review requests, an outdated head, and status
// checks: the head's statuses must make the required contexts (or, when
// the rule names none, every context) successful.
func (s Service) checkProtection(ctx context.Context, base *store.Repository, rule *store.ProtectedBranch, pr *store.PullRequest, st *state) error {
	if rule.EnableStatusCheck {
		state, err := s.checksState(ctx, base.ID, rule, st.head.String())
		if err != nil {
			return err
		}
		if state != statuses.Success {
			return apierr.MethodNotAllowed("Not all required status checks successful")
		}
	}
	reviews, err := s.Store.Pulls().AllReviews(ctx, pr.IssueID)
	if err != nil {
		return err
	}
	head := st.head.String()
	var approvals int64
	for _, rv := range latestByReviewer(reviews) {
		if !rv.Official || rv.Dismissed {
			continue
		}
		switch rv.State {
		case store.ReviewApproved:
			if !(rule.IgnoreStaleApprovals && rv.CommitID != head) {
				approvals++
			}
		case store.ReviewRequestChanges:
			if rule.BlockOnRejectedReviews {
				return apierr.MethodNotAllowed("There are requested changes")
			}
		case store.ReviewRequest:
			if rule.BlockOnOfficialReviewRequests {
				return apierr.MethodNotAllowed("There are official review requests")
			}
		}
	}
	if approvals < rule.RequiredApprovals {
		return apierr.MethodNotAllowed("Does not have enough approvals (%d of %d)", approvals, rule.RequiredApprovals)
	}
	if rule.BlockOnOutdatedBranch && st.mergeBase != st.base {
		return apierr.MethodNotAllowed("The head branch is behind the base branch")
	}
	return nil
}

// latestByReviewer keeps each reviewer's (or team's) newest review or
// request, the one that counts.
func latestByReviewer(reviews []*store.Review) []*store.Review {
	type key struct{ user, team int64 }
	idx := map[key]int{}
	var out []*store.Review
	for _, rv := range reviews {
		if rv.State == store.ReviewPending {
			continue
		}
		k := key{rv.ReviewerID, rv.ReviewerTeamID}
		if i, ok := idx[k]; ok {
			out[i] = rv
			continue
		}
		idx[k] = len(out)
		out = append(out, rv)
	}
	return out
}

// manualCommit checks the commit a pull request was merged by hand with:
// it must be on the base branch and contain the head.
func (s Service) manualCommit(ctx context.Context, g *gitstore.GitRepo, st *state, id string) (plumbing.Hash, error) {
	if !plumbing.IsHash(id) {
		return plumbing.ZeroHash, apierr.Validation("merge_commit_id is required to mark a pull request as manually merged")
	}
	h := plumbing.NewHash(id)
	onBase, err := g.IsAncestor(h, st.base)
	if err != nil || !onBase {
		return plumbing.ZeroHash, apierr.Validation("merge_commit_id %s is not on the base branch", id)
	}
	hasHead, err := g.IsAncestor(st.head, h)
	if err != nil || !hasHead {
		return plumbing.ZeroHash, apierr.Validation("merge_commit_id %s does not contain the head of the pull request", id)
	}
	return h, nil
}

// mergedCommit makes the commit the base branch moves to in style.
func (s Service) mergedCommit(ctx context.Context, g *gitstore.GitRepo, base *store.Repository, is *store.Issue, pr *store.PullRequest, st *state, doer *store.User, in MergeInput) (plumbing.Hash, error) {
	now := s.Clock.Now()
	me := app.Signature(doer, now)
	signer := s.CommitSigner()
	headLabel := pr.HeadBranch
	if pr.HeadRepoID != pr.BaseRepoID {
		if head, err := s.Store.Repos().FindByID(ctx, pr.HeadRepoID); err == nil {
			headLabel = head.FullName() + ":" + pr.HeadBranch
		}
	}
	mergeMsg := func(defaultTitle string) string {
		title := strings.TrimSpace(in.Title)
		if title == "" {
			title = defaultTitle
		}
		if in.Message != "" {
			return title + "\n\n" + in.Message
		}
		return title
	}
	switch in.Style {
	case StyleMerge:
		return g.WriteCommit(gitstore.CommitSpec{Tree: st.merge.Tree, Parents: []plumbing.Hash{st.base, st.head},
			Message: mergeMsg(fmt.Sprintf("Merge pull request '%s' (#%d) from %s into %s", is.Title, is.Index, headLabel, pr.BaseBranch)),
			Author:  me, Committer: me, Signer: signer})
	case StyleFastForward:
		if st.mergeBase != st.base {
			return plumbing.ZeroHash, apierr.MethodNotAllowed("the head branch is not a fast-forward of the base branch")
		}
		return st.head, nil
	case StyleSquash:
		return s.squash(ctx, g, is, st, doer, me, mergeMsg(fmt.Sprintf("%s (#%d)", is.Title, is.Index)), in.Message != "")
	case StyleRebase, StyleRebaseMerge:
		tip, err := s.rebase(ctx, g, st.base, diffFrom(st), st.head, me)
		if err != nil {
			return plumbing.ZeroHash, err
		}
		if in.Style == StyleRebase {
			return tip, nil
		}
		tipCommit, err := g.Commit(tip)
		if err != nil {
			return plumbing.ZeroHash, err
		}
		return g.WriteCommit(gitstore.CommitSpec{Tree: tipCommit.TreeHash, Parents: []plumbing.Hash{st.base, tip},
			Message: mergeMsg(fmt.Sprintf("Merge pull request '%s' (#%d) from %s into %s", is.Title, is.Index, headLabel, pr.BaseBranch)),
			Author:  me, Committer: me, Signer: signer})
	}
	return plumbing.ZeroHash, apierr.Validation("unknown merge style %q", in.Style)
}

// rebase replays the commits from..head (merges left out, as git rebase
// does) onto onto, keeping their authors; a conflict answers 409.
func (s Service) rebase(ctx context.Context, g *gitstore.GitRepo, onto, from, head plumbing.Hash, committer object.Signature) (plumbing.Hash, error) {
	commits, err := g.Between(ctx, from, head, false)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	tip := onto
	for _, c := range commits {
		next, conflicts, err := g.Pick(ctx, tip, c, committer, s.CommitSigner())
		if errors.Is(err, gitstore.ErrMergeConflict) {
			return plumbing.ZeroHash, apierr.Conflict("rebasing commit %s conflicts in: %s", c.Hash, strings.Join(conflicts, ", "))
		}
		if err != nil {
			return plumbing.ZeroHash, err
		}
		tip = next
	}
	return tip, nil
}

// squash makes one commit with the merge's tree on top of the base,
// authored by the pull request's poster, with a Co-authored-by trailer for
// every other author of its commits, as the reference writes them.
func (s Service) squash(ctx context.Context, g *gitstore.GitRepo, is *store.Issue, st *state, doer *store.User, me object.Signature, msg string, custom bool) (plumbing.Hash, error) {
	commits, err := g.Between(ctx, diffFrom(st), st.head, true)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	author := me
	if poster, err := s.Store.Users().FindByID(ctx, is.PosterID); err == nil {
		author = app.Signature(poster, me.When)
	}
	var body strings.Builder
	if !custom {
		for _, c := range commits {
			if len(c.ParentHashes) > 1 {
				continue
			}
			body.WriteString("* " + strings.TrimSpace(c.Message) + "\n\n")
		}
	}
	seen := map[string]bool{strings.ToLower(author.Email): true}
	var trailers []string
	for _, c := range commits {
		e := strings.ToLower(c.Author.Email)
		if seen[e] {
			continue
		}
		seen[e] = true
		trailers = append(trailers, fmt.Sprintf("Co-authored-by: %s <%s>", c.Author.Name, c.Author.Email))
	}
	full := msg
	if b := strings.TrimSpace(body.String()); b != "" {
		full += "\n\n" + b
	}
	if len(trailers) > 0 {
		full += "\n\n---------\n\n" + strings.Join(trailers, "\n")
	}
	return g.WriteCommit(gitstore.CommitSpec{Tree: st.merge.Tree, Parents: []plumbing.Hash{st.base}, Message: full,
		Author: author, Committer: me, Signer: s.CommitSigner()})
}

// deleteHead deletes the head branch after a merge when p may; a refusal
// leaves it, as the merge itself stands.
func (s Service) deleteHead(ctx context.Context, p *auth.Principal, head *store.Repository, pr *store.PullRequest) {
	perm, err := s.Access.Repo(ctx, p, head)
	if err != nil || !perm.CanWrite(access.UnitCode) || pr.HeadBranch == head.DefaultBranch {
		return
	}
	g, err := s.OpenGit(head)
	if err != nil {
		return
	}
	at, err := g.BranchHash(pr.HeadBranch)
	if err != nil || at.IsZero() || at.String() != pr.HeadCommitID {
		return // moved since the merge: the new commits are not merged
	}
	if _, err := refs.New(s.Deps).Apply(ctx, refs.Change{Repo: head, Doer: p, Git: g, Atomic: true,
		Updates: []*gitstore.RefUpdate{{Name: plumbing.NewBranchReferenceName(pr.HeadBranch), Old: at}}}); err != nil {
		s.Log.InfoContext(ctx, "head branch kept after merge", "repo", head.FullName(), "branch", pr.HeadBranch, "err", err)
	}
}

// Update brings the base branch into pull request pr's head branch: a
// merge commit (style merge) or the head's commits replayed onto the base
// (rebase), moved through impl/refs in the head repository.
func (s Service) Update(ctx context.Context, p *auth.Principal, base *store.Repository, is *store.Issue, pr *store.PullRequest, style string) error {
	if pr.HasMerged || is.IsClosed {
		return apierr.Validation("a closed or merged pull request cannot be updated")
	}
	head, err := s.headRepo(ctx, base, pr)
	if err != nil {
		return err
	}
	headPerm, err := s.Access.Repo(ctx, p, head)
	if err != nil {
		return err
	}
	maintainer := pr.AllowMaintainerEdit && head.ID != base.ID
	if !headPerm.CanWrite(access.UnitCode) && !(maintainer && is.PosterID != p.UserID()) {
		return apierr.Forbidden("user should have a permission to write to the head branch")
	}
	if head.IsArchived {
		return apierr.RepoArchived()
	}
	g, err := s.OpenGit(base)
	if err != nil {
		return err
	}
	st, err := s.inspect(ctx, g, base, pr.BaseBranch, Head{Repo: head, Branch: pr.HeadBranch}, pr)
	if err != nil {
		return err
	}
	if st.mergeBase == st.base {
		return nil // already up to date
	}
	hg := g
	if head.ID != base.ID {
		if hg, err = s.OpenGit(head); err != nil {
			return err
		}
		if err := hg.FetchObjects(ctx, g, []plumbing.Hash{st.base}); err != nil {
			return err
		}
	}
	me := app.Signature(p.User, s.Clock.Now())
	var next plumbing.Hash
	switch style {
	case "", StyleMerge:
		if st.merge.Conflicts != nil {
			return apierr.Conflict("merging the base branch conflicts in: %s", strings.Join(st.merge.Conflicts, ", "))
		}
		next, err = hg.WriteCommit(gitstore.CommitSpec{Tree: st.merge.Tree, Parents: []plumbing.Hash{st.head, st.base},
			Message: fmt.Sprintf("Merge branch '%s' into %s", pr.BaseBranch, pr.HeadBranch),
			Author:  me, Committer: me, Signer: s.CommitSigner()})
	case StyleRebase:
		if !base.AllowRebaseUpdate {
			return apierr.Forbidden("updating by rebase is not allowed in this repository")
		}
		next, err = s.rebase(ctx, hg, st.base, diffFrom(st), st.head, me)
	default:
		return apierr.Validation("unknown update style %q", style)
	}
	if err != nil {
		return err
	}
	_, err = refs.New(s.Deps).Apply(ctx, refs.Change{Repo: head, Doer: p, Git: hg, Atomic: true,
		Updates: []*gitstore.RefUpdate{{Name: plumbing.NewBranchReferenceName(pr.HeadBranch), Old: st.head, New: next}}})
	if err != nil {
		if errors.Is(err, store.ErrConflict) {
			return apierr.Conflict("the head branch moved while updating; try again")
		}
		return err
	}
	return nil
}
