package sqlstore

import (
	"cmp"
	"context"
	"database/sql"
	"slices"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"repohost/store"
)

type timelineStore struct{ d *DB }

func (s timelineStore) Add(ctx context.Context, evs ...*store.IssueEvent) error {
	if len(evs) == 0 {
		return nil
	}
	after := map[int64]int64{}
	for _, e := range evs {
		id, ok := after[e.IssueID]
		if !ok {
			// Through idx_comments_issue_created: one issue's comments.
			if err := s.d.conn(ctx).Raw(`SELECT COALESCE(MAX(id), 0) FROM comments WHERE issue_id = ?`, e.IssueID).
				Scan(&id).Error; err != nil {
				return translate(err, "record issue events")
			}
			after[e.IssueID] = id
		}
		e.AfterCommentID = id
	}
	return translateRef(s.d.conn(ctx).Create(evs).Error, "record issue events")
}

// AddOnce records ev unless idx_issue_events_commit_ref already holds its
// issue and commit, or idx_issue_events_issue_ref its issue and referrer.
func (s timelineStore) AddOnce(ctx context.Context, ev *store.IssueEvent) (bool, error) {
	if err := s.d.conn(ctx).Raw(`SELECT COALESCE(MAX(id), 0) FROM comments WHERE issue_id = ?`, ev.IssueID).
		Scan(&ev.AfterCommentID).Error; err != nil {
		return false, translate(err, "record issue events")
	}
	res := s.d.conn(ctx).Clauses(clause.OnConflict{DoNothing: true}).Create(ev)
	if res.Error != nil {
		return false, translateRef(res.Error, "record issue events")
	}
	return res.RowsAffected == 1, nil
}

func (s timelineStore) Reference(ctx context.Context, ev *store.IssueEvent) error {
	if err := s.d.conn(ctx).Raw(`SELECT COALESCE(MAX(id), 0) FROM comments WHERE issue_id = ?`, ev.IssueID).
		Scan(&ev.AfterCommentID).Error; err != nil {
		return translate(err, "record issue reference")
	}
	err := s.d.conn(ctx).Clauses(clause.OnConflict{
		Columns:     []clause.Column{{Name: "issue_id"}, {Name: "ref_issue_id"}, {Name: "ref_comment_id"}},
		TargetWhere: clause.Where{Exprs: []clause.Expression{clause.Expr{SQL: "ref_issue_id <> 0"}}},
		DoUpdates:   clause.AssignmentColumns([]string{"ref_action", "updated_at"}),
	}).Create(ev).Error
	return translateRef(err, "record issue reference")
}

func (s timelineStore) NeuterRefs(ctx context.Context, refIssueID, refCommentID int64, keep []int64, at time.Time) error {
	db := s.d.conn(ctx).Model(&store.IssueEvent{}).
		Where("ref_issue_id <> 0 AND ref_issue_id = ? AND ref_comment_id = ? AND ref_action <> ?", refIssueID, refCommentID, store.RefNeutered)
	if len(keep) > 0 {
		db = db.Where("issue_id NOT IN ?", keep)
	}
	err := db.Updates(map[string]any{"ref_action": store.RefNeutered, "updated_at": at}).Error
	return translate(err, "neuter issue references")
}

func (s timelineStore) ResolvingRefs(ctx context.Context, refIssueID int64) ([]*store.IssueEvent, error) {
	var list []*store.IssueEvent
	err := s.d.conn(ctx).Where("ref_issue_id <> 0 AND ref_issue_id = ? AND ref_action IN ?", refIssueID, []int{store.RefCloses, store.RefReopens}).
		Find(&list).Error
	if err != nil {
		return nil, translate(err, "list resolving references")
	}
	// One issue's references are few: ordered here, not by the database.
	slices.SortFunc(list, func(a, b *store.IssueEvent) int { return cmp.Compare(a.ID, b.ID) })
	// The newest of each issue's references decides.
	var out []*store.IssueEvent
	at := map[int64]int{}
	for _, ev := range list {
		if i, ok := at[ev.IssueID]; ok {
			out[i] = ev
			continue
		}
		at[ev.IssueID] = len(out)
		out = append(out, ev)
	}
	return out, nil
}

