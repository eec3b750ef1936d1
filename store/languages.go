package store

import "context"

// LanguageStats is the language detector's count for a repository's
// default branch at one tree: computed once per tree, since the same tree
// always gives the same count.
type LanguageStats struct {
	RepoID int64 `gorm:"primaryKey;autoIncrement:false"`
	TreeID string
	Sizes  map[string]int64 `gorm:"serializer:json"`
}

// LanguageStatsStore keeps one LanguageStats per repository (the newest
// computed), so the cache is bounded by the number of repositories.
type LanguageStatsStore interface {
	// Find returns the repository's stored count; ErrNotFound when none.
	Find(ctx context.Context, repoID int64) (*LanguageStats, error)
	// Put stores ls in place of the repository's count.
	Put(ctx context.Context, ls *LanguageStats) error
}
