package sqlstore

import (
	"context"
	"fmt"
	"testing"
	"time"

	"repohost/store"
	"repohost/store/sqlstore/sqltest"
)

func TestReadCacheGenerations(t *testing.T) {
	t.Parallel()
	now := time.Unix(1_000_000, 0)
	c := newReadCache(time.Second, 4)
	c.now = func() time.Time { return now }
	gen := c.generation()
	c.put("a", tUsers, gen, 1)
	if v, ok := c.get("a"); !ok || v != 1 {
		t.Fatalf("get a: %v %v", v, ok)
	}
	// A change retires what was stored before it, and what was read
	// while it happened.
	old := c.generation()
	c.put("r", tRepos, old, 3)
	c.invalidate(tUsers)
	if _, ok := c.get("a"); ok {
		t.Error("an entry survived a change of its table")
	}
	if _, ok := c.get("r"); !ok {
		t.Error("an entry of another table was retired")
	}
	c.put("b", tUsers|tRepos, old, 2)
	if _, ok := c.get("b"); ok {
		t.Error("a row read before a change was stored")
	}
	c.put("b", tUsers, c.generation(), 2)
	now = now.Add(time.Second)
	if _, ok := c.get("b"); ok {
		t.Error("an entry outlived its TTL")
	}
	for i := 0; i < 100; i++ {
		c.put(fmt.Sprint(i), tUsers, c.generation(), i)
		if len(c.entries) > 4 {
			t.Fatalf("%d entries, bound 4", len(c.entries))
		}
	}
	if newReadCache(0, 4) != nil {
		t.Error("a zero TTL made a cache")
	}
	for _, w := range []struct {
		table, sql string
		want       int
	}{
		{"users", "", tUsers}, {"issues", "", tIssues}, {"issue_labels il", "", tIssueLabels}, {`"users"`, "", tUsers}, {"webhooks", "", tWebhooks}, {"hook_deliveries", "", 0}, {"", "UPDATE repositories SET num_issues = 1", tRepos},
		{"", "update `access_tokens` set x = 1", tTokens}, {"", "DELETE FROM users WHERE id = 1", tUsers},
		{"", `INSERT INTO "issues" (a) VALUES (1)`, tIssues}, {"", "WITH n AS (INSERT INTO x) INSERT INTO issues", tIssues},
		{"", "WITH n AS (INSERT INTO x ON CONFLICT DO UPDATE SET a = 1), c AS (UPDATE repositories SET b = 2) INSERT INTO issues", tRepos | tIssues},
		{"", "INSERT INTO issue_mentions (issue_id, user_id) SELECT 1, id FROM users", tMentions}, {"", "VACUUM", allTables},
		{"", "INSERT INTO issue_indexes (repo_id) VALUES (1)", 0}, {"", "DELETE FROM hook_event_marks", 0},
		{"", "DELETE FROM team_repos WHERE team_id = 1", tTeamRepos}, {"team_users", "", tTeamUsers},
		{"collaborations", "", tCollaborations}, {"org_members", "", tOrgMembers}, {"teams", "", tTeams},
		{"", "WITH i AS (SELECT repo_id FROM issues) SELECT * FROM users", 0},
		{"", " (WITH i AS (SELECT 1) SELECT * FROM users FOR UPDATE)", allTables},
		{"", "WITH i AS (SELECT 1) MERGE INTO users", allTables},
	} {
		if got := (&writeTargets{}).writtenTables(w.table, w.sql); got != w.want {
			t.Errorf("writtenTables(%q, %q) = %b, want %b", w.table, w.sql, got, w.want)
		}
	}
	for sql, want := range map[string]bool{"SELECT 1": true, " (select x)": true, "INSERT INTO t": false,
		"WITH x AS (SELECT 1) INSERT": false, "UPDATE t": false, "": false} {
		if isSelect(sql) != want {
			t.Errorf("isSelect(%q) = %v", sql, !want)
		}
	}
}

