package sqlstore

import (
	"context"
	"database/sql"
	"strconv"
	"strings"

	"gorm.io/gorm"

	"repohost/store"
)

type labelStore struct{ d *DB }

// issueLabel is a row of issue_labels (created by migrateV2).
type issueLabel struct {
	IssueID int64
	LabelID int64
}

func (issueLabel) TableName() string { return "issue_labels" }

func (s labelStore) Create(ctx context.Context, l *store.Label) error {
	return translateRef(s.d.conn(ctx).Create(l).Error, "create label")
}

func (s labelStore) Find(ctx context.Context, repoID, id int64) (*store.Label, error) {
	var l store.Label
	if err := s.d.conn(ctx).Where("repo_id = ? AND id = ?", repoID, id).Take(&l).Error; err != nil {
		return nil, translate(err, "find label")
	}
	return &l, nil
}

func (s labelStore) FindOfOrg(ctx context.Context, orgID, id int64) (*store.Label, error) {
	var l store.Label
	if err := s.d.conn(ctx).Where("org_id = ? AND id = ?", orgID, id).Take(&l).Error; err != nil {
		return nil, translate(err, "find label")
	}
	return &l, nil
}

// usableOn restricts a label query to the labels usable on repository
// repoID: its own and those of the organization owning it (a user owns no
// labels, so its id matches none).
func usableOn(db *gorm.DB, repoID int64) *gorm.DB {
	return db.Where("(labels.repo_id = ? OR labels.org_id = (SELECT repositories.owner_id FROM repositories WHERE repositories.id = ?))",
		repoID, repoID)
}

func (s labelStore) FindByIDs(ctx context.Context, repoID int64, ids []int64) ([]*store.Label, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	var found []*store.Label
	if err := usableOn(s.d.conn(ctx), repoID).Where("labels.id IN ?", ids).Find(&found).Error; err != nil {
		return nil, translate(err, "find labels")
	}
	byID := make(map[int64]*store.Label, len(found))
	for _, l := range found {
		byID[l.ID] = l
	}
	out := make([]*store.Label, 0, len(found))
	seen := map[int64]bool{}
	for _, id := range ids {
		if l := byID[id]; l != nil && !seen[id] {
			seen[id] = true
			out = append(out, l)
		}
	}
	return out, nil
}

func (s labelStore) ByIDs(ctx context.Context, ids []int64) (map[int64]*store.Label, error) {
	return cachedByIDs(ctx, s.d, ids, labelIDKey, tLabels|tRepoRows, cloneLabel, func(l *store.Label) int64 { return l.ID }, nil,
		rowsByID[*store.Label](ctx, s.d, "find labels"))
}

func labelIDKey(id int64) string { return "label:" + strconv.FormatInt(id, 10) }

func cloneLabel(l *store.Label) *store.Label {
	c := *l
	c.ArchivedAt = cloneTime(l.ArchivedAt)
	return &c
}

func (s labelStore) FindByNames(ctx context.Context, repoID int64, names []string) ([]*store.Label, error) {
	if len(names) == 0 {
		return nil, nil
	}
	var out []*store.Label
	err := usableOn(s.d.conn(ctx), repoID).Where("labels.name IN ?", names).Order("labels.id").Find(&out).Error
	return out, translate(err, "find labels")
}

func (s labelStore) Update(ctx context.Context, l *store.Label) error {
	res := s.d.conn(ctx).Select("*").Omit("created_at", "repo_id", "org_id").Updates(l)
	return affected(res, "update label")
}

func (s labelStore) Delete(ctx context.Context, id int64) error {
	res := s.d.conn(ctx).Delete(&store.Label{}, id)
	return affected(res, "delete label")
}

func (s labelStore) List(ctx context.Context, repoID int64, p store.Page) ([]*store.Label, int64, error) {
	return s.list(ctx, "repo_id", repoID, p)
}

func (s labelStore) ListOfOrg(ctx context.Context, orgID int64, p store.Page) ([]*store.Label, int64, error) {
	return s.list(ctx, "org_id", orgID, p)
}

// list pages through the labels whose column owner (repo_id or org_id) is
// id, by name, through that column's index.
func (s labelStore) list(ctx context.Context, owner string, id int64, p store.Page) ([]*store.Label, int64, error) {
	db := s.d.conn(ctx).Model(&store.Label{}).Where("labels."+owner+" = ?", id)
	var total int64
	if err := db.Count(&total).Error; err != nil {
		return nil, 0, translate(err, "count labels")
	}
	out, err := readPage[store.Label](db.Select("labels.*"), listOrder{{"labels.name", false}, {"labels.id", false}}, p, total)
	return out, total, translate(err, "list labels")
}

func (s labelStore) ForIssues(ctx context.Context, issueIDs []int64) (map[int64][]*store.Label, error) {
	out := map[int64][]*store.Label{}
	if len(issueIDs) == 0 {
		return out, nil
	}
	q := s.d.conn(ctx).Table("labels").Select(labelColumns+", issue_labels.issue_id").
		Joins("JOIN issue_labels ON issue_labels.label_id = labels.id").
		Where("issue_labels.issue_id IN ?", issueIDs).Order("labels.name").Order("labels.id")
	err := eachRow(q, func(rows *sql.Rows) error {
		var issueID int64
		l, err := scanLabel(rows, &issueID)
		out[issueID] = append(out[issueID], l)
		return err
	})
	if err != nil {
		return nil, translate(err, "list issue labels")
	}
	return out, nil
}

func (s labelStore) AddToIssue(ctx context.Context, issueID int64, labelIDs []int64) error {
	if len(labelIDs) == 0 {
		return nil
	}
	// Each link carries its issue's creation time (see migrateV16).
	values := make([]string, 0, len(labelIDs))
	args := make([]any, 0, 2*len(labelIDs))
	for _, id := range labelIDs {
		values = append(values, "(?, ?, (SELECT issues.created_at FROM issues WHERE issues.id = ?))")
		args = append(args, issueID, id, issueID)
	}
	err := s.d.conn(ctx).Exec(`INSERT INTO issue_labels (issue_id, label_id, issue_created_at) VALUES `+
		strings.Join(values, ", ")+` ON CONFLICT DO NOTHING`, args...).Error
	return translateRef(err, "label issue")
}

func (s labelStore) RemoveFromIssue(ctx context.Context, issueID int64, labelIDs []int64) error {
	if len(labelIDs) == 0 {
		return nil
	}
	err := s.d.conn(ctx).Where("issue_id = ? AND label_id IN ?", issueID, labelIDs).Delete(&issueLabel{}).Error
	return translate(err, "unlabel issue")
}

func (s labelStore) ClearIssue(ctx context.Context, issueID int64) error {
	return translate(s.d.conn(ctx).Where("issue_id = ?", issueID).Delete(&issueLabel{}).Error, "clear issue labels")
}
