package sqlstore

import (
	"context"

	"repohost/store"
)

type timeStore struct{ d *DB }

func (s timeStore) Create(ctx context.Context, t *store.TrackedTime) error {
	return translateRef(s.d.conn(ctx).Create(t).Error, "track time")
}

func (s timeStore) FindByID(ctx context.Context, id int64) (*store.TrackedTime, error) {
	var t store.TrackedTime
	if err := s.d.conn(ctx).Take(&t, id).Error; err != nil {
		return nil, translate(err, "find tracked time")
	}
	return &t, nil
}

func (s timeStore) Delete(ctx context.Context, id int64) error {
	res := s.d.conn(ctx).Delete(&store.TrackedTime{}, id)
	return affected(res, "delete tracked time")
}

func (s timeStore) DeleteByIssueUser(ctx context.Context, issueID, userID int64) error {
	err := s.d.conn(ctx).Where("issue_id = ? AND user_id = ?", issueID, userID).Delete(&store.TrackedTime{}).Error
	return translate(err, "reset tracked time")
}

func (s timeStore) List(ctx context.Context, f store.TimeFilter, p store.Page) ([]*store.TrackedTime, int64, error) {
	db := s.d.conn(ctx).Model(&store.TrackedTime{})
	if f.IssueID > 0 {
		db = db.Where("tracked_times.issue_id = ?", f.IssueID)
	}
	if f.RepoID > 0 {
		db = db.Where("tracked_times.issue_id IN (SELECT id FROM issues WHERE repo_id = ?)", f.RepoID)
	}
	if f.UserID > 0 {
		db = db.Where("tracked_times.user_id = ?", f.UserID)
	}
	if f.VisibleOnly {
		// Permission is checked when the data is read: time tracked in a
		// repository the user can no longer see disappears from the list.
		repos := s.d.conn(ctx).Table("repositories").Select("repositories.id").
			Where("repositories.has_issues = ? AND repositories.external_tracker_url = ? AND repositories.enable_time_tracker = ?",
				true, "", true)
		repos = visibleTo(repos, f.Viewer)
		db = db.Where("tracked_times.issue_id IN (SELECT id FROM issues WHERE repo_id IN (?))", repos)
	}
	if f.CreatedSince != nil {
		db = db.Where("tracked_times.created_at >= ?", *f.CreatedSince)
	}
	if f.CreatedBefore != nil {
		db = db.Where("tracked_times.created_at <= ?", *f.CreatedBefore)
	}
	var total int64
	if err := db.Count(&total).Error; err != nil {
		return nil, 0, translate(err, "count tracked times")
	}
	out, err := readPage[store.TrackedTime](db.Select("tracked_times.*"),
		listOrder{{"tracked_times.created_at", false}, {"tracked_times.id", false}}, p, total)
	return out, total, translate(err, "list tracked times")
}
