package sqlstore

import (
	"context"
)

// CopyLabels copies the labels in one INSERT ... SELECT, so a template with
// many labels costs one statement. Label ids of the copy are new; issue
// links are not copied (the new repository has no issues).
func (s gitRepoStore) CopyLabels(ctx context.Context, fromRepoID, toRepoID int64) error {
	now := s.d.clock.Now()
	err := s.d.conn(ctx).Exec(`INSERT INTO labels (repo_id, name, color, description, exclusive, archived_at, created_at, updated_at)
		SELECT ?, name, color, description, exclusive, archived_at, ?, ? FROM labels WHERE repo_id = ? ORDER BY id`,
		toRepoID, now, now, fromRepoID).Error
	return translate(err, "copy labels")
}
