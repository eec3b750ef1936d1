package sqlstore

import (
	"context"
	"fmt"
	"math/bits"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"gorm.io/gorm"

	"repohost/store"
)

// DefaultCacheTTL is how long a looked-up row may be served from memory:
// short enough that a change made by another process sharing the database
// (a revoked token, a repository made private, a new password) is seen
// within a second, long enough that a busy server reads each hot row a
// couple of times per second instead of on every request.
const DefaultCacheTTL = 500 * time.Millisecond

// The tables whose changes are counted: those whose rows the cache holds,
// and those other caches built on the store watch (see DB.Watch); an entry
// depends on some of them.
const (
	tUsers = 1 << iota
	tTokens
	tRepos
	tIssues
	tComments
	tLabels
	tIssueLabels
	tMilestones
	tAssignees
	tMentions
	tPulls
	tProjects
	tProjectIssues
	tReactions
	tCollaborations
	tOrgMembers
	tTeams
	tTeamUsers
	tTeamRepos
	// tRepoCounts is not a table: it counts writes that only moved a
	// repository's counters (see counterWrite).
	tRepoCounts
	// (Bits added later come last: processes of a cluster exchange
	// them, see change.encode.)
	tWebhooks
	numTables = iota
	allTables = 1<<numTables - 1
)

var cachedTables = map[string]int{"users": tUsers, "access_tokens": tTokens, "repositories": tRepos,
	"issues": tIssues, "comments": tComments, "labels": tLabels, "issue_labels": tIssueLabels,
	"milestones": tMilestones, "issue_assignees": tAssignees, "issue_mentions": tMentions,
	"pull_requests": tPulls, "projects": tProjects, "project_issues": tProjectIssues, "reactions": tReactions,
	"collaborations": tCollaborations, "org_members": tOrgMembers, "teams": tTeams, "team_users": tTeamUsers,
	"team_repos": tTeamRepos, "webhooks": tWebhooks}

// generations is one counter per counted table.
type generations [numTables]uint64

// rowStripes is how many row generations the cache keeps for repository
// counters: a change to repository id's counters is counted in stripe
// id % rowStripes, which other repositories share (so at worst they are
// read again).
const rowStripes = 1024

// counterWriteKey marks a statement's context: whatever the statement
// writes to repositories only moves the counters of one repository (the
// value, its id). Such a write retires that repository's entries and what
// watches repositories, not every cached repository: otherwise each issue
// created anywhere would make every repository lookup of the process miss.
type counterWriteKey struct{}

// counterWrite is ctx for a statement whose write to repositories only
// moves repository repoID's counters.
func counterWrite(ctx context.Context, repoID int64) context.Context {
	return context.WithValue(ctx, counterWriteKey{}, repoID)
}

// repoWrite is ctx for statements whose writes are confined to repository
// repoID's rows (store.ConfinedTo): a list of repository A's issues stays
// kept while issues are created in repository B.
func repoWrite(ctx context.Context, repoID int64) context.Context {
	return store.ConfinedTo(ctx, repoID)
}

// scopedTables are the tables whose rows each belong to one repository's
// issue tracker.
const scopedTables = tIssues | tComments | tLabels | tIssueLabels | tMilestones | tAssignees | tMentions | tPulls |
	tProjects | tProjectIssues | tReactions

// scopedWrite is a write confined to one repository, remembered until its
// transaction ends.
type scopedWrite struct {
	repo   int64
	tables int
}

// readCache holds the rows the hottest lookups return (a token with its
// user, a repository with its owner, a user by name or id), for the requests
// of every route that start with the same few lookups.
//
// Staleness is bounded twice. Across processes, by the TTL. Within this
// process, by a generation number per table that every statement changing
// rows of the table (any INSERT, UPDATE or DELETE through this store, at the
// statement and again when its transaction commits; one whose table cannot
// be told counts for every table) increments: an entry counts only while the
// tables it was read from are in the generation it was read in, and a row
// read while a change was under way is not stored at all. So after a change
// has committed and its request has answered, no request of this process is
// served what it replaced. Reads in a transaction never use the cache (they
// may be the first half of a read-change-write).
type readCache struct {
	ttl  time.Duration
	max  int
	now  func() time.Time
	gens [numTables]atomic.Uint64
	// rows counts the counter writes of repositories, by stripe.
	rows [rowStripes]atomic.Uint64
	// shared counts, per table, the writes not confined to one
	// repository; scoped the confined ones, by the repository's stripe
	// (store.Watch.Shared and Repo). Every write also counts in gens.
	shared [numTables]atomic.Uint64
	scoped [rowStripes]atomic.Uint64
	// targets remembers writtenTables of the statements seen.
	targets writeTargets
	// published, in cluster mode, tells the other processes of a write
	// made outside a transaction (those of a transaction are told at
	// its commit, see DB.WithTx).
	published func(ctx context.Context, ch change)

	mu      sync.RWMutex
	entries map[string]cacheEntry
}

