package store

import (
	"context"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/gobwas/glob"
)

// ProtectedTag is one tag protection rule of a repository: the tags whose
// names match NamePattern are created and deleted only by the users and
// the members of the teams it allows. Lists hold ids, so a renamed user
// stays on them.
type ProtectedTag struct {
	ID     int64 `gorm:"primaryKey"`
	RepoID int64
	// NamePattern is a glob (v*, where * also matches "/"), or a regular
	// expression between slashes (/^v[0-9]+$/), as in the reference.
	NamePattern      string
	AllowlistUserIDs []int64 `gorm:"column:allowlist_user_ids;serializer:json"`
	AllowlistTeamIDs []int64 `gorm:"column:allowlist_team_ids;serializer:json"`
	CreatedAt        time.Time
	UpdatedAt        time.Time
}

// TagMatcher is a compiled NamePattern.
type TagMatcher func(name string) bool

// CompileTagPattern compiles a tag protection pattern; an error means the
// pattern is neither a valid glob nor a valid /regexp/.
func CompileTagPattern(pattern string) (TagMatcher, error) {
	if len(pattern) >= 2 && strings.HasPrefix(pattern, "/") && strings.HasSuffix(pattern, "/") {
		re, err := regexp.Compile(pattern[1 : len(pattern)-1])
		if err != nil {
			return nil, err
		}
		return re.MatchString, nil
	}
	g, err := glob.Compile(pattern)
	if err != nil {
		return nil, err
	}
	return g.Match, nil
}

// Allows tells whether the user with userID, a member of teamIDs, may
// create or delete the tags pt protects.
func (pt *ProtectedTag) Allows(userID int64, teamIDs []int64) bool {
	if userID != 0 && slices.Contains(pt.AllowlistUserIDs, userID) {
		return true
	}
	for _, t := range teamIDs {
		if slices.Contains(pt.AllowlistTeamIDs, t) {
			return true
		}
	}
	return false
}

// TagAllowed applies rules to tag as the reference does: a tag no rule
// matches is free; otherwise one matching rule that allows the user is
// enough. A rule whose stored pattern no longer compiles matches nothing.
func TagAllowed(rules []*ProtectedTag, tag string, userID int64, teamIDs []int64) bool {
	allowed := true
	for _, pt := range rules {
		match, err := CompileTagPattern(pt.NamePattern)
		if err != nil || !match(tag) {
			continue
		}
		if pt.Allows(userID, teamIDs) {
			return true
		}
		allowed = false
	}
	return allowed
}

// TagProtectionStore keeps tag protection rules.
type TagProtectionStore interface {
	// ListAll returns every rule of the repository by id.
	ListAll(ctx context.Context, repoID int64) ([]*ProtectedTag, error)
	Find(ctx context.Context, repoID, id int64) (*ProtectedTag, error)
	// Create inserts the rule; a rule with the same pattern is ErrDuplicate.
	Create(ctx context.Context, pt *ProtectedTag) error
	Update(ctx context.Context, pt *ProtectedTag) error
	Delete(ctx context.Context, repoID, id int64) error
}
