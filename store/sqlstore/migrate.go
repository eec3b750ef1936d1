package sqlstore

import (
	"context"
	"fmt"
	"time"

	"gorm.io/gorm"
)

// migration is one versioned, append-only schema step. Each step declares the
// tables it creates with its own frozen structs, so later edits to the domain
// types never change what an old step does.
type migration struct {
	version int
	name    string
	up      func(tx *gorm.DB) error
}

// migrations lists every step in order. Never edit or reorder a released step;
// append a new one.
var migrations = []migration{
	{1, "users, emails, tokens, organizations, repositories", migrateV1},
	{2, "issues, comments, labels, milestones, reactions, tracked time, projects", migrateV2},
	{3, "branch protections, topics, teams", migrateV3},
	{4, "releases and attachments", migrateV4},
	{5, "domain event outbox", migrateV5},
	{6, "indexes serving each list's filter and order", migrateV6},
	{7, "team members, collaborators, transfers; membership from teams", migrateV7},
	{8, "SSH keys, deploy keys and GPG keys", migrateV8},
	{9, "webhooks, their delivery queue and outbox position", migrateV9},
	{10, "packages: packages, versions, files, blobs, tags", migrateV10},
	{11, "cron task state and leases, system notices", migrateV11},
	{12, "pull requests, reviews, review comments; forks by parent", migrateV12},
	{13, "actions: runners, registration tokens, runs, jobs, tasks, steps, logs", migrateV13},
	{14, "webhook authorization headers sealed with the instance secret key", migrateV14},
	{15, "indexes for the actions maintenance sweeps", migrateV15},
	{16, "label links in their issues' order", migrateV16},
	{17, "repositories carry their owner's visibility, kept by triggers", migrateV17},
	{18, "one durable job queue for every consumer of the outbox", migrateV18},
	{20, "comments carry their repository, indexed in conversation order", migrateV20},
	{21, "review comments record who resolved their conversation", migrateV21},
	{24, "full-text index of issues and comments, kept by triggers", migrateV24},
	{26, "tag protection rules", migrateV26},
	{27, "commit statuses and merges scheduled for when checks succeed", migrateV27},
	{28, "stars, follows, user blocks, their counters; user settings", migrateV28},
	{29, "repository watches, issue subscriptions and notification threads", migrateV29},
	{30, "issue timeline events, issue dependencies, pinned issues", migrateV30},
	{31, "actions secrets and variables of repositories, organizations and users", migrateV31},
	{32, "OAuth2 provider: applications, grants, codes, tokens; web sessions", migrateV32},
	{33, "sums of the issue counters of each class of repositories, kept by triggers", migrateV33},
	{35, "repository status; migrations under way", migrateV35},
	{36, "labels of organizations", migrateV36},
	{37, "timeline events name the commit, issue or comment that refers to an issue, once each", migrateV37},
	{38, "trigram indexes for the keyword searches of repositories and users", migrateV38},
	{39, "timeline events and comments share one id space; reference events record their close or reopen action", migrateV39},
	{40, "pull mirrors and push mirrors", migrateV40},
	{41, "issues and comments keep the name and id of an author on the server they were migrated from; migrations remember their items", migrateV41},
	{42, "every issue carries its repository's class of visibility, kept by triggers, indexed for cross-repository search", migrateV42},
	{43, "Git LFS: objects linked to repositories, and locks", migrateV43},
	{45, "the cluster's change clock, moved with every change the processes sharing the database tell each other of", migrateV45},
	{46, "the trigram tables of repository and user keyword search (SQLite) merge their segments sooner", migrateV46},
	{47, "reactions, reviews and review comments keep the original author of migrated ones; repositories keep the address they were migrated from", migrateV47},
	{49, "the cluster's change clock records the process alone on the database, if any, and until when", migrateV49},
	{50, "event jobs are claimed in the outbox's order from an index of it, not sorted from every due one", migrateV50},
	{51, "a claimed event job is updated in place: no index holds its lease", migrateV51},
}

type schemaMigration struct {
	Version   int `gorm:"primaryKey;autoIncrement:false"`
	Name      string
	AppliedAt time.Time
}

// Migrate applies every pending migration, each in its own transaction, and
// reports how many it applied.
func (d *DB) Migrate(ctx context.Context) (int, error) {
	return d.migrateUpTo(ctx, migrations[len(migrations)-1].version)
}

