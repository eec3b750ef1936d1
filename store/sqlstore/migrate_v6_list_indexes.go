package sqlstore

import "gorm.io/gorm"

// migrateV6 gives every paged list an index that serves both its filter and
// its order, so reading page N walks N×limit index entries at most instead
// of sorting the whole filtered set (plan_test.go holds each list to it).
// Each index ends with the list's tie-breaker, the id, because PostgreSQL
// (unlike SQLite, where every index ends with the rowid) can only read an
// ORDER BY ..., id from an index that names it. Indexes that a new one
// starts with are dropped: the new one serves their lookups too.
func migrateV6(tx *gorm.DB) error {
	for _, stmt := range listIndexesV6 {
		if err := tx.Exec(stmt).Error; err != nil {
			return err
		}
	}
	return nil
}

// listIndexesV6 is frozen with the migration: never edit it, append a new
// migration instead.
var listIndexesV6 = []string{
	// Issues of one repository, newest first: by state (open, the
	// default, or closed), all states, and either with the issue/pull
	// type; the cross-repository search reads the global order.
	`DROP INDEX IF EXISTS idx_issues_repo_closed`,
	`CREATE INDEX idx_issues_repo_closed_created ON issues (repo_id, is_closed, created_at, id)`,
	`CREATE INDEX idx_issues_repo_created ON issues (repo_id, created_at, id)`,
	`CREATE INDEX idx_issues_repo_pull_closed_created ON issues (repo_id, is_pull, is_closed, created_at, id)`,
	`CREATE INDEX idx_issues_repo_pull_created ON issues (repo_id, is_pull, created_at, id)`,
	`CREATE INDEX idx_issues_closed_created ON issues (is_closed, created_at, id)`,
	`CREATE INDEX idx_issues_created ON issues (created_at, id)`,
	`CREATE INDEX idx_issues_pull_closed_created ON issues (is_pull, is_closed, created_at, id)`,
	// The issues carrying a label, assigned to or mentioning a user, read
	// from the link table's index alone.
	`DROP INDEX IF EXISTS idx_issue_labels_label_id`,
	`CREATE INDEX idx_issue_labels_label_issue ON issue_labels (label_id, issue_id)`,
	`DROP INDEX IF EXISTS idx_issue_assignees_assignee_id`,
	`CREATE INDEX idx_issue_assignees_assignee_issue ON issue_assignees (assignee_id, issue_id)`,
	`DROP INDEX IF EXISTS idx_issue_mentions_user_id`,
	`CREATE INDEX idx_issue_mentions_user_issue ON issue_mentions (user_id, issue_id)`,
	// Comments of an issue, oldest first.
	`DROP INDEX IF EXISTS idx_comments_issue_id`,
	`CREATE INDEX idx_comments_issue_created ON comments (issue_id, created_at, id)`,
	// Repositories of an owner (by id), and the search's sort keys, each
	// ascending and descending: the tie-breaker stays "id ASC" either way
	// (what clients have seen so far), and one index cannot serve both
	// "key ASC, id ASC" and "key DESC, id ASC". The
	// index on is_private alone goes: it matches most rows, so it never
	// narrows a search, and it lured SQLite into gathering every public
	// repository through it and sorting them, instead of walking the
	// order's index until a page is full.
	`DROP INDEX IF EXISTS idx_repositories_is_private`,
	`CREATE INDEX idx_repository_owner_id ON repositories (owner_id, id)`,
	`CREATE INDEX idx_repository_lower_name ON repositories (lower_name, id)`,
	`CREATE INDEX idx_repository_created ON repositories (created_at, id)`,
	`CREATE INDEX idx_repository_updated ON repositories (updated_at, id)`,
	`CREATE INDEX idx_repository_size ON repositories (size, id)`,
	`CREATE INDEX idx_repository_stars ON repositories (num_stars, id)`,
	`CREATE INDEX idx_repository_forks ON repositories (num_forks, id)`,
	`CREATE INDEX idx_repository_lower_name_desc ON repositories (lower_name DESC, id)`,
	`CREATE INDEX idx_repository_created_desc ON repositories (created_at DESC, id)`,
	`CREATE INDEX idx_repository_updated_desc ON repositories (updated_at DESC, id)`,
	`CREATE INDEX idx_repository_size_desc ON repositories (size DESC, id)`,
	`CREATE INDEX idx_repository_stars_desc ON repositories (num_stars DESC, id)`,
	`CREATE INDEX idx_repository_forks_desc ON repositories (num_forks DESC, id)`,
	// Users and organizations, by every sort key of their lists, both ways
	// (as for repositories; the name is unique and needs no tie-breaker).
	`DROP INDEX IF EXISTS idx_users_type`,
	`CREATE INDEX idx_users_type_id ON users (type, id)`,
	`CREATE INDEX idx_users_type_name ON users (type, lower_name)`,
	`CREATE INDEX idx_users_type_created ON users (type, created_at, id)`,
	`CREATE INDEX idx_users_type_updated ON users (type, updated_at, id)`,
	`CREATE INDEX idx_users_type_created_desc ON users (type, created_at DESC, id)`,
	`CREATE INDEX idx_users_type_updated_desc ON users (type, updated_at DESC, id)`,
	// Labels by name; milestones by due date (those without one last), in
	// all states or one.
	`DROP INDEX IF EXISTS idx_labels_repo_id`,
	`CREATE INDEX idx_labels_repo_name ON labels (repo_id, name, id)`,
	`DROP INDEX IF EXISTS idx_milestones_repo_id`,
	`CREATE INDEX idx_milestones_repo_deadline ON milestones (repo_id, (deadline IS NULL), deadline, id)`,
	`CREATE INDEX idx_milestones_repo_closed_deadline ON milestones (repo_id, is_closed, (deadline IS NULL), deadline, id)`,
	// Releases, newest publication (or creation, for drafts) first, with or
	// without drafts.
	`CREATE INDEX idx_release_repo_published ON releases (repo_id, (COALESCE(published_at, created_at)), id)`,
	`CREATE INDEX idx_release_repo_draft_published ON releases (repo_id, is_draft, (COALESCE(published_at, created_at)), id)`,
	`DROP INDEX IF EXISTS idx_release_attachments_release_id`,
	`CREATE INDEX idx_release_attachments_release ON release_attachments (release_id, id)`,
	// A user's tokens, newest first.
	`CREATE INDEX idx_access_token_user_id ON access_tokens (user_id, id)`,
	// Popular topics first.
	`CREATE INDEX idx_topics_count_name ON topics (repo_count DESC, name)`,
	// Reactions to an issue or a comment, tracked times of an issue, of a
	// user or of everything (a repository's), projects, branch rules and
	// teams, each in its list order.
	`CREATE INDEX idx_reactions_target_created ON reactions (issue_id, comment_id, created_at, id)`,
	`DROP INDEX IF EXISTS idx_tracked_times_issue_id`,
	`DROP INDEX IF EXISTS idx_tracked_times_user_id`,
	`CREATE INDEX idx_tracked_times_issue_created ON tracked_times (issue_id, created_at, id)`,
	`CREATE INDEX idx_tracked_times_user_created ON tracked_times (user_id, created_at, id)`,
	`CREATE INDEX idx_tracked_times_created ON tracked_times (created_at, id)`,
	`DROP INDEX IF EXISTS idx_projects_repo_id`,
	`CREATE INDEX idx_projects_repo ON projects (repo_id, id)`,
	`CREATE INDEX idx_projects_repo_closed ON projects (repo_id, is_closed, id)`,
	`DROP INDEX IF EXISTS idx_protected_branch_repo_priority`,
	`CREATE INDEX idx_protected_branch_repo_priority_id ON protected_branches (repo_id, priority, id)`,
	`CREATE INDEX idx_team_org_name_id ON teams (org_id, lower_name, id)`,
}
