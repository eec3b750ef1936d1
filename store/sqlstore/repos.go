package sqlstore

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"gorm.io/gorm"

	"repohost/store"
)

type repoStore struct{ d *DB }

func (s repoStore) Create(ctx context.Context, r *store.Repository) error {
	r.LowerName = strings.ToLower(r.Name)
	return translate(s.d.conn(ctx).Omit("Owner").Create(r).Error, "create repository")
}

func (s repoStore) FindByName(ctx context.Context, ownerID int64, name string) (*store.Repository, error) {
	var r store.Repository
	err := s.d.conn(ctx).Preload("Owner").Where("owner_id = ? AND lower_name = ?", ownerID, strings.ToLower(name)).Take(&r).Error
	if err != nil {
		return nil, translate(err, "find repository")
	}
	return &r, nil
}

func (s repoStore) FindByOwnerAndName(ctx context.Context, owner, name string) (*store.Repository, error) {
	owner, name = strings.ToLower(owner), strings.ToLower(name)
	r, err := cachedRow(ctx, s.d, "repo:"+owner+"/"+name, tRepos|tUsers, repoID, cloneRepo, func() (*store.Repository, error) {
		var r store.Repository
		err := s.d.conn(ctx).InnerJoins("Owner", s.d.gorm.Where(&store.User{LowerName: owner})).
			Where("repositories.lower_name = ?", name).Take(&r).Error
		return &r, err
	})
	if err != nil {
		return nil, translate(err, "find repository")
	}
	return r, nil
}

func (s repoStore) FindByID(ctx context.Context, id int64) (*store.Repository, error) {
	r, err := cachedRow(ctx, s.d, repoIDKey(id), tRepos|tUsers, repoID, cloneRepo, func() (*store.Repository, error) {
		// The owner in the same statement (a lock, which would spread
		// to the owner, is findRepoByID's).
		var r store.Repository
		err := s.d.conn(ctx).InnerJoins("Owner").Where("repositories.id = ?", id).Take(&r).Error
		return &r, err
	})
	if err != nil {
		return nil, translate(err, "find repository")
	}
	return r, nil
}

func repoID(r *store.Repository) int64 { return r.ID }

// withOwners sets the owner of each of repos from the users the read cache
// keeps (userStore.FindByIDs), reading those it does not keep in one
// statement: a page's repositories have few owners, the same from one page
// to the next.
func (d *DB) withOwners(ctx context.Context, repos []*store.Repository) error {
	ids := make([]int64, 0, len(repos))
	for _, r := range repos {
		if !slices.Contains(ids, r.OwnerID) {
			ids = append(ids, r.OwnerID)
		}
	}
	owners, err := userStore{d}.FindByIDs(ctx, ids)
	if err != nil {
		return err
	}
	for _, r := range repos {
		r.Owner = owners[r.OwnerID]
	}
	return nil
}

// repoIDKey is the read cache's key of a repository (with its owner) by id.
func repoIDKey(id int64) string { return "repo#" + strconv.FormatInt(id, 10) }

func (s repoStore) FindByIDs(ctx context.Context, ids []int64) ([]*store.Repository, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	var rs []*store.Repository
	err := s.d.conn(ctx).InnerJoins("Owner").Where("repositories.id IN ?", ids).Order("repositories.id").Find(&rs).Error
	return rs, translate(err, "find repositories")
}

func (s repoStore) FindByIDForUpdate(ctx context.Context, id int64) (*store.Repository, error) {
	db, err := s.d.lockingConn(ctx)
	if err != nil {
		return nil, err
	}
	return findRepoByID(db, id)
}

// findRepoByID reads the row with db (which may lock it) and its owner. The
// owner comes from a separate statement that does not inherit the lock, so
// editing a repository never blocks its owner's other repositories.
func findRepoByID(db *gorm.DB, id int64) (*store.Repository, error) {
	var r store.Repository
	if err := db.Preload("Owner").Take(&r, id).Error; err != nil {
		return nil, translate(err, "find repository")
	}
	return &r, nil
}

// derivedColumns are maintained by atomic increments elsewhere (issues,
// releases, stars) or by the topic store; Update must never write back a copy
// read earlier, or a concurrent change to them would be lost.
var derivedColumns = []string{"created_at", "Owner", "num_issues", "num_closed_issues", "num_pulls",
	"num_closed_pulls", "num_stars", "num_forks", "num_watches", "num_releases", "topics", "mirror_updated"}

