package sqlstore

import (
	"context"
	"strconv"

	"repohost/store"
)

type projectStore struct{ d *DB }

// projectIssue is a row of project_issues (created by migrateV2).
type projectIssue struct {
	ProjectID int64
	IssueID   int64
}

func (projectIssue) TableName() string { return "project_issues" }

func (s projectStore) Create(ctx context.Context, pr *store.Project) error {
	return translateRef(s.d.conn(ctx).Create(pr).Error, "create project")
}

func (s projectStore) Find(ctx context.Context, repoID, id int64) (*store.Project, error) {
	var pr store.Project
	if err := s.d.conn(ctx).Where("repo_id = ? AND id = ?", repoID, id).Take(&pr).Error; err != nil {
		return nil, translate(err, "find project")
	}
	return &pr, nil
}

func (s projectStore) FindByIDs(ctx context.Context, repoID int64, ids []int64) ([]*store.Project, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	var out []*store.Project
	err := s.d.conn(ctx).Where("repo_id = ? AND id IN ?", repoID, ids).Order("id").Find(&out).Error
	return out, translate(err, "find projects")
}

func (s projectStore) ByIDs(ctx context.Context, ids []int64) (map[int64]*store.Project, error) {
	return cachedByIDs(ctx, s.d, ids, projectIDKey, tProjects|tRepoRows, cloneProject, func(pr *store.Project) int64 { return pr.ID }, nil,
		rowsByID[*store.Project](ctx, s.d, "find projects"))
}

func projectIDKey(id int64) string { return "project:" + strconv.FormatInt(id, 10) }

func cloneProject(pr *store.Project) *store.Project {
	c := *pr
	c.ClosedAt = cloneTime(pr.ClosedAt)
	return &c
}

func (s projectStore) Update(ctx context.Context, pr *store.Project) error {
	res := s.d.conn(ctx).Select("*").Omit("created_at", "repo_id", "creator_id").Updates(pr)
	return affected(res, "update project")
}

func (s projectStore) Delete(ctx context.Context, id int64) error {
	res := s.d.conn(ctx).Delete(&store.Project{}, id)
	return affected(res, "delete project")
}

func (s projectStore) List(ctx context.Context, repoID int64, closed *bool, p store.Page) ([]*store.Project, int64, error) {
	db := s.d.conn(ctx).Model(&store.Project{}).Where("repo_id = ?", repoID)
	if closed != nil {
		db = db.Where("is_closed = ?", *closed)
	}
	var total int64
	if err := db.Count(&total).Error; err != nil {
		return nil, 0, translate(err, "count projects")
	}
	out, err := readPage[store.Project](db.Select("projects.*"), listOrder{{"projects.id", false}}, p, total)
	return out, total, translate(err, "list projects")
}

func (s projectStore) Counts(ctx context.Context, projectIDs []int64) (map[int64]store.ProjectCounts, error) {
	out := make(map[int64]store.ProjectCounts, len(projectIDs))
	if len(projectIDs) == 0 {
		return out, nil
	}
	var rows []struct {
		ProjectID int64
		Issues    int64
		Closed    int64
	}
	err := s.d.conn(ctx).Table("project_issues").
		Select("project_issues.project_id, COUNT(*) AS issues, SUM(CASE WHEN issues.is_closed THEN 1 ELSE 0 END) AS closed").
		Joins("JOIN issues ON issues.id = project_issues.issue_id").
		Where("project_issues.project_id IN ?", projectIDs).Group("project_issues.project_id").Scan(&rows).Error
	if err != nil {
		return nil, translate(err, "count project issues")
	}
	for _, r := range rows {
		out[r.ProjectID] = store.ProjectCounts{Issues: r.Issues, Closed: r.Closed}
	}
	return out, nil
}

func (s projectStore) ForIssues(ctx context.Context, issueIDs []int64) (map[int64][]*store.Project, error) {
	out := map[int64][]*store.Project{}
	if len(issueIDs) == 0 {
		return out, nil
	}
	var rows []struct {
		store.Project
		IssueID int64
	}
	err := s.d.conn(ctx).Table("projects").Select("projects.*, project_issues.issue_id").
		Joins("JOIN project_issues ON project_issues.project_id = projects.id").
		Where("project_issues.issue_id IN ?", issueIDs).Order("projects.id").Scan(&rows).Error
	if err != nil {
		return nil, translate(err, "list issue projects")
	}
	for i := range rows {
		pr := rows[i].Project
		out[rows[i].IssueID] = append(out[rows[i].IssueID], &pr)
	}
	return out, nil
}

func (s projectStore) SetIssueProjects(ctx context.Context, issueID int64, projectIDs []int64) error {
	db := s.d.conn(ctx)
	if err := db.Where("issue_id = ?", issueID).Delete(&projectIssue{}).Error; err != nil {
		return translate(err, "clear issue projects")
	}
	if len(projectIDs) == 0 {
		return nil
	}
	rows := make([]projectIssue, 0, len(projectIDs))
	for _, id := range projectIDs {
		rows = append(rows, projectIssue{ProjectID: id, IssueID: issueID})
	}
	return translateRef(db.Clauses(onConflictIgnore).Create(&rows).Error, "link issue to projects")
}