type cacheEntry struct {
	tables  int
	gens    generations
	expires time.Time
	val     any
	// row is 1 + the stripe of the repository whose counters val holds,
	// 0 for none; its counters are those of the stripe's generation
	// rowGen, unless countersOld (they may be older).
	row         int
	rowGen      uint64
	countersOld bool
}

func newReadCache(ttl time.Duration, max int) *readCache {
	if ttl <= 0 {
		return nil
	}
	return &readCache{ttl: ttl, max: max, now: time.Now, entries: map[string]cacheEntry{}}
}

// generation is taken before a read whose result may be stored.
func (c *readCache) generation() generations {
	var g generations
	if c != nil {
		for i := range c.gens {
			g[i] = c.gens[i].Load()
		}
	}
	return g
}

// sum is the sum of the generations of tables: it grows whenever one of
// them changes, as each only grows.
func (c *readCache) sum(tables int) uint64 {
	var n uint64
	for i := range c.gens {
		if tables&(1<<i) != 0 {
			n += c.gens[i].Load()
		}
	}
	return n
}

// current tells whether the tables are still in the generations g saw.
func (c *readCache) current(tables int, g generations) bool {
	for i := range c.gens {
		if tables&(1<<i) != 0 && c.gens[i].Load() != g[i] {
			return false
		}
	}
	return true
}

func (c *readCache) get(key string) (any, bool) {
	return c.getRow(key, false)
}

// getRow is get for a value that may hold a repository's counters; with
// countersMayLag, one whose counters moved since it was read is served
// (see store.CountersMayLag).
func (c *readCache) getRow(key string, countersMayLag bool) (any, bool) {
	if c == nil {
		return nil, false
	}
	c.mu.RLock()
	e, ok := c.entries[key]
	c.mu.RUnlock()
	if !ok || !c.current(e.tables, e.gens) || !c.now().Before(e.expires) {
		return nil, false
	}
	if e.row != 0 && !countersMayLag && (e.countersOld || c.rows[e.row-1].Load() != e.rowGen) {
		return nil, false
	}
	return e.val, true
}

// put stores val, read from tables, under key unless one of the tables
// changed since g was taken.
func (c *readCache) put(key string, tables int, g generations, val any) {
	c.putRow(key, tables, 0, g, rowHint{}, val)
}

// rowHint is the stripe of the repository an entry held last time, and
// that stripe's generation before the entry is read again.
type rowHint struct {
	row int
	gen uint64
}

// hint is taken before a value that holds a repository's counters is read
// (again) under key.
func (c *readCache) hint(key string) rowHint {
	if c == nil {
		return rowHint{}
	}
	c.mu.RLock()
	e, ok := c.entries[key]
	c.mu.RUnlock()
	if !ok || e.row == 0 {
		return rowHint{}
	}
	return rowHint{row: e.row, gen: c.rows[e.row-1].Load()}
}

// putRow is put for a value that also holds the counters of repository
// repoID (0: none), with the hint taken before it was read. A change to
// repoID's counters retires it, and not a change to another's. If its
// counters may have moved while it was read (its stripe did, or, with no
// hint for that stripe, any), it is kept only for reads that let counters
// lag.
func (c *readCache) putRow(key string, tables int, repoID int64, g generations, h rowHint, val any) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	e := cacheEntry{tables: tables, gens: g, val: val}
	if repoID != 0 {
		e.row = int(uint64(repoID)%rowStripes) + 1
		if h.row == e.row {
			e.rowGen = h.gen
		} else {
			// The stripe is read before the check: a writer counts
			// tRepoCounts before the stripe (countersChanged), so a
			// check that passes saw the stripe before any write the
			// read missed.
			e.rowGen = c.rows[e.row-1].Load()
			e.countersOld = !c.current(tRepoCounts, g)
		}
	}
	if !c.current(tables, g) {
		return
	}
	now := c.now()
	if len(c.entries) >= c.max {
		// Drop what is dead; if that frees nothing, start over:
		// refilling costs one read per key.
		for k, e := range c.entries {
			if !c.current(e.tables, e.gens) || !now.Before(e.expires) {
				delete(c.entries, k)
			}
		}
		if len(c.entries) >= c.max {
			clear(c.entries)
		}
	}
	e.expires = now.Add(c.ttl)
	c.entries[key] = e
}

