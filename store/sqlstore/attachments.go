package sqlstore

import (
	"context"

	"gorm.io/gorm"

	"repohost/store"
)

func (d *DB) ReleaseAttachments() store.ReleaseAttachmentStore { return releaseAttachmentStore{d} }

type releaseAttachmentStore struct{ d *DB }

func (s releaseAttachmentStore) Create(ctx context.Context, a *store.ReleaseAttachment) error {
	return translate(s.d.conn(ctx).Create(a).Error, "create release attachment")
}

func (s releaseAttachmentStore) FindByID(ctx context.Context, releaseID, id int64) (*store.ReleaseAttachment, error) {
	var a store.ReleaseAttachment
	if err := s.d.conn(ctx).Where("release_id = ? AND id = ?", releaseID, id).Take(&a).Error; err != nil {
		return nil, translate(err, "find release attachment")
	}
	return &a, nil
}

func (s releaseAttachmentStore) FindByUUID(ctx context.Context, uuid string) (*store.ReleaseAttachment, error) {
	var a store.ReleaseAttachment
	if err := s.d.conn(ctx).Where("uuid = ?", uuid).Take(&a).Error; err != nil {
		return nil, translate(err, "find release attachment")
	}
	return &a, nil
}

func (s releaseAttachmentStore) ListByRelease(ctx context.Context, releaseID int64, p store.Page) ([]*store.ReleaseAttachment, int64, error) {
	db := s.d.conn(ctx).Model(&store.ReleaseAttachment{}).Where("release_id = ?", releaseID)
	var total int64
	if err := db.Count(&total).Error; err != nil {
		return nil, 0, translate(err, "count release attachments")
	}
	out, err := readPage[store.ReleaseAttachment](db, listOrder{{"release_attachments.id", false}}, p, total)
	return out, total, translate(err, "list release attachments")
}

func (s releaseAttachmentStore) Delete(ctx context.Context, id int64) error {
	res := s.d.conn(ctx).Delete(&store.ReleaseAttachment{}, id)
	return affected(res, "delete release attachment")
}

func (s releaseAttachmentStore) CountDownload(ctx context.Context, id int64) error {
	err := s.d.conn(ctx).Model(&store.ReleaseAttachment{}).Where("id = ?", id).
		UpdateColumn("download_count", gorm.Expr("download_count + 1")).Error
	return translate(err, "count release attachment download")
}
