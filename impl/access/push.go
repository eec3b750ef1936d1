package access

import (
	"context"
	"fmt"

	"repohost/impl/auth"
	"repohost/store"
	"repohost/store/gitstore"
)

// Reason names why PushPolicy refuses an update.
type Reason int

const (
	// DefaultBranchDeletion: the repository's default branch is never
	// deleted.
	DefaultBranchDeletion Reason = iota + 1
	// ProtectedDeletion: a protected branch is never deleted.
	ProtectedDeletion
	// ForcePush: the rule does not let this pusher rewrite the branch.
	ForcePush
	// PushNotAllowed: the rule does not let this pusher push at all.
	PushNotAllowed
	// RenameNeedsAdmin: the default branch, or a branch with a rule of
	// its own name, is renamed only by repository admins.
	RenameNeedsAdmin
	// RenameGlobProtected: a branch a glob rule protects is never renamed.
	RenameGlobProtected
)

// Refusal is PushPolicy's verdict against one update. Its text is what git
// shows after "ng <ref>" and what the API answers (403 through apierr, as
// a gitstore.ErrRefused); API routes whose reference wording differs pick
// their own words by Reason.
type Refusal struct {
	Branch string
	Reason Reason
}

func (r *Refusal) Error() string {
	switch r.Reason {
	case DefaultBranchDeletion:
		return fmt.Sprintf("branch %s is the default branch and cannot be deleted", r.Branch)
	case ProtectedDeletion:
		return fmt.Sprintf("branch %s is protected from deletion", r.Branch)
	case ForcePush:
		return fmt.Sprintf("branch %s is protected from force push", r.Branch)
	case PushNotAllowed:
		return fmt.Sprintf("not allowed to push to protected branch %s", r.Branch)
	case RenameNeedsAdmin:
		return "User must be a repo or site admin to rename default or protected branches."
	case RenameGlobProtected:
		return "Branch is protected by glob-based protection rules."
	}
	return fmt.Sprintf("branch %s: refused", r.Branch)
}

func (r *Refusal) Unwrap() error { return gitstore.ErrRefused }

// PushPolicy applies a repository's branch protection rules to one pusher
// who already has write access. It is the one policy of every ref change,
// whichever writer asks (git push, branches, contents, tags, releases,
// template generation; all through impl/refs), and it also answers the
// user_can_push and user_can_merge of the branch API.
type PushPolicy struct {
	rules         []*store.ProtectedBranch
	userID        int64
	teamIDs       []int64
	defaultBranch string
	admin         bool
}

// PushPolicy reads r's rules and p's teams (two statements at most).
func (c Checker) PushPolicy(ctx context.Context, r *store.Repository, p *auth.Principal) (*PushPolicy, error) {
	rules, err := c.Store.Protections().ListAll(ctx, r.ID)
	if err != nil {
		return nil, err
	}
	pp := &PushPolicy{rules: rules, userID: p.UserID(), defaultBranch: r.DefaultBranch}
	if len(rules) > 0 && p != nil && r.Owner != nil && r.Owner.IsOrganization() {
		if pp.teamIDs, err = c.Store.Teams().UserTeamIDs(ctx, r.OwnerID, p.UserID()); err != nil {
			return nil, err
		}
	}
	return pp, nil
}

// WithAdmin tells the policy whether the pusher administers the
// repository; only renames depend on it (CheckRename).
func (pp *PushPolicy) WithAdmin(admin bool) *PushPolicy {
	pp.admin = admin
	return pp
}

// Rule is the rule governing branch, nil when it is unprotected.
func (pp *PushPolicy) Rule(branch string) *store.ProtectedBranch {
	return store.MatchRule(pp.rules, branch)
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

// Check judges one inspected update (FastForward is known): nil when it
// may be made, else a *Refusal. The default branch is never deleted; a
// protected branch is never deleted, rewritten only where its rule allows
// this pusher to force-push, and changed or created at all only by allowed
// pushers. Tags and other refs are not protected.
func (pp *PushPolicy) Check(u *gitstore.RefUpdate) error {
	branch := u.Branch()
	if branch == "" {
		return nil
	}
	if u.IsDelete() && branch == pp.defaultBranch {
		return &Refusal{Branch: branch, Reason: DefaultBranchDeletion}
	}
	rule := pp.Rule(branch)
	switch {
	case rule == nil:
		return nil
	case u.IsDelete():
		return &Refusal{Branch: branch, Reason: ProtectedDeletion}
	case !u.IsCreate() && !u.FastForward && !rule.CanForcePush(pp.userID, pp.teamIDs):
		return &Refusal{Branch: branch, Reason: ForcePush}
	case !rule.CanPush(pp.userID, pp.teamIDs):
		return &Refusal{Branch: branch, Reason: PushNotAllowed}
	}
	return nil
}

// CheckRename judges the rename of branch from: the default branch and a
// branch with an exact rule need a repository admin; one a glob rule
// protects is never renamed. The rule moves with the branch, so the rules
// for creating and deleting do not apply.
func (pp *PushPolicy) CheckRename(from string) error {
	exact := false
	for _, rule := range pp.rules {
		if !rule.IsGlob() && rule.RuleName == from {
			exact = true
		}
	}
	if (from == pp.defaultBranch || exact) && !pp.admin {
		return &Refusal{Branch: from, Reason: RenameNeedsAdmin}
	}
	for _, rule := range pp.rules {
		if rule.IsGlob() && rule.Matches(from) {
			return &Refusal{Branch: from, Reason: RenameGlobProtected}
		}
	}
	return nil
}
