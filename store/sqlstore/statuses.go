package sqlstore

import (
	"context"
	"hash/fnv"

	"gorm.io/gorm"

	"repohost/store"
)

func (d *DB) Statuses() store.CommitStatusStore { return statusStore{d} }

type statusStore struct{ d *DB }

// Create numbers s after its commit's last status. It must run in a
// transaction: on PostgreSQL an advisory lock on the commit keeps two
// concurrent reports from taking the same index (SQLite's writer lock
// already does); the unique index stands behind both.
func (s statusStore) Create(ctx context.Context, st *store.CommitStatus) error {
	db, err := s.d.lockingConn(ctx)
	if err != nil {
		return err
	}
	if s.d.usesPostgres() {
		h := fnv.New64a()
		h.Write([]byte(st.SHA))
		key := int64(h.Sum64()>>1) ^ st.RepoID
		if err := db.Exec(`SELECT pg_advisory_xact_lock(?)`, key).Error; err != nil {
			return translate(err, "lock a commit's statuses")
		}
	}
	var last int64
	if err := s.d.conn(ctx).Model(&store.CommitStatus{}).Where("repo_id = ? AND sha = ?", st.RepoID, st.SHA).
		Select("COALESCE(MAX(seq), 0)").Scan(&last).Error; err != nil {
		return translate(err, "number a commit status")
	}
	st.Index = last + 1
	return translate(s.d.conn(ctx).Create(st).Error, "create commit status")
}

func (s statusStore) FindByID(ctx context.Context, repoID, id int64) (*store.CommitStatus, error) {
	var st store.CommitStatus
	if err := s.d.conn(ctx).Where("repo_id = ? AND id = ?", repoID, id).Take(&st).Error; err != nil {
		return nil, translate(err, "find commit status")
	}
	return &st, nil
}

func statusOrder(sort string) string {
	switch sort {
	case store.StatusSortOldest:
		return "created_at ASC, id ASC"
	case store.StatusSortRecentUpdate:
		return "updated_at DESC, id DESC"
	case store.StatusSortLeastUpdate:
		return "updated_at ASC, id ASC"
	case store.StatusSortLeastIndex:
		return "seq DESC"
	case store.StatusSortHighestIndex:
		return "seq ASC"
	}
	return "created_at DESC, id DESC"
}

func (s statusStore) List(ctx context.Context, f store.StatusFilter, p store.Page) ([]*store.CommitStatus, int64, error) {
	q := func() *gorm.DB {
		q := s.d.conn(ctx).Model(&store.CommitStatus{}).Where("repo_id = ? AND sha = ?", f.RepoID, f.SHA)
		if f.State != "" {
			q = q.Where("state = ?", f.State)
		}
		return q
	}
	var total int64
	if err := q().Count(&total).Error; err != nil {
		return nil, 0, translate(err, "count commit statuses")
	}
	out := []*store.CommitStatus{}
	if total == 0 || p.Offset >= int(total) {
		return out, total, nil
	}
	err := q().Order(statusOrder(f.Sort)).Offset(p.Offset).Limit(p.Limit).Find(&out).Error
	return out, total, translate(err, "list commit statuses")
}

func (s statusStore) Latest(ctx context.Context, repoID int64, sha string, p store.Page) ([]*store.CommitStatus, int64, error) {
	newest := s.d.conn(ctx).Model(&store.CommitStatus{}).Select("MAX(id)").
		Where("repo_id = ? AND sha = ?", repoID, sha).Group("context")
	var total int64
	if err := s.d.conn(ctx).Table("(?) AS c", newest).Count(&total).Error; err != nil {
		return nil, 0, translate(err, "count commit status contexts")
	}
	out := []*store.CommitStatus{}
	if total == 0 || p.Offset >= int(total) {
		return out, total, nil
	}
	err := s.d.conn(ctx).Where("id IN (?)", newest).Order("id DESC").Offset(p.Offset).Limit(p.Limit).Find(&out).Error
	return out, total, translate(err, "list the latest commit statuses")
}

func (s statusStore) ScheduleMerge(ctx context.Context, m *store.AutoMerge) error {
	return translate(s.d.conn(ctx).Create(m).Error, "schedule a merge")
}

func (s statusStore) FindScheduledMerge(ctx context.Context, issueID int64) (*store.AutoMerge, error) {
	var m store.AutoMerge
	if err := s.d.conn(ctx).Where("issue_id = ?", issueID).Take(&m).Error; err != nil {
		return nil, translate(err, "find a scheduled merge")
	}
	return &m, nil
}

func (s statusStore) ScheduledMerges(ctx context.Context, repoID int64) ([]*store.AutoMerge, error) {
	out := []*store.AutoMerge{}
	err := s.d.conn(ctx).Where("repo_id = ?", repoID).Order("id").Find(&out).Error
	return out, translate(err, "list scheduled merges")
}

func (s statusStore) DeleteScheduledMerge(ctx context.Context, issueID int64) (bool, error) {
	res := s.d.conn(ctx).Where("issue_id = ?", issueID).Delete(&store.AutoMerge{})
	return res.RowsAffected > 0, translate(res.Error, "delete a scheduled merge")
}
