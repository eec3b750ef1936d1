package branch

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/go-openapi/runtime/middleware"
	"github.com/go-openapi/swag/conv"

	"repohost/impl/access"
	"repohost/impl/apierr"
	"repohost/impl/app"
	"repohost/impl/auth"
	"repohost/impl/convert"
	"repohost/impl/paging"
	"repohost/models"
	"repohost/restapi/operations/repository"
	"repohost/store"
)

// maxRuleNameLength bounds a protection rule's name (a branch name or glob).
const maxRuleNameLength = 255

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
		if perm.CanWrite(access.UnitCode) && !seen[u.ID] {
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
	if err := checkRuleName(name); err != nil {
		return h.Fail(err)
	}
	if _, err := h.Store.Protections().FindByName(ctx, r.ID, name); err == nil {
		return h.Fail(apierr.Forbidden("Branch protection already exist"))
	} else if !errors.Is(err, store.ErrNotFound) {
		return h.Fail(err)
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

// findRule loads the rule named name from the path. A name no rule can
// have, one the database cannot store (a NUL, invalid UTF-8), is not
// found rather than an invalid value.
func (h Handlers) findRule(ctx context.Context, repoID int64, name string) (*store.ProtectedBranch, error) {
	if strings.ContainsRune(name, 0) || !utf8.ValidString(name) {
		return nil, fmt.Errorf("branch protection %q: %w", name, store.ErrNotFound)
	}
	return h.Store.Protections().FindByName(ctx, repoID, name)
}

func (h Handlers) RepoGetBranchProtection(ctx context.Context, params repository.RepoGetBranchProtectionParams) middleware.Responder {
	_, r, err := h.RepoAdmin(ctx, params.Owner, params.Repo)
	if err != nil {
		return h.Fail(err)
	}
	pb, err := h.findRule(ctx, r.ID, params.Name)
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
	var updated *store.ProtectedBranch
	err = h.Store.WithTx(ctx, func(ctx context.Context) error {
		pb, err := h.findRule(ctx, r.ID, params.Name)
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
	_, r, err := h.RepoAdmin(ctx, params.Owner, params.Repo)
	if err != nil {
		return h.Fail(err)
	}
	err = h.Store.WithTx(ctx, func(ctx context.Context) error {
		pb, err := h.findRule(ctx, r.ID, params.Name)
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
	_, r, err := h.RepoAdmin(ctx, params.Owner, params.Repo)
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