func (s repoStore) Update(ctx context.Context, r *store.Repository) error {
	r.LowerName = strings.ToLower(r.Name)
	res := s.d.conn(ctx).Select("*").Omit(derivedColumns...).Updates(r)
	return affected(res, "update repository")
}

// Delete removes the row; rows that reference it go by ON DELETE CASCADE.
// Topic popularity and its stargazers' starred counts are counters, not
// references, so they are corrected here.
func (s repoStore) Delete(ctx context.Context, id int64) error {
	return s.d.WithTx(ctx, func(ctx context.Context) error {
		db := s.d.conn(ctx)
		if s.d.usesPostgres() {
			// Lock the repository before its topics, in the order topic
			// updates take them, so the two cannot deadlock.
			var locked int64
			if err := db.Raw("SELECT id FROM repositories WHERE id = ? FOR UPDATE", id).Scan(&locked).Error; err != nil {
				return translate(err, "lock repository")
			}
		}
		if err := db.Exec("UPDATE topics SET repo_count = repo_count - 1 WHERE id IN (SELECT topic_id FROM repo_topics WHERE repo_id = ?)", id).Error; err != nil {
			return translate(err, "delete repository")
		}
		// Its stars go by ON DELETE CASCADE; their users' counts here.
		if err := db.Exec("UPDATE users SET num_stars = num_stars - 1 WHERE id IN (SELECT user_id FROM stars WHERE repo_id = ?)", id).Error; err != nil {
			return translate(err, "delete repository")
		}
		return translate(db.Delete(&store.Repository{}, id).Error, "delete repository")
	})
}

func (s repoStore) ListByOwner(ctx context.Context, ownerID int64) ([]*store.Repository, error) {
	var out []*store.Repository
	err := s.d.conn(ctx).Where("owner_id = ?", ownerID).Order("id").Find(&out).Error
	return out, translate(err, "list repositories")
}

func (s repoStore) CountByOwner(ctx context.Context, ownerID int64) (int64, error) {
	var n int64
	err := s.d.conn(ctx).Model(&store.Repository{}).Where("owner_id = ?", ownerID).Count(&n).Error
	return n, translate(err, "count repositories")
}

func (s repoStore) AdjustForks(ctx context.Context, id, delta int64) error {
	err := s.d.conn(counterWrite(ctx, id)).Exec(`UPDATE repositories SET num_forks = num_forks + ? WHERE id = ?`, delta, id).Error
	return translate(err, "count forks")
}

// visibleTo keeps the repositories v may see. It restates in SQL the "may
// see" part of impl/access's RepoFor (see its package comment); apitest's
// TestRepoVisibilityIsOneRule and the permission matrix hold the two equal,
// so change them together.
func visibleTo(db *gorm.DB, v store.RepoViewer) *gorm.DB {
	if cond, args := visibilityOf(v).cond(false); cond != "" {
		return db.Where(cond, args...)
	}
	return db
}

// visibility is the rule for one viewer, in two parts: open, what every
// viewer of its kind shares (public repositories of the owners it may
// see, read from one index, see migrateV17), and given, what this viewer
// was given besides. A count adds the two parts' counts, given counted
// without what open holds, so neither reads a repository it does not
// count. all means every repository; an empty part holds nothing.
type visibility struct {
	all       bool
	open      string
	openArgs  []any
	given     string
	givenArgs []any
	// probe is given as a test of one repository row (its owner, its
	// id), for a probe per row (probeCond): given gathers the ids of every
	// repository the viewer owns, which a probe would gather again for
	// each statement; probe tests the row's owner against the few owners
	// instead. Empty: given serves.
	probe     string
	probeArgs []any
}

// probeCond is cond for a probe of one repository row at a time (a page
// of issues walked in its order, each issue's repository tested by its
// key): the same rule, with given tested on the row (probe).
func (vis visibility) probeCond(unindexedOpen bool) (string, []any) {
	if vis.probe != "" {
		vis.given, vis.givenArgs = vis.probe, vis.probeArgs
	}
	return vis.cond(unindexedOpen)
}

