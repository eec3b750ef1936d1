package sqlstore

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"repohost/store"
)

type eventStore struct{ d *DB }

func (s eventStore) Append(ctx context.Context, e *store.Event) error {
	if len(e.Consumers) == 0 {
		return translate(s.d.conn(ctx).Create(e).Error, "append event")
	}
	if s.d.usesPostgres() {
		// One statement (one round trip) for the event and its jobs.
		// Consumer names are identifiers of ours, so the array literal
		// needs no quoting.
		var ids []int64
		err := s.d.conn(ctx).Raw(`WITH e AS (
				INSERT INTO events (kind, repo_id, actor_id, payload, created_at) VALUES (?, ?, ?, ?, ?)
				RETURNING id, repo_id, created_at
			), j AS (
				INSERT INTO event_jobs (consumer, event_id, repo_id, state, attempts, run_at, token, last_error, created_at, updated_at)
				SELECT c, e.id, e.repo_id, 'pending', 0, 0, 0, '', e.created_at, e.created_at
				FROM e, unnest(CAST(? AS text[])) AS c
			)
			SELECT id FROM e`, e.Kind, e.RepoID, e.ActorID, e.Payload, e.CreatedAt, pgTextArray(e.Consumers)).Scan(&ids).Error
		if err != nil {
			return translate(err, "append event")
		}
		e.ID = ids[0]
		return nil
	}
	if err := s.d.conn(ctx).Create(e).Error; err != nil {
		return translate(err, "append event")
	}
	return s.appendJobs(ctx, e)
}

// appendAbout appends evs in their order, setting their IDs, each payload
// (a JSON object) with the top-level fields of set given their numbers:
// the id (and number) of the row they are about, known only once it is
// written. The caller's events keep their payloads.
func (s eventStore) appendAbout(ctx context.Context, evs []*store.Event, set map[string]int64) error {
	for _, e := range evs {
		payload, err := withFields(e.Payload, set)
		if err != nil {
			return err
		}
		row := *e
		row.Payload = payload
		if err := s.Append(ctx, &row); err != nil {
			return err
		}
		e.ID = row.ID
	}
	return nil
}

// setEventIDs gives evs the ids a statement of outboxCTE appended them
// with (ids, in any order): the n-th id drawn is the n-th event's.
func setEventIDs(evs []*store.Event, ids []int64, what string) error {
	if len(ids) != len(evs) {
		return fmt.Errorf("%s: %d events appended, %d asked for", what, len(ids), len(evs))
	}
	slices.Sort(ids)
	for i, e := range evs {
		e.ID = ids[i]
	}
	return nil
}

// appendJobs writes the pending jobs of e (already appended).
func (s eventStore) appendJobs(ctx context.Context, e *store.Event) error {
	jobs := make([]*store.EventJob, len(e.Consumers))
	for i, c := range e.Consumers {
		jobs[i] = &store.EventJob{Consumer: c, EventID: e.ID, RepoID: e.RepoID, State: store.JobPending,
			CreatedAt: e.CreatedAt, UpdatedAt: e.CreatedAt}
	}
	return translate(s.d.conn(ctx).Create(&jobs).Error, "append event jobs")
}

// pgTextArray is PostgreSQL's literal of a text array of identifiers.
func pgTextArray(names []string) string { return "{" + strings.Join(names, ",") + "}" }

func (s eventStore) ListAfter(ctx context.Context, afterID int64, limit int) ([]*store.Event, error) {
	var out []*store.Event
	err := s.d.conn(ctx).Where("id > ?", afterID).Order("id").Limit(limit).Find(&out).Error
	return out, translate(err, "list events")
}

