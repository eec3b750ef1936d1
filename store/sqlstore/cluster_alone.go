package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// A process alone on its database (its namespace) has nobody to tell of
// its writes and nobody whose writes it could miss: it serves its caches
// without reading the change clock and publishes nothing. Most
// deployments are one process, and on them cluster mode cost a clock read
// per request and a clock move per write (GET of a repository at about
// half the rate of --cluster off).
//
// Who is there is told by PostgreSQL: every connection of a process is
// named repohost-NAMESPACE-PROC (application_name). A process is alone
// while no other backend of its database bears its namespace's prefix, and
// none of its own role bears a name that is not a repohost one (a process
// of an earlier version, which names nothing, or any other client).
//
// Becoming alone races with a newcomer, and the clock's row settles it:
// the process first claims the row (alone_proc, alone_until: a lease on
// the database's clock), then looks for the others, and gives up if it
// sees any. A newcomer is visible before it reads the row, and it reads
// the row before it serves anything: either the claimant sees it, or it
// sees the claim. Seeing a claim, a newcomer notifies "j PROC" and waits
// until the row is free or the lease is over; the alone process, hearing
// it, stops being alone first and frees the row second. A write published
// while another process holds the row waits the same way before it is
// acknowledged, so a process that wrote while it could not listen (its
// listener lost) is not missed either.
//
// The alone process renews its lease every aloneRenew on its listener's
// connection, looking for the others again, and trusts it for aloneTrust
// after sending the renewal, less than the lease: if its connection dies
// without its knowing (the row's lease then runs out), it stops trusting
// before a newcomer stops waiting.
const (
	aloneLease = time.Second
	aloneRenew = 250 * time.Millisecond
	aloneTrust = 700 * time.Millisecond
)

// dbMillis is the database's clock in milliseconds since 1970.
const dbMillis = `(extract(epoch from clock_timestamp()) * 1000)::bigint`

// appPrefix begins the application_name of every connection of the
// processes of namespace.
func appPrefix(namespace string) string {
	return fmt.Sprintf("repohost-%08x-", namespaceHash(namespace))
}

// startAppName names the connection that reads the namespace, before the
// process knows its name: a repohost name, of no namespace.
const startAppName = "repohost-start"

// namedDSN is dsn (a URL or key=value settings) with application_name
// set to name (letters, digits and dashes).
func namedDSN(dsn, name string) (string, error) {
	if strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://") {
		u, err := url.Parse(dsn)
		if err != nil {
			return "", err
		}
		q := u.Query()
		q.Set("application_name", name)
		u.RawQuery = q.Encode()
		return u.String(), nil
	}
	// Later settings win.
	return dsn + " application_name=" + name, nil
}

// readNamespace is the schema dsn's connections work in.
func readNamespace(ctx context.Context, dsn string) (string, error) {
	named, err := namedDSN(dsn, startAppName)
	if err != nil {
		return "", err
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, named)
	if err != nil {
		return "", err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	var ns string
	err = conn.QueryRow(ctx, "SELECT COALESCE(current_schema(), '')").Scan(&ns)
	return ns, err
}

// aloneNow tells whether the process is alone and may trust it; cl.mu is
// held.
func (cl *cluster) aloneNow() bool {
	return cl.alone && time.Now().Before(cl.aloneUntil)
}

// othersSQL counts the backends of other processes (see above); its
// arguments are this process's name and its namespace's prefix.
const othersSQL = `SELECT count(*) FROM pg_stat_activity
	WHERE datname = current_database() AND pid <> pg_backend_pid() AND application_name <> $1
		AND (application_name LIKE $2 || '%' OR (usename = current_user AND application_name NOT LIKE 'repohost-%'))`

// others counts the backends of other processes.
func (cl *cluster) others(ctx context.Context, conn *pgx.Conn) (int, error) {
	var n int
	err := conn.QueryRow(ctx, othersSQL, cl.app, cl.prefix).Scan(&n)
	return n, err
}

// tryAlone makes the process alone if nobody else is there; run by the
// listener (conn), with every change up to the clock heard. It gives up
// at the first sign of another process.
func (cl *cluster) tryAlone(ctx context.Context, conn *pgx.Conn) error {
	if n, err := cl.others(ctx, conn); err != nil || n > 0 {
		return err
	}
	sent := time.Now()
	var clock int64
	err := conn.QueryRow(ctx, `UPDATE cluster_clock SET alone_proc = $1, alone_until = `+dbMillis+` + $2
		WHERE id = 1 AND (alone_until IS NULL OR alone_until <= `+dbMillis+` OR alone_proc = $1) RETURNING n`,
		cl.proc, aloneLease.Milliseconds()).Scan(&clock)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil // somebody else holds the row
	}
	if err != nil {
		return err
	}
	if n, err := cl.others(ctx, conn); err != nil || n > 0 {
		return errors.Join(err, cl.free(ctx, conn))
	}
	// What was acknowledged before the claim moved the clock before it:
	// heard before the caches serve unchecked. A join heard meanwhile
	// ends the attempt.
	for cl.heardBelow(uint64(clock)) {
		wctx, cancel := context.WithDeadline(ctx, sent.Add(aloneTrust/2))
		nt, err := conn.WaitForNotification(wctx)
		cancel()
		if err != nil {
			if ctx.Err() == nil && pgconn.Timeout(err) {
				return cl.free(ctx, conn)
			}
			return err
		}
		if cl.joining(nt.Payload) {
			return cl.free(ctx, conn)
		}
		if !strings.HasPrefix(nt.Payload, "j ") { // (not a join of its own)
			cl.heardOne(nt.Payload)
		}
	}
	cl.mu.Lock()
	cl.alone, cl.aloneUntil = true, sent.Add(aloneTrust)
	cl.mu.Unlock()
	cl.log.Debug("cluster: alone on the database; caches serve without reading the clock")
	return nil
}

