package sqlstore

import (
	"container/list"
	"context"
	"database/sql/driver"

	"github.com/ncruces/go-sqlite3"
	sqlitedriver "github.com/ncruces/go-sqlite3/driver"
)

// statementsPerConn bounds each embedded-database connection's kept
// statements: a few hundred distinct statements serve the hot paths, and
// those with IN lists of every length come and go.
const statementsPerConn = 100

// keptStatements is the embedded database's connector: each connection
// runs with the planner stability guarantee (stablePlans) and keeps the
// statements it prepared for the next query of the same text, also inside
// transactions. The store's statement cache (DB.outsideTx) serves only
// statements outside a transaction, and SQLite's driver parses every
// statement with arguments anew: parsing was a quarter of the CPU time of
// creating an issue. Kept per connection, a statement is never waited for
// by another connection, which is why GORM's cache stays out of
// transactions (see DB.outsideTx).
type keptStatements struct{ driver.Connector }

func (k keptStatements) Connect(ctx context.Context) (driver.Conn, error) {
	c, err := k.Connector.Connect(ctx)
	if err != nil {
		return nil, err
	}
	sc, ok := c.(sqlitedriver.Conn)
	if !ok {
		return c, nil
	}
	if err := stablePlans(sc.Raw()); err != nil {
		c.Close()
		return nil, err
	}
	return &keepingConn{Conn: sc, byText: map[string]*list.Element{}, order: list.New()}, nil
}

// stablePlans turns on SQLite's query planner stability guarantee.
// Without it, a statement whose plan could depend on a bound value (a
// LIMIT ?, a column LIKE ?) is compiled again on every execution, since
// each binding expires it: kept or not, the event queue's claim was parsed
// anew each time. The plans lose nothing: the file keeps no statistics
// (see Analyze), and the columns' LIKE is case-insensitive, which no index
// range serves.
func stablePlans(c *sqlite3.Conn) error {
	_, err := c.Config(sqlite3.DBCONFIG_ENABLE_QPSG, true)
	return err
}

// keepingConn is one connection with its kept statements. database/sql
// uses a connection from one goroutine at a time, so it needs no lock.
type keepingConn struct {
	sqlitedriver.Conn
	byText map[string]*list.Element
	// order holds the kept statements, most recently used first.
	order *list.List
}

// keptStmt is a kept statement; Close hands it back instead of freeing it.
type keptStmt struct {
	driver.Stmt
	text  string
	inUse bool
}

func (c *keepingConn) Prepare(query string) (driver.Stmt, error) {
	return c.PrepareContext(context.Background(), query)
}

func (c *keepingConn) PrepareContext(ctx context.Context, query string) (driver.Stmt, error) {
	e, kept := c.byText[query]
	if kept {
		if s := e.Value.(*keptStmt); !s.inUse {
			s.inUse = true
			c.order.MoveToFront(e)
			return s, nil
		}
	}
	st, err := c.Conn.PrepareContext(ctx, query)
	if err != nil || kept {
		// The kept one is still in use (a query of the same text whose
		// rows are being read): this one is freed when closed.
		return st, err
	}
	s := &keptStmt{Stmt: st, text: query, inUse: true}
	c.byText[query] = c.order.PushFront(s)
	for e := c.order.Back(); c.order.Len() > statementsPerConn && e != nil; {
		prev := e.Prev()
		if old := e.Value.(*keptStmt); !old.inUse {
			c.order.Remove(e)
			delete(c.byText, old.text)
			old.Stmt.Close()
		}
		e = prev
	}
	return s, nil
}

// ExecContext runs a statement without arguments directly; with arguments
// the driver declines, and database/sql prepares it (PrepareContext).
func (c *keepingConn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	return c.Conn.(driver.ExecerContext).ExecContext(ctx, query, args)
}

func (c *keepingConn) CheckNamedValue(nv *driver.NamedValue) error {
	return c.Conn.(driver.NamedValueChecker).CheckNamedValue(nv)
}

func (c *keepingConn) Close() error {
	for e := c.order.Front(); e != nil; e = e.Next() {
		e.Value.(*keptStmt).Stmt.Close()
	}
	c.order.Init()
	clear(c.byText)
	return c.Conn.Close()
}

// Close makes the statement ready for its next use: reset, its bindings
// cleared (reading its rows to the end or closing them did this already).
func (s *keptStmt) Close() error {
	if r, ok := s.Stmt.(interface {
		Reset() error
		ClearBindings() error
	}); ok {
		_ = r.Reset() // its answer is the last execution's error, already reported
		_ = r.ClearBindings()
	}
	s.inUse = false
	return nil
}

func (s *keptStmt) ExecContext(ctx context.Context, args []driver.NamedValue) (driver.Result, error) {
	return s.Stmt.(driver.StmtExecContext).ExecContext(ctx, args)
}

func (s *keptStmt) QueryContext(ctx context.Context, args []driver.NamedValue) (driver.Rows, error) {
	return s.Stmt.(driver.StmtQueryContext).QueryContext(ctx, args)
}

func (s *keptStmt) CheckNamedValue(nv *driver.NamedValue) error {
	return s.Stmt.(driver.NamedValueChecker).CheckNamedValue(nv)
}