// List merges the issue's comments and events. Each is read in
// conversation order through its (issue_id, created_at, id) index, only as
// far as the page's end, and the two are merged here: the cost grows with
// the page's position in one issue's timeline, never with the tables.
func (s timelineStore) List(ctx context.Context, issueID int64, since, before *time.Time, p store.Page) ([]store.TimelineEntry, int64, error) {
	bounded := func(db *gorm.DB, table string) *gorm.DB {
		db = db.Where(table+".issue_id = ?", issueID)
		if since != nil {
			db = db.Where(table+".updated_at >= ?", *since)
		}
		if before != nil {
			db = db.Where(table+".updated_at <= ?", *before)
		}
		return db
	}
	comments := func() *gorm.DB { return bounded(s.d.conn(ctx).Model(&store.Comment{}), "comments") }
	events := func() *gorm.DB { return bounded(s.d.conn(ctx).Model(&store.IssueEvent{}), "issue_events") }
	var nc, ne int64
	if err := comments().Count(&nc).Error; err != nil {
		return nil, 0, translate(err, "count comments")
	}
	if err := events().Count(&ne).Error; err != nil {
		return nil, 0, translate(err, "count issue events")
	}
	total := nc + ne
	out := []store.TimelineEntry{}
	if p.Limit <= 0 || int64(p.Offset) >= total {
		return out, total, nil
	}
	end := p.Offset + p.Limit
	var cs []*store.Comment
	if err := comments().Order("comments.created_at, comments.id").Limit(end).Find(&cs).Error; err != nil {
		return nil, 0, translate(err, "list comments")
	}
	var es []*store.IssueEvent
	if err := events().Order("issue_events.created_at, issue_events.id").Limit(end).Find(&es).Error; err != nil {
		return nil, 0, translate(err, "list issue events")
	}
	for i, j := 0, 0; len(out) < end && (i < len(cs) || j < len(es)); {
		// An event comes before the first comment newer than the one it
		// was recorded after.
		if j >= len(es) || (i < len(cs) && es[j].AfterCommentID >= cs[i].ID) {
			out = append(out, store.TimelineEntry{Comment: cs[i]})
			i++
		} else {
			out = append(out, store.TimelineEntry{Event: es[j]})
			j++
		}
	}
	if p.Offset >= len(out) {
		return []store.TimelineEntry{}, total, nil
	}
	return out[p.Offset:], total, nil
}

type dependencyStore struct{ d *DB }

// issueDependency is a row of issue_dependencies (created by migrateV30).
type issueDependency struct {
	IssueID      int64 `gorm:"primaryKey;autoIncrement:false"`
	DependencyID int64 `gorm:"primaryKey;autoIncrement:false"`
	CreatedAt    time.Time
}

func (issueDependency) TableName() string { return "issue_dependencies" }

func (s dependencyStore) Add(ctx context.Context, issueID, dependencyID int64, now time.Time) (bool, error) {
	res := s.d.conn(ctx).Clauses(clause.OnConflict{DoNothing: true}).
		Create(&issueDependency{IssueID: issueID, DependencyID: dependencyID, CreatedAt: now})
	if res.Error != nil {
		return false, translateRef(res.Error, "add issue dependency")
	}
	return res.RowsAffected > 0, nil
}

func (s dependencyStore) Remove(ctx context.Context, issueID, dependencyID int64) (bool, error) {
	res := s.d.conn(ctx).Where("issue_id = ? AND dependency_id = ?", issueID, dependencyID).Delete(&issueDependency{})
	if res.Error != nil {
		return false, translate(res.Error, "remove issue dependency")
	}
	return res.RowsAffected > 0, nil
}

// linked reads the issues whose ids the subquery (on issue_dependencies,
// through its primary key or its dependency index) selects, by id.
func (s dependencyStore) linked(ctx context.Context, sub string, id int64) ([]*store.Issue, error) {
	return issueRows(s.d.conn(ctx).Table("issues").Select(issueColumns).
		Where("issues.id IN ("+sub+")", id).Order("issues.id"), "list issue dependencies")
}

// issueRows reads the issues q selects, in its order.
func issueRows(q *gorm.DB, what string) ([]*store.Issue, error) {
	out := []*store.Issue{}
	err := eachRow(q, func(rows *sql.Rows) error {
		is, err := scanIssue(rows)
		out = append(out, is)
		return err
	})
	return out, translate(err, what)
}

func (s dependencyStore) Dependencies(ctx context.Context, issueID int64) ([]*store.Issue, error) {
	return s.linked(ctx, "SELECT dependency_id FROM issue_dependencies WHERE issue_id = ?", issueID)
}

func (s dependencyStore) Blocks(ctx context.Context, issueID int64) ([]*store.Issue, error) {
	return s.linked(ctx, "SELECT issue_id FROM issue_dependencies WHERE dependency_id = ?", issueID)
}

func (s dependencyStore) OpenDependencies(ctx context.Context, issueID int64) (int64, error) {
	var n int64
	err := s.d.conn(ctx).Raw(`SELECT COUNT(*) FROM issue_dependencies d JOIN issues i ON i.id = d.dependency_id
		WHERE d.issue_id = ? AND i.is_closed = ?`, issueID, false).Scan(&n).Error
	return n, translate(err, "count open dependencies")
}

