// Package names checks user, organization and repository names before they
// reach the database or the disk, with the reference's rules.
package names

import (
	"regexp"
	"strings"

	"github.com/go-git/go-git/v6/plumbing"

	"repohost/impl/apierr"
	"repohost/store/gitstore"
)

const (
	MaxUserNameLength = 40
	MaxRepoNameLength = 100
)

var (
	userNameRe      = regexp.MustCompile(`^[\da-zA-Z][-.\w]*$`)
	repeatedSpecial = regexp.MustCompile(`[-._]{2,}`)
	alphaDashDot    = regexp.MustCompile(`^[-_.a-zA-Z0-9]+$`)
)

// Names no account may take, because they collide with routes or files.
var reservedUserNames = map[string]bool{
	".": true, "..": true, ".well-known": true, "api": true, "assets": true, "attachments": true,
	"avatar": true, "avatars": true, "captcha": true, "commits": true, "debug": true, "error": true,
	"explore": true, "favicon.ico": true, "ghost": true, "issues": true, "login": true,
	"manifest.json": true, "metrics": true, "milestones": true, "new": true, "notifications": true,
	"org": true, "pulls": true, "raw": true, "repo-avatars": true, "robots.txt": true, "search": true,
	"serviceworker.js": true, "ssh_info": true, "swagger.v1.json": true, "user": true, "v2": true,
	"gitea-actions": true,
}

var reservedRepoNames = map[string]bool{".": true, "..": true, "-": true}

var reservedRepoSuffixes = []string{".wiki", ".git", ".rss", ".atom"}

// CheckUser validates a user or organization name; field names the input
// field in the error, as the reference's binding errors do.
func CheckUser(field, name string) error {
	switch {
	case name == "":
		return apierr.Validation("[%s]: Required", field)
	case len(name) > MaxUserNameLength:
		return apierr.Validation("[%s]: MaxSize", field)
	case !userNameRe.MatchString(name) || repeatedSpecial.MatchString(name) || strings.ContainsAny(name[len(name)-1:], "-._"):
		return apierr.Validation("[%s]: invalid username", field)
	case reservedUserNames[strings.ToLower(name)]:
		return apierr.Validation("name is reserved [name: %s]", name)
	}
	return nil
}

// CheckRepo validates a repository name.
func CheckRepo(field, name string) error {
	lower := strings.ToLower(name)
	switch {
	case name == "":
		return apierr.Validation("[%s]: Required", field)
	case len(name) > MaxRepoNameLength:
		return apierr.Validation("[%s]: MaxSize", field)
	case !alphaDashDot.MatchString(name):
		return apierr.Validation("[%s]: AlphaDashDot", field)
	case reservedRepoNames[lower]:
		return apierr.Validation("name is reserved [name: %s]", name)
	}
	for _, suffix := range reservedRepoSuffixes {
		if strings.HasSuffix(lower, suffix) {
			return apierr.Validation("name pattern is not allowed [pattern: *%s]", suffix)
		}
	}
	return nil
}

// MaxNewBranchLength is the reference's limit (MaxSize(100)) for a branch
// name a client gives through the API: a new branch, a rename's target, a
// new repository's or a generated one's default branch, the branch a
// contents change creates.
const MaxNewBranchLength = 100

// CheckNewBranch is the one rule for a branch name a client gives through
// the API: CheckBranch within MaxNewBranchLength. Branches pushed with git
// may be longer (CheckBranch's 255).
func CheckNewBranch(field, name string) error {
	if len(name) > MaxNewBranchLength {
		return apierr.Validation("[%s]: MaxSize", field)
	}
	return CheckBranch(field, name)
}

// CheckBranch validates a branch name as git does for refs/heads/<name>.
func CheckBranch(field, name string) error {
	if name == "" || len(name) > 255 || strings.HasPrefix(name, "-") ||
		gitstore.ValidRefName(plumbing.NewBranchReferenceName(name)) != nil {
		return apierr.Validation("[%s]: invalid branch name %q", field, name)
	}
	return nil
}
