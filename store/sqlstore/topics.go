package sqlstore

import (
	"context"
	"sort"
	"strings"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"repohost/store"
)

func (d *DB) Topics() store.TopicStore { return topicStore{d} }

type topicStore struct{ d *DB }

// repoTopic links a repository to a topic.
type repoTopic struct {
	RepoID  int64 `gorm:"primaryKey;autoIncrement:false"`
	TopicID int64 `gorm:"primaryKey;autoIncrement:false"`
}

func (repoTopic) TableName() string { return "repo_topics" }

func (s topicStore) ListByRepo(ctx context.Context, repoID int64, p store.Page) ([]*store.Topic, int64, error) {
	db := s.d.conn(ctx).Model(&store.Topic{}).
		Joins("JOIN repo_topics ON repo_topics.topic_id = topics.id").
		Where("repo_topics.repo_id = ?", repoID)
	var total int64
	if err := db.Count(&total).Error; err != nil {
		return nil, 0, translate(err, "count topics")
	}
	var out []*store.Topic
	err := db.Select("topics.*").Order("topics.name ASC").Offset(p.Offset).Limit(p.Limit).Find(&out).Error
	return out, total, translate(err, "list topics")
}

// Search counts, for each topic, only the repositories v may see, with the
// filter of the repository lists (visibleTo): a topic only private
// repositories use is neither named nor counted for whoever cannot see
// them. Two statements whatever the page: the count of matching topics and
// the page, each one grouped join from the topics through their links to
// the repositories (primary keys all the way).
func (s topicStore) Search(ctx context.Context, v store.RepoViewer, keyword string, p store.Page) ([]*store.Topic, int64, error) {
	// A topic is offered when the caller may see a repository carrying
	// it, with the count of those. The page comes in the reference's
	// order, by the topics' popularity over every repository (the
	// counter column, indexed with the name), each topic probed for a
	// visible carrier: neither the page nor its counts read more than
	// the topics up to the page and the links of those on it. A topic
	// no repository uses any more stays in the table (deleting it would
	// race with a repository adding it again) but has no carrier left.
	// Each link's repository is probed by its key: joined, SQLite would
	// rather walk every visible repository for each topic. On PostgreSQL
	// each subquery ends with OFFSET 0, a fence its planner does not
	// flatten through: otherwise it turns the probes into joins over
	// every link and every repository.
	fence := ""
	if s.d.usesPostgres() {
		fence = " OFFSET 0"
	}
	visible, args := visibilityOf(v).cond(false)
	if visible != "" {
		visible = " AND EXISTS (SELECT 1 FROM repositories WHERE repositories.id = repo_topics.repo_id AND " + visible + fence + ")"
	}
	carriers := func(sel string) string {
		return "SELECT " + sel + " FROM repo_topics WHERE repo_topics.topic_id = topics.id" + visible + fence
	}
	db := s.d.conn(ctx).Table("topics").Where("EXISTS ("+carriers("1")+")", args...)
	if kw := strings.TrimSpace(keyword); kw != "" {
		db = db.Where(`topics.name LIKE ? ESCAPE '\'`, likePattern(kw))
	}
	// A fresh statement for each query below, so neither inherits the
	// other's clauses.
	db = db.Session(&gorm.Session{})
	var total int64
	if err := db.Count(&total).Error; err != nil {
		return nil, 0, translate(err, "count topics")
	}
	var out []*store.Topic
	err := db.Select("topics.id, topics.name, topics.created_at, topics.updated_at, ("+carriers("COUNT(*)")+") AS repo_count",
		args...).
		Order("topics.repo_count DESC, topics.name ASC").Offset(p.Offset).Limit(p.Limit).Scan(&out).Error
	return out, total, translate(err, "search topics")
}

// names lists the repository's topic names, alphabetically.
func (s topicStore) names(ctx context.Context, repoID int64) ([]string, error) {
	var out []string
	err := s.d.conn(ctx).Model(&store.Topic{}).
		Joins("JOIN repo_topics ON repo_topics.topic_id = topics.id").
		Where("repo_topics.repo_id = ?", repoID).Order("topics.name").Pluck("topics.name", &out).Error
	return out, translate(err, "read topics")
}

