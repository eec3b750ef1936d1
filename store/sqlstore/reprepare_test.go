package sqlstore

import (
	"context"
	"database/sql"
	"testing"

	"github.com/ncruces/go-sqlite3"
	sqlitedriver "github.com/ncruces/go-sqlite3/driver"

	"repohost/store/sqlstore/sqltest"
)

// embeddedConn is one connection of a migrated store on the embedded
// database; the test is skipped on PostgreSQL, whose statements pgx keeps
// and PostgreSQL plans once.
func embeddedConn(t *testing.T) *sql.Conn {
	t.Helper()
	d, err := Open(sqltest.DSN(t, ""), Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	if d.usesPostgres() {
		t.Skip("the embedded database's statements only")
	}
	ctx := context.Background()
	if _, err := d.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	sqlDB, err := d.gorm.DB()
	if err != nil {
		t.Fatal(err)
	}
	conn, err := sqlDB.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

// TestStatementsAreNotCompiledAgain: on the embedded database a prepared
// statement whose plan could depend on a bound value (LIMIT ?, a column
// LIKE ?) runs again as prepared, instead of being compiled anew on
// each execution (stablePlans).
func TestStatementsAreNotCompiledAgain(t *testing.T) {
	conn := embeddedConn(t)
	for _, q := range []string{
		`SELECT id FROM issues WHERE repo_id = ? ORDER BY id LIMIT ?`,
		`SELECT id FROM users WHERE lower_name LIKE ? LIMIT ?`,
	} {
		err := conn.Raw(func(dc any) error {
			s, _, err := dc.(sqlitedriver.Conn).Raw().Prepare(q)
			if err != nil {
				return err
			}
			defer s.Close()
			for i := range 3 {
				if err := s.BindInt64(1, int64(i)); err != nil {
					return err
				}
				if err := s.BindInt64(2, int64(10+i)); err != nil {
					return err
				}
				for s.Step() {
				}
				if err := s.Reset(); err != nil {
					return err
				}
			}
			if n := s.Status(sqlite3.STMTSTATUS_REPREPARE, false); n != 0 {
				t.Errorf("%s: compiled again %d times in 3 runs", q, n)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}

// TestTransactionsReuseStatements: on the embedded database a statement
// run in transaction after transaction is prepared once by its connection
// (keptStatements).
func TestTransactionsReuseStatements(t *testing.T) {
	conn := embeddedConn(t)
	ctx := context.Background()
	const q = `UPDATE users SET num_followers = num_followers + ? WHERE id = ?`
	for i := range 5 {
		tx, err := conn.BeginTx(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tx.ExecContext(ctx, q, 1, i); err != nil {
			t.Fatal(err)
		}
		if err := tx.Commit(); err != nil {
			t.Fatal(err)
		}
	}
	err := conn.Raw(func(dc any) error {
		e, ok := dc.(*keepingConn).byText[q]
		if !ok {
			t.Fatal("the statement was not kept")
		}
		s := e.Value.(*keptStmt)
		runs := s.Stmt.(interface {
			Status(sqlite3.StmtStatus, bool) int
		}).Status(sqlite3.STMTSTATUS_RUN, false)
		if runs != 5 || s.inUse {
			t.Errorf("the kept statement ran %d times of 5 (in use: %v)", runs, s.inUse)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