// invalidate retires every entry read from one of tables.
func (c *readCache) invalidate(tables int) {
	if c == nil {
		return
	}
	for i := range c.gens {
		if tables&(1<<i) != 0 {
			c.gens[i].Add(1)
			c.shared[i].Add(1)
		}
	}
}

// invalidateAll retires every entry, whatever it was read from.
func (c *readCache) invalidateAll() {
	if c == nil {
		return
	}
	c.invalidate(allTables)
	for i := range c.rows {
		c.rows[i].Add(1)
		c.scoped[i].Add(1)
	}
}

// invalidateRepo retires every entry read from one of tables, and for a
// watch only what was read from repository repo's rows (and its stripe's).
func (c *readCache) invalidateRepo(tables int, repo int64) {
	if c == nil || tables == 0 {
		return
	}
	for i := range c.gens {
		if tables&(1<<i) != 0 {
			c.gens[i].Add(1)
		}
	}
	c.scoped[uint64(repo)%rowStripes].Add(1)
}

// countersChanged retires the entries holding the counters of the
// repositories ids, and what watches repositories (for a watch of one
// repository, only when it is one of ids or shares its stripe).
func (c *readCache) countersChanged(ids []int64) {
	if c == nil || len(ids) == 0 {
		return
	}
	c.gens[bitIndex(tRepoCounts)].Add(1)
	for _, id := range ids {
		c.rows[uint64(id)%rowStripes].Add(1)
	}
}

// bitIndex is the position of a table's bit.
func bitIndex(bit int) int { return bits.TrailingZeros(uint(bit)) }

// sumShared is sum over the unconfined writes.
func (c *readCache) sumShared(tables int) uint64 {
	var n uint64
	for i := range c.shared {
		if tables&(1<<i) != 0 {
			n += c.shared[i].Load()
		}
	}
	return n
}

// sumRepo counts the confined writes and counter moves of repo's stripe.
func (c *readCache) sumRepo(repo int64) uint64 {
	stripe := uint64(repo) % rowStripes
	return c.scoped[stripe].Load() + c.rows[stripe].Load()
}

// writtenTables names the cached tables a statement may have changed: the
// targets of every INSERT, UPDATE and DELETE in it (a data-modifying WITH
// has several), none when the cache holds nothing of them or the statement
// is a WITH that writes nothing, all of them when no target can be told.
func (w *writeTargets) writtenTables(table, sql string) int {
	if table != "" {
		// Aliased ("issue_labels il") or quoted, the table is its first word.
		name, _, _ := strings.Cut(strings.TrimSpace(table), " ")
		return cachedTables[strings.ToLower(strings.Trim(name, "\"`"))]
	}
	if v, ok := w.known.Load(sql); ok {
		return v.(int)
	}
	tables := allTables
	if targets := writeTarget.FindAllStringSubmatch(sql, -1); targets != nil {
		tables = 0
		for _, m := range targets {
			tables |= cachedTables[strings.ToLower(m[1])]
		}
	} else if withQuery.MatchString(sql) && !writeWord.MatchString(sql) {
		tables = 0 // WITH … SELECT: a query
	}
	// Statements are mostly the same few texts (their values are
	// parameters), and the longest (a data-modifying WITH) are the
	// costliest to scan; a text of up to maxTargetText bytes is remembered
	// while there are few (a bulk insert's grows with its rows).
	if len(sql) <= maxTargetText && w.count.Load() < maxTargetsKnown {
		if _, loaded := w.known.LoadOrStore(sql, tables); !loaded {
			w.count.Add(1)
		}
	}
	return tables
}

// writeTargets remembers writtenTables of a statement text, for up to
// maxTargetsKnown texts (at most 16 MiB).
type writeTargets struct {
	known sync.Map
	count atomic.Int64
}

const (
	maxTargetsKnown = 4096
	maxTargetText   = 4096
)

