package branch

import (
	"context"

	"github.com/go-openapi/runtime/middleware"
	"github.com/go-openapi/swag/conv"

	"repohost/impl/apierr"
	"repohost/impl/app"
	"repohost/impl/convert"
	"repohost/impl/paging"
	"repohost/models"
	"repohost/restapi/operations/repository"
	"repohost/store"
)

// maxRuleNameLength bounds a protection rule's name (a branch name or glob).
const maxRuleNameLength = 255

func (h Handlers) RepoCreateBranchProtection(ctx context.Context, params repository.RepoCreateBranchProtectionParams) middleware.Responder {
	r, err := h.AdminWriteRepo(ctx, params.Owner, params.Repo)
	if err != nil {
		return h.Fail(err)
	}
	o := params.Body
	if o == nil {
		o = &models.CreateBranchProtectionOption{}
	}
	name := conv.Value(o.RuleName)
	if name == "" {
		name = conv.Value(o.BranchName)
	}
	push := conv.Value(o.EnablePush)
	force := push && conv.Value(o.EnableForcePush)
	pb := &store.ProtectedBranch{
		RepoID:                        r.ID,
		RuleName:                      name,
		Priority:                      max(conv.Value(o.Priority), 0),
		EnablePush:                    push,
		EnablePushWhitelist:           push && conv.Value(o.EnablePushWhitelist),
		PushWhitelistDeployKeys:       push && conv.Value(o.PushWhitelistDeployKeys),
		EnableForcePush:               force,
		EnableForcePushAllowlist:      force && conv.Value(o.EnableForcePushAllowlist),
		ForcePushAllowlistDeployKeys:  force && conv.Value(o.ForcePushAllowlistDeployKeys),
		EnableMergeWhitelist:          conv.Value(o.EnableMergeWhitelist),
		EnableStatusCheck:             conv.Value(o.EnableStatusCheck),
		StatusCheckContexts:           nonNil(o.StatusCheckContexts),
		RequiredApprovals:             max(conv.Value(o.RequiredApprovals), 0),
		EnableApprovalsWhitelist:      conv.Value(o.EnableApprovalsWhitelist),
		EnableBypassAllowlist:         conv.Value(o.EnableBypassAllowlist),
		BlockOnRejectedReviews:        conv.Value(o.BlockOnRejectedReviews),
		BlockOnOfficialReviewRequests: conv.Value(o.BlockOnOfficialReviewRequests),
		BlockOnOutdatedBranch:         conv.Value(o.BlockOnOutdatedBranch),
		DismissStaleApprovals:         conv.Value(o.DismissStaleApprovals),
		IgnoreStaleApprovals:          conv.Value(o.IgnoreStaleApprovals),
		RequireSignedCommits:          conv.Value(o.RequireSignedCommits),
		ProtectedFilePatterns:         conv.Value(o.ProtectedFilePatterns),
		UnprotectedFilePatterns:       conv.Value(o.UnprotectedFilePatterns),
		BlockAdminMergeOverride:       conv.Value(o.BlockAdminMergeOverride),
	}
	lists := RuleLists{
		PushUsers: o.PushWhitelistUsernames, PushTeams: o.PushWhitelistTeams,
		ForcePushUsers: o.ForcePushAllowlistUsernames, ForcePushTeams: o.ForcePushAllowlistTeams,
		MergeUsers: o.MergeWhitelistUsernames, MergeTeams: o.MergeWhitelistTeams,
		ApprovalsUsers: o.ApprovalsWhitelistUsernames, ApprovalsTeams: o.ApprovalsWhitelistTeams,
		BypassUsers: o.BypassAllowlistUsernames, BypassTeams: o.BypassAllowlistTeams,
	}
	if err := h.svc().CreateRule(ctx, r, pb, lists); err != nil {
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
	_, r, err := h.RepoAdmin(ctx, params.Owner, params.Repo)
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
	_, r, err := h.RepoAdmin(ctx, params.Owner, params.Repo)
	if err != nil {
		return h.Fail(err)
	}
	pb, err := h.svc().findRule(ctx, r.ID, params.Name)
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
	r, err := h.AdminWriteRepo(ctx, params.Owner, params.Repo)
	if err != nil {
		return h.Fail(err)
	}
	o := params.Body
	if o == nil {
		o = &models.EditBranchProtectionOption{}
	}
	lists := RuleLists{
		PushUsers: o.PushWhitelistUsernames, PushTeams: o.PushWhitelistTeams,
		ForcePushUsers: o.ForcePushAllowlistUsernames, ForcePushTeams: o.ForcePushAllowlistTeams,
		MergeUsers: o.MergeWhitelistUsernames, MergeTeams: o.MergeWhitelistTeams,
		ApprovalsUsers: o.ApprovalsWhitelistUsernames, ApprovalsTeams: o.ApprovalsWhitelistTeams,
		BypassUsers: o.BypassAllowlistUsernames, BypassTeams: o.BypassAllowlistTeams,
	}
	updated, err := h.svc().EditRule(ctx, r, params.Name, func(pb *store.ProtectedBranch) { applyProtectionEdit(pb, o) }, lists)
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
// The lists of users and teams are the service's to resolve (RuleLists).
func applyProtectionEdit(pb *store.ProtectedBranch, o *models.EditBranchProtectionOption) {
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
	app.Set(&pb.EnableMergeWhitelist, o.EnableMergeWhitelist)
	app.Set(&pb.EnableStatusCheck, o.EnableStatusCheck)
	if o.StatusCheckContexts != nil {
		pb.StatusCheckContexts = o.StatusCheckContexts
	}
	if o.RequiredApprovals != nil && *o.RequiredApprovals >= 0 {
		pb.RequiredApprovals = *o.RequiredApprovals
	}
	if o.Priority != nil && *o.Priority > 0 {
		pb.Priority = *o.Priority
	}
	app.Set(&pb.EnableApprovalsWhitelist, o.EnableApprovalsWhitelist)
	app.Set(&pb.EnableBypassAllowlist, o.EnableBypassAllowlist)
	app.Set(&pb.BlockOnRejectedReviews, o.BlockOnRejectedReviews)
	app.Set(&pb.BlockOnOfficialReviewRequests, o.BlockOnOfficialReviewRequests)
	app.Set(&pb.BlockOnOutdatedBranch, o.BlockOnOutdatedBranch)
	app.Set(&pb.DismissStaleApprovals, o.DismissStaleApprovals)
	app.Set(&pb.IgnoreStaleApprovals, o.IgnoreStaleApprovals)
	app.Set(&pb.RequireSignedCommits, o.RequireSignedCommits)
	app.Set(&pb.ProtectedFilePatterns, o.ProtectedFilePatterns)
	app.Set(&pb.UnprotectedFilePatterns, o.UnprotectedFilePatterns)
	app.Set(&pb.BlockAdminMergeOverride, o.BlockAdminMergeOverride)
}

func (h Handlers) RepoDeleteBranchProtection(ctx context.Context, params repository.RepoDeleteBranchProtectionParams) middleware.Responder {
	_, r, err := h.RepoAdmin(ctx, params.Owner, params.Repo)
	if err != nil {
		return h.Fail(err)
	}
	if err := h.svc().DeleteRule(ctx, r, params.Name); err != nil {
		return h.Fail(err)
	}
	return repository.NewRepoDeleteBranchProtectionNoContent()
}

func (h Handlers) RepoUpdateBranchProtectionPriories(ctx context.Context, params repository.RepoUpdateBranchProtectionPrioriesParams) middleware.Responder {
	_, r, err := h.RepoAdmin(ctx, params.Owner, params.Repo)
	if err != nil {
		return h.Fail(err)
	}
	if params.Body == nil || params.Body.IDs == nil {
		return h.Fail(apierr.Validation("[IDs]: Required"))
	}
	if err := h.svc().SetRulePriorities(ctx, r, params.Body.IDs); err != nil {
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
