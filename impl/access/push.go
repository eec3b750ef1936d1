package access

import (
	"context"
	"errors"
	"fmt"

	"github.com/go-git/go-git/v6/plumbing/object"

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
	// ProtectedFile: the update changes a file the rule's
	// protected_file_patterns protect (File names it).
	ProtectedFile
	// UnverifiedCommit: the rule requires signed commits and the update
	// brings one whose signature is missing or not verified against the
	// registered keys (Commit names it).
	UnverifiedCommit
	// Unchecked: what the update brings could not be checked against the
	// rule's file patterns or signature requirement within the bounds on
	// the history walked.
	Unchecked
	// TagProtected: a tag protection rule matches the tag (Tag names it)
	// and none of the matching rules allows the pusher to create, move or
	// delete it.
	TagProtected
)

// Refusal is PushPolicy's verdict against one update. Its text is what git
// shows after "ng <ref>" and what the API answers (403 through apierr, as
// a gitstore.ErrRefused); API routes whose reference wording differs pick
// their own words by Reason.
type Refusal struct {
	Branch string
	Reason Reason
	// File and Commit name the protected file changed (ProtectedFile) and
	// the unverified commit (UnverifiedCommit).
	File   string
	Commit string
	// Tag is the protected tag (TagProtected; Branch is empty then).
	Tag string
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
	case ProtectedFile:
		return fmt.Sprintf("branch %s is protected from changing file %s", r.Branch, r.File)
	case UnverifiedCommit:
		return fmt.Sprintf("branch %s is protected from unverified commit %s", r.Branch, r.Commit)
	case Unchecked:
		return fmt.Sprintf("branch %s: too much history to check against its protection rule", r.Branch)
	case TagProtected:
		return fmt.Sprintf("tag %s is protected", r.Tag)
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
	tagRules      []*store.ProtectedTag
	userID        int64
	teamIDs       []int64
	defaultBranch string
	admin         bool
	content       Content
	signatures    SignatureCheck
	// deployKey: the pusher is a deploy key, judged by the rules'
	// deploy-key allowances instead of their user lists.
	deployKey bool
	// merge: the update is the merge of a pull request, judged by the
	// rules' merge whitelists instead of their push lists.
	merge bool
}

// Content tells the policy what an update brings to its branch. It is
// asked only about branches whose rule has file patterns or requires
// signed commits; *gitstore.GitRepo answers it (bounded walks, whose
// gitstore.ErrTooMuchHistory the policy turns into a refusal).
type Content interface {
	// ChangedFiles lists the paths whose entry differs in the branch's
	// tree once the update is made.
	ChangedFiles(u *gitstore.RefUpdate) ([]string, error)
	// BroughtCommits are the commits the update brings, newest first.
	BroughtCommits(u *gitstore.RefUpdate) ([]*object.Commit, error)
}

// SignatureCheck tells, for each of commits, whether its signature is
// verified against the registered keys (impl/signing.Verifier: the same
// verdict the commits API shows).
type SignatureCheck func(commits []*object.Commit) ([]bool, error)

