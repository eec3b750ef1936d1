package repo

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/go-openapi/runtime/middleware"

	"repohost/impl/apierr"
	"repohost/impl/app"
	"repohost/impl/auth"
	"repohost/impl/convert"
	"repohost/impl/paging"
	"repohost/models"
	"repohost/restapi/operations/repository"
	"repohost/store"
)

// The reference's refusals for repository routes.
const (
	msgNeedAdmin = "user should be an owner or a collaborator with admin write of a repository"
	msgNeedWrite = "user should have a permission to write to a repo"
)

// maxRuleNameLength bounds a protection rule's name (a branch name or glob).
const maxRuleNameLength = 255

// repoAdmin loads the repository for a signed-in repository admin.
func (h Handlers) repoAdmin(ctx context.Context, owner, name string) (*auth.Principal, *store.Repository, error) {
	p, err := auth.RequireUser(ctx)
	if err != nil {
		return nil, nil, err
	}
	r, perm, err := h.Repo(ctx, p, owner, name)
	if err != nil {
		return nil, nil, err
	}
	if !perm.Admin {
		return nil, nil, apierr.Forbidden(msgNeedAdmin)
	}
	return p, r, nil
}

// adminWriteRepo is repoAdmin for a change: an archived repository answers
// 423 (for topics that is the service spec's rule, stricter than the
// reference).
func (h Handlers) adminWriteRepo(ctx context.Context, owner, name string) (*store.Repository, error) {
	_, r, err := h.repoAdmin(ctx, owner, name)
	if err != nil {
		return nil, err
	}
	if r.IsArchived {
		return nil, apierr.RepoArchived()
	}
	return r, nil
}

// PushPolicy applies a repository's branch protection rules to one pusher
// who already has write access. The git server and the branch API both
// decide with it, so a rule means the same over HTTP git and the API.
type PushPolicy struct {
	rules   []*store.ProtectedBranch
	userID  int64
	teamIDs []int64
}

// LoadPushPolicy reads r's rules and p's teams (two statements at most).
func LoadPushPolicy(ctx context.Context, d *app.Deps, r *store.Repository, p *auth.Principal) (*PushPolicy, error) {
	rules, err := d.Store.Protections().ListAll(ctx, r.ID)
	if err != nil {
		return nil, err
	}
	pp := &PushPolicy{rules: rules, userID: p.UserID()}
	if len(rules) > 0 && p != nil && r.Owner != nil && r.Owner.IsOrganization() {
		if pp.teamIDs, err = d.Store.Teams().UserTeamIDs(ctx, r.OwnerID, p.UserID()); err != nil {
			return nil, err
		}
	}
	return pp, nil
}

// Rule is the rule governing branch, nil when it is unprotected.
func (pp *PushPolicy) Rule(branch string) *store.ProtectedBranch {
	return store.MatchRule(pp.rules, branch)
}

// Refusal says why a change of branch may not be made, "" when it may: a
// protected branch is never deleted, rewritten only where the rule allows
// force pushes (to this user), and changed at all only by allowed pushers.
func (pp *PushPolicy) Refusal(branch string, create, remove, fastForward bool) string {
	rule := pp.Rule(branch)
	switch {
	case rule == nil:
		return ""
	case remove:
		return fmt.Sprintf("branch %s is protected from deletion", branch)
	case !create && !fastForward && !rule.CanForcePush(pp.userID, pp.teamIDs):
		return fmt.Sprintf("branch %s is protected from force push", branch)
	case !rule.CanPush(pp.userID, pp.teamIDs):
		return fmt.Sprintf("not allowed to push to protected branch %s", branch)
	}
	return ""
}

// CanPush and CanMerge are the user_can_push and user_can_merge of a branch
// for a writer.
func (pp *PushPolicy) CanPush(branch string) bool {
	rule := pp.Rule(branch)
	return rule == nil || rule.CanPush(pp.userID, pp.teamIDs)
}

func (pp *PushPolicy) CanMerge(branch string) bool {
	rule := pp.Rule(branch)
	return rule == nil || rule.CanMerge(pp.userID, pp.teamIDs)
}

