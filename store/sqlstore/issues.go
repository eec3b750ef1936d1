package sqlstore

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/ncruces/go-sqlite3"
	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"repohost/store"
)

func (d *DB) Issues() store.IssueStore             { return issueStore{d} }
func (d *DB) Comments() store.CommentStore         { return commentStore{d} }
func (d *DB) Labels() store.LabelStore             { return labelStore{d} }
func (d *DB) Milestones() store.MilestoneStore     { return milestoneStore{d} }
func (d *DB) Reactions() store.ReactionStore       { return reactionStore{d} }
func (d *DB) TrackedTimes() store.TrackedTimeStore { return timeStore{d} }
func (d *DB) Projects() store.ProjectStore         { return projectStore{d} }
func (d *DB) Timeline() store.TimelineStore        { return timelineStore{d} }
func (d *DB) Dependencies() store.DependencyStore  { return dependencyStore{d} }
func (d *DB) Pins() store.PinStore                 { return pinStore{d} }

// translateRef is translate for writes that insert links: a foreign key
// that no longer holds means the linked row was deleted meanwhile.
func translateRef(err error, what string) error {
	var pgErr *pgconn.PgError
	// GORM translates the drivers' errors for its own statements, not for
	// raw ones read with Scan.
	if errors.Is(err, gorm.ErrForeignKeyViolated) || errors.Is(err, sqlite3.CONSTRAINT_FOREIGNKEY) ||
		(errors.As(err, &pgErr) && pgErr.Code == "23503") {
		return fmt.Errorf("%s: %w", what, store.ErrNotFound)
	}
	return translate(err, what)
}

type issueStore struct{ d *DB }

// issueIndex is the counter row; its table is created by migrateV2.
type issueIndex struct {
	RepoID   int64
	MaxIndex int64
}

func (issueIndex) TableName() string { return "issue_indexes" }

func (s issueStore) NextIndex(ctx context.Context, repoID int64) (int64, error) {
	// One statement on both databases: the upsert either creates the row
	// or increments it under the row lock, which a concurrent creator in
	// another transaction then waits for; RETURNING hands back the value
	// this transaction wrote. No read-modify-write in Go.
	var next int64
	err := s.d.conn(ctx).Raw(`INSERT INTO issue_indexes (repo_id, max_index) VALUES (?, 1)
		ON CONFLICT (repo_id) DO UPDATE SET max_index = issue_indexes.max_index + 1
		RETURNING max_index`, repoID).Scan(&next).Error
	if err != nil {
		return 0, translateRef(err, "allocate issue number")
	}
	if next == 0 {
		return 0, fmt.Errorf("allocate issue number: no value returned")
	}
	return next, nil
}

func (s issueStore) RaiseIndex(ctx context.Context, repoID, index int64) error {
	err := s.d.conn(ctx).Exec(`INSERT INTO issue_indexes (repo_id, max_index) VALUES (?, ?)
		ON CONFLICT (repo_id) DO UPDATE SET max_index = CASE WHEN issue_indexes.max_index < excluded.max_index
			THEN excluded.max_index ELSE issue_indexes.max_index END`, repoID, index).Error
	return translateRef(err, "raise issue number")
}

func (s issueStore) Create(ctx context.Context, is *store.Issue) error {
	return translateRef(s.d.conn(ctx).Create(is).Error, "create issue")
}

func (s issueStore) CreateNumbered(ctx context.Context, is *store.Issue, total, closed int64, evs ...*store.Event) error {
	if _, ok := ctx.Value(txKey{}).(*txState); !ok {
		return errNoTx
	}
	// Everything written here is a row of the issue's repository: lists
	// kept for other repositories stay (see repoWrite).
	ctx = repoWrite(ctx, is.RepoID)
	if !s.d.usesPostgres() {
		idx, err := s.NextIndex(ctx, is.RepoID)
		if err != nil {
			return err
		}
		is.Index = idx
		if err := s.Create(ctx, is); err != nil {
			return err
		}
		if err := s.AdjustRepoCounts(ctx, is.RepoID, total, closed); err != nil {
			return err
		}
		return eventStore{s.d}.appendAbout(ctx, evs, map[string]int64{"id": is.ID, "index": is.Index})
	}
	return s.createNumbered(ctx, is.RepoID, []numbered{{is, total, closed, evs}})
}

func (s issueStore) CreateNumberedAlone(ctx context.Context, is *store.Issue, total, closed int64, evs ...*store.Event) error {
	if _, ok := ctx.Value(txKey{}).(*txState); ok || !s.d.usesPostgres() {
		return s.d.WithTx(ctx, func(ctx context.Context) error { return s.CreateNumbered(ctx, is, total, closed, evs...) })
	}
	// A statement outside a transaction is one on its own: all of it or
	// nothing is committed, and its locks are released as it ends. It
	// also writes the repository's other creates waiting for it.
	return s.d.creates.create(ctx, s, numbered{is, total, closed, evs})
}

// withFields is payload, a JSON object, with the top-level fields named
// in set given their numbers.
func withFields(payload []byte, set map[string]int64) ([]byte, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(payload, &m); err != nil {
		return nil, fmt.Errorf("event payload: %w", err)
	}
	for k, v := range set {
		m[k] = json.RawMessage(strconv.FormatInt(v, 10))
	}
	return json.Marshal(m)
}