// PushPolicy reads r's branch and tag rules and p's teams (three
// statements at most).
func (c Checker) PushPolicy(ctx context.Context, r *store.Repository, p *auth.Principal) (*PushPolicy, error) {
	rules, err := c.Store.Protections().ListAll(ctx, r.ID)
	if err != nil {
		return nil, err
	}
	tagRules, err := c.Store.TagProtections().ListAll(ctx, r.ID)
	if err != nil {
		return nil, err
	}
	pp := &PushPolicy{rules: rules, tagRules: tagRules, userID: p.UserID(), defaultBranch: r.DefaultBranch}
	if len(rules)+len(tagRules) > 0 && p != nil && r.Owner != nil && r.Owner.IsOrganization() {
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

// WithContent gives the policy what it needs to judge the files and
// commits an update brings. Without it an update of a branch whose rule
// looks at them is refused.
func (pp *PushPolicy) WithContent(c Content) *PushPolicy {
	pp.content = c
	return pp
}

// AsDeployKey tells the policy the pusher is a read-write deploy key.
func (pp *PushPolicy) AsDeployKey() *PushPolicy {
	pp.deployKey = true
	return pp
}

// pusherCanPush and pusherCanForcePush apply a rule to the pusher, user or
// deploy key.
func (pp *PushPolicy) pusherCanPush(rule *store.ProtectedBranch) bool {
	if pp.deployKey {
		return rule.DeployKeyCanPush()
	}
	return rule.CanPush(pp.userID, pp.teamIDs)
}

func (pp *PushPolicy) pusherCanForcePush(rule *store.ProtectedBranch) bool {
	if pp.deployKey {
		return rule.DeployKeyCanForcePush()
	}
	return rule.CanForcePush(pp.userID, pp.teamIDs)
}

// AsMerge judges the updates as the merge of a pull request, made by the
// server: a rule's merge whitelist decides instead of its push lists
// (protected files stay protected, as in the reference).
func (pp *PushPolicy) AsMerge() *PushPolicy {
	pp.merge = true
	return pp
}

// WithSignatureCheck gives the policy the judge of commit signatures.
// Without it an update of a branch that requires signed commits is
// refused.
func (pp *PushPolicy) WithSignatureCheck(check SignatureCheck) *PushPolicy {
	pp.signatures = check
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
// may be made, else a *Refusal (or, when the commits could not be read,
// a *gitstore.RefError). A tag that a tag protection rule matches is
// created, moved or deleted only by a user (or a member of a team) one of
// the matching rules allows (store.TagAllowed); other refs are not
// protected. The default branch is never deleted. On a branch a rule protects, in this order:
//
//   - it is never deleted;
//   - it is rewritten only where the rule lets this pusher force-push;
//   - with require_signed_commits, every commit the update brings must
//     carry a signature verified against the registered keys (or the
//     instance key), as the commits API would show it;
//   - a change to a file matching protected_file_patterns is refused to
//     everyone: such files change only through a merge the server makes
//     (pull requests), as in the reference;
//   - otherwise only the rule's pushers may push, except that
//     unprotected_file_patterns let every writer push an update whose
//     changed files (at least one) all match them.
func (pp *PushPolicy) Check(u *gitstore.RefUpdate) error {
	if u.Name.IsTag() {
		return pp.checkTag(u.Name.Short())
	}
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
	case !u.IsCreate() && !u.FastForward && !pp.pusherCanForcePush(rule):
		return &Refusal{Branch: branch, Reason: ForcePush}
	}
	protected := store.ParseFilePatterns(rule.ProtectedFilePatterns)
	unprotected := store.ParseFilePatterns(rule.UnprotectedFilePatterns)
	canPush := pp.pusherCanPush(rule)
	if pp.merge {
		canPush = rule.CanMerge(pp.userID, pp.teamIDs)
	}
	needFiles := len(protected) > 0 || (!canPush && len(unprotected) > 0)
	if (rule.RequireSignedCommits || needFiles) && pp.content == nil || rule.RequireSignedCommits && pp.signatures == nil {
		return &Refusal{Branch: branch, Reason: Unchecked}
	}
	if rule.RequireSignedCommits {
		if err := pp.checkSignatures(branch, u); err != nil {
			return err
		}
	}
	var changed []string
	if needFiles {
		var err error
		if changed, err = pp.content.ChangedFiles(u); err != nil {
			return pp.uncheckable(branch, err)
		}
	}
	for _, f := range changed {
		if protected.Match(f) {
			return &Refusal{Branch: branch, Reason: ProtectedFile, File: f}
		}
	}
	if canPush {
		return nil
	}
	if len(unprotected) > 0 && len(changed) > 0 {
		only := true
		for _, f := range changed {
			only = only && unprotected.Match(f)
		}
		if only {
			return nil
		}
	}
	return &Refusal{Branch: branch, Reason: PushNotAllowed}
}

// checkSignatures refuses an update that brings a commit whose signature
// is not verified, naming the newest such commit.
func (pp *PushPolicy) checkSignatures(branch string, u *gitstore.RefUpdate) error {
	commits, err := pp.content.BroughtCommits(u)
	if err != nil {
		return pp.uncheckable(branch, err)
	}
	if len(commits) == 0 {
		return nil
	}
	verified, err := pp.signatures(commits)
	if err != nil {
		return pp.uncheckable(branch, err)
	}
	for i, c := range commits {
		if !verified[i] {
			return &Refusal{Branch: branch, Reason: UnverifiedCommit, Commit: c.Hash.String()}
		}
	}
	return nil
}

// uncheckable is the verdict when the update's content could not be read.
func (pp *PushPolicy) uncheckable(branch string, err error) error {
	if errors.Is(err, gitstore.ErrTooMuchHistory) {
		return &Refusal{Branch: branch, Reason: Unchecked}
	}
	return &gitstore.RefError{Reason: "failed to check the pushed commits against the branch's protection rule", Kind: err}
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

// checkTag applies the tag protection rules to a change of tag. A deploy
// key is nobody on the allow-lists.
func (pp *PushPolicy) checkTag(tag string) error {
	userID := pp.userID
	if pp.deployKey {
		userID = 0
	}
	if store.TagAllowed(pp.tagRules, tag, userID, pp.teamIDs) {
		return nil
	}
	return &Refusal{Tag: tag, Reason: TagProtected}
}
