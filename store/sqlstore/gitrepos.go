package sqlstore

import (
	"context"

	"repohost/store"
)

type gitRepoStore struct{ d *DB }

func (s gitRepoStore) MarkPushed(ctx context.Context, repoID int64, branch string) error {
	updates := map[string]any{"is_empty": false}
	if branch != "" {
		updates["default_branch"] = branch
	}
	err := s.d.conn(ctx).Model(&store.Repository{}).Where("id = ?", repoID).Updates(updates).Error
	return translate(err, "mark repository pushed")
}

func (s gitRepoStore) SetSize(ctx context.Context, repoID, size int64) error {
	// Like a counter, the size changes no other column (updated_at
	// included, as the reference's NoAutoTime), so only this
	// repository's cached rows are retired.
	err := s.d.conn(counterWrite(ctx, repoID)).Exec(`UPDATE repositories SET size = ? WHERE id = ?`, size, repoID).Error
	return translate(err, "set repository size")
}

func (s gitRepoStore) RenameDefaultBranch(ctx context.Context, repoID int64, from, to string) error {
	err := s.d.conn(ctx).Model(&store.Repository{}).Where("id = ? AND default_branch = ?", repoID, from).
		Update("default_branch", to).Error
	return translate(err, "rename default branch")
}

// unadoptedChunk bounds the IN lists, far below every driver's limit on
// bound parameters.
const unadoptedChunk = 500

func (s gitRepoStore) Unadopted(ctx context.Context, dirs []store.RepoDir) ([]store.RepoDir, error) {
	owners := map[string]bool{}
	var ownerNames []string
	for _, d := range dirs {
		if !owners[d.Owner] {
			owners[d.Owner] = true
			ownerNames = append(ownerNames, d.Owner)
		}
	}
	type row struct {
		Owner string
		Name  string
	}
	existingOwner := map[string]bool{}
	taken := map[store.RepoDir]bool{}
	for start := 0; start < len(ownerNames); start += unadoptedChunk {
		chunk := ownerNames[start:min(start+unadoptedChunk, len(ownerNames))]
		var found []string
		if err := s.d.conn(ctx).Model(&store.User{}).Where("lower_name IN ?", chunk).Pluck("lower_name", &found).Error; err != nil {
			return nil, translate(err, "find owners")
		}
		for _, o := range found {
			existingOwner[o] = true
		}
		var rows []row
		err := s.d.conn(ctx).Table("repositories").Select("users.lower_name AS owner, repositories.lower_name AS name").
			Joins("JOIN users ON users.id = repositories.owner_id").Where("users.lower_name IN ?", chunk).Scan(&rows).Error
		if err != nil {
			return nil, translate(err, "find repositories")
		}
		for _, r := range rows {
			taken[store.RepoDir{Owner: r.Owner, Name: r.Name}] = true
		}
	}
	out := make([]store.RepoDir, 0, len(dirs))
	for _, d := range dirs {
		if existingOwner[d.Owner] && !taken[d] {
			out = append(out, d)
		}
	}
	return out, nil
}
