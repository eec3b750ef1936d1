package sqlstore

import (
	"cmp"
	"context"
	"slices"

	"repohost/store"
)

func (d *DB) Releases() store.ReleaseStore { return releaseStore{d} }

type releaseStore struct{ d *DB }

// recountReleases keeps repositories.num_releases (the Repository's
// release_counter) equal to the number of published releases; it runs in the
// transaction of the change that moved it.
func (s releaseStore) recountReleases(ctx context.Context, repoID int64) error {
	err := s.d.conn(counterWrite(ctx, repoID)).Exec(
		"UPDATE repositories SET num_releases = (SELECT COUNT(*) FROM releases WHERE repo_id = ? AND is_draft = ?) WHERE id = ?",
		repoID, false, repoID).Error
	return translate(err, "count releases")
}

func (s releaseStore) Create(ctx context.Context, r *store.Release) error {
	return s.d.WithTx(ctx, func(ctx context.Context) error {
		if err := s.d.conn(ctx).Create(r).Error; err != nil {
			return translate(err, "create release")
		}
		return s.recountReleases(ctx, r.RepoID)
	})
}

func (s releaseStore) find(ctx context.Context, what string, query string, args ...any) (*store.Release, error) {
	var r store.Release
	if err := s.d.conn(ctx).Where(query, args...).Take(&r).Error; err != nil {
		return nil, translate(err, what)
	}
	if err := s.load(ctx, []*store.Release{&r}); err != nil {
		return nil, err
	}
	return &r, nil
}

func (s releaseStore) FindByID(ctx context.Context, repoID, id int64) (*store.Release, error) {
	return s.find(ctx, "find release", "repo_id = ? AND id = ?", repoID, id)
}

func (s releaseStore) FindByTag(ctx context.Context, repoID int64, tag string) (*store.Release, error) {
	return s.find(ctx, "find release", "repo_id = ? AND tag_name = ?", repoID, tag)
}

func (s releaseStore) FindLatest(ctx context.Context, repoID int64) (*store.Release, error) {
	var r store.Release
	err := s.d.conn(ctx).Where("repo_id = ? AND is_draft = ? AND is_prerelease = ?", repoID, false, false).
		Order("published_at DESC").Order("id DESC").Take(&r).Error
	if err != nil {
		return nil, translate(err, "find latest release")
	}
	if err := s.load(ctx, []*store.Release{&r}); err != nil {
		return nil, err
	}
	return &r, nil
}

func (s releaseStore) List(ctx context.Context, q store.ReleaseSearch, p store.Page) ([]*store.Release, int64, error) {
	db := s.d.conn(ctx).Model(&store.Release{}).Where("repo_id = ?", q.RepoID)
	if !q.IncludeDrafts {
		db = db.Where("is_draft = ?", false)
	}
	if q.IsDraft != nil {
		db = db.Where("is_draft = ?", *q.IsDraft)
	}
	if q.IsPrerelease != nil {
		db = db.Where("is_prerelease = ?", *q.IsPrerelease)
	}
	var total int64
	if err := db.Count(&total).Error; err != nil {
		return nil, 0, translate(err, "count releases")
	}
	// A draft sorts by its creation, a published release by its publication,
	// so publishing an old draft brings it to the top as the reference does.
	order := listOrder{{"COALESCE(releases.published_at, releases.created_at)", true}, {"releases.id", true}}
	out, err := readPage[store.Release](db, order, p, total)
	if err != nil {
		return nil, 0, translate(err, "list releases")
	}
	return out, total, s.load(ctx, out)
}

// load fills publishers and attachments of rs with two statements,
// whatever len(rs) is.
func (s releaseStore) load(ctx context.Context, rs []*store.Release) error {
	if len(rs) == 0 {
		return nil
	}
	ids := make([]int64, 0, len(rs))
	var userIDs []int64
	for _, r := range rs {
		ids = append(ids, r.ID)
		userIDs = append(userIDs, r.PublisherID)
		r.Attachments = []*store.ReleaseAttachment{}
	}
	users, err := s.d.Users().FindByIDs(ctx, userIDs)
	if err != nil {
		return err
	}
	var atts []*store.ReleaseAttachment
	if err := s.d.conn(ctx).Where("release_id IN ?", ids).Find(&atts).Error; err != nil {
		return translate(err, "list release attachments")
	}
	// Put in id order here: a page's attachments are few, and an ORDER BY
	// across several releases would be a sort in the database.
	slices.SortFunc(atts, func(a, b *store.ReleaseAttachment) int { return cmp.Compare(a.ID, b.ID) })
	byRelease := make(map[int64][]*store.ReleaseAttachment, len(rs))
	for _, a := range atts {
		byRelease[a.ReleaseID] = append(byRelease[a.ReleaseID], a)
	}
	for _, r := range rs {
		r.Publisher = users[r.PublisherID]
		if as := byRelease[r.ID]; as != nil {
			r.Attachments = as
		}
	}
	return nil
}

func (s releaseStore) Update(ctx context.Context, r *store.Release) error {
	return s.d.WithTx(ctx, func(ctx context.Context) error {
		res := s.d.conn(ctx).Select("*").Omit("created_at").Updates(r)
		if err := affected(res, "update release"); err != nil {
			return err
		}
		return s.recountReleases(ctx, r.RepoID)
	})
}

func (s releaseStore) Delete(ctx context.Context, repoID, id int64) ([]*store.ReleaseAttachment, error) {
	var atts []*store.ReleaseAttachment
	err := s.d.WithTx(ctx, func(ctx context.Context) error {
		if err := s.d.conn(ctx).Where("release_id = ?", id).Find(&atts).Error; err != nil {
			return translate(err, "list release attachments")
		}
		res := s.d.conn(ctx).Where("repo_id = ? AND id = ?", repoID, id).Delete(&store.Release{})
		if err := affected(res, "delete release"); err != nil {
			return err
		}
		return s.recountReleases(ctx, repoID)
	})
	if err != nil {
		return nil, err
	}
	return atts, nil
}
