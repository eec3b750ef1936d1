package sqlstore

import (
	"context"
	"fmt"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"gorm.io/gorm/logger"

	"repohost/store"
	"repohost/store/sqlstore/sqltest"
)

// TestIssueLinks: Links gives, in one statement, the label, assignee and
// project ids ForIssues and Assignees give (labels by name then id,
// assignees in assignment order, projects ascending), no entry for an issue
// without links of a kind, and runs nothing for no issues.
func TestIssueLinks(t *testing.T) {
	t.Parallel()
	var stmts atomic.Int64
	d, err := Open(sqltest.DSN(t, ""), Options{Logger: &stmtCounter{n: &stmts}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	ctx := context.Background()
	if _, err := d.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	users := make([]*store.User, 3)
	for i := range users {
		users[i] = &store.User{Name: fmt.Sprintf("u%d", i), Email: fmt.Sprintf("u%d@example.com", i), IsActive: true, MaxRepoCreation: -1}
		if err := d.Users().Create(ctx, users[i]); err != nil {
			t.Fatal(err)
		}
	}
	r := &store.Repository{OwnerID: users[0].ID, Name: "r", HasIssues: true}
	if err := d.Repos().Create(ctx, r); err != nil {
		t.Fatal(err)
	}
	// Created in an order that is neither the names' nor the ids'; two
	// share a name, which the id then orders.
	var labels []*store.Label
	for _, name := range []string{"zeta", "Bug", "alpha", "bug", "alpha"} {
		l := &store.Label{RepoID: r.ID, Name: name, Color: "#ff0000"}
		if err := d.Labels().Create(ctx, l); err != nil {
			t.Fatal(err)
		}
		labels = append(labels, l)
	}
	var projects []*store.Project
	for i := 0; i < 3; i++ {
		pr := &store.Project{RepoID: r.ID, CreatorID: users[0].ID, Title: fmt.Sprint("p", i)}
		if err := d.Projects().Create(ctx, pr); err != nil {
			t.Fatal(err)
		}
		projects = append(projects, pr)
	}
	var issues []*store.Issue
	for i := 1; i <= 3; i++ {
		is := &store.Issue{RepoID: r.ID, Index: int64(i), PosterID: users[0].ID, Title: fmt.Sprint(i)}
		if err := d.Issues().Create(ctx, is); err != nil {
			t.Fatal(err)
		}
		issues = append(issues, is)
	}
	one, two, bare := issues[0].ID, issues[1].ID, issues[2].ID
	ids := func(ls ...*store.Label) []int64 {
		var out []int64
		for _, l := range ls {
			out = append(out, l.ID)
		}
		return out
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(d.Labels().AddToIssue(ctx, one, ids(labels...)))
	must(d.Labels().AddToIssue(ctx, two, ids(labels[0], labels[2])))
	must(d.Issues().SetAssignees(ctx, one, []int64{users[2].ID, users[0].ID, users[1].ID}))
	must(d.Issues().SetAssignees(ctx, two, []int64{users[1].ID}))
	must(d.Projects().SetIssueProjects(ctx, one, []int64{projects[2].ID, projects[0].ID}))
	must(d.Projects().SetIssueProjects(ctx, two, []int64{projects[1].ID}))

	all := []int64{one, two, bare}
	before := stmts.Load()
	links, err := d.Issues().Links(ctx, all)
	must(err)
	if n := stmts.Load() - before; n != 1 {
		t.Errorf("Links ran %d statements, want 1", n)
	}
	byName, err := d.Labels().ForIssues(ctx, all)
	must(err)
	assignees, err := d.Issues().Assignees(ctx, all)
	must(err)
	projectsOf, err := d.Projects().ForIssues(ctx, all)
	must(err)
	for _, id := range all {
		if got, want := links.Labels[id], ids(byName[id]...); !slices.Equal(got, want) {
			t.Errorf("issue %d: labels %v, ForIssues gives %v", id, got, want)
		}
		if got, want := links.Assignees[id], assignees[id]; !slices.Equal(got, want) {
			t.Errorf("issue %d: assignees %v, Assignees gives %v", id, got, want)
		}
		var want []int64
		for _, pr := range projectsOf[id] {
			want = append(want, pr.ID)
		}
		if got := links.Projects[id]; !slices.Equal(got, want) {
			t.Errorf("issue %d: projects %v, ForIssues gives %v", id, got, want)
		}
	}
	// Held to fixed answers too, beside the methods they replace.
	if got, want := links.Assignees[one], []int64{users[2].ID, users[0].ID, users[1].ID}; !slices.Equal(got, want) {
		t.Errorf("assignees of one: %v, want %v", got, want)
	}
	if got, want := links.Projects[one], []int64{projects[0].ID, projects[2].ID}; !slices.Equal(got, want) {
		t.Errorf("projects of one: %v, want %v", got, want)
	}
	// "alpha" twice, the older first, and "zeta" last whatever the
	// collation does with case.
	if got := links.Labels[one]; len(got) != 5 || got[len(got)-1] != labels[0].ID {
		t.Errorf("labels of one: %v, want zeta (%d) last", got, labels[0].ID)
	}
	if got, want := links.Labels[two], ids(labels[2], labels[0]); !slices.Equal(got, want) {
		t.Errorf("labels of two: %v, want %v", got, want)
	}
	for kind, m := range map[string]map[int64][]int64{"labels": links.Labels, "assignees": links.Assignees, "projects": links.Projects} {
		if _, ok := m[bare]; ok {
			t.Errorf("%s: an entry for an issue without links", kind)
		}
	}

	before = stmts.Load()
	empty, err := d.Issues().Links(ctx, nil)
	if err != nil || len(empty.Labels)+len(empty.Assignees)+len(empty.Projects) != 0 || empty.Labels == nil {
		t.Errorf("no issues: %+v %v", empty, err)
	}
	if n := stmts.Load() - before; n != 0 {
		t.Errorf("Links of no issues ran %d statements", n)
	}
}

// TestCachedByIDs: the lookups by id of labels, projects, milestones and
// users serve from the read cache what it holds and read the rest in one
// statement; a change made through the store is seen by the very next
// lookup, a caller's change to what it got is not, and a lookup in a
// transaction reads the rows even when the cache holds them (shown by a
// change made by another process, which the cache cannot see for its TTL).
func TestCachedByIDs(t *testing.T) {
	t.Parallel()
	dsn := sqltest.DSN(t, "")
	var stmts atomic.Int64
	d, err := Open(dsn, Options{CacheTTL: time.Minute, Logger: &stmtCounter{n: &stmts}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	ctx := context.Background()
	if _, err := d.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	// other is another process on the same database.
	other, err := Open(dsn, Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { other.Close() })
	u := &store.User{Name: "ann", Email: "ann@example.com", IsActive: true, MaxRepoCreation: -1}
	if err := d.Users().Create(ctx, u); err != nil {
		t.Fatal(err)
	}
	r := &store.Repository{OwnerID: u.ID, Name: "r", HasIssues: true}
	if err := d.Repos().Create(ctx, r); err != nil {
		t.Fatal(err)
	}

	// Each kind: how to create a row of a name, look names up by id,
	// rename a row through a store and change what a lookup handed out.
	type kind struct {
		name   string
		create func(name string) (int64, error)
		lookup func(ctx context.Context, ids []int64) (map[int64]string, error)
		rename func(db *DB, id int64, name string) error
		spoil  func(ctx context.Context, id int64)
	}
	kinds := []kind{
		{
			name: "labels",
			create: func(name string) (int64, error) {
				l := &store.Label{RepoID: r.ID, Name: name, Color: "#ff0000"}
				err := d.Labels().Create(ctx, l)
				return l.ID, err
			},
			lookup: func(ctx context.Context, ids []int64) (map[int64]string, error) {
				return names(d.Labels().ByIDs(ctx, ids))(func(l *store.Label) string { return l.Name })
			},
			rename: func(db *DB, id int64, name string) error {
				l, err := db.Labels().Find(ctx, r.ID, id)
				if err != nil {
					return err
				}
				l.Name = name
				return db.Labels().Update(ctx, l)
			},
			spoil: func(ctx context.Context, id int64) {
				m, _ := d.Labels().ByIDs(ctx, []int64{id})
				m[id].Name = "spoilt"
				now := time.Now()
				m[id].ArchivedAt = &now
			},
		},
		{
			name: "projects",
			create: func(name string) (int64, error) {
				pr := &store.Project{RepoID: r.ID, CreatorID: u.ID, Title: name}
				err := d.Projects().Create(ctx, pr)
				return pr.ID, err
			},
			lookup: func(ctx context.Context, ids []int64) (map[int64]string, error) {
				return names(d.Projects().ByIDs(ctx, ids))(func(pr *store.Project) string { return pr.Title })
			},
			rename: func(db *DB, id int64, name string) error {
				pr, err := db.Projects().Find(ctx, r.ID, id)
				if err != nil {
					return err
				}
				pr.Title = name
				return db.Projects().Update(ctx, pr)
			},
			spoil: func(ctx context.Context, id int64) {
				m, _ := d.Projects().ByIDs(ctx, []int64{id})
				m[id].Title = "spoilt"
			},
		},
		{
			name: "milestones",
			create: func(name string) (int64, error) {
				m := &store.Milestone{RepoID: r.ID, Title: name}
				err := d.Milestones().Create(ctx, m)
				return m.ID, err
			},
			lookup: func(ctx context.Context, ids []int64) (map[int64]string, error) {
				return names(d.Milestones().FindByIDs(ctx, ids))(func(m *store.Milestone) string { return m.Title })
			},
			rename: func(db *DB, id int64, name string) error {
				m, err := db.Milestones().Find(ctx, r.ID, id)
				if err != nil {
					return err
				}
				m.Title = name
				return db.Milestones().Update(ctx, m)
			},
			spoil: func(ctx context.Context, id int64) {
				m, _ := d.Milestones().FindByIDs(ctx, []int64{id})
				m[id].Title = "spoilt"
			},
		},
		{
			name: "users",
			create: func(name string) (int64, error) {
				u := &store.User{Name: "u-" + name, FullName: name, Email: name + "@example.com", IsActive: true, MaxRepoCreation: -1}
				err := d.Users().Create(ctx, u)
				return u.ID, err
			},
			lookup: func(ctx context.Context, ids []int64) (map[int64]string, error) {
				return names(d.Users().FindByIDs(ctx, ids))(func(u *store.User) string { return u.FullName })
			},
			rename: func(db *DB, id int64, name string) error {
				u, err := db.Users().FindByID(ctx, id)
				if err != nil {
					return err
				}
				u.FullName = name
				return db.Users().Update(ctx, u)
			},
			spoil: func(ctx context.Context, id int64) {
				m, _ := d.Users().FindByIDs(ctx, []int64{id})
				m[id].FullName = "spoilt"
			},
		},
	}
	for _, k := range kinds {
		a, err := k.create("one")
		if err != nil {
			t.Fatalf("%s: %v", k.name, err)
		}
		b, err := k.create("two")
		if err != nil {
			t.Fatalf("%s: %v", k.name, err)
		}
		look := func(ctx context.Context, ids ...int64) (map[int64]string, int64) {
			t.Helper()
			n := stmts.Load()
			got, err := k.lookup(ctx, ids)
			if err != nil {
				t.Fatalf("%s: %v", k.name, err)
			}
			return got, stmts.Load() - n
		}
		const missing = 1 << 40
		if got, n := look(ctx, a, missing); n != 1 || len(got) != 1 || got[a] != "one" {
			t.Errorf("%s: first lookup: %v in %d statements, want {%d: one} in 1", k.name, got, n, a)
		}
		if got, n := look(ctx, a); n != 0 || got[a] != "one" {
			t.Errorf("%s: cached lookup: %v in %d statements, want one in 0", k.name, got, n)
		}
		// The one cached is not read again; the other is, with the
		// missing id, in one statement.
		if got, n := look(ctx, a, b, missing); n != 1 || len(got) != 2 || got[a] != "one" || got[b] != "two" {
			t.Errorf("%s: partly cached lookup: %v in %d statements, want 1", k.name, got, n)
		}
		k.spoil(ctx, a)
		if got, _ := look(ctx, a); got[a] != "one" {
			t.Errorf("%s: a caller's change reached the cache: %v", k.name, got)
		}
		// A change through this store is seen at once.
		if err := k.rename(d, a, "changed"); err != nil {
			t.Fatal(err)
		}
		if got, n := look(ctx, a); got[a] != "changed" || n != 1 {
			t.Errorf("%s: after a change: %v in %d statements, want changed, read", k.name, got, n)
		}
		// Another process's change is not seen for the TTL, except in a
		// transaction, which never reads from the cache.
		look(ctx, a)
		if err := k.rename(other, a, "elsewhere"); err != nil {
			t.Fatal(err)
		}
		if got, _ := look(ctx, a); got[a] != "changed" {
			t.Fatalf("%s: the cache was not used: %v", k.name, got)
		}
		err = d.WithTx(ctx, func(ctx context.Context) error {
			if got, n := look(ctx, a); got[a] != "elsewhere" || n != 1 {
				t.Errorf("%s: in a transaction: %v in %d statements, want elsewhere, read", k.name, got, n)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if got, n := look(ctx); len(got) != 0 || n != 0 {
			t.Errorf("%s: no ids: %v in %d statements", k.name, got, n)
		}
	}
}

// TestCachedByIDsFollowRepository: the labels, projects and milestones a
// lookup by id cached go with their repository, which deletes them through
// its foreign keys without a statement naming their tables.
func TestCachedByIDsFollowRepository(t *testing.T) {
	t.Parallel()
	d := openCached(t)
	ctx := context.Background()
	u := &store.User{Name: "ann", Email: "ann@example.com", IsActive: true, MaxRepoCreation: -1}
	if err := d.Users().Create(ctx, u); err != nil {
		t.Fatal(err)
	}
	r := &store.Repository{OwnerID: u.ID, Name: "r", HasIssues: true}
	if err := d.Repos().Create(ctx, r); err != nil {
		t.Fatal(err)
	}
	l := &store.Label{RepoID: r.ID, Name: "bug", Color: "#ff0000"}
	pr := &store.Project{RepoID: r.ID, CreatorID: u.ID, Title: "p"}
	m := &store.Milestone{RepoID: r.ID, Title: "m"}
	for _, err := range []error{d.Labels().Create(ctx, l), d.Projects().Create(ctx, pr), d.Milestones().Create(ctx, m)} {
		if err != nil {
			t.Fatal(err)
		}
	}
	found := func() (int, int, int) {
		t.Helper()
		ls, err1 := d.Labels().ByIDs(ctx, []int64{l.ID})
		ps, err2 := d.Projects().ByIDs(ctx, []int64{pr.ID})
		ms, err3 := d.Milestones().FindByIDs(ctx, []int64{m.ID})
		for _, err := range []error{err1, err2, err3} {
			if err != nil {
				t.Fatal(err)
			}
		}
		return len(ls), len(ps), len(ms)
	}
	if a, b, c := found(); a+b+c != 3 {
		t.Fatalf("found %d labels, %d projects, %d milestones, want one each", a, b, c)
	}
	if err := d.Repos().Delete(ctx, r.ID); err != nil {
		t.Fatal(err)
	}
	if a, b, c := found(); a+b+c != 0 {
		t.Errorf("after the repository went: %d labels, %d projects, %d milestones still found", a, b, c)
	}
}

// names maps the rows a lookup by id found to one of their strings.
func names[T any](rows map[int64]T, err error) func(func(T) string) (map[int64]string, error) {
	return func(name func(T) string) (map[int64]string, error) {
		if err != nil {
			return nil, err
		}
		out := make(map[int64]string, len(rows))
		for id, v := range rows {
			out[id] = name(v)
		}
		return out, nil
	}
}

// stmtCounter counts the statements GORM runs.
type stmtCounter struct{ n *atomic.Int64 }

func (l *stmtCounter) LogMode(logger.LogLevel) logger.Interface      { return l }
func (l *stmtCounter) Info(context.Context, string, ...interface{})  {}
func (l *stmtCounter) Warn(context.Context, string, ...interface{})  {}
func (l *stmtCounter) Error(context.Context, string, ...interface{}) {}
func (l *stmtCounter) Trace(context.Context, time.Time, func() (string, int64), error) {
	l.n.Add(1)
}
