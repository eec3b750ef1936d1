package sqlstore

import (
	"context"
	"strings"
	"time"

	"gorm.io/gorm/clause"

	"repohost/store"
)

func (d *DB) Protections() store.ProtectionStore { return protectionStore{d} }
func (d *DB) GitRepos() store.GitRepoStore       { return gitRepoStore{d} }

type protectionStore struct{ d *DB }

// byPriority is the one order of rules: the list, matching and the
// reference all agree on it.
const byPriority = "priority ASC, id ASC"

func (s protectionStore) List(ctx context.Context, repoID int64, p store.Page) ([]*store.ProtectedBranch, int64, error) {
	db := s.d.conn(ctx).Model(&store.ProtectedBranch{}).Where("repo_id = ?", repoID)
	var total int64
	if err := db.Count(&total).Error; err != nil {
		return nil, 0, translate(err, "count branch protections")
	}
	out, err := readPage[store.ProtectedBranch](db, parseOrder(byPriority), p, total)
	return out, total, translate(err, "list branch protections")
}

func (s protectionStore) ListAll(ctx context.Context, repoID int64) ([]*store.ProtectedBranch, error) {
	var out []*store.ProtectedBranch
	err := s.d.conn(ctx).Where("repo_id = ?", repoID).Order(byPriority).Find(&out).Error
	return out, translate(err, "list branch protections")
}

func (s protectionStore) FindByName(ctx context.Context, repoID int64, ruleName string) (*store.ProtectedBranch, error) {
	var pb store.ProtectedBranch
	err := s.d.conn(ctx).Where("repo_id = ? AND rule_name = ?", repoID, ruleName).Take(&pb).Error
	if err != nil {
		return nil, translate(err, "find branch protection")
	}
	return &pb, nil
}

func (s protectionStore) Create(ctx context.Context, pb *store.ProtectedBranch) error {
	return s.d.WithTx(ctx, func(ctx context.Context) error {
		if pb.Priority == 0 {
			var max *int64
			err := s.d.conn(ctx).Model(&store.ProtectedBranch{}).Where("repo_id = ?", pb.RepoID).
				Select("MAX(priority)").Scan(&max).Error
			if err != nil {
				return translate(err, "next branch protection priority")
			}
			pb.Priority = 1
			if max != nil {
				pb.Priority = *max + 1
			}
		}
		return translate(s.d.conn(ctx).Create(pb).Error, "create branch protection")
	})
}

func (s protectionStore) Update(ctx context.Context, pb *store.ProtectedBranch) error {
	res := s.d.conn(ctx).Select("*").Omit("created_at").Updates(pb)
	return affected(res, "update branch protection")
}

func (s protectionStore) Delete(ctx context.Context, repoID, id int64) error {
	res := s.d.conn(ctx).Where("repo_id = ? AND id = ?", repoID, id).Delete(&store.ProtectedBranch{})
	return affected(res, "delete branch protection")
}

func (s protectionStore) SetPriorities(ctx context.Context, repoID int64, ids []int64) error {
	if len(ids) == 0 {
		return nil
	}
	// One UPDATE with a CASE sets every priority at once, so a concurrent
	// reorder sees either all of this one or none of it. On PostgreSQL the
	// rows are locked first, in id order, so two reorders queue up instead
	// of deadlocking on rows locked in opposite orders.
	return s.d.WithTx(ctx, func(ctx context.Context) error {
		if s.d.usesPostgres() {
			var locked []int64
			err := s.d.conn(ctx).Model(&store.ProtectedBranch{}).Where("repo_id = ?", repoID).Order("id").
				Clauses(clause.Locking{Strength: "UPDATE"}).Pluck("id", &locked).Error
			if err != nil {
				return translate(err, "lock branch protections")
			}
		}
		var b strings.Builder
		args := make([]any, 0, 2*len(ids)+2)
		b.WriteString("UPDATE protected_branches SET priority = CASE id")
		for i, id := range ids {
			b.WriteString(" WHEN ? THEN ?")
			args = append(args, id, int64(i+1))
		}
		b.WriteString(" ELSE priority END WHERE repo_id = ? AND id IN ?")
		args = append(args, repoID, ids)
		return translate(s.d.conn(ctx).Exec(b.String(), args...).Error, "set branch protection priorities")
	})
}

func (s protectionStore) Rename(ctx context.Context, repoID int64, from, to string) error {
	err := s.d.conn(ctx).Model(&store.ProtectedBranch{}).Where("repo_id = ? AND rule_name = ?", repoID, from).
		Update("rule_name", to).Error
	return translate(err, "rename branch protection")
}

func (s protectionStore) CopyAll(ctx context.Context, fromRepoID, toRepoID int64) error {
	var rules []*store.ProtectedBranch
	if err := s.d.conn(ctx).Where("repo_id = ?", fromRepoID).Order(byPriority).Find(&rules).Error; err != nil {
		return translate(err, "read branch protections")
	}
	if len(rules) == 0 {
		return nil
	}
	for _, r := range rules {
		r.ID, r.RepoID = 0, toRepoID
		r.CreatedAt, r.UpdatedAt = time.Time{}, time.Time{}
	}
	return translate(s.d.conn(ctx).Create(&rules).Error, "copy branch protections")
}

// isPostgres tells the dialect, for the few statements that differ.
func (d *DB) usesPostgres() bool { return d.gorm.Dialector.Name() == "postgres" }
