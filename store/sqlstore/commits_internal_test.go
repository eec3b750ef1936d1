package sqlstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
)

var errUnavailable = fmt.Errorf("read: %w", syscall.ECONNREFUSED)

func TestRetryRepeatsUntilSuccess(t *testing.T) {
	calls := 0
	err := retry(context.Background(), time.Minute, isUnavailable, func() error {
		calls++
		if calls < 4 {
			return errUnavailable
		}
		return nil
	})
	if err != nil || calls != 4 {
		t.Fatalf("err %v after %d calls; want nil after 4", err, calls)
	}
}

func TestRetryStopsAtOtherErrors(t *testing.T) {
	other := errors.New("syntax error")
	calls := 0
	err := retry(context.Background(), time.Minute, isUnavailable, func() error { calls++; return other })
	if !errors.Is(err, other) || calls != 1 {
		t.Fatalf("err %v after %d calls; want the error after 1", err, calls)
	}
}

func TestRetryGivesUpAfterItsBudget(t *testing.T) {
	start := time.Now()
	calls := 0
	err := retry(context.Background(), 300*time.Millisecond, isUnavailable, func() error { calls++; return errUnavailable })
	took := time.Since(start)
	if !errors.Is(err, errUnavailable) {
		t.Fatalf("err %v, want the last unavailability error", err)
	}
	if took < 300*time.Millisecond || took > 5*time.Second {
		t.Fatalf("gave up after %s, want about the 300ms budget", took)
	}
	// 25, 50, 100 ms, then the 125 ms left: a few attempts, not a busy loop.
	if calls < 2 || calls > 6 {
		t.Fatalf("%d attempts in 300ms", calls)
	}
}

func TestRetryStopsWhenTheContextEnds(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	err := retry(ctx, time.Minute, isUnavailable, func() error { return errUnavailable })
	if err == nil || time.Since(start) > 2*time.Second {
		t.Fatalf("err %v after %s; want an error soon after the context ended", err, time.Since(start))
	}
}

func TestRetryPolicyByStatement(t *testing.T) {
	// A connection that broke while a statement was under way: the server
	// may have run it.
	broken := fmt.Errorf("write: %w", io.ErrUnexpectedEOF)
	// No connection at all: the statement never left.
	refused := &pgconn.ConnectError{}
	for _, c := range []struct {
		query string
		err   error
		want  bool
	}{
		{"SELECT * FROM users WHERE id = $1", broken, true},
		{"  select count(*) FROM issues", broken, true},
		{"(SELECT 1) UNION (SELECT 2)", broken, true},
		{"SELECT 1", errors.New("syntax error"), false},
		{`INSERT INTO issues (title) VALUES ($1) RETURNING "id"`, broken, false},
		{`UPDATE repositories SET num_issues = num_issues + 1`, broken, false},
		{`INSERT INTO issues (title) VALUES ($1) RETURNING "id"`, refused, true},
		{`DELETE FROM issues WHERE id = $1`, fmt.Errorf("dial: %w", syscall.ECONNREFUSED), true},
		{"WITH x AS (DELETE FROM issues RETURNING id) SELECT * FROM x", broken, false},
	} {
		if got := retryableFor(c.query)(c.err); got != c.want {
			t.Errorf("%q after %v: retryable %v, want %v", c.query, c.err, got, c.want)
		}
	}
}