// whitelists resolves the names of users and teams a rule lists. Unknown
// names are a 422; users without write access and teams of other owners
// are dropped, as the reference does.
type whitelists struct {
	ctx  context.Context
	d    *app.Deps
	repo *store.Repository
	err  error
}

func (w *whitelists) users(field string, names []string) []int64 {
	if w.err != nil || len(names) == 0 {
		return []int64{}
	}
	ids := []int64{}
	seen := map[int64]bool{}
	for _, n := range names {
		u, err := w.d.Store.Users().FindByName(w.ctx, n)
		if errors.Is(err, store.ErrNotFound) || (err == nil && u.IsOrganization()) {
			w.err = apierr.Validation("[%s]: user does not exist [name: %s]", field, n)
			return nil
		}
		if err != nil {
			w.err = err
			return nil
		}
		perm, err := w.d.Access.Repo(w.ctx, &auth.Principal{User: u, Signer: u}, w.repo)
		if err != nil {
			w.err = err
			return nil
		}
		if perm.Push && !seen[u.ID] {
			seen[u.ID] = true
			ids = append(ids, u.ID)
		}
	}
	return ids
}

func (w *whitelists) teams(field string, names []string) []int64 {
	if w.err != nil || len(names) == 0 || w.repo.Owner == nil || !w.repo.Owner.IsOrganization() {
		return []int64{}
	}
	ids := []int64{}
	for _, n := range names {
		t, err := w.d.Store.Teams().FindByName(w.ctx, w.repo.OwnerID, n)
		if errors.Is(err, store.ErrNotFound) {
			w.err = apierr.Validation("[%s]: team does not exist [name: %s]", field, n)
			return nil
		}
		if err != nil {
			w.err = err
			return nil
		}
		ids = append(ids, t.ID)
	}
	return ids
}

func checkRuleName(name string) error {
	switch {
	case strings.TrimSpace(name) == "":
		return apierr.Validation("both rule_name and branch_name are empty")
	case len(name) > maxRuleNameLength:
		return apierr.Validation("[RuleName]: MaxSize")
	case strings.ContainsRune(name, 0):
		return apierr.Validation("[RuleName]: invalid character")
	}
	return nil
}

