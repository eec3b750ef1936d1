package access

import (
	"context"
	"fmt"

	"repohost/impl/auth"
	"repohost/store"
)

// PushPolicy applies a repository's branch protection rules to one pusher
// who already has write access. The git server and the branch API both
// decide with it, so a rule means the same over HTTP git and the API.
type PushPolicy struct {
	rules   []*store.ProtectedBranch
	userID  int64
	teamIDs []int64
}

// PushPolicy reads r's rules and p's teams (two statements at most).
func (c Checker) PushPolicy(ctx context.Context, r *store.Repository, p *auth.Principal) (*PushPolicy, error) {
	rules, err := c.Store.Protections().ListAll(ctx, r.ID)
	if err != nil {
		return nil, err
	}
	pp := &PushPolicy{rules: rules, userID: p.UserID()}
	if len(rules) > 0 && p != nil && r.Owner != nil && r.Owner.IsOrganization() {
		if pp.teamIDs, err = c.Store.Teams().UserTeamIDs(ctx, r.OwnerID, p.UserID()); err != nil {
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
