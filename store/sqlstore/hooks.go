package sqlstore

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"gorm.io/gorm"

	"repohost/store"
)

type hookStore struct{ d *DB }

// The authorization header is kept sealed with the instance secret key
// (secretbox): hooks are sealed just for the write and handed back to the
// caller in clear, and every read opens them.

// sealed runs write with the hooks' authorization headers sealed, then
// puts the clear values back.
func (s hookStore) sealed(hs []*store.Hook, write func() error) error {
	clear := make([]string, len(hs))
	for i, h := range hs {
		clear[i] = h.AuthorizationHeader
	}
	defer func() {
		for i, h := range hs {
			h.AuthorizationHeader = clear[i]
		}
	}()
	for _, h := range hs {
		v, err := s.d.secrets.Seal(h.AuthorizationHeader)
		if err != nil {
			return fmt.Errorf("seal the authorization header of a hook: %w", err)
		}
		h.AuthorizationHeader = v
	}
	return write()
}

// open opens the authorization headers of hooks just read. A header that
// does not open (another key sealed it) marks its hook rather than failing
// the read: one hook sealed under a lost key must not stop its
// repository's events from being queued for every other hook.
func (s hookStore) open(hs ...*store.Hook) {
	for _, h := range hs {
		v, err := s.d.secrets.Open(h.AuthorizationHeader)
		if err != nil {
			v, h.AuthorizationUnreadable = "", true
		}
		h.AuthorizationHeader = v
	}
}

func (s hookStore) Create(ctx context.Context, h *store.Hook) error {
	return s.sealed([]*store.Hook{h}, func() error {
		return translate(s.d.conn(ctx).Create(h).Error, "create hook")
	})
}

func (s hookStore) CreateMany(ctx context.Context, hs []*store.Hook) error {
	if len(hs) == 0 {
		return nil
	}
	return s.sealed(hs, func() error {
		return translate(s.d.conn(ctx).Create(hs).Error, "create hooks")
	})
}

func (s hookStore) Update(ctx context.Context, h *store.Hook) error {
	return s.sealed([]*store.Hook{h}, func() error {
		return affected(s.d.conn(ctx).Select("*").Omit("id", "created_at").Updates(h), "update hook")
	})
}

func (s hookStore) Find(ctx context.Context, id int64) (*store.Hook, error) {
	var h store.Hook
	if err := s.d.conn(ctx).Where("id = ?", id).Take(&h).Error; err != nil {
		return nil, translate(err, "find hook")
	}
	s.open(&h)
	return &h, nil
}

func (s hookStore) Delete(ctx context.Context, id int64) error {
	return s.d.WithTx(ctx, func(ctx context.Context) error {
		if err := affected(s.d.conn(ctx).Where("id = ?", id).Delete(&store.Hook{}), "delete hook"); err != nil {
			return err
		}
		return translate(s.d.conn(ctx).Where("hook_id = ?", id).Delete(&store.HookDelivery{}).Error, "delete hook deliveries")
	})
}

func (s hookStore) DeleteByRepo(ctx context.Context, repoID int64) error {
	return s.d.WithTx(ctx, func(ctx context.Context) error {
		db := s.d.conn(ctx)
		err := db.Where("hook_id IN (?)", db.Model(&store.Hook{}).Select("id").Where("repo_id = ?", repoID)).
			Delete(&store.HookDelivery{}).Error
		if err != nil {
			return translate(err, "delete repository hook deliveries")
		}
		return translate(s.d.conn(ctx).Where("repo_id = ?", repoID).Delete(&store.Hook{}).Error, "delete repository hooks")
	})
}

func (s hookStore) DeleteByOwner(ctx context.Context, ownerID int64) error {
	return s.d.WithTx(ctx, func(ctx context.Context) error {
		db := s.d.conn(ctx)
		err := db.Where("hook_id IN (?)", db.Model(&store.Hook{}).Select("id").Where("owner_id = ? AND repo_id = 0", ownerID)).
			Delete(&store.HookDelivery{}).Error
		if err != nil {
			return translate(err, "delete owner hook deliveries")
		}
		return translate(s.d.conn(ctx).Where("owner_id = ? AND repo_id = 0", ownerID).Delete(&store.Hook{}).Error, "delete owner hooks")
	})
}