func (h Handlers) RepoCreateBranchProtection(ctx context.Context, params repository.RepoCreateBranchProtectionParams) middleware.Responder {
	r, err := h.adminWriteRepo(ctx, params.Owner, params.Repo)
	if err != nil {
		return h.Fail(err)
	}
	o := params.Body
	if o == nil {
		o = &models.CreateBranchProtectionOption{}
	}
	name := deref(o.RuleName)
	if name == "" {
		name = deref(o.BranchName)
	}
	if err := checkRuleName(name); err != nil {
		return h.Fail(err)
	}
	if _, err := h.Store.Protections().FindByName(ctx, r.ID, name); err == nil {
		return h.Fail(apierr.Forbidden("Branch protection already exist"))
	} else if !errors.Is(err, store.ErrNotFound) {
		return h.Fail(err)
	}
	push := deref(o.EnablePush)
	force := push && deref(o.EnableForcePush)
	pb := &store.ProtectedBranch{
		RepoID:                        r.ID,
		RuleName:                      name,
		Priority:                      max(deref(o.Priority), 0),
		EnablePush:                    push,
		EnablePushWhitelist:           push && deref(o.EnablePushWhitelist),
		PushWhitelistDeployKeys:       push && deref(o.PushWhitelistDeployKeys),
		EnableForcePush:               force,
		EnableForcePushAllowlist:      force && deref(o.EnableForcePushAllowlist),
		ForcePushAllowlistDeployKeys:  force && deref(o.ForcePushAllowlistDeployKeys),
		EnableMergeWhitelist:          deref(o.EnableMergeWhitelist),
		EnableStatusCheck:             deref(o.EnableStatusCheck),
		StatusCheckContexts:           nonNil(o.StatusCheckContexts),
		RequiredApprovals:             max(deref(o.RequiredApprovals), 0),
		EnableApprovalsWhitelist:      deref(o.EnableApprovalsWhitelist),
		EnableBypassAllowlist:         deref(o.EnableBypassAllowlist),
		BlockOnRejectedReviews:        deref(o.BlockOnRejectedReviews),
		BlockOnOfficialReviewRequests: deref(o.BlockOnOfficialReviewRequests),
		BlockOnOutdatedBranch:         deref(o.BlockOnOutdatedBranch),
		DismissStaleApprovals:         deref(o.DismissStaleApprovals),
		IgnoreStaleApprovals:          deref(o.IgnoreStaleApprovals),
		RequireSignedCommits:          deref(o.RequireSignedCommits),
		ProtectedFilePatterns:         deref(o.ProtectedFilePatterns),
		UnprotectedFilePatterns:       deref(o.UnprotectedFilePatterns),
		BlockAdminMergeOverride:       deref(o.BlockAdminMergeOverride),
	}
	w := &whitelists{ctx: ctx, d: h.Deps, repo: r}
	pb.PushWhitelistUserIDs = w.users("PushWhitelistUsernames", o.PushWhitelistUsernames)
	pb.PushWhitelistTeamIDs = w.teams("PushWhitelistTeams", o.PushWhitelistTeams)
	pb.ForcePushAllowlistUserIDs = w.users("ForcePushAllowlistUsernames", o.ForcePushAllowlistUsernames)
	pb.ForcePushAllowlistTeamIDs = w.teams("ForcePushAllowlistTeams", o.ForcePushAllowlistTeams)
	pb.MergeWhitelistUserIDs = w.users("MergeWhitelistUsernames", o.MergeWhitelistUsernames)
	pb.MergeWhitelistTeamIDs = w.teams("MergeWhitelistTeams", o.MergeWhitelistTeams)
	pb.ApprovalsWhitelistUserIDs = w.users("ApprovalsWhitelistUsernames", o.ApprovalsWhitelistUsernames)
	pb.ApprovalsWhitelistTeamIDs = w.teams("ApprovalsWhitelistTeams", o.ApprovalsWhitelistTeams)
	pb.BypassAllowlistUserIDs = w.users("BypassAllowlistUsernames", o.BypassAllowlistUsernames)
	pb.BypassAllowlistTeamIDs = w.teams("BypassAllowlistTeams", o.BypassAllowlistTeams)
	if w.err != nil {
		return h.Fail(w.err)
	}
	if err := h.Store.WithTx(ctx, func(ctx context.Context) error {
		return h.Store.Protections().Create(ctx, pb)
	}); err != nil {
		if errors.Is(err, store.ErrDuplicate) {
			return h.Fail(apierr.Forbidden("Branch protection already exist"))
		}
		return h.Fail(err)
	}
	out, err := h.renderProtections(ctx, []*store.ProtectedBranch{pb})
	if err != nil {
		return h.Fail(err)
	}
	return repository.NewRepoCreateBranchProtectionCreated().WithPayload(out[0])
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func (h Handlers) RepoListBranchProtection(ctx context.Context, params repository.RepoListBranchProtectionParams) middleware.Responder {
	_, r, err := h.repoAdmin(ctx, params.Owner, params.Repo)
	if err != nil {
		return h.Fail(err)
	}
	pg := h.Page(params.Page, params.Limit)
	rules, total, err := h.Store.Protections().List(ctx, r.ID, pg.Store())
	if err != nil {
		return h.Fail(err)
	}
	out, err := h.renderProtections(ctx, rules)
	if err != nil {
		return h.Fail(err)
	}
	return repository.NewRepoListBranchProtectionOK().WithPayload(out).
		WithXTotalCount(total).WithLink(paging.Link(params.HTTPRequest, pg, total))
}

func (h Handlers) RepoGetBranchProtection(ctx context.Context, params repository.RepoGetBranchProtectionParams) middleware.Responder {
	_, r, err := h.repoAdmin(ctx, params.Owner, params.Repo)
	if err != nil {
		return h.Fail(err)
	}
	pb, err := h.Store.Protections().FindByName(ctx, r.ID, params.Name)
	if err != nil {
		return h.Fail(err)
	}
	out, err := h.renderProtections(ctx, []*store.ProtectedBranch{pb})
	if err != nil {
		return h.Fail(err)
	}
	return repository.NewRepoGetBranchProtectionOK().WithPayload(out[0])
}

func (h Handlers) RepoEditBranchProtection(ctx context.Context, params repository.RepoEditBranchProtectionParams) middleware.Responder {
	r, err := h.adminWriteRepo(ctx, params.Owner, params.Repo)
	if err != nil {
		return h.Fail(err)
	}
	o := params.Body
	if o == nil {
		o = &models.EditBranchProtectionOption{}
	}
	var updated *store.ProtectedBranch
	err = h.Store.WithTx(ctx, func(ctx context.Context) error {
		pb, err := h.Store.Protections().FindByName(ctx, r.ID, params.Name)
		if err != nil {
			return err
		}
		if err := h.applyProtectionEdit(ctx, r, pb, o); err != nil {
			return err
		}
		updated = pb
		return h.Store.Protections().Update(ctx, pb)
	})
	if err != nil {
		return h.Fail(err)
	}
	out, err := h.renderProtections(ctx, []*store.ProtectedBranch{updated})
	if err != nil {
		return h.Fail(err)
	}
	return repository.NewRepoEditBranchProtectionOK().WithPayload(out[0])
}

// applyProtectionEdit copies the fields present in o onto pb. As in the
// reference, turning pushing (or force pushing) off also turns its
// whitelist off, and a whitelist flag counts only while its feature is on.
func (h Handlers) applyProtectionEdit(ctx context.Context, r *store.Repository, pb *store.ProtectedBranch, o *models.EditBranchProtectionOption) error {
	if o.EnablePush != nil {
		pb.EnablePush = *o.EnablePush
		if !pb.EnablePush {
			pb.EnablePushWhitelist, pb.PushWhitelistDeployKeys = false, false
		} else if o.EnablePushWhitelist != nil {
			pb.EnablePushWhitelist = *o.EnablePushWhitelist
			if !pb.EnablePushWhitelist {
				pb.PushWhitelistDeployKeys = false
			} else if o.PushWhitelistDeployKeys != nil {
				pb.PushWhitelistDeployKeys = *o.PushWhitelistDeployKeys
			}
		}
	}
	if o.EnableForcePush != nil {
		pb.EnableForcePush = *o.EnableForcePush
		if !pb.EnableForcePush {
			pb.EnableForcePushAllowlist, pb.ForcePushAllowlistDeployKeys = false, false
		} else if o.EnableForcePushAllowlist != nil {
			pb.EnableForcePushAllowlist = *o.EnableForcePushAllowlist
			if !pb.EnableForcePushAllowlist {
				pb.ForcePushAllowlistDeployKeys = false
			} else if o.ForcePushAllowlistDeployKeys != nil {
				pb.ForcePushAllowlistDeployKeys = *o.ForcePushAllowlistDeployKeys
			}
		}
	}
	set(&pb.EnableMergeWhitelist, o.EnableMergeWhitelist)
	set(&pb.EnableStatusCheck, o.EnableStatusCheck)
	if o.StatusCheckContexts != nil {
		pb.StatusCheckContexts = o.StatusCheckContexts
	}
	if o.RequiredApprovals != nil && *o.RequiredApprovals >= 0 {
		pb.RequiredApprovals = *o.RequiredApprovals
	}
	if o.Priority != nil && *o.Priority > 0 {
		pb.Priority = *o.Priority
	}
	set(&pb.EnableApprovalsWhitelist, o.EnableApprovalsWhitelist)
	set(&pb.EnableBypassAllowlist, o.EnableBypassAllowlist)
	set(&pb.BlockOnRejectedReviews, o.BlockOnRejectedReviews)
	set(&pb.BlockOnOfficialReviewRequests, o.BlockOnOfficialReviewRequests)
	set(&pb.BlockOnOutdatedBranch, o.BlockOnOutdatedBranch)
	set(&pb.DismissStaleApprovals, o.DismissStaleApprovals)
	set(&pb.IgnoreStaleApprovals, o.IgnoreStaleApprovals)
	set(&pb.RequireSignedCommits, o.RequireSignedCommits)
	set(&pb.ProtectedFilePatterns, o.ProtectedFilePatterns)
	set(&pb.UnprotectedFilePatterns, o.UnprotectedFilePatterns)
	set(&pb.BlockAdminMergeOverride, o.BlockAdminMergeOverride)
	w := &whitelists{ctx: ctx, d: h.Deps, repo: r}
	for _, l := range []struct {
		field string
		names []string
		dst   *[]int64
		team  bool
	}{
		{"PushWhitelistUsernames", o.PushWhitelistUsernames, &pb.PushWhitelistUserIDs, false},
		{"PushWhitelistTeams", o.PushWhitelistTeams, &pb.PushWhitelistTeamIDs, true},
		{"ForcePushAllowlistUsernames", o.ForcePushAllowlistUsernames, &pb.ForcePushAllowlistUserIDs, false},
		{"ForcePushAllowlistTeams", o.ForcePushAllowlistTeams, &pb.ForcePushAllowlistTeamIDs, true},
		{"MergeWhitelistUsernames", o.MergeWhitelistUsernames, &pb.MergeWhitelistUserIDs, false},
		{"MergeWhitelistTeams", o.MergeWhitelistTeams, &pb.MergeWhitelistTeamIDs, true},
		{"ApprovalsWhitelistUsernames", o.ApprovalsWhitelistUsernames, &pb.ApprovalsWhitelistUserIDs, false},
		{"ApprovalsWhitelistTeams", o.ApprovalsWhitelistTeams, &pb.ApprovalsWhitelistTeamIDs, true},
		{"BypassAllowlistUsernames", o.BypassAllowlistUsernames, &pb.BypassAllowlistUserIDs, false},
		{"BypassAllowlistTeams", o.BypassAllowlistTeams, &pb.BypassAllowlistTeamIDs, true},
	} {
		if l.names == nil {
			continue // absent: the list stays
		}
		if l.team {
			*l.dst = w.teams(l.field, l.names)
		} else {
			*l.dst = w.users(l.field, l.names)
		}
	}
	return w.err
}

func (h Handlers) RepoDeleteBranchProtection(ctx context.Context, params repository.RepoDeleteBranchProtectionParams) middleware.Responder {
	_, r, err := h.repoAdmin(ctx, params.Owner, params.Repo)
	if err != nil {
		return h.Fail(err)
	}
	err = h.Store.WithTx(ctx, func(ctx context.Context) error {
		pb, err := h.Store.Protections().FindByName(ctx, r.ID, params.Name)
		if err != nil {
			return err
		}
		return h.Store.Protections().Delete(ctx, r.ID, pb.ID)
	})
	if err != nil {
		return h.Fail(err)
	}
	return repository.NewRepoDeleteBranchProtectionNoContent()
}

func (h Handlers) RepoUpdateBranchProtectionPriories(ctx context.Context, params repository.RepoUpdateBranchProtectionPrioriesParams) middleware.Responder {
	_, r, err := h.repoAdmin(ctx, params.Owner, params.Repo)
	if err != nil {
		return h.Fail(err)
	}
	if params.Body == nil || params.Body.IDs == nil {
		return h.Fail(apierr.Validation("[IDs]: Required"))
	}
	ids := params.Body.IDs
	seen := make(map[int64]bool, len(ids))
	for _, id := range ids {
		if seen[id] {
			return h.Fail(apierr.Validation("[IDs]: id %d is listed twice", id))
		}
		seen[id] = true
	}
	if r.IsArchived {
		return h.Fail(apierr.RepoArchived())
	}
	// Ids of other repositories' rules, or of none, are ignored, as the
	// reference does.
	if err := h.Store.WithTx(ctx, func(ctx context.Context) error {
		return h.Store.Protections().SetPriorities(ctx, r.ID, ids)
	}); err != nil {
		return h.Fail(err)
	}
	return repository.NewRepoUpdateBranchProtectionPrioriesNoContent()
}

// renderProtections converts rules, resolving every listed user and team
// with one statement each, however many rules there are.
func (h Handlers) renderProtections(ctx context.Context, rules []*store.ProtectedBranch) ([]*models.BranchProtection, error) {
	var userIDs, teamIDs []int64
	for _, pb := range rules {
		userIDs = append(userIDs, pb.PushWhitelistUserIDs...)
		userIDs = append(userIDs, pb.ForcePushAllowlistUserIDs...)
		userIDs = append(userIDs, pb.MergeWhitelistUserIDs...)
		userIDs = append(userIDs, pb.ApprovalsWhitelistUserIDs...)
		userIDs = append(userIDs, pb.BypassAllowlistUserIDs...)
		teamIDs = append(teamIDs, pb.PushWhitelistTeamIDs...)
		teamIDs = append(teamIDs, pb.ForcePushAllowlistTeamIDs...)
		teamIDs = append(teamIDs, pb.MergeWhitelistTeamIDs...)
		teamIDs = append(teamIDs, pb.ApprovalsWhitelistTeamIDs...)
		teamIDs = append(teamIDs, pb.BypassAllowlistTeamIDs...)
	}
	users := map[int64]*store.User{}
	if len(userIDs) > 0 {
		var err error
		if users, err = h.Store.Users().FindByIDs(ctx, userIDs); err != nil {
			return nil, err
		}
	}
	teams, err := h.Store.Teams().FindByIDs(ctx, teamIDs)
	if err != nil {
		return nil, err
	}
	userNames := func(ids []int64) []string {
		out := []string{}
		for _, id := range ids {
			if u, ok := users[id]; ok {
				out = append(out, u.Name)
			}
		}
		return out
	}
	teamNames := func(ids []int64) []string {
		out := []string{}
		for _, id := range ids {
			if t, ok := teams[id]; ok {
				out = append(out, t.Name)
			}
		}
		return out
	}
	out := make([]*models.BranchProtection, 0, len(rules))
	for _, pb := range rules {
		out = append(out, &models.BranchProtection{
			ID:                            pb.ID,
			BranchName:                    pb.RuleName,
			RuleName:                      pb.RuleName,
			Priority:                      pb.Priority,
			EnablePush:                    pb.EnablePush,
			EnablePushWhitelist:           pb.EnablePushWhitelist,
			PushWhitelistUsernames:        userNames(pb.PushWhitelistUserIDs),
			PushWhitelistTeams:            teamNames(pb.PushWhitelistTeamIDs),
			PushWhitelistDeployKeys:       pb.PushWhitelistDeployKeys,
			EnableForcePush:               pb.EnableForcePush,
			EnableForcePushAllowlist:      pb.EnableForcePushAllowlist,
			ForcePushAllowlistUsernames:   userNames(pb.ForcePushAllowlistUserIDs),
			ForcePushAllowlistTeams:       teamNames(pb.ForcePushAllowlistTeamIDs),
			ForcePushAllowlistDeployKeys:  pb.ForcePushAllowlistDeployKeys,
			EnableMergeWhitelist:          pb.EnableMergeWhitelist,
			MergeWhitelistUsernames:       userNames(pb.MergeWhitelistUserIDs),
			MergeWhitelistTeams:           teamNames(pb.MergeWhitelistTeamIDs),
			EnableStatusCheck:             pb.EnableStatusCheck,
			StatusCheckContexts:           nonNil(pb.StatusCheckContexts),
			RequiredApprovals:             pb.RequiredApprovals,
			EnableApprovalsWhitelist:      pb.EnableApprovalsWhitelist,
			ApprovalsWhitelistUsernames:   userNames(pb.ApprovalsWhitelistUserIDs),
			ApprovalsWhitelistTeams:       teamNames(pb.ApprovalsWhitelistTeamIDs),
			EnableBypassAllowlist:         pb.EnableBypassAllowlist,
			BypassAllowlistUsernames:      userNames(pb.BypassAllowlistUserIDs),
			BypassAllowlistTeams:          teamNames(pb.BypassAllowlistTeamIDs),
			BlockOnRejectedReviews:        pb.BlockOnRejectedReviews,
			BlockOnOfficialReviewRequests: pb.BlockOnOfficialReviewRequests,
			BlockOnOutdatedBranch:         pb.BlockOnOutdatedBranch,
			DismissStaleApprovals:         pb.DismissStaleApprovals,
			IgnoreStaleApprovals:          pb.IgnoreStaleApprovals,
			RequireSignedCommits:          pb.RequireSignedCommits,
			ProtectedFilePatterns:         pb.ProtectedFilePatterns,
			UnprotectedFilePatterns:       pb.UnprotectedFilePatterns,
			BlockAdminMergeOverride:       pb.BlockAdminMergeOverride,
			Created:                       convert.TimeOf(pb.CreatedAt),
			Updated:                       convert.TimeOf(pb.UpdatedAt),
		})
	}
	return out, nil
}
