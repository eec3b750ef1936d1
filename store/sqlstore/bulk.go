package sqlstore

import (
	"context"
	"fmt"
	"reflect"
	"strings"

	"gorm.io/gorm/clause"
)

// InsertBatches writes rows (a slice of structs whose fields name the
// table's columns) into table with multi-row INSERT statements of at most
// size rows each, in the transaction carried by ctx if there is one, and
// fills in the ids the database assigned. It is for bulk loads such as the
// benchmark's seed: it keeps no counter, checks no rule and announces no
// event, so the caller must write consistent rows itself.
func (d *DB) InsertBatches(ctx context.Context, table string, rows any, size int) error {
	v := reflect.ValueOf(rows)
	if v.Kind() != reflect.Slice {
		return fmt.Errorf("insert into %s: rows must be a slice", table)
	}
	if v.Len() == 0 {
		return nil
	}
	// A statement carries at most 32,766 parameters on SQLite (65,535 on
	// PostgreSQL): wide rows go in smaller batches.
	elem := v.Type().Elem()
	for elem.Kind() == reflect.Pointer {
		elem = elem.Elem()
	}
	if elem.Kind() == reflect.Struct && elem.NumField() > 0 {
		size = max(1, min(size, maxParams/elem.NumField()))
	}
	err := d.conn(ctx).Table(table).Omit(clause.Associations).CreateInBatches(rows, size).Error
	return translate(err, "insert into "+table)
}

// maxParams stays under SQLite's limit on parameters per statement.
const maxParams = 30000

// Analyze brings PostgreSQL to the state autovacuum leaves it in some time
// after a bulk load: statistics for the planner, and the visibility map that
// lets index-only scans skip the table. On SQLite it does nothing: a
// server's SQLite file has no statistics unless an operator gathers them,
// and with them (this build keeps STAT4 histograms) every statement whose
// parameters reach an index is prepared again on each execution, which
// doubled the cost of a simple GET.
func (d *DB) Analyze(ctx context.Context) error {
	if !d.usesPostgres() {
		return nil
	}
	// Only this store's own tables: a bare VACUUM walks every table of the
	// database, and fails when another schema's table is dropped meanwhile
	// (the tests give each store a schema of its own in one database).
	g := d.gorm.WithContext(ctx)
	var tables []string
	if err := g.Raw(`SELECT quote_ident(tablename) FROM pg_tables WHERE schemaname = current_schema() ORDER BY tablename`).
		Scan(&tables).Error; err != nil {
		return fmt.Errorf("vacuum analyze: list tables: %w", err)
	}
	if len(tables) == 0 {
		return nil
	}
	if err := g.Exec("VACUUM ANALYZE " + strings.Join(tables, ", ")).Error; err != nil {
		return fmt.Errorf("vacuum analyze: %w", err)
	}
	return nil
}
