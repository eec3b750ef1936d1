package sqlstore_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"repohost/store"
	"repohost/store/sqlstore"
	"repohost/store/sqlstore/sqltest"
)

// open returns a migrated store on an empty database of the selected engine
// (SQLite, or a fresh PostgreSQL schema under scripts/with-postgres.sh).
func open(t *testing.T) (*sqlstore.DB, string) {
	t.Helper()
	dsn := sqltest.DSN(t, "")
	db, err := sqlstore.Open(dsn, sqlstore.Options{})
	if err != nil {
		t.Fatalf("open %s: %v", sqltest.Database(), err)
	}
	t.Cleanup(func() { db.Close() })
	if _, err := db.Migrate(context.Background()); err != nil {
		t.Fatalf("migrate: %v", err)
	}
	return db, dsn
}

func newUser(name string) *store.User {
	return &store.User{Name: name, Email: name + "@example.com", IsActive: true, MaxRepoCreation: -1}
}

func mustCreateUser(t *testing.T, db *sqlstore.DB, u *store.User) *store.User {
	t.Helper()
	if err := db.Users().Create(context.Background(), u); err != nil {
		t.Fatalf("create user %s: %v", u.Name, err)
	}
	return u
}

func TestMigrationsAreIdempotent(t *testing.T) {
	ctx := context.Background()
	dsn := sqltest.DSN(t, "")
	db, err := sqlstore.Open(dsn, sqlstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	n, err := db.Migrate(ctx)
	if err != nil {
		t.Fatalf("first migrate: %v", err)
	}
	if n == 0 {
		t.Fatal("first migrate on an empty database applied nothing")
	}
	if n, err = db.Migrate(ctx); err != nil || n != 0 {
		t.Fatalf("second migrate: applied %d, err %v; want 0, nil", n, err)
	}
	// A second process (a restarted server) finds nothing to do either.
	db2, err := sqlstore.Open(dsn, sqlstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db2.Close()
	if n, err = db2.Migrate(ctx); err != nil || n != 0 {
		t.Fatalf("migrate from a new connection: applied %d, err %v; want 0, nil", n, err)
	}
	// And the schema works.
	mustCreateUser(t, db2, newUser("after-migrate"))
}

func TestDuplicatesAreErrDuplicate(t *testing.T) {
	db, _ := open(t)
	ctx := context.Background()
	alice := mustCreateUser(t, db, newUser("Alice"))

	// Names are unique case-insensitively.
	for _, name := range []string{"Alice", "alice", "ALICE"} {
		err := db.Users().Create(ctx, newUser(name))
		if !errors.Is(err, store.ErrDuplicate) {
			t.Errorf("second user %q: err %v, want ErrDuplicate", name, err)
		}
	}
	// The failed inserts left nothing behind.
	if n, err := db.Users().Count(ctx, store.UserTypeIndividual); err != nil || n != 1 {
		t.Errorf("count after duplicates: %d, %v", n, err)
	}

	if err := db.Emails().Create(ctx, &store.Email{UserID: alice.ID, Email: "a@example.com", IsPrimary: true}); err != nil {
		t.Fatal(err)
	}
	if err := db.Emails().Create(ctx, &store.Email{UserID: alice.ID, Email: "A@Example.com"}); !errors.Is(err, store.ErrDuplicate) {
		t.Errorf("duplicate email: err %v, want ErrDuplicate", err)
	}

	repo := func() *store.Repository {
		return &store.Repository{OwnerID: alice.ID, Name: "Project", DefaultBranch: "main"}
	}
	if err := db.Repos().Create(ctx, repo()); err != nil {
		t.Fatal(err)
	}
	dup := repo()
	dup.Name = "project"
	if err := db.Repos().Create(ctx, dup); !errors.Is(err, store.ErrDuplicate) {
		t.Errorf("duplicate repository: err %v, want ErrDuplicate", err)
	}

	tok := func(name, hash string) *store.AccessToken {
		return &store.AccessToken{UserID: alice.ID, Name: name, TokenHash: hash, TokenLastEight: "12345678", Scopes: "all"}
	}
	if err := db.Tokens().Create(ctx, tok("t1", "h1")); err != nil {
		t.Fatal(err)
	}
	if err := db.Tokens().Create(ctx, tok("t1", "h2")); !errors.Is(err, store.ErrDuplicate) {
		t.Errorf("duplicate token name: err %v, want ErrDuplicate", err)
	}
	if err := db.Tokens().Create(ctx, tok("t2", "h1")); !errors.Is(err, store.ErrDuplicate) {
		t.Errorf("duplicate token hash: err %v, want ErrDuplicate", err)
	}

	if _, err := db.Users().FindByName(ctx, "nobody"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("missing user: err %v, want ErrNotFound", err)
	}
}

func TestWithTxRollsBackOnError(t *testing.T) {
	db, _ := open(t)
	ctx := context.Background()
	boom := errors.New("boom")
	err := db.WithTx(ctx, func(ctx context.Context) error {
		if err := db.Users().Create(ctx, newUser("ghost")); err != nil {
			return err
		}
		// Inside the transaction the row is visible...
		if _, err := db.Users().FindByName(ctx, "ghost"); err != nil {
			t.Errorf("row not visible inside its transaction: %v", err)
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("WithTx returned %v, want the callback's error", err)
	}
	// ...and gone after the rollback.
	if _, err := db.Users().FindByName(ctx, "ghost"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("after rollback: err %v, want ErrNotFound", err)
	}

	if err := db.WithTx(ctx, func(ctx context.Context) error {
		return db.Users().Create(ctx, newUser("kept"))
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Users().FindByName(ctx, "kept"); err != nil {
		t.Fatalf("after commit: %v", err)
	}
}

func TestNestedWithTxJoinsTheOuterTransaction(t *testing.T) {
	db, _ := open(t)
	ctx := context.Background()
	boom := errors.New("boom")
	err := db.WithTx(ctx, func(ctx context.Context) error {
		if err := db.Users().Create(ctx, newUser("outer")); err != nil {
			return err
		}
		err := db.WithTx(ctx, func(ctx context.Context) error {
			// A separate transaction could not see the outer's uncommitted
			// row (PostgreSQL), or would wait for its lock (SQLite).
			if _, err := db.Users().FindByName(ctx, "outer"); err != nil {
				t.Errorf("inner transaction does not see the outer's row: %v", err)
			}
			return db.Users().Create(ctx, newUser("inner"))
		})
		if err != nil {
			return err
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("WithTx returned %v", err)
	}
	// The inner call committed nothing of its own: the outer rollback undid
	// both rows.
	for _, name := range []string{"outer", "inner"} {
		if _, err := db.Users().FindByName(ctx, name); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("%s after rollback: err %v, want ErrNotFound", name, err)
		}
	}

	// An error from the inner call rolls back the whole transaction too.
	err = db.WithTx(ctx, func(ctx context.Context) error {
		if err := db.Users().Create(ctx, newUser("outer2")); err != nil {
			return err
		}
		return db.WithTx(ctx, func(ctx context.Context) error { return boom })
	})
	if !errors.Is(err, boom) {
		t.Fatalf("WithTx returned %v", err)
	}
	if _, err := db.Users().FindByName(ctx, "outer2"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("outer2 after inner failure: err %v, want ErrNotFound", err)
	}
}

func userNames(us []*store.User) []string {
	out := make([]string, 0, len(us))
	for _, u := range us {
		out = append(out, u.Name)
	}
	sort.Strings(out)
	return out
}

func TestSearchKeywordsMatchLiterally(t *testing.T) {
	db, _ := open(t)
	ctx := context.Background()
	for _, name := range []string{"alice", "a_c", "abc", "bob"} {
		mustCreateUser(t, db, newUser(name))
	}
	honest := newUser("honest")
	honest.FullName = "100% Honest"
	mustCreateUser(t, db, honest)

	page := store.Page{Limit: 50}
	for _, c := range []struct {
		keyword string
		want    []string
	}{
		// LIKE wildcards in a keyword are plain characters.
		{"%", []string{"honest"}},     // only the full name holding a real "%"
		{"%%", nil},                   // no name holds two
		{"_", []string{"a_c"}},        // not every name with one character
		{"a_c", []string{"a_c"}},      // not "abc"
		{`\`, nil},                    // the escape character itself
		{`a\_c`, nil},                 // a pre-escaped keyword is literal too
		{"ALI", []string{"alice"}},    // case-insensitive
		{" bob ", []string{"bob"}},    // trimmed
		{"b", []string{"abc", "bob"}}, // substring
	} {
		users, total, err := db.Users().Search(ctx, store.UserSearch{Type: store.UserTypeIndividual, Keyword: c.keyword}, page)
		if err != nil {
			t.Fatalf("search %q: %v", c.keyword, err)
		}
		got := userNames(users)
		if len(got) != len(c.want) || int(total) != len(c.want) {
			t.Errorf("search %q: %v (total %d), want %v", c.keyword, got, total, c.want)
			continue
		}
		for i := range got {
			if got[i] != c.want[i] {
				t.Errorf("search %q: %v, want %v", c.keyword, got, c.want)
				break
			}
		}
	}

	// Repository search follows the same rule.
	owner, err := db.Users().FindByName(ctx, "alice")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"x_y", "xzy"} {
		if err := db.Repos().Create(ctx, &store.Repository{OwnerID: owner.ID, Name: name, DefaultBranch: "main"}); err != nil {
			t.Fatal(err)
		}
	}
	for kw, want := range map[string]int64{"_": 1, "x_y": 1, "%": 0, "x": 2} {
		_, total, err := db.Repos().Search(ctx, store.RepoSearch{Viewer: store.RepoViewer{IsAdmin: true}, Keyword: kw}, page)
		if err != nil {
			t.Fatalf("repo search %q: %v", kw, err)
		}
		if total != want {
			t.Errorf("repo search %q: %d matches, want %d", kw, total, want)
		}
	}
}

func TestTokenFindByHash(t *testing.T) {
	db, _ := open(t)
	ctx := context.Background()
	u := mustCreateUser(t, db, newUser("tokens"))
	tok := &store.AccessToken{UserID: u.ID, Name: "ci", TokenHash: "3f5c0ffee", TokenLastEight: "c0ffee00", Scopes: "read:repository"}
	if err := db.Tokens().Create(ctx, tok); err != nil {
		t.Fatal(err)
	}
	got, err := db.Tokens().FindByHash(ctx, "3f5c0ffee")
	if err != nil {
		t.Fatal(err)
	}
	if got.ID != tok.ID || got.UserID != u.ID || got.Name != "ci" || got.Scopes != "read:repository" || got.LastUsedAt != nil {
		t.Errorf("FindByHash returned %+v", got)
	}
	for _, miss := range []string{"", "3F5C0FFEE", "3f5c0ffe", "%"} {
		if _, err := db.Tokens().FindByHash(ctx, miss); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("FindByHash(%q): err %v, want ErrNotFound", miss, err)
		}
	}
	if err := db.Tokens().MarkUsed(ctx, tok.ID); err != nil {
		t.Fatal(err)
	}
	if got, err = db.Tokens().FindByHash(ctx, "3f5c0ffee"); err != nil || got.LastUsedAt == nil {
		t.Errorf("after MarkUsed: %+v, %v", got, err)
	}
	if err := db.Tokens().Delete(ctx, tok.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Tokens().FindByHash(ctx, "3f5c0ffee"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("after Delete: err %v, want ErrNotFound", err)
	}
}

func TestOneStatementLookups(t *testing.T) {
	t.Parallel()
	db, _ := open(t)
	ctx := context.Background()
	u := newUser("Owner")
	u.FullName = "The Owner"
	mustCreateUser(t, db, u)
	other := mustCreateUser(t, db, newUser("other"))
	tok := &store.AccessToken{UserID: u.ID, Name: "ci", TokenHash: "beef", TokenLastEight: "0000beef", Scopes: "all"}
	if err := db.Tokens().Create(ctx, tok); err != nil {
		t.Fatal(err)
	}
	gotTok, gotUser, err := db.Tokens().FindByHashWithUser(ctx, "beef")
	if err != nil {
		t.Fatal(err)
	}
	if gotTok.ID != tok.ID || gotTok.Scopes != "all" || gotUser.ID != u.ID || gotUser.Name != "Owner" || gotUser.FullName != "The Owner" {
		t.Errorf("FindByHashWithUser: %+v, %+v", gotTok, gotUser)
	}
	if _, _, err := db.Tokens().FindByHashWithUser(ctx, "dead"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("unknown hash: %v, want ErrNotFound", err)
	}

	r := &store.Repository{OwnerID: u.ID, Name: "Proj", Description: "d"}
	if err := db.Repos().Create(ctx, r); err != nil {
		t.Fatal(err)
	}
	if err := db.Repos().Create(ctx, &store.Repository{OwnerID: other.ID, Name: "proj", Description: "other's"}); err != nil {
		t.Fatal(err)
	}
	for _, names := range [][2]string{{"Owner", "Proj"}, {"owner", "proj"}, {"OWNER", "PROJ"}} {
		got, err := db.Repos().FindByOwnerAndName(ctx, names[0], names[1])
		if err != nil {
			t.Fatalf("%v: %v", names, err)
		}
		if got.ID != r.ID || got.Description != "d" || got.Owner == nil || got.Owner.ID != u.ID || got.Owner.FullName != "The Owner" {
			t.Errorf("%v: %+v (owner %+v)", names, got, got.Owner)
		}
	}
	for _, names := range [][2]string{{"owner", "nope"}, {"nobody", "proj"}, {"other", "Proj2"}} {
		if _, err := db.Repos().FindByOwnerAndName(ctx, names[0], names[1]); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("%v: %v, want ErrNotFound", names, err)
		}
	}
}

func TestCreateNumbered(t *testing.T) {
	t.Parallel()
	db, _ := open(t)
	ctx := context.Background()
	u, r := ownedRepo(t, db)
	if err := db.Issues().CreateNumbered(ctx, &store.Issue{RepoID: r.ID, Title: "x"}, 1, 0); err == nil {
		t.Fatal("created outside a transaction")
	}
	now := time.Now().UTC().Truncate(time.Second)
	for i, closed := range []bool{false, true, false} {
		is := &store.Issue{RepoID: r.ID, PosterID: u.ID, Title: fmt.Sprint("issue ", i), Body: "b", IsClosed: closed,
			CreatedAt: now, UpdatedAt: now}
		var c int64
		if closed {
			is.ClosedAt, c = &now, 1
		}
		if err := db.WithTx(ctx, func(ctx context.Context) error { return db.Issues().CreateNumbered(ctx, is, 1, c) }); err != nil {
			t.Fatal(err)
		}
		if is.ID == 0 || is.Index != int64(i+1) {
			t.Fatalf("issue %d: id %d, number %d", i, is.ID, is.Index)
		}
		got, err := db.Issues().FindByIndex(ctx, r.ID, is.Index)
		if err != nil || got.ID != is.ID || got.Title != is.Title || got.IsClosed != closed || got.PosterID != u.ID ||
			!got.CreatedAt.Equal(now) || (closed && (got.ClosedAt == nil || !got.ClosedAt.Equal(now))) {
			t.Fatalf("read back %+v, %v", got, err)
		}
	}
	got, err := db.Repos().FindByID(ctx, r.ID)
	if err != nil || got.NumIssues != 3 || got.NumClosedIssues != 1 {
		t.Fatalf("counters %d/%d, %v", got.NumIssues, got.NumClosedIssues, err)
	}
	countersAgree(t, db)
	err = db.WithTx(ctx, func(ctx context.Context) error {
		return db.Issues().CreateNumbered(ctx, &store.Issue{RepoID: r.ID + 1000, Title: "orphan"}, 1, 0)
	})
	if !errors.Is(err, store.ErrNotFound) {
		t.Errorf("issue of a missing repository: %v, want ErrNotFound", err)
	}
}

func TestCreateNumberedAppendsEvents(t *testing.T) {
	t.Parallel()
	db, _ := open(t)
	ctx := context.Background()
	u, r := ownedRepo(t, db)
	now := time.Now().UTC().Truncate(time.Second)
	for n := int64(1); n <= 2; n++ {
		is := &store.Issue{RepoID: r.ID, PosterID: u.ID, Title: "t", CreatedAt: now, UpdatedAt: now}
		evs := []*store.Event{
			{Kind: "issue.opened", RepoID: r.ID, ActorID: u.ID, Payload: []byte(`{"id":0,"index":0}`), CreatedAt: now},
			{Kind: "issue.assigned", RepoID: r.ID, ActorID: u.ID, Payload: []byte(`{"id":0,"index":0,"assigned":[7,8]}`), CreatedAt: now},
		}
		if err := db.WithTx(ctx, func(ctx context.Context) error {
			return db.Issues().CreateNumbered(ctx, is, 1, 0, evs...)
		}); err != nil {
			t.Fatal(err)
		}
		if is.Index != n || evs[0].ID == 0 || evs[1].ID <= evs[0].ID {
			t.Fatalf("issue %d (number %d), event ids %d, %d", is.ID, is.Index, evs[0].ID, evs[1].ID)
		}
		stored, err := db.Events().ListAfter(ctx, evs[0].ID-1, 10)
		if err != nil || len(stored) < 2 {
			t.Fatalf("outbox: %v, %v", stored, err)
		}
		for i, want := range evs {
			got := stored[i]
			var p struct {
				ID, Index int64
				Assigned  []int64
			}
			if err := json.Unmarshal(got.Payload, &p); err != nil {
				t.Fatalf("payload %q: %v", got.Payload, err)
			}
			if got.ID != want.ID || got.Kind != want.Kind || got.RepoID != r.ID || got.ActorID != u.ID ||
				!got.CreatedAt.Equal(now) || p.ID != is.ID || p.Index != is.Index || (i == 1) != (len(p.Assigned) == 2) {
				t.Errorf("event %d: %+v, payload %s", i, got, got.Payload)
			}
		}
	}
	refusedAppendsNothing(t, db, "issue of a missing repository", func() error {
		return db.WithTx(ctx, func(ctx context.Context) error {
			return db.Issues().CreateNumbered(ctx, &store.Issue{RepoID: r.ID + 1000, Title: "orphan"}, 1, 0,
				&store.Event{Kind: "issue.opened", RepoID: r.ID + 1000, Payload: []byte(`{}`), CreatedAt: now})
		})
	})
}

// refusedAppendsNothing checks that write is refused as not found and
// appends no event.
func refusedAppendsNothing(t *testing.T, db *sqlstore.DB, what string, write func() error) {
	t.Helper()
	ctx := context.Background()
	before, err := db.Events().ListAfter(ctx, 0, 1000)
	if err != nil {
		t.Fatal(err)
	}
	if err := write(); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("%s: %v, want ErrNotFound", what, err)
	}
	if after, err := db.Events().ListAfter(ctx, 0, 1000); err != nil || len(after) != len(before) {
		t.Errorf("events after a refused %s: %d, want %d (%v)", what, len(after), len(before), err)
	}
}

func TestCreateNumberedAlone(t *testing.T) {
	t.Parallel()
	db, _ := open(t)
	ctx := context.Background()
	u, r := ownedRepo(t, db)
	now := time.Now().UTC().Truncate(time.Second)
	ev := &store.Event{Kind: "issue.opened", RepoID: r.ID, Payload: []byte(`{"id":0,"index":0}`), CreatedAt: now}
	is := &store.Issue{RepoID: r.ID, PosterID: u.ID, Title: "alone", IsClosed: true, ClosedAt: &now, CreatedAt: now, UpdatedAt: now}
	if err := db.Issues().CreateNumberedAlone(ctx, is, 1, 1, ev); err != nil {
		t.Fatal(err)
	}
	if is.ID == 0 || is.Index != 1 || ev.ID == 0 {
		t.Fatalf("issue %d number %d, event %d", is.ID, is.Index, ev.ID)
	}
	stored, err := db.Events().ListAfter(ctx, ev.ID-1, 1)
	if err != nil || len(stored) != 1 || stored[0].ID != ev.ID || !strings.Contains(strings.ReplaceAll(string(stored[0].Payload), " ", ""),
		fmt.Sprintf(`"id":%d`, is.ID)) {
		t.Fatalf("outbox: %+v, %v", stored, err)
	}
	// In a transaction it joins it: a rollback leaves no issue, no number
	// used up and no event.
	boom := errors.New("boom")
	err = db.WithTx(ctx, func(ctx context.Context) error {
		if err := db.Issues().CreateNumberedAlone(ctx, &store.Issue{RepoID: r.ID, Title: "undone", CreatedAt: now, UpdatedAt: now}, 1, 0,
			&store.Event{Kind: "issue.opened", RepoID: r.ID, Payload: []byte(`{}`), CreatedAt: now}); err != nil {
			return err
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("rolled back: %v", err)
	}
	if after, err := db.Events().ListAfter(ctx, ev.ID, 10); err != nil || len(after) != 0 {
		t.Errorf("events after the rollback: %+v, %v", after, err)
	}
	next := &store.Issue{RepoID: r.ID, Title: "next", CreatedAt: now, UpdatedAt: now}
	if err := db.Issues().CreateNumberedAlone(ctx, next, 1, 0); err != nil || next.Index != 2 {
		t.Fatalf("next issue: number %d, %v", next.Index, err)
	}
	got, err := db.Repos().FindByID(ctx, r.ID)
	if err != nil || got.NumIssues != 2 || got.NumClosedIssues != 1 {
		t.Fatalf("counters %d/%d, %v", got.NumIssues, got.NumClosedIssues, err)
	}
	if err := db.Issues().CreateNumberedAlone(ctx, &store.Issue{RepoID: r.ID + 1000, Title: "orphan"}, 1, 0); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("issue of a missing repository: %v, want ErrNotFound", err)
	}
}

// TestCreateCounted: a comment written with its count and its event, as
// one statement or in the transaction in ctx; a missing issue refuses it
// and appends nothing.
func TestCreateCounted(t *testing.T) {
	t.Parallel()
	db, _ := open(t)
	ctx := context.Background()
	u, r := ownedRepo(t, db)
	now := time.Now().UTC().Truncate(time.Second)
	is := &store.Issue{RepoID: r.ID, PosterID: u.ID, Title: "t", CreatedAt: now, UpdatedAt: now}
	if err := db.Issues().CreateNumberedAlone(ctx, is, 1, 0); err != nil {
		t.Fatal(err)
	}
	later := now.Add(time.Hour)
	comment := func(ctx context.Context, issueID int64, body string) (*store.Comment, *store.Event, error) {
		c := &store.Comment{IssueID: issueID, RepoID: r.ID, PosterID: u.ID, Body: body, CreatedAt: later, UpdatedAt: later}
		ev := &store.Event{Kind: "comment.created", RepoID: r.ID, ActorID: u.ID, Payload: []byte(`{"id":0,"issue_id":7}`),
			CreatedAt: later, Consumers: []string{"counted"}}
		return c, ev, db.Comments().CreateCounted(ctx, c, ev)
	}
	c1, ev1, err := comment(ctx, is.ID, "alone")
	if err != nil {
		t.Fatal(err)
	}
	var c2 *store.Comment
	var ev2 *store.Event
	if err := db.WithTx(ctx, func(ctx context.Context) error {
		var err error
		c2, ev2, err = comment(ctx, is.ID, "in a transaction")
		return err
	}); err != nil {
		t.Fatal(err)
	}
	got, err := db.Issues().FindByID(ctx, is.ID)
	if err != nil || got.NumComments != 2 || !got.UpdatedAt.Equal(later) {
		t.Fatalf("issue after two comments: %+v, %v", got, err)
	}
	for _, w := range []struct {
		c  *store.Comment
		ev *store.Event
	}{{c1, ev1}, {c2, ev2}} {
		stored, err := db.Comments().FindByID(ctx, w.c.ID)
		if err != nil || stored.Body != w.c.Body || stored.IssueID != is.ID {
			t.Errorf("comment %d read back as %+v, %v", w.c.ID, stored, err)
		}
		evs, err := db.Events().ListAfter(ctx, w.ev.ID-1, 1)
		if err != nil || len(evs) != 1 || evs[0].ID != w.ev.ID {
			t.Fatalf("event %d: %+v, %v", w.ev.ID, evs, err)
		}
		var p struct {
			ID      int64
			IssueID int64 `json:"issue_id"`
		}
		if err := json.Unmarshal(evs[0].Payload, &p); err != nil || p.ID != w.c.ID || p.IssueID != 7 {
			t.Errorf("event of comment %d: %s", w.c.ID, evs[0].Payload)
		}
	}
	jobs, _, err := db.EventJobs().Claim(ctx, []string{"counted"}, time.Now().Unix()+60, time.Now().Unix()+120, 7, 10, false)
	if err != nil || len(jobs) != 2 || jobs[0].EventID != ev1.ID || jobs[1].EventID != ev2.ID {
		t.Fatalf("jobs %+v, %v", jobs, err)
	}
	refusedAppendsNothing(t, db, "comment on a missing issue", func() error {
		_, _, err := comment(ctx, is.ID+1000, "orphan")
		return err
	})
}

// TestCreateNumberedAloneConcurrently: creates of one repository at once,
// which PostgreSQL writes in grouped statements, each get their own number
// (dense, one per issue written), their events and jobs with their own
// issue in the payload, and their own answer: on PostgreSQL, a title that
// is not UTF-8 refuses its own issue and no other.
func TestCreateNumberedAloneConcurrently(t *testing.T) {
	t.Parallel()
	db, dsn := open(t)
	ctx := context.Background()
	u, r := ownedRepo(t, db)
	const n = 60
	bad := func(i int) bool { return sqlstore.IsPostgres(dsn) && i%12 == 5 }
	now := time.Now().UTC().Truncate(time.Second)
	issues := make([]*store.Issue, n)
	evs := make([]*store.Event, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		title := fmt.Sprint("issue ", i)
		if bad(i) {
			title = "not UTF-8 \xff"
		}
		issues[i] = &store.Issue{RepoID: r.ID, PosterID: u.ID, Title: title, IsClosed: i%2 == 0, CreatedAt: now, UpdatedAt: now}
		evs[i] = &store.Event{Kind: "issue.opened", RepoID: r.ID, ActorID: u.ID, Payload: []byte(fmt.Sprintf(`{"id":0,"index":0,"n":%d}`, i)),
			CreatedAt: now, Consumers: []string{"at-once"}}
		wg.Go(func() {
			errs[i] = db.Issues().CreateNumberedAlone(ctx, issues[i], 1, int64(1-i%2), evs[i])
		})
	}
	wg.Wait()
	numbers := map[int64]bool{}
	var written, closed int64
	byEvent := map[int64]int{}
	for i, is := range issues {
		if bad(i) {
			if errs[i] == nil {
				t.Errorf("issue %d: a title that is not UTF-8 was written", i)
			}
			continue
		}
		if errs[i] != nil || is.ID == 0 || evs[i].ID == 0 || numbers[is.Index] {
			t.Fatalf("issue %d: %v, id %d, number %d (taken: %v), event %d", i, errs[i], is.ID, is.Index, numbers[is.Index], evs[i].ID)
		}
		numbers[is.Index] = true
		written++
		closed += int64(1 - i%2)
		byEvent[evs[i].ID] = i
		got, err := db.Issues().FindByIndex(ctx, r.ID, is.Index)
		if err != nil || got.ID != is.ID || got.Title != is.Title {
			t.Errorf("issue %d read back as %+v, %v", i, got, err)
		}
	}
	for k := int64(1); k <= written; k++ {
		if !numbers[k] {
			t.Errorf("number %d of %d not used", k, written)
		}
	}
	stored, err := db.Events().ListAfter(ctx, 0, 2*n)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range stored {
		i, ok := byEvent[e.ID]
		if !ok {
			t.Errorf("event %d of no issue written: %s", e.ID, e.Payload)
			continue
		}
		var p struct{ ID, Index, N int64 }
		if err := json.Unmarshal(e.Payload, &p); err != nil || p.ID != issues[i].ID || p.Index != issues[i].Index || p.N != int64(i) {
			t.Errorf("event %d of issue %d (id %d, number %d): %s", e.ID, i, issues[i].ID, issues[i].Index, e.Payload)
		}
	}
	jobs, _, err := db.EventJobs().Claim(ctx, []string{"at-once"}, time.Now().Unix()+60, time.Now().Unix()+120, 7, 2*n, false)
	if err != nil || int64(len(jobs)) != written || int64(len(stored)) != written {
		t.Fatalf("%d jobs and %d events for %d issues (%v)", len(jobs), len(stored), written, err)
	}
	for _, j := range jobs {
		if _, ok := byEvent[j.EventID]; !ok {
			t.Errorf("job %d of event %d, no issue's", j.ID, j.EventID)
		}
	}
	got, err := db.Repos().FindByID(ctx, r.ID)
	if err != nil || got.NumIssues != written || got.NumClosedIssues != closed {
		t.Fatalf("counters %d/%d, want %d/%d (%v)", got.NumIssues, got.NumClosedIssues, written, closed, err)
	}
	countersAgree(t, db)
}

// countersAgree checks that every stored counter agrees with the rows it
// counts (IssueStore.CheckCounters).
func countersAgree(t *testing.T, db *sqlstore.DB) {
	t.Helper()
	bad, err := db.Issues().CheckCounters(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for name, n := range bad {
		if n != 0 {
			t.Errorf("%s: %d rows disagree", name, n)
		}
	}
}