type pinStore struct{ d *DB }

// pinLockClass is the first key of the PostgreSQL advisory lock that
// orders the pin changes of one repository (the second is its id).
const pinLockClass = 0x7069 // "pi"

// lockPins makes the pin changes of repoID in the transaction of ctx run
// one at a time: on PostgreSQL two transactions reading the highest
// pin_order at once would otherwise give two issues the same place.
// SQLite's immediate transactions already run one at a time.
func (s pinStore) lockPins(ctx context.Context, repoID int64) error {
	if !s.d.usesPostgres() {
		return nil
	}
	if _, ok := ctx.Value(txKey{}).(*txState); !ok {
		return errNoTx
	}
	err := s.d.conn(ctx).Exec(`SELECT pg_advisory_xact_lock(?, ?)`, pinLockClass, int32(repoID)).Error
	return translate(err, "lock pins")
}

func (s pinStore) Pinned(ctx context.Context, repoID int64, isPull bool) ([]*store.Issue, error) {
	return issueRows(s.d.conn(ctx).Table("issues").Select(issueColumns).
		Where("issues.repo_id = ? AND issues.is_pull = ? AND issues.pin_order > 0", repoID, isPull).
		Order("issues.pin_order"), "list pinned issues")
}

func (s pinStore) CountPinned(ctx context.Context, repoID int64) (int64, error) {
	if _, ok := ctx.Value(txKey{}).(*txState); ok {
		// A count that decides a pin holds the lock the pin needs.
		if err := s.lockPins(ctx, repoID); err != nil {
			return 0, err
		}
	}
	var n int64
	err := s.d.conn(ctx).Raw(`SELECT
		(SELECT COUNT(*) FROM issues WHERE repo_id = ? AND is_pull = ? AND pin_order > 0) +
		(SELECT COUNT(*) FROM issues WHERE repo_id = ? AND is_pull = ? AND pin_order > 0)`,
		repoID, false, repoID, true).Scan(&n).Error
	return n, translate(err, "count pinned issues")
}

func (s pinStore) Pin(ctx context.Context, is *store.Issue) error {
	if err := s.lockPins(ctx, is.RepoID); err != nil {
		return err
	}
	err := s.d.conn(ctx).Exec(`UPDATE issues SET pin_order = 1 + (SELECT COALESCE(MAX(p.pin_order), 0) FROM issues p
		WHERE p.repo_id = ? AND p.is_pull = ? AND p.pin_order > 0) WHERE id = ? AND pin_order = 0`,
		is.RepoID, is.IsPull, is.ID).Error
	return translate(err, "pin issue")
}

func (s pinStore) Unpin(ctx context.Context, is *store.Issue) error {
	if is.PinOrder == 0 {
		return nil
	}
	if err := s.lockPins(ctx, is.RepoID); err != nil {
		return err
	}
	db := s.d.conn(ctx)
	if err := db.Exec(`UPDATE issues SET pin_order = 0 WHERE id = ?`, is.ID).Error; err != nil {
		return translate(err, "unpin issue")
	}
	err := db.Exec(`UPDATE issues SET pin_order = pin_order - 1 WHERE repo_id = ? AND is_pull = ? AND pin_order > ?`,
		is.RepoID, is.IsPull, is.PinOrder).Error
	return translate(err, "unpin issue")
}

func (s pinStore) Move(ctx context.Context, is *store.Issue, pos int64) error {
	if is.PinOrder == 0 {
		return nil
	}
	if err := s.lockPins(ctx, is.RepoID); err != nil {
		return err
	}
	db := s.d.conn(ctx)
	var last int64
	if err := db.Raw(`SELECT COALESCE(MAX(pin_order), 0) FROM issues WHERE repo_id = ? AND is_pull = ? AND pin_order > 0`,
		is.RepoID, is.IsPull).Scan(&last).Error; err != nil {
		return translate(err, "move pin")
	}
	pos = max(1, min(pos, last))
	if pos == is.PinOrder {
		return nil
	}
	var err error
	if pos < is.PinOrder {
		err = db.Exec(`UPDATE issues SET pin_order = pin_order + 1 WHERE repo_id = ? AND is_pull = ? AND pin_order >= ? AND pin_order < ?`,
			is.RepoID, is.IsPull, pos, is.PinOrder).Error
	} else {
		err = db.Exec(`UPDATE issues SET pin_order = pin_order - 1 WHERE repo_id = ? AND is_pull = ? AND pin_order > ? AND pin_order <= ?`,
			is.RepoID, is.IsPull, is.PinOrder, pos).Error
	}
	if err != nil {
		return translate(err, "move pin")
	}
	return translate(db.Exec(`UPDATE issues SET pin_order = ? WHERE id = ?`, pos, is.ID).Error, "move pin")
}