func visibilityOf(v store.RepoViewer) visibility {
	switch {
	case v.OnlyRepoID != 0: // a workflow task's token
		return visibility{given: "repositories.id = ?", givenArgs: []any{v.OnlyRepoID}}
	case v.UserID == 0 || v.PublicOnly: // anonymous, public-only token
		return visibility{open: "repositories.is_private = ? AND repositories.owner_visibility = ?",
			openArgs: []any{false, store.VisibilityPublic}}
	case v.IsAdmin:
		return visibility{all: true}
	}
	// What v was given: ownership, a collaboration, a team (with some
	// access: permission "none" grants nothing) that has the repository or
	// all of its organization's. One IN over ids gathered by index
	// lookups, not one OR per way: PostgreSQL cannot read such an OR
	// through indexes and would test every repository.
	given := `repositories.id IN (SELECT id FROM repositories WHERE owner_id IN
			(SELECT CAST(? AS BIGINT) UNION ALL SELECT teams.org_id FROM teams
				JOIN team_users ON team_users.team_id = teams.id
				WHERE team_users.user_id = ? AND teams.includes_all_repositories = ? AND teams.permission <> 'none')
		UNION ALL SELECT repo_id FROM collaborations WHERE user_id = ?
		UNION ALL SELECT team_repos.repo_id FROM team_repos
			JOIN team_users ON team_users.team_id = team_repos.team_id
			JOIN teams ON teams.id = team_repos.team_id
			WHERE team_users.user_id = ? AND teams.permission <> 'none'`
	args := []any{v.UserID, v.UserID, true, v.UserID, v.UserID}
	probe := `(repositories.owner_id IN (SELECT CAST(? AS BIGINT) UNION ALL SELECT teams.org_id FROM teams
				JOIN team_users ON team_users.team_id = teams.id
				WHERE team_users.user_id = ? AND teams.includes_all_repositories = ? AND teams.permission <> 'none')
		OR repositories.id IN (SELECT repo_id FROM collaborations WHERE user_id = ?
			UNION ALL SELECT team_repos.repo_id FROM team_repos
				JOIN team_users ON team_users.team_id = team_repos.team_id
				JOIN teams ON teams.id = team_repos.team_id
				WHERE team_users.user_id = ? AND teams.permission <> 'none')`
	if v.Restricted {
		// A restricted user reaches only what it was given.
		return visibility{given: given + ")", givenArgs: args, probe: probe + ")", probeArgs: args}
	}
	// Anyone else also reads the public repositories of the owners it may
	// see: public and limited ones, and the organizations it belongs to.
	return visibility{
		open:     "repositories.is_private = ? AND repositories.owner_visibility IN ?",
		openArgs: []any{false, []store.Visibility{store.VisibilityPublic, store.VisibilityLimited}},
		// The organizations' repositories are read from the
		// memberships, then by owner (CROSS JOIN keeps SQLite, which has
		// no statistics, to that order, and COALESCE keeps it off the
		// index on is_private: either would walk every public
		// repository).
		given: given + `
		UNION ALL SELECT r.id FROM org_members om CROSS JOIN repositories r
			WHERE r.owner_id = om.org_id AND COALESCE(r.is_private, false) = ? AND om.user_id = ?)`,
		givenArgs: append(slices.Clone(args), false, v.UserID),
		probe: probe + `
		OR (repositories.is_private = ? AND repositories.owner_id IN (SELECT org_id FROM org_members WHERE user_id = ?)))`,
		probeArgs: append(slices.Clone(args), false, v.UserID),
	}
}

// cond is the whole rule as one condition ("" for every repository).
// unindexedOpen keeps SQLite from reading open and given through their
// indexes and merging them (its MULTI-INDEX OR), which a page must not do:
// the page is read in the order of its index, and stops when full.
func (vis visibility) cond(unindexedOpen bool) (string, []any) {
	open := vis.open
	if unindexedOpen {
		// SQLite only: a unary + on a column keeps its indexes off it.
		open = strings.ReplaceAll(open, "repositories.", "+repositories.")
	}
	switch {
	case vis.all:
		return "", nil
	case vis.open == "":
		return "(" + vis.given + ")", vis.givenArgs
	case vis.given == "":
		return "(" + open + ")", vis.openArgs
	}
	return "((" + open + ") OR " + vis.given + ")", append(slices.Clone(vis.openArgs), vis.givenArgs...)
}

// visibleParts selects sel over the repositories filter keeps that vis
// lets see: in one statement, or, when vis has both parts, in two, open's
// and given's without what open holds, so that each reads its own index
// and nothing else.
func visibleParts(filter func() *gorm.DB, vis visibility, sel string) []*gorm.DB {
	if vis.all || vis.open == "" || vis.given == "" {
		db := filter().Select(sel)
		if cond, args := vis.cond(false); cond != "" {
			db = db.Where(cond, args...)
		}
		return []*gorm.DB{db}
	}
	return []*gorm.DB{
		filter().Select(sel).Where(vis.open, vis.openArgs...),
		filter().Select(sel).Where("NOT ("+vis.open+")", vis.openArgs...).Where("("+vis.given+")", vis.givenArgs...),
	}
}

