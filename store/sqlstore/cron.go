package sqlstore

import (
	"context"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"repohost/store"
)

type cronStore struct{ d *DB }

// sec is t in UTC at whole seconds. SQLite keeps times as RFC 3339 text,
// which compares in time order only when every value has the same
// precision ("…05Z" sorts after "…05.5Z"), and the conditions below compare
// them in SQL; the schedules themselves have whole seconds.
func sec(t time.Time) time.Time { return t.UTC().Truncate(time.Second) }

func secp(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	v := sec(*t)
	return &v
}

func (s cronStore) rows(ctx context.Context) *gorm.DB {
	return s.d.conn(ctx).Model(&store.CronTask{})
}

func (s cronStore) Ensure(ctx context.Context, name, schedule string, next *time.Time) error {
	next = secp(next)
	row := &store.CronTask{Name: name, Schedule: schedule, NextRun: next}
	err := s.d.conn(ctx).Clauses(clause.OnConflict{DoNothing: true}).Create(row).Error
	if err != nil {
		return translate(err, "create cron task")
	}
	// Rescheduled (another spec in this process's configuration): the
	// next run follows the new spec at once instead of waiting for the
	// one the old spec chose.
	err = s.rows(ctx).Where("name = ? AND schedule <> ?", name, schedule).
		Updates(map[string]any{"schedule": schedule, "next_run": next}).Error
	return translate(err, "reschedule cron task")
}

func (s cronStore) List(ctx context.Context) ([]*store.CronTask, error) {
	var out []*store.CronTask
	err := s.d.conn(ctx).Order("name").Find(&out).Error
	return out, translate(err, "list cron tasks")
}

// leaseFree is the condition of a lease nobody holds any more; leases are
// kept in Unix milliseconds.
const leaseFree = "(lease_holder = '' OR lease_until <= ?)"

func (s cronStore) ClaimDue(ctx context.Context, name, holder string, now, next, leaseUntil time.Time) (bool, error) {
	res := s.rows(ctx).Where("name = ? AND next_run IS NOT NULL AND next_run <= ? AND "+leaseFree, name, sec(now), now.UnixMilli()).
		Updates(map[string]any{"next_run": sec(next), "lease_holder": holder, "lease_until": leaseUntil.UnixMilli()})
	return res.RowsAffected == 1, translate(res.Error, "claim cron task")
}

func (s cronStore) ClaimNow(ctx context.Context, name, holder string, now, leaseUntil time.Time) (bool, error) {
	res := s.rows(ctx).Where("name = ? AND "+leaseFree, name, now.UnixMilli()).
		Updates(map[string]any{"lease_holder": holder, "lease_until": leaseUntil.UnixMilli()})
	return res.RowsAffected == 1, translate(res.Error, "claim cron task")
}

func (s cronStore) Renew(ctx context.Context, name, holder string, leaseUntil time.Time) (bool, error) {
	res := s.rows(ctx).Where("name = ? AND lease_holder = ?", name, holder).Update("lease_until", leaseUntil.UnixMilli())
	return res.RowsAffected == 1, translate(res.Error, "renew cron lease")
}

func (s cronStore) Finish(ctx context.Context, name, holder string, started time.Time, runErr string) error {
	started = sec(started)
	// The run is counted even when the lease was lost meanwhile (it did
	// run); the lease is given back only if it is still this holder's.
	err := s.rows(ctx).Where("name = ?", name).Updates(map[string]any{
		"exec_times": gorm.Expr("exec_times + 1"),
		"prev_run":   gorm.Expr("CASE WHEN prev_run IS NULL OR prev_run < ? THEN ? ELSE prev_run END", started, started),
		"last_error": runErr,
	}).Error
	if err != nil {
		return translate(err, "finish cron task")
	}
	err = s.rows(ctx).Where("name = ? AND lease_holder = ?", name, holder).
		Updates(map[string]any{"lease_holder": "", "lease_until": 0}).Error
	return translate(err, "release cron lease")
}

type noticeStore struct{ d *DB }

func (s noticeStore) Create(ctx context.Context, n *store.Notice) error {
	return translate(s.d.conn(ctx).Create(n).Error, "create notice")
}

func (s noticeStore) List(ctx context.Context, p store.Page) ([]*store.Notice, int64, error) {
	var total int64
	if err := s.d.conn(ctx).Model(&store.Notice{}).Count(&total).Error; err != nil {
		return nil, 0, translate(err, "count notices")
	}
	var out []*store.Notice
	err := s.d.conn(ctx).Order("created_at DESC, id DESC").Offset(p.Offset).Limit(p.Limit).Find(&out).Error
	return out, total, translate(err, "list notices")
}

func (s noticeStore) DeleteBefore(ctx context.Context, t time.Time) (int64, error) {
	res := s.d.conn(ctx).Where("created_at < ?", t).Delete(&store.Notice{})
	return res.RowsAffected, translate(res.Error, "delete old notices")
}
