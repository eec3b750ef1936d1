package sqlstore

import (
	"context"

	"repohost/store"
)

type reactionStore struct{ d *DB }

func (s reactionStore) Create(ctx context.Context, r *store.Reaction) (bool, error) {
	// ON CONFLICT DO NOTHING instead of catching the unique violation: on
	// PostgreSQL a failed statement would abort an enclosing transaction,
	// and concurrent identical reactions must all succeed (one creates,
	// the others find it).
	res := s.d.conn(ctx).Clauses(onConflictIgnore).Create(r)
	if res.Error != nil {
		return false, translateRef(res.Error, "create reaction")
	}
	if res.RowsAffected == 1 {
		return true, nil
	}
	var existing store.Reaction
	err := s.d.conn(ctx).Where("issue_id = ? AND comment_id = ? AND user_id = ? AND type = ? AND original_author = ?",
		r.IssueID, r.CommentID, r.UserID, r.Type, r.OriginalAuthor).Take(&existing).Error
	if err != nil {
		return false, translate(err, "find reaction")
	}
	*r = existing
	return false, nil
}

func (s reactionStore) Delete(ctx context.Context, issueID, commentID, userID int64, typ string) error {
	// Only the user's own reaction: those a migration brought in the
	// name of someone elsewhere (original_author) stay.
	err := s.d.conn(ctx).Where("issue_id = ? AND comment_id = ? AND user_id = ? AND type = ? AND original_author = ''",
		issueID, commentID, userID, typ).Delete(&store.Reaction{}).Error
	return translate(err, "delete reaction")
}

func (s reactionStore) DeleteByComment(ctx context.Context, commentID int64) error {
	return translate(s.d.conn(ctx).Where("comment_id = ?", commentID).Delete(&store.Reaction{}).Error, "delete reactions")
}

func (s reactionStore) List(ctx context.Context, issueID, commentID int64, p store.Page) ([]*store.Reaction, int64, error) {
	db := s.d.conn(ctx).Model(&store.Reaction{}).Where("issue_id = ? AND comment_id = ?", issueID, commentID)
	var total int64
	if err := db.Count(&total).Error; err != nil {
		return nil, 0, translate(err, "count reactions")
	}
	out, err := readPage[store.Reaction](db.Select("reactions.*"),
		listOrder{{"reactions.created_at", false}, {"reactions.id", false}}, p, total)
	return out, total, translate(err, "list reactions")
}