// visibleAggregate selects expr, an aggregate that adds up (a count, a
// sum), over the repositories visibleParts selects.
func (d *DB) visibleAggregate(ctx context.Context, filter func() *gorm.DB, vis visibility, expr string) *gorm.DB {
	p := visibleParts(filter, vis, expr)
	if len(p) == 2 {
		return d.conn(ctx).Raw("SELECT (?) + (?)", p[0], p[1])
	}
	return p[0]
}

// visibleIDs selects the ids of the repositories visibleParts selects.
func (d *DB) visibleIDs(ctx context.Context, filter func() *gorm.DB, vis visibility) *gorm.DB {
	p := visibleParts(filter, vis, "repositories.id")
	if len(p) == 2 {
		return d.conn(ctx).Raw("? UNION ALL ?", p[0], p[1])
	}
	return p[0]
}

func (s repoStore) Search(ctx context.Context, q store.RepoSearch, p store.Page) ([]*store.Repository, int64, error) {
	if err := checkKeyword(q.Keyword); err != nil {
		return nil, 0, err
	}
	// Who sees what: a user sees all of its own repositories, a site
	// admin everything, unless limited to public data (access steps 1
	// to 3). An owner's list counted without a condition is read from the
	// index on owner_id alone.
	vis := visibility{all: true}
	self := q.OwnerID > 0 && q.OwnerID == q.Viewer.UserID && !q.Viewer.PublicOnly
	if !self && !(q.Viewer.IsAdmin && !q.Viewer.PublicOnly) {
		vis = visibilityOf(q.Viewer)
	}
	// A keyword long enough for the trigram index names its candidates
	// (search_names.go): few, each tested by its key. Visibility is then
	// tested on each candidate row (probeCond), not by gathering every
	// repository the viewer was given (a thousand ids for an owner of a
	// thousand) to compare the few candidates with.
	kwCond, kwArgs := s.d.keywordCond(q)
	ids, idArgs, candidates := "", []any(nil), false
	if kwCond != "" {
		ids, idArgs, candidates = s.d.repoCandidates(q)
	}
	filter := func() *gorm.DB {
		db := s.d.conn(ctx).Model(&store.Repository{})
		if q.OwnerID > 0 {
			db = db.Where("repositories.owner_id = ?", q.OwnerID)
		}
		if q.Reachable {
			db = db.Where(s.d.idIn(ownedOrMember), q.Viewer.UserID, q.Viewer.UserID, q.Viewer.UserID)
		}
		if q.RelatedUserID > 0 {
			db = s.d.related(db, q)
		}
		if candidates {
			db = db.Where(s.d.idIn(ids), idArgs...)
		}
		if kwCond != "" {
			db = db.Where(kwCond, kwArgs...)
		}
		for _, f := range []struct {
			col string
			v   *bool
		}{{"is_private", q.IsPrivate}, {"is_template", q.IsTemplate}, {"is_archived", q.IsArchived},
			{"is_fork", q.IsFork}, {"is_mirror", q.IsMirror}} {
			if f.v != nil {
				db = db.Where("repositories."+f.col+" = ?", *f.v)
			}
		}
		if q.ForkOf > 0 {
			db = db.Where("repositories.fork_id = ?", q.ForkOf)
		}
		if q.StarredBy > 0 {
			db = db.Where(s.d.idIn("SELECT repo_id FROM stars WHERE user_id = ?"), q.StarredBy)
		}
		if q.WatchedBy > 0 {
			db = db.Where(s.d.idIn("SELECT repo_id FROM watches WHERE user_id = ?"), q.WatchedBy)
		}
		return db
	}
	order := q.OrderBy
	if order == "" {
		order = "repositories.id ASC"
	}
	if q.PriorityOwnerID > 0 {
		// An integer formatted with %d cannot inject anything; GORM drops
		// the other ORDER BY columns when given an expression with vars.
		order = fmt.Sprintf("CASE WHEN repositories.owner_id = %d THEN 0 ELSE 1 END, %s", q.PriorityOwnerID, order)
	}
	cond := vis.cond
	counted := func() *gorm.DB { return s.d.visibleAggregate(ctx, filter, vis, "COUNT(*)") }
	if candidates {
		cond = vis.probeCond
		counted = func() *gorm.DB {
			db := filter().Select("COUNT(*)")
			if c, args := vis.probeCond(false); c != "" {
				db = db.Where(c, args...)
			}
			return db
		}
	}
	count := func() (int64, error) {
		var total int64
		err := counted().Scan(&total).Error
		return total, translate(err, "count repositories")
	}
	page := func(total int64) ([]*store.Repository, error) {
		db := filter()
		if cond, args := cond(!s.d.usesPostgres()); cond != "" {
			db = db.Where(cond, args...)
		}
		out, err := readPage[store.Repository](db.Select("repositories.*"), parseOrder(order).tieBreak("repositories.id"), p, total)
		if err != nil {
			return nil, translate(err, "search repositories")
		}
		return out, s.d.withOwners(ctx, out)
	}
	if candidates {
		// A keyword's few candidates: the first page may be the whole set.
		return pageThenCount(p, page, count)
	}
	total, err := count()
	if err != nil {
		return nil, 0, err
	}
	out, err := page(total)
	return out, total, err
}

