package sqlstore

import (
	"context"
	"errors"
	"testing"
	"time"

	"repohost/store"
	"repohost/store/sqlstore/sqltest"
)

// TestCancelledStatementIsCancellation: a statement stopped because its
// context ended (a client closed its connection) comes back as
// context.Canceled, never as an unavailable database or an unknown error,
// however the driver reports it (SQLite interrupts the statement,
// PostgreSQL cancels it).
func TestCancelledStatementIsCancellation(t *testing.T) {
	t.Parallel()
	d, err := Open(sqltest.DSN(t, ""), Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	// A statement that runs until it is stopped.
	long := `WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n) SELECT COUNT(*) FROM n`
	if d.usesPostgres() {
		long = `SELECT pg_sleep(30)`
	}
	for _, inTx := range []bool{false, true} {
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(200*time.Millisecond, cancel)
		run := func(ctx context.Context) error {
			var n int64
			return translate(d.conn(ctx).Raw(long).Scan(&n).Error, "count forever")
		}
		start := time.Now()
		if inTx {
			err = d.WithTx(ctx, run)
		} else {
			err = run(ctx)
		}
		cancel()
		if time.Since(start) > 20*time.Second {
			t.Fatalf("the statement was not stopped")
		}
		if !errors.Is(err, context.Canceled) || errors.Is(err, store.ErrUnavailable) {
			t.Errorf("in a transaction %v: %v, want context.Canceled (and not unavailable)", inTx, err)
		}
	}
}
