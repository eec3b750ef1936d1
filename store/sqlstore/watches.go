package sqlstore

import (
	"context"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"repohost/store"
)

func (d *DB) Watches() store.WatchStore { return watchStore{d} }

type watchStore struct{ d *DB }

// adjustWatches moves repoID's watcher count by delta, in SQL so that
// concurrent watches each count; only the counter moves, so only that
// repository's cached rows retire.
func (s watchStore) adjustWatches(ctx context.Context, repoID, delta int64) error {
	err := s.d.conn(counterWrite(ctx, repoID)).Exec(
		"UPDATE repositories SET num_watches = num_watches + ? WHERE id = ?", delta, repoID).Error
	return translate(err, "count watchers")
}

func (s watchStore) Watch(ctx context.Context, userID, repoID int64) (bool, error) {
	added := false
	err := s.d.WithTx(ctx, func(ctx context.Context) error {
		res := s.d.conn(ctx).Clauses(clause.OnConflict{DoNothing: true}).
			Create(&store.RepoWatch{UserID: userID, RepoID: repoID, CreatedAt: time.Now().UTC()})
		if res.Error != nil {
			return translate(res.Error, "watch repository")
		}
		if added = res.RowsAffected == 1; !added {
			return nil
		}
		return s.adjustWatches(ctx, repoID, 1)
	})
	return added, err
}

func (s watchStore) Unwatch(ctx context.Context, userID, repoID int64) (bool, error) {
	removed := false
	err := s.d.WithTx(ctx, func(ctx context.Context) error {
		res := s.d.conn(ctx).Where("user_id = ? AND repo_id = ?", userID, repoID).Delete(&store.RepoWatch{})
		if res.Error != nil {
			return translate(res.Error, "unwatch repository")
		}
		if removed = res.RowsAffected == 1; !removed {
			return nil
		}
		return s.adjustWatches(ctx, repoID, -1)
	})
	return removed, err
}

func (s watchStore) UnwatchOwnedBy(ctx context.Context, userID, ownerID int64) (int64, error) {
	return s.d.undoOwnedBy(ctx, "watches", userID, ownerID, func(ctx context.Context, repoID int64) (bool, error) {
		return s.Unwatch(ctx, userID, repoID)
	})
}

func (s watchStore) WatchNew(ctx context.Context, repoID, orgID int64, userIDs ...int64) (int64, error) {
	var n int64
	err := s.d.WithTx(ctx, func(ctx context.Context) error {
		now := time.Now().UTC()
		ids := append([]int64(nil), userIDs...)
		if orgID > 0 {
			var members []int64
			err := s.d.conn(ctx).Raw(`SELECT DISTINCT tu.user_id FROM team_users tu JOIN teams t ON t.id = tu.team_id
				WHERE t.org_id = ? AND t.includes_all_repositories = ?`, orgID, true).Scan(&members).Error
			if err != nil {
				return translate(err, "watch repository")
			}
			ids = append(ids, members...)
		}
		rows := make([]store.RepoWatch, 0, len(ids))
		for _, id := range ids {
			if id > 0 {
				rows = append(rows, store.RepoWatch{UserID: id, RepoID: repoID, CreatedAt: now})
			}
		}
		if len(rows) > 0 {
			err := s.d.conn(ctx).Clauses(clause.OnConflict{DoNothing: true}).CreateInBatches(&rows, 200).Error
			if err != nil {
				return translate(err, "watch repository")
			}
		}
		// The repository is new: no other transaction can have
		// counted its watchers.
		err := s.d.conn(counterWrite(ctx, repoID)).Exec(
			"UPDATE repositories SET num_watches = (SELECT COUNT(*) FROM watches WHERE repo_id = ?) WHERE id = ?",
			repoID, repoID).Error
		if err != nil {
			return translate(err, "count watchers")
		}
		return translate(s.d.conn(ctx).Raw("SELECT num_watches FROM repositories WHERE id = ?", repoID).Scan(&n).Error,
			"count watchers")
	})
	return n, err
}

func (s watchStore) FindWatch(ctx context.Context, userID, repoID int64) (*store.RepoWatch, error) {
	var w store.RepoWatch
	if err := s.d.conn(ctx).Where("user_id = ? AND repo_id = ?", userID, repoID).Take(&w).Error; err != nil {
		return nil, translate(err, "find watch")
	}
	return &w, nil
}

func (s watchStore) ListWatchers(ctx context.Context, repoID int64, p store.Page) ([]*store.User, int64, error) {
	var total int64
	if err := s.d.conn(ctx).Model(&store.RepoWatch{}).Where("repo_id = ?", repoID).Count(&total).Error; err != nil {
		return nil, 0, translate(err, "count watchers")
	}
	db := s.d.conn(ctx).Model(&store.User{}).Select("users.*").
		Joins("JOIN watches w ON w.user_id = users.id").Where("w.repo_id = ?", repoID)
	out, err := readPage[store.User](db, parseOrder("w.user_id ASC"), p, total)
	return out, total, translate(err, "list watchers")
}