func (s hookStore) List(ctx context.Context, f store.HookFilter, p store.Page) ([]*store.Hook, int64, error) {
	db := s.d.conn(ctx).Model(&store.Hook{})
	switch {
	case f.RepoID != 0:
		db = db.Where("repo_id = ?", f.RepoID)
	case f.OwnerID != 0:
		db = db.Where("owner_id = ? AND repo_id = 0", f.OwnerID)
	default:
		db = db.Where("owner_id = 0 AND repo_id = 0")
		if f.System != nil {
			db = db.Where("is_system = ?", *f.System)
		}
	}
	var total int64
	if err := db.Count(&total).Error; err != nil {
		return nil, 0, translate(err, "count hooks")
	}
	out, err := readPage[store.Hook](db, listOrder{{expr: "webhooks.id"}}, p, total)
	if err != nil {
		return nil, 0, translate(err, "list hooks")
	}
	s.open(out...)
	return out, total, nil
}

// ForRepo is kept in the read cache: the webhook consumer asks for every
// event, and most repositories have no hook at all. Deleting a repository
// or an owner deletes its hooks through ON DELETE CASCADE, which names no
// hook: their writes retire the entry too.
func (s hookStore) ForRepo(ctx context.Context, repoID, ownerID int64) ([]*store.Hook, error) {
	key := "hooks:" + strconv.FormatInt(repoID, 10) + ":" + strconv.FormatInt(ownerID, 10)
	return cached(ctx, s.d, key, tWebhooks|tRepos|tUsers, cloneHooks, func() ([]*store.Hook, error) {
		var out []*store.Hook
		// Three index lookups instead of one OR that neither database
		// serves from an index.
		// repo_id <> 0: an event of no repository (repoID 0) must not
		// reach every owner's and default hook, which have repo_id 0.
		err := s.d.conn(ctx).Raw(`SELECT * FROM webhooks WHERE repo_id = ? AND repo_id <> 0 AND active
			UNION ALL SELECT * FROM webhooks WHERE owner_id = ? AND repo_id = 0 AND active
			UNION ALL SELECT * FROM webhooks WHERE owner_id = 0 AND repo_id = 0 AND is_system AND active
			ORDER BY id`, repoID, ownerID).Scan(&out).Error
		if err != nil {
			return nil, translate(err, "hooks of repository")
		}
		s.open(out...)
		return out, nil
	})
}

// cloneHooks copies hooks (values only) for a caller of the cache.
func cloneHooks(hooks []*store.Hook) []*store.Hook {
	out := make([]*store.Hook, len(hooks))
	for i, h := range hooks {
		c := *h
		out[i] = &c
	}
	return out
}

func (s hookStore) Defaults(ctx context.Context) ([]*store.Hook, error) {
	var out []*store.Hook
	err := s.d.conn(ctx).Where("owner_id = 0 AND repo_id = 0 AND is_system = ?", false).Order("id").Find(&out).Error
	if err != nil {
		return nil, translate(err, "default hooks")
	}
	s.open(out...)
	return out, nil
}

func (s hookStore) Enqueue(ctx context.Context, ds []*store.HookDelivery) error {
	if len(ds) == 0 {
		return nil
	}
	return translate(s.d.conn(ctx).CreateInBatches(ds, 200).Error, "enqueue deliveries")
}

