package sqlstore

import (
	"context"

	"repohost/store"
)

type eventStore struct{ d *DB }

func (s eventStore) Append(ctx context.Context, e *store.Event) error {
	return translate(s.d.conn(ctx).Create(e).Error, "append event")
}

func (s eventStore) ListAfter(ctx context.Context, afterID int64, limit int) ([]*store.Event, error) {
	var out []*store.Event
	err := s.d.conn(ctx).Where("id > ?", afterID).Order("id").Limit(limit).Find(&out).Error
	return out, translate(err, "list events")
}