func (s topicStore) Update(ctx context.Context, repoID int64, change func(current []string) ([]string, error)) error {
	return s.d.WithTx(ctx, func(ctx context.Context) error {
		db := s.d.conn(ctx)
		if s.d.usesPostgres() {
			// The repository row is the lock that makes read-change-write
			// of its topics one step. SQLite needs none: its write
			// transactions already run one at a time.
			var id int64
			err := db.Raw("SELECT id FROM repositories WHERE id = ? FOR UPDATE", repoID).Scan(&id).Error
			if err != nil {
				return translate(err, "lock repository")
			}
		}
		current, err := s.names(ctx, repoID)
		if err != nil {
			return err
		}
		next, err := change(current)
		if err != nil {
			return err
		}
		added, removed := diffNames(current, next)
		// Sorted, so that concurrent transactions for different
		// repositories create and lock shared topic rows in one order
		// and cannot deadlock on each other.
		sort.Strings(added)
		sort.Strings(removed)
		now := s.d.clock.Now()
		if len(added) > 0 {
			rows := make([]store.Topic, 0, len(added))
			for _, n := range added {
				rows = append(rows, store.Topic{Name: n, CreatedAt: now, UpdatedAt: now})
			}
			err := db.Clauses(clause.OnConflict{Columns: []clause.Column{{Name: "name"}}, DoNothing: true}).Create(&rows).Error
			if err != nil {
				return translate(err, "create topics")
			}
		}
		addedIDs, err := s.ids(ctx, added)
		if err != nil {
			return err
		}
		removedIDs, err := s.ids(ctx, removed)
		if err != nil {
			return err
		}
		if s.d.usesPostgres() && len(addedIDs)+len(removedIDs) > 0 {
			var locked []int64
			err := db.Raw("SELECT id FROM topics WHERE id IN ? ORDER BY id FOR UPDATE",
				append(append([]int64{}, addedIDs...), removedIDs...)).Scan(&locked).Error
			if err != nil {
				return translate(err, "lock topics")
			}
		}
		if len(addedIDs) > 0 {
			links := make([]repoTopic, 0, len(addedIDs))
			for _, id := range addedIDs {
				links = append(links, repoTopic{RepoID: repoID, TopicID: id})
			}
			if err := db.Create(&links).Error; err != nil {
				return translate(err, "link topics")
			}
			// Increments, not recounts: a recount in a concurrent
			// transaction of another repository could miss this one's
			// uncommitted link, while increments of the same row queue.
			if err := db.Exec("UPDATE topics SET repo_count = repo_count + 1, updated_at = ? WHERE id IN ?", now, addedIDs).Error; err != nil {
				return translate(err, "count topics")
			}
		}
		if len(removedIDs) > 0 {
			if err := db.Where("repo_id = ? AND topic_id IN ?", repoID, removedIDs).Delete(&repoTopic{}).Error; err != nil {
				return translate(err, "unlink topics")
			}
			if err := db.Exec("UPDATE topics SET repo_count = repo_count - 1, updated_at = ? WHERE id IN ?", now, removedIDs).Error; err != nil {
				return translate(err, "count topics")
			}
		}
		return s.syncColumn(ctx, repoID)
	})
}

// syncColumn rewrites the repository's topics column (used by search and
// shown in the repository) from its links, most used topics first.
func (s topicStore) syncColumn(ctx context.Context, repoID int64) error {
	var ordered []string
	err := s.d.conn(ctx).Model(&store.Topic{}).
		Joins("JOIN repo_topics ON repo_topics.topic_id = topics.id").
		Where("repo_topics.repo_id = ?", repoID).Order("topics.repo_count DESC, topics.name ASC").
		Pluck("topics.name", &ordered).Error
	if err != nil {
		return translate(err, "read topics")
	}
	err = s.d.conn(ctx).Exec("UPDATE repositories SET topics = ? WHERE id = ?", strings.Join(ordered, ","), repoID).Error
	return translate(err, "store repository topics")
}

func (s topicStore) ids(ctx context.Context, names []string) ([]int64, error) {
	if len(names) == 0 {
		return nil, nil
	}
	var ids []int64
	err := s.d.conn(ctx).Model(&store.Topic{}).Where("name IN ?", names).Pluck("id", &ids).Error
	return ids, translate(err, "find topics")
}

func (s topicStore) Copy(ctx context.Context, fromRepoID, toRepoID int64) error {
	names, err := s.names(ctx, fromRepoID)
	if err != nil || len(names) == 0 {
		return err
	}
	return s.Update(ctx, toRepoID, func([]string) ([]string, error) { return names, nil })
}

// diffNames returns the names only in next and those only in current.
func diffNames(current, next []string) (added, removed []string) {
	had := make(map[string]bool, len(current))
	for _, n := range current {
		had[n] = true
	}
	keep := make(map[string]bool, len(next))
	for _, n := range next {
		if keep[n] {
			continue
		}
		keep[n] = true
		if !had[n] {
			added = append(added, n)
		}
	}
	for _, n := range current {
		if !keep[n] {
			removed = append(removed, n)
		}
	}
	return added, removed
}