func (s hookStore) Claim(ctx context.Context, now, leaseUntil int64, n int) ([]*store.HookDelivery, error) {
	// One statement claims the rows: on PostgreSQL the rows another
	// worker has locked are skipped, so several processes share the
	// queue without waiting on each other; SQLite runs one writer at a
	// time, so the UPDATE alone makes the claim exclusive.
	lock := ""
	if s.d.usesPostgres() {
		lock = " FOR UPDATE SKIP LOCKED"
	}
	// The rows are chosen once, in a materialized CTE: as a subquery of
	// the UPDATE, PostgreSQL may run the choice again for each row it
	// joins (a nested loop), and with SKIP LOCKED each run skips the rows
	// the previous ones locked, so one claim took more than n rows. The
	// delivery loop hands out exactly n workers, and stalled when it got
	// more.
	var out []*store.HookDelivery
	err := s.d.conn(ctx).Raw(`WITH due AS MATERIALIZED (SELECT id FROM hook_deliveries
			WHERE state = ? AND next_attempt_at <= ? ORDER BY next_attempt_at, id LIMIT ?`+lock+`)
		UPDATE hook_deliveries SET next_attempt_at = ?, attempts = attempts + 1
		WHERE id IN (SELECT id FROM due)
		RETURNING *`, store.DeliveryPending, now, n, leaseUntil).Scan(&out).Error
	return out, translate(err, "claim deliveries")
}

func (s hookStore) Finish(ctx context.Context, d *store.HookDelivery) error {
	return translate(s.d.conn(ctx).Model(&store.HookDelivery{}).Where("id = ?", d.ID).Updates(map[string]any{
		"state": d.State, "next_attempt_at": d.NextAttemptAt, "request_url": d.RequestURL,
		"request_method": d.RequestMethod, "request_headers": d.RequestHeaders, "response_status": d.ResponseStatus,
		"response_headers": d.ResponseHeaders, "response_body": d.ResponseBody, "duration_micros": d.DurationMicros,
		"error": d.Error, "delivered_at": d.DeliveredAt,
	}).Error, "finish delivery")
}

func (s hookStore) Release(ctx context.Context, ids []int64, now int64) error {
	if len(ids) == 0 {
		return nil
	}
	return translate(s.d.conn(ctx).Model(&store.HookDelivery{}).Where("id IN ? AND state = ?", ids, store.DeliveryPending).
		Updates(map[string]any{"next_attempt_at": now, "attempts": gorm.Expr("attempts - 1")}).Error, "release deliveries")
}

func (s hookStore) ListDeliveries(ctx context.Context, hookID int64, p store.Page) ([]*store.HookDelivery, int64, error) {
	db := s.d.conn(ctx).Model(&store.HookDelivery{}).Where("hook_id = ?", hookID)
	var total int64
	if err := db.Count(&total).Error; err != nil {
		return nil, 0, translate(err, "count deliveries")
	}
	out, err := readPage[store.HookDelivery](db.Omit("payload", "request_headers", "response_headers", "response_body"),
		listOrder{{expr: "hook_deliveries.id", desc: true}}, p, total)
	return out, total, translate(err, "list deliveries")
}

func (s hookStore) FindDelivery(ctx context.Context, hookID, id int64) (*store.HookDelivery, error) {
	var d store.HookDelivery
	if err := s.d.conn(ctx).Where("id = ? AND hook_id = ?", id, hookID).Take(&d).Error; err != nil {
		return nil, translate(err, "find delivery")
	}
	return &d, nil
}

func (s hookStore) PruneDeliveries(ctx context.Context, t time.Time) (int64, error) {
	res := s.d.conn(ctx).Where("delivered_at < ? AND state <> ?", t, store.DeliveryPending).Delete(&store.HookDelivery{})
	return res.RowsAffected, translate(res.Error, "prune deliveries")
}

func (s hookStore) CountDeliveries(ctx context.Context) (store.DeliveryCounts, error) {
	var rows []struct {
		State int
		N     int64
	}
	err := s.d.conn(ctx).Model(&store.HookDelivery{}).Select("state, COUNT(*) AS n").Group("state").Scan(&rows).Error
	var c store.DeliveryCounts
	for _, r := range rows {
		switch r.State {
		case store.DeliveryPending:
			c.Pending = r.N
		case store.DeliveryDelivered:
			c.Delivered = r.N
		case store.DeliveryFailed:
			c.Failed = r.N
		}
	}
	return c, translate(err, "count deliveries")
}