// ownedOrMember keeps the repositories a user owns, those of the
// organizations it belongs to and those it collaborates on: ids gathered
// by index lookups, not "owner_id = ? OR ...", which PostgreSQL cannot
// turn into index conditions and would test on every repository.
const ownedOrMember = `SELECT id FROM repositories WHERE owner_id IN
		(SELECT CAST(? AS BIGINT) UNION ALL SELECT org_id FROM org_members WHERE user_id = ?)
	UNION ALL SELECT repo_id FROM collaborations WHERE user_id = ?`

// idIn keeps the repositories whose ids ids (a subquery) selects. On
// PostgreSQL the ids are gathered first into an array that the primary
// key's index is searched with, so the planner cannot instead walk the
// whole index to merge it with them; SQLite searches the key for each id.
func (d *DB) idIn(ids string) string { return d.columnIn("repositories.id", ids) }

// columnIn is idIn for any key column.
func (d *DB) columnIn(col, ids string) string {
	if d.usesPostgres() {
		return col + " = ANY(ARRAY(" + ids + "))"
	}
	return col + " IN (" + ids + ")"
}

// related applies RelatedUserID: repositories the user owns, those of the
// organizations it belongs to or collaborates on, or both.
func (d *DB) related(db *gorm.DB, q store.RepoSearch) *gorm.DB {
	const member = `SELECT id FROM repositories WHERE owner_id IN (SELECT org_id FROM org_members WHERE user_id = ?)
		UNION ALL SELECT repo_id FROM collaborations WHERE user_id = ?`
	switch {
	case q.RelatedOwned && q.RelatedMember:
		return db.Where(d.idIn(ownedOrMember), q.RelatedUserID, q.RelatedUserID, q.RelatedUserID)
	case q.RelatedMember:
		return db.Where("repositories.owner_id <> ? AND "+d.idIn(member), q.RelatedUserID, q.RelatedUserID, q.RelatedUserID)
	default:
		return db.Where("repositories.owner_id = ?", q.RelatedUserID)
	}
}

// keywordCond builds the condition for q.Keyword: its comma-separated parts
// are alternatives.
func (d *DB) keywordCond(q store.RepoSearch) (string, []any) {
	like := ` LIKE ? ESCAPE '\'` // stablePlans: the pattern bound does not recompile it
	var conds []string
	var args []any
	for _, kw := range strings.Split(q.Keyword, ",") {
		kw = strings.TrimSpace(kw)
		if kw == "" {
			continue
		}
		if q.TopicOnly {
			conds = append(conds, `(',' || LOWER(repositories.topics) || ',')`+like)
			args = append(args, "%,"+escapeLike(strings.ToLower(kw))+",%")
			continue
		}
		pat := likePattern(kw)
		conds = append(conds, `repositories.lower_name`+like, `LOWER(repositories.topics)`+like)
		args = append(args, pat, pat)
		if q.IncludeDescription {
			conds = append(conds, `LOWER(repositories.description)`+like)
			args = append(args, pat)
		}
		if ownerPart, namePart, ok := strings.Cut(kw, "/"); ok && !strings.Contains(namePart, "/") {
			// The owner probed by its key, for each repository tested.
			conds = append(conds, `(repositories.lower_name`+like+` AND EXISTS (SELECT 1 FROM users owner
				WHERE owner.id = repositories.owner_id AND owner.lower_name`+like+`))`)
			args = append(args, likePattern(namePart), likePattern(ownerPart))
		}
	}
	if len(conds) == 0 {
		return "", nil
	}
	return "(" + strings.Join(conds, " OR ") + ")", args
}
