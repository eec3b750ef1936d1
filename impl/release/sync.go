package release

import (
	"context"
	"errors"

	"repohost/store"
)

// SyncResult counts what SyncReleases found in one repository.
type SyncResult struct {
	Checked int // published releases looked at
	Updated int // whose recorded commit followed their moved tag
	Missing int // whose tag no longer exists in git
}

// SyncReleases (a Service write, like the others) brings the commit each published release records (its
// sha1) back in line with what its git tag names now: a tag moved by a
// push, or restored from a backup, leaves the row behind (`repohost admin
// repo-sync-releases`, the reference's command of that name). A release
// whose tag is gone is counted, not deleted: its notes and files stay for
// an admin to decide.
func (s Service) SyncReleases(ctx context.Context, r *store.Repository) (SyncResult, error) {
	d := s.Deps
	var res SyncResult
	g, err := d.OpenGit(r)
	if err != nil {
		return res, err
	}
	published := false
	const page = 50
	for offset := 0; ; offset += page {
		rels, _, err := d.Store.Releases().List(ctx, store.ReleaseSearch{RepoID: r.ID, IncludeDrafts: false, IsDraft: &published},
			store.Page{Offset: offset, Limit: page})
		if err != nil {
			return res, err
		}
		for _, rel := range rels {
			res.Checked++
			tag, err := g.Tag(rel.TagName)
			if errors.Is(err, store.ErrNotFound) {
				res.Missing++
				continue
			}
			if err != nil {
				return res, err
			}
			if tag.Commit == nil || tag.Commit.Hash.String() == rel.Sha1 {
				continue
			}
			sha := tag.Commit.Hash.String()
			err = d.Store.WithTx(ctx, func(ctx context.Context) error {
				fresh, err := d.Store.Releases().FindByID(ctx, r.ID, rel.ID)
				if err != nil {
					return err
				}
				fresh.Sha1 = sha
				return d.Store.Releases().Update(ctx, fresh)
			})
			if err != nil {
				return res, err
			}
			res.Updated++
		}
		if len(rels) < page {
			return res, nil
		}
	}
}
