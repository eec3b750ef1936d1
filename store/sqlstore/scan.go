package sqlstore

import (
	"database/sql"
	"time"

	"gorm.io/gorm"

	"repohost/store"
)

// eachRow runs q (built with GORM, or Raw) and hands every row to scan,
// which reads it with database/sql's Scan into the fields it names. The hot
// lists (a page of issues and what each issue shows) read their rows this
// way: GORM's reflection over the destination was the largest part of
// their CPU time.
func eachRow(q *gorm.DB, scan func(*sql.Rows) error) error {
	rows, err := q.Rows()
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		if err := scan(rows); err != nil {
			return err
		}
	}
	return rows.Err()
}

// nullTime is a nullable time column read into a *time.Time.
type nullTime struct{ t **time.Time }

func (n nullTime) Scan(src any) error {
	var v sql.NullTime
	if err := v.Scan(src); err != nil {
		return err
	}
	*n.t = nil
	if v.Valid {
		t := v.Time
		*n.t = &t
	}
	return nil
}

// anyTime is a time column read into a time.Time, NULL as the zero time
// (as GORM reads it).
type anyTime struct{ t *time.Time }

func (a anyTime) Scan(src any) error {
	var v sql.NullTime
	if err := v.Scan(src); err != nil {
		return err
	}
	*a.t = v.Time
	return nil
}

// issueColumns are the columns scanIssue reads, in its order.
const issueColumns = `issues.id, issues.repo_id, issues.number, issues.poster_id, issues.title, issues.body,
	issues.content_version, issues.ref, issues.is_closed, issues.is_pull, issues.is_locked, issues.milestone_id,
	issues.num_comments, issues.deadline, issues.closed_at, issues.created_at, issues.updated_at, issues.pin_order,
	issues.original_author, issues.original_author_id`

func scanIssue(rows *sql.Rows) (*store.Issue, error) {
	is := &store.Issue{}
	err := rows.Scan(&is.ID, &is.RepoID, &is.Index, &is.PosterID, &is.Title, &is.Body, &is.ContentVersion, &is.Ref,
		&is.IsClosed, &is.IsPull, &is.IsLocked, &is.MilestoneID, &is.NumComments, nullTime{&is.Deadline},
		nullTime{&is.ClosedAt}, anyTime{&is.CreatedAt}, anyTime{&is.UpdatedAt}, &is.PinOrder, &is.OriginalAuthor, &is.OriginalAuthorID)
	return is, err
}

// labelColumns are the columns scanLabel reads, in its order.
const labelColumns = `labels.id, COALESCE(labels.repo_id, 0), COALESCE(labels.org_id, 0), labels.name, labels.color, labels.description, labels.exclusive,
	labels.archived_at, labels.created_at, labels.updated_at`

// scanLabel reads labelColumns and then extra.
func scanLabel(rows *sql.Rows, extra ...any) (*store.Label, error) {
	l := &store.Label{}
	err := rows.Scan(append([]any{&l.ID, &l.RepoID, &l.OrgID, &l.Name, &l.Color, &l.Description, &l.Exclusive,
		nullTime{&l.ArchivedAt}, anyTime{&l.CreatedAt}, anyTime{&l.UpdatedAt}}, extra...)...)
	return l, err
}

// milestoneColumns are the columns scanMilestone reads, in its order.
const milestoneColumns = `milestones.id, milestones.repo_id, milestones.title, milestones.description, milestones.is_closed,
	milestones.num_issues, milestones.num_closed_issues, milestones.deadline, milestones.closed_at,
	milestones.created_at, milestones.updated_at`

func scanMilestone(rows *sql.Rows) (*store.Milestone, error) {
	m := &store.Milestone{}
	err := rows.Scan(&m.ID, &m.RepoID, &m.Title, &m.Description, &m.IsClosed, &m.NumIssues, &m.NumClosedIssues,
		nullTime{&m.Deadline}, nullTime{&m.ClosedAt}, anyTime{&m.CreatedAt}, anyTime{&m.UpdatedAt})
	return m, err
}
