package sqlstore

import (
	"context"
	"time"

	"repohost/store"
)

type peopleStore struct{ d *DB }

func (d *DB) People() store.PeopleStore { return peopleStore{d} }

// link inserts a row of table unless it exists; on a new row each counter
// statement runs in the same transaction. It reports whether a row was
// inserted.
func (s peopleStore) link(ctx context.Context, what, insert string, args []any, counters func(ctx context.Context, delta int64) error) (bool, error) {
	var added bool
	err := s.d.WithTx(ctx, func(ctx context.Context) error {
		res := s.d.conn(ctx).Exec(insert+` ON CONFLICT DO NOTHING`, args...)
		if res.Error != nil {
			return translateRef(res.Error, what)
		}
		if added = res.RowsAffected == 1; !added {
			return nil
		}
		return counters(ctx, 1)
	})
	return added, err
}

// unlink deletes a row and, when one went, moves the counters back.
func (s peopleStore) unlink(ctx context.Context, what, del string, args []any, counters func(ctx context.Context, delta int64) error) (bool, error) {
	var removed bool
	err := s.d.WithTx(ctx, func(ctx context.Context) error {
		res := s.d.conn(ctx).Exec(del, args...)
		if res.Error != nil {
			return translate(res.Error, what)
		}
		if removed = res.RowsAffected == 1; !removed {
			return nil
		}
		return counters(ctx, -1)
	})
	return removed, err
}

func (s peopleStore) starCounters(userID, repoID int64) func(context.Context, int64) error {
	return func(ctx context.Context, delta int64) error {
		// A counter write: it retires the cached repository, not every one.
		if err := s.d.conn(counterWrite(ctx, repoID)).Exec(
			`UPDATE repositories SET num_stars = num_stars + ? WHERE id = ?`, delta, repoID).Error; err != nil {
			return translate(err, "count stars")
		}
		return translate(s.d.conn(ctx).Exec(`UPDATE users SET num_stars = num_stars + ? WHERE id = ?`, delta, userID).Error,
			"count starred repositories")
	}
}

func (s peopleStore) Star(ctx context.Context, userID, repoID int64, at time.Time) (bool, error) {
	return s.link(ctx, "star repository", `INSERT INTO stars (user_id, repo_id, created_at) VALUES (?, ?, ?)`,
		[]any{userID, repoID, at}, s.starCounters(userID, repoID))
}

func (s peopleStore) Unstar(ctx context.Context, userID, repoID int64) (bool, error) {
	return s.unlink(ctx, "unstar repository", `DELETE FROM stars WHERE user_id = ? AND repo_id = ?`,
		[]any{userID, repoID}, s.starCounters(userID, repoID))
}

func (s peopleStore) IsStarred(ctx context.Context, userID, repoID int64) (bool, error) {
	return s.exists(ctx, "check star", `SELECT COUNT(*) FROM stars WHERE user_id = ? AND repo_id = ?`, userID, repoID)
}

func (s peopleStore) UnstarOwnedBy(ctx context.Context, userID, ownerID int64) (int64, error) {
	return s.d.undoOwnedBy(ctx, "stars", userID, ownerID, func(ctx context.Context, repoID int64) (bool, error) {
		return s.Unstar(ctx, userID, repoID)
	})
}

// undoOwnedBy runs undo (an unstar, an unwatch) on each repository of
// ownerID that userID has a row of table (stars, watches) for, in one
// transaction, so that each goes through the single-row path that keeps
// its counter exact; it returns how many undo removed.
func (d *DB) undoOwnedBy(ctx context.Context, table string, userID, ownerID int64, undo func(context.Context, int64) (bool, error)) (int64, error) {
	var n int64
	err := d.WithTx(ctx, func(ctx context.Context) error {
		var ids []int64
		if err := d.conn(ctx).Raw(`SELECT repo_id FROM `+table+` WHERE user_id = ? AND repo_id IN
			(SELECT id FROM repositories WHERE owner_id = ?) ORDER BY repo_id`, userID, ownerID).Scan(&ids).Error; err != nil {
			return translate(err, "list "+table)
		}
		for _, id := range ids {
			ok, err := undo(ctx, id)
			if err != nil {
				return err
			}
			if ok {
				n++
			}
		}
		return nil
	})
	return n, err
}

func (s peopleStore) exists(ctx context.Context, what, query string, args ...any) (bool, error) {
	var n int64
	if err := s.d.conn(ctx).Raw(query, args...).Scan(&n).Error; err != nil {
		return false, translate(err, what)
	}
	return n > 0, nil
}

