package sqlstore

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"gorm.io/gorm"

	"repohost/store"
)

// The rule: once a request has committed a write, it must not report a
// failure, or its client would retry a change that is already made. So:
//
//   - A request's context carries a commit marker (store.TrackCommits). WithTx
//     sets it when the outermost transaction has committed, and a statement
//     outside any transaction that changed rows sets it too (see
//     registerCommitMarking): that statement committed on its own.
//   - Before the marker is set, nothing is retried: a database that cannot be
//     reached fails the request at once with store.ErrUnavailable (503 with
//     Retry-After), and nothing was changed.
//   - After it is set, on PostgreSQL, statements outside a transaction go
//     through retryingPool, which waits through a short outage (a restart,
//     a failover) for up to Options.CommittedRetry (20 s by default) before
//     giving up: the reads that build the response, and the BEGIN of any
//     further transaction. A read (a SELECT outside a transaction changes
//     nothing) is repeated after any unavailability error; any other
//     statement only when the error proves it never reached the server, so
//     that a write is never applied twice. Statements inside a transaction
//     are never repeated: the transaction is gone with its connection.
//
// The embedded SQLite database has no outages, so it reads directly; the
// marker is kept all the same.
//
// What remains ambiguous is a COMMIT whose acknowledgement is lost (the
// connection breaks after the server has committed but before the client
// hears of it): WithTx cannot tell this from a rollback and reports
// ErrUnavailable.

// DefaultCommittedRetry is how long the statements of a request that has
// committed keep retrying while the database is unreachable.
const DefaultCommittedRetry = 20 * time.Second

const (
	firstRetryWait = 25 * time.Millisecond
	maxRetryWait   = time.Second
)

// retryingPool is the gorm.ConnPool under DB.retrying: the shared *sql.DB,
// with retries through unavailability. It prepares no statements of its own
// (a prepared statement would run its later executions past the retries).
type retryingPool struct {
	db *sql.DB
	// budget bounds the time spent retrying one statement. A single attempt
	// is bounded only by the caller's context and the driver: against a
	// stopped server a connection is refused at once.
	budget time.Duration
}

var (
	_ gorm.ConnPool   = (*retryingPool)(nil)
	_ gorm.TxBeginner = (*retryingPool)(nil)
)

func (p *retryingPool) PrepareContext(ctx context.Context, query string) (*sql.Stmt, error) {
	var st *sql.Stmt
	err := retry(ctx, p.budget, isUnavailable, func() (err error) {
		st, err = p.db.PrepareContext(ctx, query)
		return err
	})
	return st, err
}

func (p *retryingPool) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	var res sql.Result
	err := retry(ctx, p.budget, retryableFor(query), func() (err error) {
		res, err = p.db.ExecContext(ctx, query, args...)
		return err
	})
	return res, err
}

func (p *retryingPool) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	var rows *sql.Rows
	err := retry(ctx, p.budget, retryableFor(query), func() (err error) {
		rows, err = p.db.QueryContext(ctx, query, args...)
		return err
	})
	return rows, err
}

// QueryRowContext retries on the error of the query itself (Row.Err), not
// on one met while scanning.
func (p *retryingPool) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	var row *sql.Row
	_ = retry(ctx, p.budget, retryableFor(query), func() error {
		row = p.db.QueryRowContext(ctx, query, args...)
		return row.Err()
	})
	return row
}

// BeginTx retries starting a transaction: until BEGIN has succeeded nothing
// has happened. The transaction itself runs on its connection, unretried.
func (p *retryingPool) BeginTx(ctx context.Context, opts *sql.TxOptions) (*sql.Tx, error) {
	var tx *sql.Tx
	err := retry(ctx, p.budget, isUnavailable, func() (err error) {
		tx, err = p.db.BeginTx(ctx, opts)
		return err
	})
	return tx, err
}

// retry runs op until it succeeds, fails with an error retryable does not
// accept, ctx ends, or budget has passed, waiting longer after each failure
// (25 ms doubling up to 1 s). It returns op's last error.
func retry(ctx context.Context, budget time.Duration, retryable func(error) bool, op func() error) error {
	deadline := time.Now().Add(budget)
	wait := firstRetryWait
	for {
		err := op()
		if err == nil || !retryable(err) || ctx.Err() != nil {
			return err
		}
		left := time.Until(deadline)
		if left <= 0 {
			return err
		}
		timer := time.NewTimer(min(wait, left))
		select {
		case <-ctx.Done():
			timer.Stop()
			return err
		case <-timer.C:
		}
		wait = min(2*wait, maxRetryWait)
	}
}

// retryableFor is the retry policy for a statement: a read is repeated after
// any unavailability error, anything else only when it never reached the
// server.
func retryableFor(query string) func(error) bool {
	if isRead(query) {
		return isUnavailable
	}
	return notSent
}

// isRead tells whether query is a SELECT, which outside a transaction
// changes nothing and may be repeated. (The store runs no function with side
// effects in a bare SELECT.)
func isRead(query string) bool {
	q := strings.TrimLeft(query, " \t\r\n(")
	return len(q) >= 6 && strings.EqualFold(q[:6], "select")
}

// notSent recognises an error that proves a statement never reached the
// server: no connection could be made, or the driver says the request was
// not sent.
func notSent(err error) bool {
	var connectErr *pgconn.ConnectError
	return errors.As(err, &connectErr) || errors.Is(err, driver.ErrBadConn) ||
		errors.Is(err, syscall.ECONNREFUSED) || pgconn.SafeToRetry(err)
}

// registerCommitMarking makes a statement outside a transaction that changed
// something set the commit marker of its context: it has committed on its
// own. Writes count when they affected a row (an UPDATE that matched
// nothing changed nothing); a statement that returns rows (INSERT …
// RETURNING through Raw) counts unless it is a SELECT.
func registerCommitMarking(g *gorm.DB) error {
	cb := g.Callback()
	const name = "repohost:mark_committed"
	for _, err := range []error{
		cb.Create().After("gorm:create").Register(name, markWrite),
		cb.Update().After("gorm:update").Register(name, markWrite),
		cb.Delete().After("gorm:delete").Register(name, markWrite),
		cb.Raw().After("gorm:raw").Register(name, markWrite),
		cb.Query().After("gorm:query").Register(name, markStatement),
		cb.Row().After("gorm:row").Register(name, markStatement),
	} {
		if err != nil {
			return err
		}
	}
	return nil
}

func markWrite(db *gorm.DB) {
	if db.Error == nil && db.RowsAffected > 0 && !inTransaction(db) {
		store.MarkCommitted(db.Statement.Context)
	}
}

func markStatement(db *gorm.DB) {
	if db.Error == nil && !inTransaction(db) && !isRead(db.Statement.SQL.String()) {
		store.MarkCommitted(db.Statement.Context)
	}
}

// inTransaction tells whether db's statement ran inside a transaction, whose
// commit WithTx marks.
func inTransaction(db *gorm.DB) bool {
	_, ok := db.Statement.ConnPool.(gorm.TxCommitter)
	return ok
}