// migrateUpTo applies the pending migrations up to version last.
func (d *DB) migrateUpTo(ctx context.Context, last int) (int, error) {
	// Processes starting together on one PostgreSQL migrate one after the
	// other: the later ones find the work done.
	unlock, err := d.locks.Lock(ctx, "migrate", false)
	if err != nil {
		return 0, fmt.Errorf("wait for other migrations: %w", err)
	}
	defer unlock()
	g := d.gorm.WithContext(withSecrets(ctx, d.secrets))
	if err := g.AutoMigrate(&schemaMigration{}); err != nil {
		return 0, fmt.Errorf("prepare migrations table: %w", err)
	}
	var done []int
	if err := g.Model(&schemaMigration{}).Pluck("version", &done).Error; err != nil {
		return 0, fmt.Errorf("read applied migrations: %w", err)
	}
	applied := make(map[int]bool, len(done))
	for _, v := range done {
		applied[v] = true
	}
	n := 0
	for _, m := range migrations {
		if applied[m.version] || m.version > last {
			continue
		}
		err := g.Transaction(func(tx *gorm.DB) error {
			if err := m.up(tx); err != nil {
				return err
			}
			return tx.Create(&schemaMigration{Version: m.version, Name: m.name, AppliedAt: tx.NowFunc().UTC()}).Error
		})
		if err != nil {
			return n, fmt.Errorf("migration %d (%s): %w", m.version, m.name, err)
		}
		n++
	}
	return n, nil
}