// renewAlone extends the alone process's lease, or ends it when somebody
// else has come.
func (cl *cluster) renewAlone(ctx context.Context, conn *pgx.Conn) error {
	sent := time.Now()
	tag, err := conn.Exec(ctx, `UPDATE cluster_clock SET alone_until = `+dbMillis+` + $2 WHERE id = 1 AND alone_proc = $1`,
		cl.proc, aloneLease.Milliseconds())
	if err != nil {
		return err
	}
	n, err := cl.others(ctx, conn)
	if err != nil {
		return err
	}
	if tag.RowsAffected() == 0 || n > 0 {
		// A client that does not take part (a process of an earlier
		// version) may have written unannounced: nothing kept is trusted.
		return cl.leaveAlone(ctx, conn, true)
	}
	cl.mu.Lock()
	cl.aloneUntil = sent.Add(aloneTrust)
	cl.mu.Unlock()
	return nil
}

// leaveAlone makes the process shared again (its requests read the
// clock, its writes are published), retiring everything kept when retire
// says so, and then frees the clock's row for those waiting.
func (cl *cluster) leaveAlone(ctx context.Context, conn *pgx.Conn, retire bool) error {
	cl.mu.Lock()
	cl.alone = false
	cl.mu.Unlock()
	if retire {
		cl.cache.invalidateAll()
	}
	return cl.free(ctx, conn)
}

// free ends this process's claim on the clock's row.
func (cl *cluster) free(ctx context.Context, conn *pgx.Conn) error {
	_, err := conn.Exec(ctx, `UPDATE cluster_clock SET alone_until = NULL WHERE id = 1 AND alone_proc = $1`, cl.proc)
	return err
}

// joining tells whether payload is another process's join.
func (cl *cluster) joining(payload string) bool {
	proc, ok := strings.CutPrefix(payload, "j ")
	return ok && proc != cl.proc
}

// heardBelow tells whether the listener has not yet heard clock number n.
func (cl *cluster) heardBelow(n uint64) bool {
	cl.mu.Lock()
	defer cl.mu.Unlock()
	return cl.heard < n
}

// awaitNobodyAlone returns once no other process is alone on the
// database, telling the one that is to stop: before this process serves
// (it joins), and before a write it published is acknowledged.
func (cl *cluster) awaitNobodyAlone(ctx context.Context) error {
	var told time.Time
	for {
		var who sql.NullString
		var until sql.NullInt64
		var now int64
		err := cl.pool.QueryRowContext(ctx, `SELECT alone_proc, alone_until, `+dbMillis+` FROM cluster_clock WHERE id = 1`).
			Scan(&who, &until, &now)
		if err != nil {
			return err
		}
		if !until.Valid || until.Int64 <= now || who.String == cl.proc {
			return nil
		}
		if time.Since(told) >= aloneRenew {
			if _, err := cl.pool.ExecContext(ctx, "SELECT pg_notify($1, 'j ' || $2::text)", cl.channel, cl.proc); err != nil {
				return err
			}
			told = time.Now()
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(5 * time.Millisecond):
		}
	}
}