func (s peopleStore) followCounters(userID, followID int64) func(context.Context, int64) error {
	return func(ctx context.Context, delta int64) error {
		// In id order, so two opposite follows lock the rows alike.
		a, b := userID, followID
		colA, colB := "num_following", "num_followers"
		if a > b {
			a, b, colA, colB = b, a, colB, colA
		}
		if err := s.d.conn(ctx).Exec(`UPDATE users SET `+colA+` = `+colA+` + ? WHERE id = ?`, delta, a).Error; err != nil {
			return translate(err, "count follows")
		}
		return translate(s.d.conn(ctx).Exec(`UPDATE users SET `+colB+` = `+colB+` + ? WHERE id = ?`, delta, b).Error, "count follows")
	}
}

func (s peopleStore) Follow(ctx context.Context, userID, followID int64, at time.Time) (bool, error) {
	return s.link(ctx, "follow user", `INSERT INTO follows (user_id, follow_id, created_at) VALUES (?, ?, ?)`,
		[]any{userID, followID, at}, s.followCounters(userID, followID))
}

func (s peopleStore) Unfollow(ctx context.Context, userID, followID int64) (bool, error) {
	return s.unlink(ctx, "unfollow user", `DELETE FROM follows WHERE user_id = ? AND follow_id = ?`,
		[]any{userID, followID}, s.followCounters(userID, followID))
}

func (s peopleStore) IsFollowing(ctx context.Context, userID, followID int64) (bool, error) {
	return s.exists(ctx, "check follow", `SELECT COUNT(*) FROM follows WHERE user_id = ? AND follow_id = ?`, userID, followID)
}

func (s peopleStore) Block(ctx context.Context, b *store.UserBlock) (bool, error) {
	res := s.d.conn(ctx).Exec(`INSERT INTO user_blocks (blocker_id, blockee_id, note, created_at) VALUES (?, ?, ?, ?)
		ON CONFLICT DO NOTHING`, b.BlockerID, b.BlockeeID, b.Note, b.CreatedAt)
	if res.Error != nil {
		return false, translateRef(res.Error, "block user")
	}
	return res.RowsAffected == 1, nil
}

func (s peopleStore) Unblock(ctx context.Context, blockerID, blockeeID int64) (bool, error) {
	res := s.d.conn(ctx).Exec(`DELETE FROM user_blocks WHERE blocker_id = ? AND blockee_id = ?`, blockerID, blockeeID)
	return res.RowsAffected == 1, translate(res.Error, "unblock user")
}

func (s peopleStore) IsBlocked(ctx context.Context, a, b int64) (bool, error) {
	return s.exists(ctx, "check block", `SELECT COUNT(*) FROM user_blocks WHERE
		(blocker_id = ? AND blockee_id = ?) OR (blocker_id = ? AND blockee_id = ?)`, a, b, b, a)
}

func (s peopleStore) FindBlock(ctx context.Context, blockerID, blockeeID int64) (*store.UserBlock, error) {
	var b store.UserBlock
	err := s.d.conn(ctx).Where("blocker_id = ? AND blockee_id = ?", blockerID, blockeeID).Take(&b).Error
	if err != nil {
		return nil, translate(err, "find block")
	}
	return &b, nil
}

func (s peopleStore) Ties(ctx context.Context, userID, ownerID int64) (*store.Ties, error) {
	var t store.Ties
	conn := s.d.conn(ctx)
	if err := conn.Raw(`SELECT i.repo_id, i.number AS "index" FROM issue_assignees a
		JOIN issues i ON i.id = a.issue_id JOIN repositories r ON r.id = i.repo_id
		WHERE a.assignee_id = ? AND r.owner_id = ? ORDER BY i.repo_id, i.number`, userID, ownerID).Scan(&t.Assigned).Error; err != nil {
		return nil, translate(err, "list assignments")
	}
	if err := conn.Raw(`SELECT c.repo_id FROM collaborations c JOIN repositories r ON r.id = c.repo_id
		WHERE c.user_id = ? AND r.owner_id = ? ORDER BY c.repo_id`, userID, ownerID).Scan(&t.Collaborations).Error; err != nil {
		return nil, translate(err, "list collaborations")
	}
	if err := conn.Raw(`SELECT t.repo_id FROM repo_transfers t JOIN repositories r ON r.id = t.repo_id
		WHERE t.recipient_id = ? AND (r.owner_id = ? OR t.doer_id = ?) ORDER BY t.repo_id`, userID, ownerID, ownerID).Scan(&t.Transfers).Error; err != nil {
		return nil, translate(err, "list transfers")
	}
	return &t, nil
}