func (s watchStore) WatcherIDs(ctx context.Context, repoID int64) ([]int64, error) {
	var ids []int64
	err := s.d.conn(ctx).Model(&store.RepoWatch{}).Where("repo_id = ?", repoID).Order("user_id").Pluck("user_id", &ids).Error
	return ids, translate(err, "list watchers")
}

func (s watchStore) SetIssueWatch(ctx context.Context, userID, issueID int64, watching bool) error {
	now := time.Now().UTC()
	err := s.d.conn(ctx).Clauses(clause.OnConflict{
		Columns:   []clause.Column{{Name: "user_id"}, {Name: "issue_id"}},
		DoUpdates: clause.AssignmentColumns([]string{"is_watching", "updated_at"}),
	}).Create(&store.IssueWatch{UserID: userID, IssueID: issueID, IsWatching: watching, CreatedAt: now, UpdatedAt: now}).Error
	return translate(err, "subscribe")
}

func (s watchStore) FindIssueWatch(ctx context.Context, userID, issueID int64) (*store.IssueWatch, error) {
	var w store.IssueWatch
	if err := s.d.conn(ctx).Where("user_id = ? AND issue_id = ?", userID, issueID).Take(&w).Error; err != nil {
		return nil, translate(err, "find subscription")
	}
	return &w, nil
}

// participants selects the ids of an issue's participants (poster,
// commenters, assignees, mentioned users), each by the issue's index of
// its table; its arguments are the issue's id four times.
const participants = `SELECT poster_id FROM issues WHERE id = ?
	UNION SELECT poster_id FROM comments WHERE issue_id = ?
	UNION SELECT assignee_id FROM issue_assignees WHERE issue_id = ?
	UNION SELECT user_id FROM issue_mentions WHERE issue_id = ?`

func (s watchStore) IsParticipant(ctx context.Context, userID int64, issue *store.Issue) (bool, error) {
	if issue.PosterID == userID {
		return true, nil
	}
	var n int64
	err := s.d.conn(ctx).Raw(`SELECT
		(SELECT COUNT(*) FROM issue_assignees WHERE issue_id = ? AND assignee_id = ?) +
		(SELECT COUNT(*) FROM issue_mentions WHERE issue_id = ? AND user_id = ?) +
		(SELECT COUNT(*) FROM (SELECT 1 FROM comments WHERE issue_id = ? AND poster_id = ? LIMIT 1) c)`,
		issue.ID, userID, issue.ID, userID, issue.ID, userID).Scan(&n).Error
	return n > 0, translate(err, "find participant")
}

// subscribers keeps the users subscribed to issue: those who chose to and
// the participants, less those who chose not to.
func (s watchStore) subscribers(db *gorm.DB, issue *store.Issue) *gorm.DB {
	id := issue.ID
	return db.Where("users.id IN ("+participants+` UNION SELECT user_id FROM issue_watches WHERE issue_id = ? AND is_watching = ?)
		AND users.id NOT IN (SELECT user_id FROM issue_watches WHERE issue_id = ? AND is_watching = ?)`,
		id, id, id, id, id, true, id, false)
}

func (s watchStore) ListIssueSubscribers(ctx context.Context, issue *store.Issue, p store.Page) ([]*store.User, int64, error) {
	var total int64
	if err := s.subscribers(s.d.conn(ctx).Model(&store.User{}), issue).Count(&total).Error; err != nil {
		return nil, 0, translate(err, "count subscribers")
	}
	out, err := readPage[store.User](s.subscribers(s.d.conn(ctx).Model(&store.User{}), issue),
		parseOrder("users.id ASC"), p, total)
	return out, total, translate(err, "list subscribers")
}

// IssueAudience is one statement: the notification consumer asks for
// every event on an issue.
func (s watchStore) IssueAudience(ctx context.Context, issueID int64) (*store.IssueAudience, error) {
	var rows []struct {
		RepoID int64
		IsPull bool
		UserID *int64
	}
	id := issueID
	err := s.d.conn(ctx).Raw(`SELECT i.repo_id, i.is_pull, a.id AS user_id FROM issues i LEFT JOIN (
			SELECT users.id FROM users WHERE users.id IN (`+participants+`
				UNION SELECT user_id FROM issue_watches WHERE issue_id = ? AND is_watching = ?
				UNION SELECT user_id FROM watches WHERE repo_id = (SELECT repo_id FROM issues WHERE id = ?))
			AND users.id NOT IN (SELECT user_id FROM issue_watches WHERE issue_id = ? AND is_watching = ?)
		) a ON 1 = 1
		WHERE i.id = ?
		ORDER BY a.id`, id, id, id, id, id, true, id, id, false, id).Scan(&rows).Error
	if err != nil {
		return nil, translate(err, "list the audience of an issue")
	}
	if len(rows) == 0 {
		return nil, store.ErrNotFound
	}
	out := &store.IssueAudience{RepoID: rows[0].RepoID, IsPull: rows[0].IsPull}
	for _, r := range rows {
		if r.UserID != nil {
			out.UserIDs = append(out.UserIDs, *r.UserID)
		}
	}
	return out, nil
}