func (s issueStore) FindByIndex(ctx context.Context, repoID, index int64) (*store.Issue, error) {
	return s.findOne(ctx, "issues.repo_id = ? AND issues.number = ?", repoID, index)
}

func (s issueStore) FindByID(ctx context.Context, id int64) (*store.Issue, error) {
	return s.findOne(ctx, "issues.id = ?", id)
}

// findOne reads the issue matching where, scanned by scanIssue rather than
// by GORM's reflection: a single issue is read on every request about one,
// and the reflective scan allocated most of the bytes such a request did.
func (s issueStore) findOne(ctx context.Context, where string, args ...any) (*store.Issue, error) {
	var found *store.Issue
	q := s.d.conn(ctx).Table("issues").Select(issueColumns).Where(where, args...).Limit(1)
	err := eachRow(q, func(rows *sql.Rows) error {
		is, err := scanIssue(rows)
		found = is
		return err
	})
	if err == nil && found == nil {
		err = gorm.ErrRecordNotFound
	}
	if err != nil {
		return nil, translate(err, "find issue")
	}
	return found, nil
}

func (s issueStore) FindByIDs(ctx context.Context, ids []int64) (map[int64]*store.Issue, error) {
	out := make(map[int64]*store.Issue, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	var list []*store.Issue
	if err := s.d.conn(ctx).Where("id IN ?", ids).Find(&list).Error; err != nil {
		return nil, translate(err, "find issues")
	}
	for _, is := range list {
		out[is.ID] = is
	}
	return out, nil
}

func (s issueStore) Lock(ctx context.Context, repoID, index int64, now time.Time) (*store.Issue, error) {
	// An UPDATE takes the row lock on PostgreSQL and needs no dialect
	// syntax (SQLite has no SELECT ... FOR UPDATE, and its immediate
	// transactions already serialise writers).
	res := s.d.conn(ctx).Model(&store.Issue{}).Where("repo_id = ? AND number = ?", repoID, index).
		UpdateColumn("updated_at", now)
	if res.Error != nil {
		return nil, translate(res.Error, "lock issue")
	}
	if res.RowsAffected == 0 {
		return nil, translate(gorm.ErrRecordNotFound, "lock issue")
	}
	return s.FindByIndex(ctx, repoID, index)
}

func (s issueStore) Update(ctx context.Context, is *store.Issue, columns ...string) error {
	res := s.d.conn(ctx).Model(is).Select(columns).Updates(is)
	return affected(res, "update issue")
}

func (s issueStore) SetClosed(ctx context.Context, id int64, closed bool, now time.Time) (bool, error) {
	var closedAt *time.Time
	if closed {
		closedAt = &now
	}
	// The state in the WHERE clause makes the transition happen once
	// however many requests race for it; PostgreSQL re-checks it after
	// waiting for a concurrent writer.
	res := s.d.conn(ctx).Model(&store.Issue{}).Where("id = ? AND is_closed = ?", id, !closed).
		UpdateColumns(map[string]any{"is_closed": closed, "closed_at": closedAt, "updated_at": now})
	if res.Error != nil {
		return false, translate(res.Error, "change issue state")
	}
	return res.RowsAffected == 1, nil
}

func (s issueStore) Delete(ctx context.Context, id int64) error {
	res := s.d.conn(ctx).Delete(&store.Issue{}, id)
	return affected(res, "delete issue")
}

func (s issueStore) AdjustRepoCounts(ctx context.Context, repoID, total, closed int64) error {
	if total == 0 && closed == 0 {
		return nil
	}
	err := s.d.conn(counterWrite(ctx, repoID)).Exec(`UPDATE repositories SET num_issues = num_issues + ?, num_closed_issues = num_closed_issues + ?
		WHERE id = ?`, total, closed, repoID).Error
	return translate(err, "count repository issues")
}

func (s issueStore) AdjustRepoPullCounts(ctx context.Context, repoID, total, closed int64) error {
	if total == 0 && closed == 0 {
		return nil
	}
	err := s.d.conn(counterWrite(ctx, repoID)).Exec(`UPDATE repositories SET num_pulls = num_pulls + ?, num_closed_pulls = num_closed_pulls + ?
		WHERE id = ?`, total, closed, repoID).Error
	return translate(err, "count repository pull requests")
}

func (s issueStore) AdjustComments(ctx context.Context, issueID, delta int64, now time.Time) error {
	res := s.d.conn(ctx).Exec(`UPDATE issues SET num_comments = num_comments + ?, updated_at = ? WHERE id = ?`,
		delta, now, issueID)
	return affected(res, "count comments")
}

// issueAssignee is a row of issue_assignees (created by migrateV2).
type issueAssignee struct {
	IssueID    int64
	AssigneeID int64
	Position   int
}

func (issueAssignee) TableName() string { return "issue_assignees" }

func (s issueStore) SetAssignees(ctx context.Context, issueID int64, userIDs []int64) error {
	db := s.d.conn(ctx)
	if err := db.Where("issue_id = ?", issueID).Delete(&issueAssignee{}).Error; err != nil {
		return translate(err, "clear assignees")
	}
	if len(userIDs) == 0 {
		return nil
	}
	rows := make([]issueAssignee, 0, len(userIDs))
	for i, id := range userIDs {
		rows = append(rows, issueAssignee{IssueID: issueID, AssigneeID: id, Position: i})
	}
	return translateRef(db.Create(&rows).Error, "assign issue")
}

func (s issueStore) Assignees(ctx context.Context, issueIDs []int64) (map[int64][]int64, error) {
	out := map[int64][]int64{}
	if len(issueIDs) == 0 {
		return out, nil
	}
	q := s.d.conn(ctx).Table("issue_assignees").Select("issue_id, assignee_id").Where("issue_id IN ?", issueIDs).
		Order("issue_id, position, assignee_id")
	err := eachRow(q, func(rows *sql.Rows) error {
		var issue, user int64
		err := rows.Scan(&issue, &user)
		out[issue] = append(out[issue], user)
		return err
	})
	if err != nil {
		return nil, translate(err, "list assignees")
	}
	return out, nil
}

// Link kinds of the rows of Links' statement.
const (
	linkLabel = iota
	linkAssignee
	linkProject
)

func (s issueStore) Links(ctx context.Context, issueIDs []int64) (store.IssueLinks, error) {
	out := store.IssueLinks{Labels: map[int64][]int64{}, Assignees: map[int64][]int64{}, Projects: map[int64][]int64{}}
	if len(issueIDs) == 0 {
		return out, nil
	}
	// One round trip for the three kinds of links. The kinds are integer
	// literals, not parameters, so that every branch has the same column
	// types on PostgreSQL. The order gives labels by name, then id (their
	// names joined for that alone, so that they sort by the database's
	// collation as LabelStore.ForIssues does), assignees in assignment
	// order and projects ascending.
	q := s.d.conn(ctx).Raw(`SELECT `+strconv.Itoa(linkLabel)+` AS kind, issue_labels.issue_id, issue_labels.label_id AS ref,
			0 AS position, labels.name AS name
			FROM issue_labels JOIN labels ON labels.id = issue_labels.label_id WHERE issue_labels.issue_id IN ?
		UNION ALL SELECT `+strconv.Itoa(linkAssignee)+`, issue_id, assignee_id, position, ''
			FROM issue_assignees WHERE issue_id IN ?
		UNION ALL SELECT `+strconv.Itoa(linkProject)+`, issue_id, project_id, 0, ''
			FROM project_issues WHERE issue_id IN ?
		ORDER BY kind, issue_id, position, name, ref`, issueIDs, issueIDs, issueIDs)
	byKind := [...]map[int64][]int64{linkLabel: out.Labels, linkAssignee: out.Assignees, linkProject: out.Projects}
	err := eachRow(q, func(rows *sql.Rows) error {
		var kind, position int
		var issue, ref int64
		var name string
		if err := rows.Scan(&kind, &issue, &ref, &position, &name); err != nil {
			return err
		}
		if kind < 0 || kind >= len(byKind) {
			return fmt.Errorf("issue links: unknown kind %d", kind)
		}
		byKind[kind][issue] = append(byKind[kind][issue], ref)
		return nil
	})
	if err != nil {
		return store.IssueLinks{}, translate(err, "list issue links")
	}
	return out, nil
}

func (s issueStore) IsAssignee(ctx context.Context, issueID, userID int64) (bool, error) {
	var n int64
	err := s.d.conn(ctx).Model(&issueAssignee{}).Where("issue_id = ? AND assignee_id = ?", issueID, userID).Count(&n).Error
	return n > 0, translate(err, "check assignee")
}

func (s issueStore) AddMentions(ctx context.Context, issueID int64, lowerNames []string) error {
	if len(lowerNames) == 0 {
		return nil
	}
	// One statement whatever the number of names; names of no account
	// simply select nothing.
	err := s.d.conn(ctx).Exec(`INSERT INTO issue_mentions (issue_id, user_id)
		SELECT ?, id FROM users WHERE lower_name IN ? ON CONFLICT DO NOTHING`, issueID, lowerNames).Error
	return translateRef(err, "record mentions")
}

// issueOrder is the order of every issue list: newest first.
var issueOrder = listOrder{{"issues.created_at", true}, {"issues.id", true}}

func (s issueStore) List(ctx context.Context, f store.IssueFilter, p store.Page) ([]*store.Issue, int64, error) {
	if f.None {
		return []*store.Issue{}, 0, nil
	}
	if f.Keyword != "" {
		// A keyword's matches are few, and its first page usually holds
		// them all: read the page first, and count only when it is full.
		if _, ok := s.matched(ctx, f); !ok {
			return []*store.Issue{}, 0, nil
		}
		page := func(total int64) ([]*store.Issue, error) {
			out, _, err := s.page(ctx, f, p, total)
			return out, err
		}
		count := func() (int64, error) {
			total, err := s.count(ctx, f)
			return total, translate(err, "count issues")
		}
		return pageThenCount(p, page, count)
	}
	total, err := s.count(ctx, f)
	if err != nil {
		return nil, 0, translate(err, "count issues")
	}
	return s.page(ctx, f, p, total)
}

// page reads page p of the issues f selects, which number total.
func (s issueStore) page(ctx context.Context, f store.IssueFilter, p store.Page, total int64) ([]*store.Issue, int64, error) {
	w := windowOf(p, total)
	out := []*store.Issue{}
	if w.empty {
		return out, total, nil
	}
	// The page's ids come from the index alone (the filter and the order
	// are both in it); only the rows of the page are then read, so a deep
	// page skips index entries, not rows. The outer statement has no ORDER
	// BY of its own: the page is put in order here, as it is small.
	var ids *gorm.DB
	if f.Keyword != "" {
		// The keyword's matches, sorted (count found some).
		m, _ := s.matched(ctx, f)
		ids = m.Select("issues.id").Order(issueOrder.sql(w.reverse))
	} else if f.AcrossRepos {
		var err error
		if ids, err = s.acrossPage(ctx, f, w); err != nil {
			return nil, 0, translate(err, "list issues")
		}
		if ids == nil {
			return out, total, nil
		}
	} else if driver, rest, ok := byLabel(f); ok {
		ids = s.labelled(ctx, driver, rest).Select("il.issue_id").Order(labelledOrder.sql(w.reverse))
	} else {
		ids = s.filtered(ctx, f, false).Select("issues.id").Order(issueOrder.sql(w.reverse))
	}
	if !f.AcrossRepos || f.Keyword != "" {
		ids = ids.Offset(w.offset).Limit(w.limit)
	}
	page := s.d.conn(ctx).Table("issues").Select(issueColumns).Where("issues.id IN (?)", ids)
	if err := eachRow(page, func(rows *sql.Rows) error {
		is, err := scanIssue(rows)
		out = append(out, is)
		return err
	}); err != nil {
		return nil, 0, translate(err, "list issues")
	}
	slices.SortFunc(out, func(a, b *store.Issue) int {
		if c := b.CreatedAt.Compare(a.CreatedAt); c != 0 {
			return c
		}
		return cmp.Compare(b.ID, a.ID)
	})
	return out, total, nil
}

// labelledOrder is issueOrder read from the label links (migrateV16).
var labelledOrder = listOrder{{"il.issue_created_at", true}, {"il.issue_id", true}}

// byLabel tells whether f's issues are best read from the links of one
// label: f is a repository's, and one of its label groups is a single
// label (a group of several would need its links merged, and could name
// an issue twice). It returns that label and f without it.
func byLabel(f store.IssueFilter) (int64, store.IssueFilter, bool) {
	if f.AcrossRepos || f.RepoID == 0 {
		return 0, f, false
	}
	for i, group := range f.LabelIDs {
		if len(group) == 1 {
			rest := f
			rest.LabelIDs = slices.Delete(slices.Clone(f.LabelIDs), i, i+1)
			return group[0], rest, true
		}
	}
	return 0, f, false
}

// labelled selects the issues carrying label that f keeps, starting from
// the label's links in the list's order: a page reads the links down to
// the page and each one's issue by its key, a count reads the label's
// links, and neither reads the repository's other issues. Both databases
// are held to that order: SQLite by the CROSS JOIN, PostgreSQL by a
// lateral subquery it cannot flatten (OFFSET 0), which it otherwise
// trades, on a small table, for walking the repository's issues.
func (s issueStore) labelled(ctx context.Context, label int64, f store.IssueFilter) *gorm.DB {
	var from *gorm.DB
	if s.d.usesPostgres() {
		from = s.d.conn(ctx).Table("issue_labels il").
			Joins("CROSS JOIN LATERAL (SELECT * FROM issues WHERE issues.id = il.issue_id OFFSET 0) issues").
			Where("il.label_id = ?", label)
	} else {
		from = s.d.conn(ctx).Table("issue_labels il").Joins("CROSS JOIN issues").
			Where("il.label_id = ? AND issues.id = il.issue_id", label)
	}
	return s.filteredFrom(ctx, from, f, false)
}

// filtered selects the issues f keeps. Filters on links (labels,
// assignees, mentions) take two forms: for a page, a probe of the link
// table's key per issue met while walking the order's index, which stops
// once the page is full; for a count, which must see every match, the ids
// gathered from the link table's index on the label or user, so that
// counting a rare label does not probe every issue of the repository.
func (s issueStore) filtered(ctx context.Context, f store.IssueFilter, forCount bool) *gorm.DB {
	return s.filteredFrom(ctx, s.d.conn(ctx).Model(&store.Issue{}), f, forCount)
}

// filteredFrom is filtered with the issues read from db.
func (s issueStore) filteredFrom(ctx context.Context, db *gorm.DB, f store.IssueFilter, forCount bool) *gorm.DB {
	if f.RepoID > 0 {
		db = db.Where("issues.repo_id = ?", f.RepoID)
	}
	if f.AcrossRepos {
		if forCount {
			// Every match is counted, so the ids of the searched
			// repositories are gathered once. On SQLite the unary + keeps
			// the count on the index of its other filters (the pull
			// requests' count on is_pull, which finds none when there are
			// none) rather than probing each repository's issues.
			col := "issues.repo_id"
			if !s.d.usesPostgres() {
				col = "+issues.repo_id"
			}
			db = db.Where(col+" IN (?)", s.searchedRepos(ctx, f))
		} else {
			// A page walks the global order's index and probes each
			// issue's repository by its key until the page is full:
			// gathering the ids of every repository the viewer may see
			// first would cost as much as there are repositories. The
			// unary + (SQLite, which has no statistics) keeps the
			// visibility rule's open part off its index, so the probe
			// stays one key lookup.
			vis := visibilityOf(f.Viewer)
			repo := s.searchable(ctx, f).Select("1").Where("repositories.id = issues.repo_id")
			if cond, args := vis.probeCond(!s.d.usesPostgres()); cond != "" {
				repo = repo.Where(cond, args...)
			}
			if s.d.usesPostgres() {
				// A fence PostgreSQL does not flatten (OFFSET 0): it
				// would otherwise turn the probe of a count (of every
				// pull request of the visible repositories) into a join
				// that reads every repository.
				db = db.Where("EXISTS (? OFFSET 0)", repo)
			} else {
				db = db.Where("EXISTS (?)", repo)
			}
		}
	}
	if f.IsClosed != nil {
		db = db.Where("issues.is_closed = ?", *f.IsClosed)
	}
	if f.IsPull != nil {
		db = db.Where("issues.is_pull = ?", *f.IsPull)
	}
	for _, name := range f.LabelNames {
		if forCount {
			db = db.Where(`issues.id IN (SELECT il.issue_id FROM issue_labels il JOIN labels l ON l.id = il.label_id
				WHERE l.name = ?)`, name)
		} else {
			db = db.Where(`EXISTS (SELECT 1 FROM issue_labels il JOIN labels l ON l.id = il.label_id
				WHERE il.issue_id = issues.id AND l.name = ?)`, name)
		}
	}
	for _, ids := range f.LabelIDs {
		if forCount {
			db = db.Where("issues.id IN (SELECT il.issue_id FROM issue_labels il WHERE il.label_id IN ?)", ids)
		} else {
			db = db.Where("EXISTS (SELECT 1 FROM issue_labels il WHERE il.issue_id = issues.id AND il.label_id IN ?)", ids)
		}
	}
	switch {
	case len(f.MilestoneNames) > 0 && len(f.MilestoneIDs) > 0:
		db = db.Where(`(issues.milestone_id IN ? OR issues.milestone_id IN
			(SELECT m.id FROM milestones m WHERE m.repo_id = issues.repo_id AND m.title IN ?))`, f.MilestoneIDs, f.MilestoneNames)
	case len(f.MilestoneIDs) > 0:
		db = db.Where("issues.milestone_id IN ?", f.MilestoneIDs)
	case len(f.MilestoneNames) > 0:
		db = db.Where(`issues.milestone_id IN
			(SELECT m.id FROM milestones m WHERE m.repo_id = issues.repo_id AND m.title IN ?)`, f.MilestoneNames)
	}
	if f.Keyword != "" {
		// Lists start from the matches instead (matched); this form
		// serves any other reader of a filter with a keyword.
		if ids := s.keywordMatches(ctx, f); ids != nil {
			db = db.Where("issues.id IN (?)", ids)
		} else {
			db = db.Where("1 = 0")
		}
	}
	if f.UpdatedSince != nil {
		db = db.Where("issues.updated_at >= ?", *f.UpdatedSince)
	}
	if f.UpdatedBefore != nil {
		db = db.Where("issues.updated_at <= ?", *f.UpdatedBefore)
	}
	if f.PosterID != 0 {
		db = db.Where("issues.poster_id = ?", f.PosterID)
	}
	switch {
	case f.AssigneeID == 0:
	case forCount:
		db = db.Where("issues.id IN (SELECT a.issue_id FROM issue_assignees a WHERE a.assignee_id = ?)", f.AssigneeID)
	default:
		db = db.Where("EXISTS (SELECT 1 FROM issue_assignees a WHERE a.issue_id = issues.id AND a.assignee_id = ?)", f.AssigneeID)
	}
	switch {
	case f.MentionedID == 0:
	case forCount:
		db = db.Where("issues.id IN (SELECT m.issue_id FROM issue_mentions m WHERE m.user_id = ?)", f.MentionedID)
	default:
		db = db.Where("EXISTS (SELECT 1 FROM issue_mentions m WHERE m.issue_id = issues.id AND m.user_id = ?)", f.MentionedID)
	}
	if f.ReviewRequestedID != 0 {
		db = db.Where("EXISTS (SELECT 1 FROM reviews rv WHERE rv.issue_id = issues.id AND rv.reviewer_id = ? AND rv.state = ?)",
			f.ReviewRequestedID, store.ReviewRequest)
	}
	if f.ReviewedID != 0 {
		db = db.Where("EXISTS (SELECT 1 FROM reviews rv WHERE rv.issue_id = issues.id AND rv.reviewer_id = ? AND rv.state IN ?)",
			f.ReviewedID, []string{store.ReviewApproved, store.ReviewRequestChanges, store.ReviewCommented})
	}
	return db
}

// searchedRepos selects the ids of the repositories a cross-repository
// search covers.
func (s issueStore) searchedRepos(ctx context.Context, f store.IssueFilter) *gorm.DB {
	return s.d.visibleIDs(ctx, func() *gorm.DB { return s.searchable(ctx, f) }, visibilityOf(f.Viewer))
}

// searchable keeps the repositories a cross-repository search may cover,
// before who may see them.
func (s issueStore) searchable(ctx context.Context, f store.IssueFilter) *gorm.DB {
	repos := s.d.conn(ctx).Table("repositories").
		Where("repositories.has_issues = ? AND repositories.external_tracker_url = ?", true, "")
	if f.OwnerID > 0 {
		repos = repos.Where("repositories.owner_id = ?", f.OwnerID)
	}
	return repos
}

// count is the size of the filtered set. When f only picks repositories,
// a state and a type, the repositories' issue counters (kept exact in the
// transactions that change issues) give the issues' share without reading
// a single issue, and only pull requests, which have no counter the store
// trusts, are counted (through an index that starts with is_pull, so none
// costs nothing); any other filter is counted row by row, through indexes.
func (s issueStore) count(ctx context.Context, f store.IssueFilter) (int64, error) {
	var total int64
	plain := len(f.LabelNames) == 0 && len(f.LabelIDs) == 0 && len(f.MilestoneIDs) == 0 && len(f.MilestoneNames) == 0 &&
		f.Keyword == "" && f.UpdatedSince == nil && f.UpdatedBefore == nil && f.PosterID == 0 && f.AssigneeID == 0 &&
		f.MentionedID == 0 && (f.RepoID > 0) != f.AcrossRepos
	if !plain {
		if f.Keyword != "" {
			// The keyword's matches, each held to the other filters.
			m, ok := s.matched(ctx, f)
			if !ok {
				return 0, nil
			}
			err := m.Select("COUNT(*)").Scan(&total).Error
			return total, err
		}
		if label, rest, ok := byLabel(f); ok {
			// Every link of the label is read, and each one's issue by its
			// key: the count reads no issue without the label.
			err := s.labelled(ctx, label, rest).Select("COUNT(*)").Scan(&total).Error
			return total, err
		}
		err := s.filtered(ctx, f, true).Count(&total).Error
		return total, err
	}
	counter := "repositories.num_issues"
	switch {
	case f.IsClosed == nil:
	case *f.IsClosed:
		counter = "repositories.num_closed_issues"
	default:
		counter = "repositories.num_issues - repositories.num_closed_issues"
	}
	sum := "COALESCE(SUM(" + counter + "), 0)"
	var issues *gorm.DB
	if f.AcrossRepos {
		var err error
		if issues, err = s.acrossSum(ctx, f, sum); err != nil {
			return 0, err
		}
	} else {
		issues = s.d.conn(ctx).Table("repositories").Select(sum).Where("repositories.id = ?", f.RepoID)
	}
	// The pull requests' part: the same filter with is_pull forced on.
	pf := f
	yes := true
	pf.IsPull = &yes
	// Across every repository the viewer may see (a site's public ones
	// among them), each pull request's repository is probed by its key
	// (see filteredFrom), as the page does: gathering the ids of those
	// repositories would read them all. Across few repositories (an
	// owner's, or only those a restricted viewer was given), their ids are
	// gathered once.
	vis := visibilityOf(f.Viewer)
	probe := f.AcrossRepos && f.OwnerID == 0 && (vis.all || vis.open != "")
	pulls := s.filtered(ctx, pf, !probe).Select("COUNT(*)")
	var err error
	switch {
	case f.IsPull == nil:
		err = s.d.conn(ctx).Raw("SELECT (?) + (?)", issues, pulls).Scan(&total).Error
	case *f.IsPull:
		err = pulls.Scan(&total).Error
	default:
		err = issues.Scan(&total).Error
	}
	return total, err
}

// acrossSum selects sum, an aggregate of the repositories' issue counters,
// over the repositories a cross-repository search covers. Without an
// owner, the part open to the viewer (every public repository, for one
// who is not restricted) is read from the sums kept per class of
// repositories (repo_issue_totals, migrateV33), a few hundred rows
// whatever the number of repositories, and only what the viewer was given
// besides (its own private repositories, its collaborations, teams and
// organizations) is read repository by repository. An owner's search
// reads that owner's repositories, through the index on owner_id.
func (s issueStore) acrossSum(ctx context.Context, f store.IssueFilter, sum string) (*gorm.DB, error) {
	vis := visibilityOf(f.Viewer)
	searchable := func() *gorm.DB { return s.searchable(ctx, f) }
	if f.OwnerID > 0 || (!vis.all && vis.open == "") {
		// The searched repositories' counters, read through the indexes
		// of the visibility rule's parts.
		return s.d.visibleAggregate(ctx, searchable, vis, sum), nil
	}
	// The kept sums hold the same columns as repositories, and the open
	// part of the rule names only the two columns that tell the classes
	// apart (is_private, owner_visibility).
	totals := s.d.conn(ctx).Table("repo_issue_totals").
		Select(strings.ReplaceAll(sum, "repositories.", "repo_issue_totals."))
	if vis.all {
		return totals.Where("repo_issue_totals.is_private IN ?", []bool{false, true}), nil
	}
	totals = totals.Where(strings.ReplaceAll(vis.open, "repositories.", "repo_issue_totals."), vis.openArgs...)
	if vis.given == "" {
		return totals, nil
	}
	// What the viewer was given besides, which only changes with the
	// repositories, their counters and the viewer's grants: kept by the
	// read cache while none of them changes (a busy viewer's thousand
	// repositories are then not read on every search).
	key := fmt.Sprintf("across-given\x00%s\x00%+v", sum, f.Viewer)
	given, err := cached(ctx, s.d, key, givenTables, func(n int64) int64 { return n }, func() (int64, error) {
		var n int64
		err := visibleParts(searchable, vis, sum)[1].Scan(&n).Error
		return n, err
	})
	if err != nil {
		return nil, err
	}
	return s.d.conn(ctx).Raw("SELECT (?) + ?", totals, given), nil
}

// givenTables are those what a viewer was given (visibilityOf's given part)
// and the repositories' issue counters are read from; users, as an owner's
// visibility is copied into its repositories by a trigger, which the read
// cache does not see.
const givenTables = tRepos | tRepoCounts | tUsers | tCollaborations | tOrgMembers | tTeams | tTeamUsers | tTeamRepos

func (s issueStore) Repos(ctx context.Context, repoIDs []int64) (map[int64]*store.Repository, error) {
	// Kept as FindByID keeps them: a page names the same few
	// repositories from one request to the next. Those not kept come with
	// their owners in one statement.
	return cachedByIDs(ctx, s.d, repoIDs, repoIDKey, tRepos|tUsers, cloneRepo, repoID, repoID,
		func(missing []int64) ([]*store.Repository, error) { return repoStore{s.d}.FindByIDs(ctx, missing) })
}

// counterChecks pairs each stored counter with a query counting the rows
// where it disagrees with the rows it summarises.
var counterChecks = []struct {
	name, query string
	args        []any
}{
	{"repo_issue_totals", `SELECT COUNT(*) FROM repo_issue_totals t LEFT JOIN (` + classSums + `) a
		ON a.is_private = t.is_private AND a.owner_visibility = t.owner_visibility AND a.stripe = t.stripe
		WHERE t.num_issues <> COALESCE(a.n, 0) OR t.num_closed_issues <> COALESCE(a.c, 0)`, nil},
	{"repositories.num_issues", `SELECT COUNT(*) FROM repositories r WHERE r.num_issues <>
		(SELECT COUNT(*) FROM issues i WHERE i.repo_id = r.id AND i.is_pull = ?)`, []any{false}},
	{"repositories.num_closed_issues", `SELECT COUNT(*) FROM repositories r WHERE r.num_closed_issues <>
		(SELECT COUNT(*) FROM issues i WHERE i.repo_id = r.id AND i.is_pull = ? AND i.is_closed = ?)`, []any{false, true}},
	{"repositories.num_pulls", `SELECT COUNT(*) FROM repositories r WHERE r.num_pulls <>
		(SELECT COUNT(*) FROM issues i WHERE i.repo_id = r.id AND i.is_pull = ?)`, []any{true}},
	{"repositories.num_closed_pulls", `SELECT COUNT(*) FROM repositories r WHERE r.num_closed_pulls <>
		(SELECT COUNT(*) FROM issues i WHERE i.repo_id = r.id AND i.is_pull = ? AND i.is_closed = ?)`, []any{true, true}},
	{"repositories.num_forks", `SELECT COUNT(*) FROM repositories r WHERE r.num_forks <>
		(SELECT COUNT(*) FROM repositories f WHERE f.fork_id = r.id)`, nil},
	{"repositories.num_stars", `SELECT COUNT(*) FROM repositories r WHERE r.num_stars <>
		(SELECT COUNT(*) FROM stars s WHERE s.repo_id = r.id)`, nil},
	{"users.num_stars", `SELECT COUNT(*) FROM users u WHERE u.num_stars <>
		(SELECT COUNT(*) FROM stars s WHERE s.user_id = u.id)`, nil},
	{"users.num_followers", `SELECT COUNT(*) FROM users u WHERE u.num_followers <>
		(SELECT COUNT(*) FROM follows f WHERE f.follow_id = u.id)`, nil},
	{"users.num_following", `SELECT COUNT(*) FROM users u WHERE u.num_following <>
		(SELECT COUNT(*) FROM follows f WHERE f.user_id = u.id)`, nil},
	{"milestones.num_issues", `SELECT COUNT(*) FROM milestones m WHERE m.num_issues <>
		(SELECT COUNT(*) FROM issues i WHERE i.milestone_id = m.id)`, nil},
	{"milestones.num_closed_issues", `SELECT COUNT(*) FROM milestones m WHERE m.num_closed_issues <>
		(SELECT COUNT(*) FROM issues i WHERE i.milestone_id = m.id AND i.is_closed = ?)`, []any{true}},
	{"issues.num_comments", `SELECT COUNT(*) FROM issues i WHERE i.num_comments <>
		(SELECT COUNT(*) FROM comments c WHERE c.issue_id = i.id)`, nil},
	{"issues.number (duplicates)", `SELECT COUNT(*) FROM
		(SELECT repo_id, number FROM issues GROUP BY repo_id, number HAVING COUNT(*) > 1) d`, nil},
	{"issue_indexes.max_index (behind)", `SELECT COUNT(*) FROM issues i WHERE i.number >
		COALESCE((SELECT x.max_index FROM issue_indexes x WHERE x.repo_id = i.repo_id), 0)`, nil},
}

func (s issueStore) CheckCounters(ctx context.Context) (map[string]int64, error) {
	out := make(map[string]int64, len(counterChecks))
	for _, c := range counterChecks {
		var bad int64
		if err := s.d.conn(ctx).Raw(c.query, c.args...).Scan(&bad).Error; err != nil {
			return nil, translate(err, "check "+c.name)
		}
		out[c.name] = bad
	}
	return out, nil
}

// counterRecounts pairs each stored counter with the statement that sets
// it to the count of its rows where the two differ (the maintenance task
// check_repo_stats). Each is one statement, so a counter moved meanwhile by
// a transaction is either seen by it or left right by that transaction.
var counterRecounts = []struct {
	name, query string
	args        []any
}{
	{"repositories.num_issues", recount("repositories", "num_issues",
		"SELECT COUNT(*) FROM issues i WHERE i.repo_id = repositories.id AND i.is_pull = ?"), []any{false, false}},
	{"repositories.num_closed_issues", recount("repositories", "num_closed_issues",
		"SELECT COUNT(*) FROM issues i WHERE i.repo_id = repositories.id AND i.is_pull = ? AND i.is_closed = ?"), []any{false, true, false, true}},
	{"repositories.num_pulls", recount("repositories", "num_pulls",
		"SELECT COUNT(*) FROM issues i WHERE i.repo_id = repositories.id AND i.is_pull = ?"), []any{true, true}},
	{"repositories.num_closed_pulls", recount("repositories", "num_closed_pulls",
		"SELECT COUNT(*) FROM issues i WHERE i.repo_id = repositories.id AND i.is_pull = ? AND i.is_closed = ?"), []any{true, true, true, true}},
	{"repositories.num_forks", recount("repositories", "num_forks",
		"SELECT COUNT(*) FROM repositories f WHERE f.fork_id = repositories.id"), nil},
	{"repositories.num_releases", recount("repositories", "num_releases",
		"SELECT COUNT(*) FROM releases rl WHERE rl.repo_id = repositories.id AND rl.is_draft = ?"), []any{false, false}},
	{"repositories.num_stars", recount("repositories", "num_stars",
		"SELECT COUNT(*) FROM stars s WHERE s.repo_id = repositories.id"), nil},
	{"users.num_stars", recount("users", "num_stars",
		"SELECT COUNT(*) FROM stars s WHERE s.user_id = users.id"), nil},
	{"users.num_followers", recount("users", "num_followers",
		"SELECT COUNT(*) FROM follows f WHERE f.follow_id = users.id"), nil},
	{"users.num_following", recount("users", "num_following",
		"SELECT COUNT(*) FROM follows f WHERE f.user_id = users.id"), nil},
	{"milestones.num_issues", recount("milestones", "num_issues",
		"SELECT COUNT(*) FROM issues i WHERE i.milestone_id = milestones.id"), nil},
	{"milestones.num_closed_issues", recount("milestones", "num_closed_issues",
		"SELECT COUNT(*) FROM issues i WHERE i.milestone_id = milestones.id AND i.is_closed = ?"), []any{true, true}},
	{"issues.num_comments", recount("issues", "num_comments",
		"SELECT COUNT(*) FROM comments c WHERE c.issue_id = issues.id"), nil},
}

// recount is the UPDATE that sets table.column to count where they differ
// (its arguments: count's, twice).
func recount(table, column, count string) string {
	return "UPDATE " + table + " SET " + column + " = (" + count + ") WHERE " + column + " <> (" + count + ")"
}

// classSums sums the issue counters of the repositories counted in
// repo_issue_totals, by class and stripe (migrateV33).
var classSums = fmt.Sprintf(`SELECT is_private, owner_visibility, id %% %d AS stripe,
	SUM(num_issues) AS n, SUM(num_closed_issues) AS c
	FROM repositories WHERE has_issues AND external_tracker_url = ''
	GROUP BY is_private, owner_visibility, id %% %d`, totalStripes, totalStripes)

func (s issueStore) RecountCounters(ctx context.Context) (map[string]int64, error) {
	out := make(map[string]int64, len(counterRecounts)+1)
	for _, c := range counterRecounts {
		res := s.d.conn(ctx).Exec(c.query, c.args...)
		if res.Error != nil {
			return nil, translate(res.Error, "recount "+c.name)
		}
		out[c.name] = res.RowsAffected
	}
	// The sums follow the counters just set (by their triggers); set
	// from their repositories, they are right again if anything bypassed
	// the triggers.
	res := s.d.conn(ctx).Exec(`UPDATE repo_issue_totals SET num_issues = COALESCE(a.n, 0), num_closed_issues = COALESCE(a.c, 0)
		FROM repo_issue_totals t LEFT JOIN (` + classSums + `) a
			ON a.is_private = t.is_private AND a.owner_visibility = t.owner_visibility AND a.stripe = t.stripe
		WHERE t.is_private = repo_issue_totals.is_private AND t.owner_visibility = repo_issue_totals.owner_visibility
			AND t.stripe = repo_issue_totals.stripe
			AND (repo_issue_totals.num_issues <> COALESCE(a.n, 0) OR repo_issue_totals.num_closed_issues <> COALESCE(a.c, 0))`)
	if res.Error != nil {
		return nil, translate(res.Error, "recount repo_issue_totals")
	}
	out["repo_issue_totals"] = res.RowsAffected
	return out, nil
}

// onConflictIgnore is INSERT ... ON CONFLICT DO NOTHING on both databases.
var onConflictIgnore = clause.OnConflict{DoNothing: true}
