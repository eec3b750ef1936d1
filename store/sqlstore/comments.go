package sqlstore

import (
	"context"
	"time"

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
	res := s.d.conn(ctx).Model(c).Select("body", "updated_at").Updates(c)
	return affected(res, "update comment")
}

func (s commentStore) Delete(ctx context.Context, id int64) error {
	res := s.d.conn(ctx).Delete(&store.Comment{}, id)
	return affected(res, "delete comment")
}

// commentOrder is an issue's conversation order: oldest first.
var commentOrder = listOrder{{"comments.created_at", false}, {"comments.id", false}}

func (s commentStore) List(ctx context.Context, issueID int64, since, before *time.Time, p store.Page) ([]*store.Comment, int64, error) {
	db := s.d.conn(ctx).Model(&store.Comment{}).Where("issue_id = ?", issueID)
	if since != nil {
		db = db.Where("updated_at >= ?", *since)
	}
	if before != nil {
		db = db.Where("updated_at <= ?", *before)
	}
	var total int64
	if err := db.Count(&total).Error; err != nil {
		return nil, 0, translate(err, "count comments")
	}
	out, err := readPage[store.Comment](db.Select("comments.*"), commentOrder, p, total)
	return out, total, translate(err, "list comments")
}