// TestCachedLookupsSeeEveryWrite: on a store with the cache, a row changed
// through any kind of statement (a model update, a raw UPDATE, a delete, a
// transaction) is read fresh right after, and callers get copies they may
// change without changing what others are served.
func TestCachedLookupsSeeEveryWrite(t *testing.T) {
	t.Parallel()
	d := openCached(t)
	ctx := context.Background()
	u := &store.User{Name: "Ann", Email: "ann@example.com", IsActive: true, MaxRepoCreation: -1}
	if err := d.Users().Create(ctx, u); err != nil {
		t.Fatal(err)
	}
	name := func() string {
		t.Helper()
		got, err := d.Users().FindByName(ctx, "ann")
		if err != nil {
			t.Fatal(err)
		}
		return got.FullName
	}
	if name() != "" {
		t.Fatal("full name set")
	}
	got, _ := d.Users().FindByName(ctx, "ann")
	got.FullName = "changed by a caller"
	if name() != "" {
		t.Error("a caller's change reached the cache")
	}
	u.FullName = "by Update"
	if err := d.Users().Update(ctx, u); err != nil {
		t.Fatal(err)
	}
	if name() != "by Update" {
		t.Error("Update not seen")
	}
	if err := d.gorm.Exec("UPDATE users SET full_name = ? WHERE id = ?", "by Exec", u.ID).Error; err != nil {
		t.Fatal(err)
	}
	if name() != "by Exec" {
		t.Error("raw UPDATE not seen")
	}
	err := d.WithTx(ctx, func(ctx context.Context) error {
		return d.conn(ctx).Exec("UPDATE users SET full_name = ? WHERE id = ?", "in a transaction", u.ID).Error
	})
	if err != nil || name() != "in a transaction" {
		t.Errorf("transaction not seen: %v", err)
	}
	byID, err := d.Users().FindByIDs(ctx, []int64{u.ID})
	if err != nil || byID[u.ID].FullName != "in a transaction" {
		t.Errorf("FindByIDs: %v %v", byID, err)
	}
	if err := d.Users().Delete(ctx, u.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Users().FindByName(ctx, "ann"); err == nil {
		t.Error("a deleted user is still found")
	}
	if _, err := d.Users().FindByID(ctx, u.ID); err == nil {
		t.Error("a deleted user is still found by id")
	}
}

// TestWatchCountsWrites: a watch's generation grows with every change to
// its tables, in a transaction both at the statement and at the end, and
// with no other; a table whose changes are not counted cannot be watched,
// and a store without the cache gives no watch.
func TestWatchCountsWrites(t *testing.T) {
	t.Parallel()
	d := openCached(t)
	ctx := context.Background()
	if _, _, err := d.Watch("issues", "hook_deliveries"); err == nil {
		t.Error("watched a table whose changes are not counted")
	}
	w, ok, err := d.Watch("labels", "issue_labels")
	if err != nil || !ok || w.TTL != time.Minute {
		t.Fatalf("watch: %v %v %v", w, ok, err)
	}
	g := w.Generation()
	u := &store.User{Name: "ann", Email: "ann@example.com", IsActive: true, MaxRepoCreation: -1}
	if err := d.Users().Create(ctx, u); err != nil || w.Generation() != g {
		t.Errorf("a change to another table moved the generation: %v", err)
	}
	r := &store.Repository{OwnerID: u.ID, Name: "r", DefaultBranch: "main"}
	if err := d.Repos().Create(ctx, r); err != nil {
		t.Fatal(err)
	}
	if err := d.Labels().Create(ctx, &store.Label{RepoID: r.ID, Name: "bug", Color: "#ff0000"}); err != nil || w.Generation() == g {
		t.Errorf("a change to a watched table did not move the generation: %v", err)
	}
	g = w.Generation()
	var during uint64
	err = d.WithTx(ctx, func(ctx context.Context) error {
		err := d.conn(ctx).Exec("UPDATE labels SET name = ? WHERE repo_id = ?", "Bug", r.ID).Error
		during = w.Generation()
		return err
	})
	if err != nil || during == g || w.Generation() == during {
		t.Errorf("a transaction's change: before %d, at the statement %d, after %d (%v)", g, during, w.Generation(), err)
	}
	// The access tables a repository list is read from are counted too.
	acc, _, err := d.Watch("collaborations", "team_users", "team_repos")
	if err != nil {
		t.Fatal(err)
	}
	g = acc.Generation()
	if err := d.Access().SetCollaborator(ctx, &store.Collaboration{RepoID: r.ID, UserID: u.ID, Mode: store.AccessWrite}); err != nil ||
		acc.Generation() == g {
		t.Errorf("a collaborator added did not move the generation: %v", err)
	}
	bare, err := Open(sqltest.DSN(t, ""), Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { bare.Close() })
	if _, ok, err := bare.Watch("issues"); ok || err != nil {
		t.Errorf("a store without the cache gave a watch: %v %v", ok, err)
	}
}

// openCached opens a migrated store keeping its read cache for a minute.
func openCached(t *testing.T) *DB {
	t.Helper()
	d, err := Open(sqltest.DSN(t, ""), Options{CacheTTL: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	if _, err := d.Migrate(context.Background()); err != nil {
		t.Fatal(err)
	}
	return d
}

// TestCounterWritesRetireTheirRepository: a write that only moves one
// repository's counters (an issue created, closed, a fork, a release)
// retires that repository's cached rows, by name and by id, and what
// watches repositories, but not the other repositories' rows; a row read
// while some repository's counters moved is not stored.
func TestCounterWritesRetireTheirRepository(t *testing.T) {
	t.Parallel()
	c := newReadCache(time.Minute, 16)
	g := c.generation()
	c.putRow("a", tRepos, 1, g, rowHint{}, 1)
	c.putRow("b", tRepos, 2, g, rowHint{}, 2)
	c.countersChanged([]int64{1})
	if _, ok := c.get("a"); ok {
		t.Error("an entry survived a change to its repository's counters")
	}
	if _, ok := c.get("b"); !ok {
		t.Error("another repository's entry was retired")
	}
	c.putRow("x", tRepos, 1, g, rowHint{}, 1)
	if _, ok := c.get("x"); ok {
		t.Error("a row read while some repository's counters moved was served")
	}
	if _, ok := c.getRow("x", true); !ok {
		t.Error("a row read while counters moved was not served to a read that lets them lag")
	}
	// Read again with the hint of its last entry: another repository's
	// counters moving meanwhile does not keep it out, its own do.
	g, h := c.generation(), c.hint("a")
	c.countersChanged([]int64{2})
	c.putRow("a", tRepos, 1, g, h, 1)
	if _, ok := c.get("a"); !ok {
		t.Error("a row was kept out by another repository's counters")
	}
	g, h = c.generation(), c.hint("a")
	c.countersChanged([]int64{1})
	c.putRow("a", tRepos, 1, g, h, 1)
	if _, ok := c.get("a"); ok {
		t.Error("a row read while its counters moved was served")
	}
	if _, ok := c.getRow("a", true); !ok {
		t.Error("a row whose counters moved was not served to a read that lets them lag")
	}
	c.invalidate(tRepos)
	if _, ok := c.getRow("a", true); ok {
		t.Error("a read that lets counters lag was served a changed repository")
	}

	d := openCached(t)
	ctx := context.Background()
	u := &store.User{Name: "ann", Email: "ann@example.com", IsActive: true, MaxRepoCreation: -1}
	if err := d.Users().Create(ctx, u); err != nil {
		t.Fatal(err)
	}
	a := &store.Repository{OwnerID: u.ID, Name: "a", DefaultBranch: "main"}
	b := &store.Repository{OwnerID: u.ID, Name: "b", DefaultBranch: "main"}
	for _, r := range []*store.Repository{a, b} {
		if err := d.Repos().Create(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	byName := func(name string) *store.Repository {
		t.Helper()
		r, err := d.Repos().FindByOwnerAndName(ctx, "ann", name)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	byID := func(id int64) *store.Repository {
		t.Helper()
		r, err := d.Repos().FindByID(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	byName("a")
	byName("b")
	byID(a.ID)
	w, _, err := d.Watch("repositories")
	if err != nil {
		t.Fatal(err)
	}
	gen := w.Generation()
	// Changed behind the store's back: only a cache miss can see it.
	raw, err := d.gorm.DB()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := raw.Exec(fmt.Sprintf("UPDATE repositories SET description = 'behind' WHERE id IN (%d, %d)", a.ID, b.ID)); err != nil {
		t.Fatal(err)
	}
	if err := d.Issues().AdjustRepoCounts(ctx, a.ID, 1, 0); err != nil {
		t.Fatal(err)
	}
	if r := byName("a"); r.NumIssues != 1 || r.Description != "behind" {
		t.Errorf("by name after a counter write: %d issues, %q", r.NumIssues, r.Description)
	}
	if r := byID(a.ID); r.NumIssues != 1 {
		t.Errorf("by id after a counter write: %d issues", r.NumIssues)
	}
	if r := byName("b"); r.Description != "" {
		t.Error("another repository's row was read again after a counter write")
	}
	if err := d.Issues().AdjustRepoCounts(ctx, b.ID, 1, 0); err != nil {
		t.Fatal(err)
	}
	lagging, err := d.Repos().FindByOwnerAndName(store.CountersMayLag(ctx), "ann", "b")
	if err != nil || lagging.Description != "" {
		t.Errorf("a read that lets counters lag was not served from the cache: %v", err)
	}
	if r := byName("b"); r.NumIssues != 1 {
		t.Errorf("after a lagging read: %d issues", r.NumIssues)
	}
	if w.Generation() == gen {
		t.Error("a counter write did not move the watch of repositories")
	}
	err = d.WithTx(ctx, func(ctx context.Context) error {
		return d.Issues().AdjustRepoCounts(ctx, a.ID, 1, 1)
	})
	if r := byID(a.ID); err != nil || r.NumIssues != 2 || r.NumClosedIssues != 1 {
		t.Errorf("after a transaction's counter write: %d issues, %d closed (%v)", r.NumIssues, r.NumClosedIssues, err)
	}
	is := &store.Issue{RepoID: a.ID, PosterID: u.ID, Title: "t"}
	if err := d.Issues().CreateNumberedAlone(ctx, is, 1, 0); err != nil {
		t.Fatal(err)
	}
	if r := byName("a"); r.NumIssues != 3 {
		t.Errorf("after an issue was created: %d issues", r.NumIssues)
	}
	if err := d.Repos().AdjustForks(ctx, a.ID, 1); err != nil {
		t.Fatal(err)
	}
	if r := byID(a.ID); r.NumForks != 1 {
		t.Errorf("after a fork: %d forks", r.NumForks)
	}

	// An issue page's repositories are kept under FindByID's entries,
	// and follow the same counter rule.
	pageRepos := func(ctx context.Context) *store.Repository {
		t.Helper()
		m, err := d.Issues().Repos(ctx, []int64{a.ID})
		if err != nil || m[a.ID] == nil || m[a.ID].Owner == nil {
			t.Fatalf("page repositories: %v, %v", m, err)
		}
		return m[a.ID]
	}
	if _, err := raw.Exec(fmt.Sprintf("UPDATE repositories SET description = 'again' WHERE id = %d", a.ID)); err != nil {
		t.Fatal(err)
	}
	if r := pageRepos(ctx); r.Description != "behind" || r.NumForks != 1 {
		t.Errorf("a page's repository was not served from FindByID's entry: %q, %d forks", r.Description, r.NumForks)
	}
	if err := d.Issues().AdjustRepoCounts(ctx, a.ID, 1, 0); err != nil {
		t.Fatal(err)
	}
	if r := pageRepos(store.CountersMayLag(ctx)); r.Description != "behind" {
		t.Error("a page that lets counters lag read its repository again after a counter write")
	}
	if r := pageRepos(ctx); r.Description != "again" || r.NumIssues != 4 {
		t.Errorf("after a counter write: %q, %d issues", r.Description, r.NumIssues)
	}
	if r := byID(a.ID); r.Description != "again" {
		t.Error("FindByID did not see the entry the page stored")
	}
}

// TestWatchOfOneRepository: an issue created in repository b (in a
// transaction, as the issue service does) moves the generation of every
// watcher and b's part of a watch of one repository, but neither the
// shared part nor a's; a write not confined to one repository (a label
// created through the store, which is not marked) moves the shared part.
func TestWatchOfOneRepository(t *testing.T) {
	t.Parallel()
	d := openCached(t)
	ctx := context.Background()
	w, ok, err := d.Watch("issues", "comments", "labels", "issue_labels", "users", "repositories")
	if err != nil || !ok || w.Shared == nil || w.Repo == nil {
		t.Fatalf("watch: %v %v", ok, err)
	}
	u := &store.User{Name: "ann", Email: "ann@example.com", IsActive: true, MaxRepoCreation: -1}
	if err := d.Users().Create(ctx, u); err != nil {
		t.Fatal(err)
	}
	var repos []*store.Repository
	for i := 0; i < 2; i++ {
		r := &store.Repository{OwnerID: u.ID, Name: fmt.Sprint("r", i), DefaultBranch: "main", HasIssues: true}
		if err := d.Repos().Create(ctx, r); err != nil {
			t.Fatal(err)
		}
		repos = append(repos, r)
	}
	a, b := repos[0], repos[1]
	if a.ID%rowStripes == b.ID%rowStripes {
		t.Fatal("the two repositories share a stripe")
	}
	all, shared, ofA, ofB := w.Generation(), w.Shared(), w.Repo(a.ID), w.Repo(b.ID)
	err = d.WithTx(ctx, func(ctx context.Context) error {
		return d.Issues().CreateNumbered(ctx, &store.Issue{RepoID: b.ID, PosterID: u.ID, Title: "t"}, 1, 0)
	})
	if err != nil {
		t.Fatal(err)
	}
	if w.Generation() == all || w.Repo(b.ID) == ofB {
		t.Error("an issue created in b did not move the generation or b's part")
	}
	if w.Shared() != shared || w.Repo(a.ID) != ofA {
		t.Errorf("an issue created in b moved the shared part (%d→%d) or a's (%d→%d)", shared, w.Shared(), ofA, w.Repo(a.ID))
	}
	if err := d.Labels().Create(ctx, &store.Label{RepoID: b.ID, Name: "bug", Color: "#ff0000"}); err != nil {
		t.Fatal(err)
	}
	if w.Shared() == shared {
		t.Error("a write not marked as confined did not move the shared part")
	}
}