func migrateV1(tx *gorm.DB) error {
	type User struct {
		ID                     int64  `gorm:"primaryKey"`
		Name                   string `gorm:"not null"`
		LowerName              string `gorm:"not null;uniqueIndex"`
		FullName               string `gorm:"not null;default:''"`
		Email                  string `gorm:"not null;default:''"`
		PasswordHash           string `gorm:"not null;default:''"`
		Type                   int    `gorm:"not null;default:0;index"`
		IsAdmin                bool   `gorm:"not null;default:false"`
		IsActive               bool   `gorm:"not null;default:true"`
		ProhibitLogin          bool   `gorm:"not null;default:false"`
		Restricted             bool   `gorm:"not null;default:false"`
		MustChangePassword     bool   `gorm:"not null;default:false"`
		Visibility             int    `gorm:"not null;default:0"`
		Description            string `gorm:"not null;default:''"`
		Website                string `gorm:"not null;default:''"`
		Location               string `gorm:"not null;default:''"`
		Language               string `gorm:"not null;default:''"`
		LoginName              string `gorm:"not null;default:''"`
		SourceID               int64  `gorm:"not null;default:0"`
		AllowCreateOrg         bool   `gorm:"not null;default:true"`
		AllowGitHook           bool   `gorm:"not null;default:false"`
		AllowImportLocal       bool   `gorm:"not null;default:false"`
		MaxRepoCreation        int64  `gorm:"not null;default:-1"`
		RepoAdminChangeTeamAcc bool   `gorm:"not null;default:false"`
		KeepEmailPrivate       bool   `gorm:"not null;default:false"`
		CreatedAt              time.Time
		UpdatedAt              time.Time
		LastLoginAt            *time.Time
	}
	type Email struct {
		ID          int64  `gorm:"primaryKey"`
		UserID      int64  `gorm:"not null;index"`
		Email       string `gorm:"not null"`
		LowerEmail  string `gorm:"not null;uniqueIndex"`
		IsPrimary   bool   `gorm:"not null;default:false"`
		IsActivated bool   `gorm:"not null;default:false"`
	}
	type AccessToken struct {
		ID             int64  `gorm:"primaryKey"`
		UserID         int64  `gorm:"not null;uniqueIndex:idx_access_token_user_name"`
		Name           string `gorm:"not null;uniqueIndex:idx_access_token_user_name"`
		TokenHash      string `gorm:"not null;uniqueIndex"`
		TokenLastEight string `gorm:"not null"`
		Scopes         string `gorm:"not null;default:''"`
		CreatedAt      time.Time
		LastUsedAt     *time.Time
	}
	type OrgMember struct {
		OrgID    int64 `gorm:"primaryKey;autoIncrement:false"`
		UserID   int64 `gorm:"primaryKey;autoIncrement:false;index"`
		IsOwner  bool  `gorm:"not null;default:false"`
		IsPublic bool  `gorm:"not null;default:false"`
	}
	type Repository struct {
		ID                               int64  `gorm:"primaryKey"`
		OwnerID                          int64  `gorm:"not null;uniqueIndex:idx_repository_owner_name"`
		Name                             string `gorm:"not null"`
		LowerName                        string `gorm:"not null;uniqueIndex:idx_repository_owner_name"`
		Description                      string `gorm:"not null;default:''"`
		Website                          string `gorm:"not null;default:''"`
		DefaultBranch                    string `gorm:"not null;default:''"`
		IsPrivate                        bool   `gorm:"not null;default:false;index"`
		IsArchived                       bool   `gorm:"not null;default:false"`
		ArchivedAt                       *time.Time
		IsTemplate                       bool   `gorm:"not null;default:false"`
		IsEmpty                          bool   `gorm:"not null;default:true"`
		IsFork                           bool   `gorm:"not null;default:false"`
		ForkID                           int64  `gorm:"not null;default:0"`
		IsMirror                         bool   `gorm:"not null;default:false"`
		ObjectFormat                     string `gorm:"not null;default:'sha1'"`
		Size                             int64  `gorm:"not null;default:0"`
		HasIssues                        bool   `gorm:"not null;default:true"`
		HasWiki                          bool   `gorm:"not null;default:true"`
		HasPullRequests                  bool   `gorm:"not null;default:true"`
		HasProjects                      bool   `gorm:"not null;default:true"`
		HasReleases                      bool   `gorm:"not null;default:true"`
		HasPackages                      bool   `gorm:"not null;default:true"`
		HasActions                       bool   `gorm:"not null;default:true"`
		HasCode                          bool   `gorm:"not null;default:true"`
		ProjectsMode                     string `gorm:"not null;default:'all'"`
		IgnoreWhitespaceConflicts        bool   `gorm:"not null;default:false"`
		AllowMerge                       bool   `gorm:"not null;default:true"`
		AllowRebase                      bool   `gorm:"not null;default:true"`
		AllowRebaseMerge                 bool   `gorm:"not null;default:true"`
		AllowSquash                      bool   `gorm:"not null;default:true"`
		AllowFastForwardOnly             bool   `gorm:"not null;default:true"`
		AllowManualMerge                 bool   `gorm:"not null;default:false"`
		AutodetectManualMerge            bool   `gorm:"not null;default:false"`
		AllowRebaseUpdate                bool   `gorm:"not null;default:true"`
		DefaultDeleteBranchAfterMerge    bool   `gorm:"not null;default:false"`
		DefaultMergeStyle                string `gorm:"not null;default:'merge'"`
		DefaultAllowMaintainerEdit       bool   `gorm:"not null;default:false"`
		DefaultTargetBranch              string `gorm:"not null;default:''"`
		EnableTimeTracker                bool   `gorm:"not null;default:true"`
		AllowOnlyContributorsToTrackTime bool   `gorm:"not null;default:true"`
		EnableIssueDependencies          bool   `gorm:"not null;default:true"`
		ExternalTrackerURL               string `gorm:"not null;default:''"`
		ExternalTrackerFormat            string `gorm:"not null;default:''"`
		ExternalTrackerStyle             string `gorm:"not null;default:''"`
		ExternalTrackerRegexpPattern     string `gorm:"not null;default:''"`
		ExternalWikiURL                  string `gorm:"not null;default:''"`
		NumIssues                        int64  `gorm:"not null;default:0"`
		NumClosedIssues                  int64  `gorm:"not null;default:0"`
		NumPulls                         int64  `gorm:"not null;default:0"`
		NumClosedPulls                   int64  `gorm:"not null;default:0"`
		NumStars                         int64  `gorm:"not null;default:0"`
		NumForks                         int64  `gorm:"not null;default:0"`
		NumWatches                       int64  `gorm:"not null;default:0"`
		NumReleases                      int64  `gorm:"not null;default:0"`
		Topics                           string `gorm:"not null;default:''"`
		CreatedAt                        time.Time
		UpdatedAt                        time.Time
	}
	return tx.Migrator().CreateTable(&User{}, &Email{}, &AccessToken{}, &OrgMember{}, &Repository{})
}