var (
	writeTarget = regexp.MustCompile("(?is)\\b(?:INSERT\\s+INTO|UPDATE|DELETE\\s+FROM)\\s+[\"`]?(\\w+)")
	// withQuery and writeWord tell a WITH that only reads: it names no
	// write at all (FOR UPDATE counts as one, to be safe).
	withQuery = regexp.MustCompile(`(?i)^[\s(]*WITH\b`)
	writeWord = regexp.MustCompile(`(?i)\b(?:INSERT|UPDATE|DELETE|MERGE|TRUNCATE)\b`)
)

// watchWrites makes every statement that may have changed rows retire the
// entries read from its table, now and when its transaction commits.
func (c *readCache) watchWrites(g *gorm.DB) error {
	if c == nil {
		return nil
	}
	wrote := func(db *gorm.DB, tables int) {
		if tables == 0 {
			return
		}
		state, _ := db.Statement.Context.Value(txKey{}).(*txState)
		if state == nil && c.published != nil {
			defer func() { c.published(db.Statement.Context, statementChange(db.Statement.Context, tables)) }()
		}
		if id, ok := db.Statement.Context.Value(counterWriteKey{}).(int64); ok && tables&tRepos != 0 {
			tables &^= tRepos
			c.countersChanged([]int64{id})
			if state != nil {
				state.counters = append(state.counters, id)
			}
		}
		if repo, ok := store.ConfinedRepo(db.Statement.Context); ok && tables&^scopedTables == 0 {
			c.invalidateRepo(tables, repo)
			if state != nil {
				state.scoped = append(state.scoped, scopedWrite{repo, tables})
			}
			return
		}
		c.invalidate(tables)
		if state != nil {
			state.wrote |= tables
		}
	}
	changed := func(db *gorm.DB) {
		if db.Error != nil || db.RowsAffected != 0 {
			wrote(db, c.targets.writtenTables(db.Statement.Table, db.Statement.SQL.String()))
		}
	}
	cb := g.Callback()
	for _, err := range []error{
		cb.Create().After("gorm:create").Register("repohost:cache", changed),
		cb.Update().After("gorm:update").Register("repohost:cache", changed),
		cb.Delete().After("gorm:delete").Register("repohost:cache", changed),
		// Exec: raw INSERT, UPDATE and DELETE statements.
		cb.Raw().After("gorm:raw").Register("repohost:cache", changed),
		// Raw(...).Scan runs as a row query, and may be an INSERT ...
		// RETURNING or a data-modifying WITH; its rows affected are not
		// known.
		cb.Row().After("gorm:row").Register("repohost:cache", func(db *gorm.DB) {
			if sql := db.Statement.SQL.String(); !isSelect(sql) {
				wrote(db, c.targets.writtenTables("", sql))
			}
		}),
	} {
		if err != nil {
			return err
		}
	}
	return nil
}

// statementChange is what a statement outside a transaction that wrote to
// tables changed, as wrote counts it.
func statementChange(ctx context.Context, tables int) change {
	var ch change
	if id, ok := ctx.Value(counterWriteKey{}).(int64); ok && tables&tRepos != 0 {
		tables &^= tRepos
		ch.counters = []int64{id}
	}
	if repo, ok := store.ConfinedRepo(ctx); ok && tables&^scopedTables == 0 {
		if tables != 0 {
			ch.scoped = []scopedWrite{{repo, tables}}
		}
		return ch
	}
	ch.tables = tables
	return ch
}

// committed retires, once a transaction has committed, the entries read
// from the tables it changed: rows read while it was open were the
// committed ones then, and may have been stored.
func (c *readCache) committed(state *txState) {
	if c != nil {
		c.invalidate(state.wrote)
		c.countersChanged(state.counters)
		for _, w := range state.scoped {
			c.invalidateRepo(w.tables, w.repo)
		}
	}
}

func isSelect(sql string) bool {
	sql = strings.TrimLeft(sql, " \t\r\n(")
	return len(sql) >= 6 && strings.EqualFold(sql[:6], "SELECT")
}

// cached serves key from the read cache outside transactions, and loads
// and stores it otherwise; tables are those the value is read from. The
// stored value is never handed out itself: callers get a copy (clone),
// which they may change.
func cached[T any](ctx context.Context, d *DB, key string, tables int, clone func(T) T, load func() (T, error)) (T, error) {
	return cachedRow(ctx, d, key, tables, nil, clone, load)
}

