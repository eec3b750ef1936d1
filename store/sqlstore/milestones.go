package sqlstore

import (
	"context"
	"database/sql"
	"strconv"

	"repohost/store"
)

type milestoneStore struct{ d *DB }

func (s milestoneStore) Create(ctx context.Context, m *store.Milestone) error {
	return translateRef(s.d.conn(ctx).Create(m).Error, "create milestone")
}

func (s milestoneStore) Find(ctx context.Context, repoID, id int64) (*store.Milestone, error) {
	var m store.Milestone
	if err := s.d.conn(ctx).Where("repo_id = ? AND id = ?", repoID, id).Take(&m).Error; err != nil {
		return nil, translate(err, "find milestone")
	}
	return &m, nil
}

func (s milestoneStore) FindByTitle(ctx context.Context, repoID int64, title string) (*store.Milestone, error) {
	var m store.Milestone
	err := s.d.conn(ctx).Where("repo_id = ? AND title = ?", repoID, title).Order("id").Take(&m).Error
	if err != nil {
		return nil, translate(err, "find milestone")
	}
	return &m, nil
}

func (s milestoneStore) FindByIDs(ctx context.Context, ids []int64) (map[int64]*store.Milestone, error) {
	return cachedByIDs(ctx, s.d, ids, milestoneIDKey, tMilestones|tRepoRows, cloneMilestone, func(m *store.Milestone) int64 { return m.ID }, nil,
		func(missing []int64) ([]*store.Milestone, error) {
			var found []*store.Milestone
			q := s.d.conn(ctx).Table("milestones").Select(milestoneColumns).Where("milestones.id IN ?", missing)
			if err := eachRow(q, func(rows *sql.Rows) error {
				m, err := scanMilestone(rows)
				found = append(found, m)
				return err
			}); err != nil {
				return nil, translate(err, "find milestones")
			}
			return found, nil
		})
}

func milestoneIDKey(id int64) string { return "milestone:" + strconv.FormatInt(id, 10) }

func cloneMilestone(m *store.Milestone) *store.Milestone {
	c := *m
	c.Deadline, c.ClosedAt = cloneTime(m.Deadline), cloneTime(m.ClosedAt)
	return &c
}

func (s milestoneStore) Update(ctx context.Context, m *store.Milestone) error {
	// The counters are left out: only atomic increments touch them, so an
	// edit racing with issue changes cannot write back a stale count.
	res := s.d.conn(ctx).Select("*").Omit("created_at", "repo_id", "num_issues", "num_closed_issues").Updates(m)
	return affected(res, "update milestone")
}

func (s milestoneStore) Delete(ctx context.Context, id int64) error {
	db := s.d.conn(ctx)
	if err := db.Model(&store.Issue{}).Where("milestone_id = ?", id).UpdateColumn("milestone_id", 0).Error; err != nil {
		return translate(err, "take issues out of milestone")
	}
	res := db.Delete(&store.Milestone{}, id)
	return affected(res, "delete milestone")
}

func (s milestoneStore) List(ctx context.Context, repoID int64, closed *bool, name string, p store.Page) ([]*store.Milestone, int64, error) {
	db := s.d.conn(ctx).Model(&store.Milestone{}).Where("repo_id = ?", repoID)
	if closed != nil {
		db = db.Where("is_closed = ?", *closed)
	}
	if name != "" {
		db = db.Where(`LOWER(title) LIKE ? ESCAPE '\'`, likePattern(name))
	}
	var total int64
	if err := db.Count(&total).Error; err != nil {
		return nil, 0, translate(err, "count milestones")
	}
	// Due dates first (soonest first), milestones without one last; the
	// expression is the one the index is built on.
	order := listOrder{{"(milestones.deadline IS NULL)", false}, {"milestones.deadline", false}, {"milestones.id", false}}
	out, err := readPage[store.Milestone](db.Select("milestones.*"), order, p, total)
	return out, total, translate(err, "list milestones")
}

func (s milestoneStore) AdjustCounts(ctx context.Context, id, total, closed int64) error {
	res := s.d.conn(ctx).Exec(`UPDATE milestones SET num_issues = num_issues + ?, num_closed_issues = num_closed_issues + ?
		WHERE id = ?`, total, closed, id)
	return affected(res, "count milestone issues")
}
