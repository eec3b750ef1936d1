package sqlstore

import (
	"context"
	"time"

	"gorm.io/gorm"

	"repohost/store"
)

type commentStore struct{ d *DB }

func (s commentStore) Create(ctx context.Context, c *store.Comment) error {
	return translateRef(s.d.conn(ctx).Create(c).Error, "create comment")
}

func (s commentStore) FindByID(ctx context.Context, id int64) (*store.Comment, error) {
	var c store.Comment
	if err := s.d.conn(ctx).Take(&c, id).Error; err != nil {
		return nil, translate(err, "find comment")
	}
	return &c, nil
}

func (s commentStore) Update(ctx context.Context, c *store.Comment) error {
	// A map, so that the caller's time is written: with a struct GORM
	// writes its own clock's time into updated_at.
	res := s.d.conn(ctx).Model(&store.Comment{}).Where("id = ?", c.ID).Updates(map[string]any{"body": c.Body, "updated_at": c.UpdatedAt})
	return affected(res, "update comment")
}

func (s commentStore) Delete(ctx context.Context, id int64) error {
	res := s.d.conn(ctx).Delete(&store.Comment{}, id)
	return affected(res, "delete comment")
}

// commentOrder is an issue's conversation order: oldest first.
var commentOrder = listOrder{{"comments.created_at", false}, {"comments.id", false}}

func (s commentStore) List(ctx context.Context, issueID int64, since, before *time.Time, p store.Page) ([]*store.Comment, int64, error) {
	return s.list(ctx, s.d.conn(ctx).Model(&store.Comment{}).Where("comments.issue_id = ?", issueID), since, before, p)
}

func (s commentStore) ListByRepo(ctx context.Context, repoID int64, isPull *bool, since, before *time.Time, p store.Page) ([]*store.Comment, int64, error) {
	db := s.d.conn(ctx).Model(&store.Comment{}).Where("comments.repo_id = ?", repoID)
	if isPull != nil {
		// The repository's issues (or pull requests) through their index.
		db = db.Where("comments.issue_id IN (SELECT issues.id FROM issues WHERE issues.repo_id = ? AND issues.is_pull = ?)", repoID, *isPull)
	}
	return s.list(ctx, db, since, before, p)
}

// list is a page of the comments db selects, updated within the optional
// bounds, in conversation order.
func (s commentStore) list(ctx context.Context, db *gorm.DB, since, before *time.Time, p store.Page) ([]*store.Comment, int64, error) {
	if since != nil {
		db = db.Where("comments.updated_at >= ?", *since)
	}
	if before != nil {
		db = db.Where("comments.updated_at <= ?", *before)
	}
	var total int64
	if err := db.Count(&total).Error; err != nil {
		return nil, 0, translate(err, "count comments")
	}
	out, err := readPage[store.Comment](db.Select("comments.*"), commentOrder, p, total)
	return out, total, translate(err, "list comments")
}
