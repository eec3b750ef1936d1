// Package sqltest gives each test its own empty database on whichever engine
// the environment selects: a fresh schema in the PostgreSQL cluster named by
// REPOHOST_TEST_PG (set by scripts/with-postgres.sh), or else a SQLite file in
// the test's temp directory. The API harness (apitest) and the store tests
// share it, so the whole suite follows one convention.
package sqltest

import (
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"net/url"
	"os"
	"path/filepath"
	"testing"

	_ "github.com/jackc/pgx/v5/stdlib" // database/sql driver for the schemas
)

// PostgresEnv names the variable holding the base DSN of the throwaway
// PostgreSQL cluster; when it is empty tests use SQLite.
const PostgresEnv = "REPOHOST_TEST_PG"

// Database reports which database tests run on: "postgres" or "sqlite".
func Database() string {
	if os.Getenv(PostgresEnv) != "" {
		return "postgres"
	}
	return "sqlite"
}

// DSN returns a connection string for an empty database private to t: a
// SQLite file in dir (t.TempDir() when dir is empty), or a new PostgreSQL
// schema, selected through search_path and dropped when t ends.
func DSN(t testing.TB, dir string) string {
	t.Helper()
	base := os.Getenv(PostgresEnv)
	if base == "" {
		if dir == "" {
			dir = t.TempDir()
		}
		return filepath.Join(dir, "repohost.db")
	}
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	schema := "t_" + hex.EncodeToString(b)
	// Connections of the tests bear a repohost name of no namespace: a
	// server in cluster mode does not take them for another process.
	u, err := url.Parse(base)
	if err != nil {
		t.Fatalf("parse %s: %v", PostgresEnv, err)
	}
	q := u.Query()
	q.Set("application_name", "repohost-test")
	u.RawQuery = q.Encode()
	conn, err := sql.Open("pgx", u.String())
	if err != nil {
		t.Fatalf("connect to test PostgreSQL: %v", err)
	}
	// Extensions are one per database, in the schema they were created
	// in: created once in public, which no test drops, rather than by the
	// first migration in its own schema (migrateV38 finds it there).
	if _, err := conn.Exec("CREATE EXTENSION IF NOT EXISTS pg_trgm SCHEMA public"); err != nil {
		// Another test process may have created it meanwhile.
		var n int
		if conn.QueryRow("SELECT COUNT(*) FROM pg_extension WHERE extname = 'pg_trgm'").Scan(&n) != nil || n == 0 {
			conn.Close()
			t.Fatalf("create extension pg_trgm in %s: %v", PostgresEnv, err)
		}
	}
	if _, err := conn.Exec("CREATE SCHEMA " + schema); err != nil {
		conn.Close()
		t.Fatalf("create schema in %s: %v", PostgresEnv, err)
	}
	t.Cleanup(func() {
		_, _ = conn.Exec("DROP SCHEMA " + schema + " CASCADE")
		conn.Close()
	})
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String()
}