// cachedRow is cached for a value that holds a repository's counters:
// repoOf names that repository, whose counter writes retire the entry (see
// counterWrite) although they do not count as changes to repositories.
func cachedRow[T any](ctx context.Context, d *DB, key string, tables int, repoOf func(T) int64, clone func(T) T, load func() (T, error)) (T, error) {
	if _, inTx := ctx.Value(txKey{}).(*txState); inTx || d.cache == nil || !d.cluster.fresh(ctx) {
		return load()
	}
	if v, ok := d.cache.getRow(key, store.CountersLag(ctx)); ok {
		return clone(v.(T)), nil
	}
	g := d.cache.generation()
	var h rowHint
	if repoOf != nil {
		h = d.cache.hint(key)
	}
	v, err := load()
	if err != nil {
		return v, err
	}
	var repoID int64
	if repoOf != nil {
		repoID = repoOf(v)
	}
	d.cache.putRow(key, tables, repoID, g, h, v)
	return clone(v), nil
}

// tRepoRows are the tables of a row that belongs to a repository (a label,
// a milestone, a project): deleting the repository deletes it through ON
// DELETE CASCADE, which no statement names, so an entry of such a row
// follows the repositories too.
const tRepoRows = tRepos

// cachedByIDs is cached for a set of rows looked up by id: those of ids the
// read cache holds (outside transactions) are not read, and the others are
// read in one statement (load, given the missing ids) and stored one by one
// under key(id). The rows a page shows (posters, labels, milestones) are
// mostly the same few from one request to the next, so a render then reads
// none of them. Ids of no row are left out of the map; callers get copies
// (clone), which they may change. A row that holds a repository's
// counters names it by repoOf (nil for other rows), as for cachedRow.
func cachedByIDs[T any](ctx context.Context, d *DB, ids []int64, key func(int64) string, tables int,
	clone func(T) T, id func(T) int64, repoOf func(T) int64, load func(missing []int64) ([]T, error)) (map[int64]T, error) {
	out := make(map[int64]T, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	c := d.cache
	if _, inTx := ctx.Value(txKey{}).(*txState); inTx || (c != nil && !d.cluster.fresh(ctx)) {
		c = nil
	}
	missing := ids
	var hints map[int64]rowHint
	if c != nil {
		missing = make([]int64, 0, len(ids))
		lag := store.CountersLag(ctx)
		for _, i := range ids {
			if v, ok := c.getRow(key(i), lag); ok {
				out[i] = clone(v.(T))
			} else {
				missing = append(missing, i)
			}
		}
		if len(missing) == 0 {
			return out, nil
		}
		if repoOf != nil {
			hints = make(map[int64]rowHint, len(missing))
			for _, i := range missing {
				hints[i] = c.hint(key(i))
			}
		}
	}
	// Taken before the read: a row changed while it ran is not stored.
	g := c.generation()
	rows, err := load(missing)
	if err != nil {
		return nil, err
	}
	for _, v := range rows {
		// The map gets the row read, the cache a copy of its own.
		var repo int64
		if repoOf != nil {
			repo = repoOf(v)
		}
		c.putRow(key(id(v)), tables, repo, g, hints[id(v)], clone(v))
		out[id(v)] = v
	}
	return out, nil
}

// rowsByID is a loader for cachedByIDs: the rows of T's table among the
// missing ids, in one statement; what names them in an error.
func rowsByID[T any](ctx context.Context, d *DB, what string) func(missing []int64) ([]T, error) {
	return func(missing []int64) ([]T, error) {
		var found []T
		err := d.conn(ctx).Where("id IN ?", missing).Find(&found).Error
		return found, translate(err, what)
	}
}

// Watch lets a cache built on the store (a rendered answer) follow the
// read cache's rules: store.Watch. It fails for a table whose changes are
// not counted, and reports false when the store caches nothing.
func (d *DB) Watch(tables ...string) (store.Watch, bool, error) {
	mask := 0
	for _, t := range tables {
		bit, ok := cachedTables[t]
		if !ok {
			return store.Watch{}, false, fmt.Errorf("watch: changes to table %q are not counted", t)
		}
		if bit == tRepos {
			// What shows repositories shows their counters.
			bit |= tRepoCounts
		}
		mask |= bit
	}
	c := d.cache
	if c == nil {
		return store.Watch{}, false, nil
	}
	var fresh func(context.Context) bool
	if d.cluster != nil {
		fresh = d.cluster.fresh
	}
	return store.Watch{TTL: c.ttl, Fresh: fresh, Generation: func() uint64 { return c.sum(mask) },
		Shared: func() uint64 { return c.sumShared(mask &^ tRepoCounts) },
		Repo:   func(repo int64) uint64 { return c.sumRepo(repo) }}, true, nil
}