func (s eventStore) FindByIDs(ctx context.Context, ids []int64) (map[int64]*store.Event, error) {
	out := make(map[int64]*store.Event, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	var list []*store.Event
	if err := s.d.conn(ctx).Where("id IN ?", ids).Find(&list).Error; err != nil {
		return nil, translate(err, "find events")
	}
	for _, e := range list {
		out[e.ID] = e
	}
	return out, nil
}

func (s eventStore) Prune(ctx context.Context, cutoff time.Time, limit int) (int64, error) {
	// The oldest events come first by id, so the primary key is read in
	// order and the scan stops after limit old ones.
	res := s.d.conn(ctx).Exec(`DELETE FROM events WHERE id IN (
			SELECT e.id FROM events e WHERE e.created_at < ?
			AND NOT EXISTS (SELECT 1 FROM event_jobs j WHERE j.event_id = e.id)
			ORDER BY e.id LIMIT ?)`, cutoff.UTC(), limit)
	return res.RowsAffected, translate(res.Error, "prune events")
}

type eventJobStore struct{ d *DB }

func (d *DB) EventJobs() store.EventJobStore { return eventJobStore{d} }

func (s eventJobStore) Claim(ctx context.Context, consumers []string, now, leaseUntil, token int64, n int, ordered bool) ([]*store.EventJob, map[int64]*store.Event, error) {
	if len(consumers) == 0 {
		return nil, map[int64]*store.Event{}, nil
	}
	// As with webhook deliveries: the rows are chosen once (a
	// materialized CTE) and, on PostgreSQL, rows another process holds
	// locked are skipped, so processes share the queue without waiting.
	// SQLite runs one writer at a time, so the UPDATE alone is exclusive.
	lock := ""
	if s.d.usesPostgres() {
		lock = " FOR UPDATE SKIP LOCKED"
	}
	order := ""
	if ordered {
		// Pending includes claimed and retrying: a later event of the
		// repository waits until the earlier one is done (or dead).
		order = ` AND (j.repo_id = 0 OR NOT EXISTS (SELECT 1 FROM event_jobs p
			WHERE p.consumer = j.consumer AND p.repo_id = j.repo_id AND p.id < j.id AND p.state = 'pending'))`
	}
	// Each consumer's jobs are walked in idx_event_jobs_next's order
	// (migrateV50), its pending ones by id, so that a claim reads its
	// batch and not the backlog; each planner needs its own nudge there.
	// With "consumer = ?", PostgreSQL sees the primary key's order as the
	// same and walks it instead, through every other consumer's jobs (and
	// those deleted since the last vacuum): the range of one consumer
	// keeps its index the only ordered path. SQLite, given that range,
	// reads the consumer's jobs and sorts them; it is given the equality,
	// and "+run_at" keeps run_at out of its choice of index. No index
	// holds run_at (migrateV51): a claim, which moves it, updates its rows
	// in place on PostgreSQL.
	var (
		with, union strings.Builder
		args        []any
	)
	for i, c := range consumers {
		due, dueArgs := "j.consumer = ? AND j.state = 'pending' AND +j.run_at <= ?", []any{c, now}
		orderBy := "j.id"
		if s.d.usesPostgres() {
			due, dueArgs = "j.consumer BETWEEN ? AND ? AND j.state = 'pending' AND j.run_at <= ?", []any{c, c, now}
			orderBy = "j.consumer, j.id"
		}
		if i > 0 {
			with.WriteString(", ")
			union.WriteString(" UNION ALL ")
		}
		fmt.Fprintf(&with, "due%d AS MATERIALIZED (SELECT j.id FROM event_jobs j WHERE %s%s ORDER BY %s LIMIT ?%s)", i, due, order, orderBy, lock)
		fmt.Fprintf(&union, "SELECT id FROM due%d", i)
		args = append(append(args, dueArgs...), n)
	}
	claim := `UPDATE event_jobs SET run_at = ?, token = ?, attempts = attempts + 1
		WHERE id IN (` + union.String() + `)
		RETURNING *`
	args = append(args, leaseUntil, token)
	if !s.d.usesPostgres() {
		// In process: the events are read by a second statement.
		var jobs []*store.EventJob
		if err := s.d.conn(ctx).Raw("WITH "+with.String()+" "+claim, args...).Scan(&jobs).Error; err != nil {
			return nil, nil, translate(err, "claim event jobs")
		}
		slices.SortFunc(jobs, func(a, b *store.EventJob) int { return cmp.Compare(a.ID, b.ID) })
		ids := make([]int64, len(jobs))
		for i, j := range jobs {
			ids[i] = j.EventID
		}
		evs, err := s.d.Events().FindByIDs(ctx, ids)
		return jobs, evs, err
	}
	// Over the network the events come with the claim, a round trip
	// fewer for every batch.
	var rows []*claimedJob
	err := s.d.conn(ctx).Raw("WITH "+with.String()+", claimed AS ("+claim+`)
		SELECT c.*, e.id IS NOT NULL AS event_found, COALESCE(e.kind, '') AS event_kind,
			COALESCE(e.repo_id, 0) AS event_repo_id, COALESCE(e.actor_id, 0) AS event_actor_id,
			e.payload AS event_payload, COALESCE(e.created_at, c.created_at) AS event_created_at
		FROM claimed c LEFT JOIN events e ON e.id = c.event_id
		ORDER BY c.id`, args...).Scan(&rows).Error
	if err != nil {
		return nil, nil, translate(err, "claim event jobs")
	}
	jobs, evs := make([]*store.EventJob, len(rows)), make(map[int64]*store.Event, len(rows))
	for i, r := range rows {
		jobs[i] = &r.EventJob
		if r.EventFound {
			evs[r.EventID] = &store.Event{ID: r.EventID, Kind: r.EventKind, RepoID: r.EventRepoID, ActorID: r.EventActorID,
				Payload: r.EventPayload, CreatedAt: r.EventCreatedAt}
		}
	}
	return jobs, evs, nil
}

// claimedJob is a claimed job with the columns of its event (EventFound
// false: the event is gone), as PostgreSQL's claim returns them.
type claimedJob struct {
	store.EventJob `gorm:"embedded"`
	EventFound     bool
	EventKind      string
	EventRepoID    int64
	EventActorID   int64
	EventPayload   []byte
	EventCreatedAt time.Time
}

func (s eventJobStore) Extend(ctx context.Context, ids []int64, token, leaseUntil int64) error {
	if len(ids) == 0 {
		return nil
	}
	return translate(s.d.conn(ctx).Exec(`UPDATE event_jobs SET run_at = ? WHERE id IN ? AND token = ?`,
		leaseUntil, ids, token).Error, "extend event jobs")
}

func (s eventJobStore) Finish(ctx context.Context, ids []int64, token int64) (int64, error) {
	if len(ids) == 0 {
		return 0, nil
	}
	res := s.d.conn(ctx).Exec(`DELETE FROM event_jobs WHERE id IN ? AND token = ?`, ids, token)
	return res.RowsAffected, translate(res.Error, "finish event jobs")
}

func (s eventJobStore) Fail(ctx context.Context, id, token int64, runAt int64, dead bool, reason string, now time.Time) error {
	state := store.JobPending
	if dead {
		state = store.JobDead
	}
	return translate(s.d.conn(ctx).Exec(`UPDATE event_jobs SET state = ?, run_at = ?, token = 0, last_error = ?, updated_at = ?
		WHERE id = ? AND token = ?`, state, runAt, reason, now.UTC(), id, token).Error, "fail event job")
}

func (s eventJobStore) Busy(ctx context.Context, now int64) (bool, error) {
	var ids []int64
	err := s.d.conn(ctx).Raw(`SELECT id FROM event_jobs WHERE state = 'pending' AND (run_at <= ? OR token <> 0) LIMIT 1`, now).
		Scan(&ids).Error
	return len(ids) > 0, translate(err, "event jobs busy")
}

func (s eventJobStore) Stats(ctx context.Context) ([]store.JobStats, error) {
	// The table holds only unfinished jobs and dead letters, so reading
	// it whole is reading the backlog.
	var rows []struct {
		Consumer                string
		Pending, Retrying, Dead int64
		Oldest                  *int64
	}
	err := s.d.conn(ctx).Raw(`SELECT consumer,
			SUM(CASE WHEN state = 'pending' THEN 1 ELSE 0 END) AS pending,
			SUM(CASE WHEN state = 'pending' AND last_error <> '' THEN 1 ELSE 0 END) AS retrying,
			SUM(CASE WHEN state = 'dead' THEN 1 ELSE 0 END) AS dead,
			MIN(CASE WHEN state = 'pending' THEN event_id END) AS oldest
		FROM event_jobs GROUP BY consumer ORDER BY consumer`).Scan(&rows).Error
	if err != nil {
		return nil, translate(err, "event job stats")
	}
	// The oldest pending events' times come in one read for all consumers.
	var oldest []int64
	for _, r := range rows {
		if r.Oldest != nil {
			oldest = append(oldest, *r.Oldest)
		}
	}
	created := map[int64]time.Time{}
	if len(oldest) > 0 {
		var evs []struct {
			ID        int64
			CreatedAt time.Time
		}
		if err := s.d.conn(ctx).Raw(`SELECT id, created_at FROM events WHERE id IN ?`, oldest).Scan(&evs).Error; err != nil {
			return nil, translate(err, "event job stats")
		}
		for _, e := range evs {
			created[e.ID] = e.CreatedAt
		}
	}
	out := make([]store.JobStats, len(rows))
	for i, r := range rows {
		out[i] = store.JobStats{Consumer: r.Consumer, Pending: r.Pending, Retrying: r.Retrying, Dead: r.Dead}
		if r.Oldest != nil {
			out[i].OldestPending = created[*r.Oldest]
		}
	}
	return out, nil
}

func (s eventJobStore) Dead(ctx context.Context, consumer string, offset, limit int) ([]*store.EventJob, int64, error) {
	q := s.d.conn(ctx).Model(&store.EventJob{}).Where("state = ?", store.JobDead)
	if consumer != "" {
		q = q.Where("consumer = ?", consumer)
	}
	var total int64
	if err := q.Count(&total).Error; err != nil {
		return nil, 0, translate(err, "count dead letters")
	}
	var out []*store.EventJob
	err := q.Order("id DESC").Offset(offset).Limit(limit).Find(&out).Error
	return out, total, translate(err, "list dead letters")
}

func (s eventJobStore) Retry(ctx context.Context, consumer string, id int64, now int64) (int64, error) {
	q := s.d.conn(ctx).Model(&store.EventJob{}).Where("state = ?", store.JobDead)
	if consumer != "" {
		q = q.Where("consumer = ?", consumer)
	}
	if id != 0 {
		q = q.Where("id = ?", id)
	}
	res := q.Updates(map[string]any{"state": store.JobPending, "attempts": 0, "run_at": now, "token": 0})
	return res.RowsAffected, translate(res.Error, "retry dead letters")
}

func (s eventJobStore) ReleaseToken(ctx context.Context, token int64) error {
	// The table holds only unfinished jobs and dead letters: a scan of it
	// is a scan of the backlog.
	return translate(s.d.conn(ctx).Exec(`UPDATE event_jobs SET token = 0, run_at = 0 WHERE state = 'pending' AND token = ?`, token).Error,
		"release event jobs")
}

func (s eventJobStore) Release(ctx context.Context) (int64, error) {
	res := s.d.conn(ctx).Exec(`UPDATE event_jobs SET token = 0, run_at = 0 WHERE state = 'pending' AND token <> 0`)
	return res.RowsAffected, translate(res.Error, "release event jobs")
}
