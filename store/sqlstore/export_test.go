package sqlstore

import (
	"context"
	"fmt"
	"regexp"
	"strings"

	"gorm.io/gorm"
)

var doubleQuoted = regexp.MustCompile(`"[^"]*"`)

// UsesPostgres tells the external tests which database they run on.
func (d *DB) UsesPostgres() bool { return d.usesPostgres() }

// Explain returns the plan of query. On SQLite it is EXPLAIN QUERY PLAN,
// one line per step. On PostgreSQL it is EXPLAIN (FORMAT JSON) with
// sequential scans and sorts priced out of the planner's choices, so a Seq
// Scan or a Sort that is still there is one no index can avoid; that makes
// the plan independent of how many rows the test has.
// allowSort leaves sorts priced normally, for lists that may sort a small
// set (the plan must then still reach it through an index).
func (d *DB) Explain(ctx context.Context, query string, allowSort bool) ([]string, error) {
	if !d.usesPostgres() {
		// GORM's logger quotes string values with double quotes, which
		// this SQLite build reads as identifiers; the statements quote
		// identifiers with backticks, so every double-quoted run is a value.
		query = doubleQuoted.ReplaceAllStringFunc(query, func(s string) string {
			return "'" + strings.ReplaceAll(s[1:len(s)-1], "'", "''") + "'"
		})
		rows, err := d.gorm.WithContext(ctx).Raw("EXPLAIN QUERY PLAN " + query).Rows()
		if err != nil {
			return nil, fmt.Errorf("explain %s: %w", query, err)
		}
		defer rows.Close()
		var out []string
		for rows.Next() {
			var id, parent, unused int
			var detail string
			if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
				return nil, err
			}
			out = append(out, detail)
		}
		return out, rows.Err()
	}
	var plan string
	err := d.gorm.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		off := []string{"enable_seqscan", "enable_sort", "enable_incremental_sort"}
		if allowSort {
			off = off[:1]
		}
		for _, set := range off {
			if err := tx.Exec("SET LOCAL " + set + " = off").Error; err != nil {
				return err
			}
		}
		return tx.Raw("EXPLAIN (FORMAT JSON) " + query).Row().Scan(&plan)
	})
	if err != nil {
		return nil, fmt.Errorf("explain %s: %w", query, err)
	}
	return []string{plan}, nil
}

// ExecRaw runs a statement behind the store's back, for tests that damage
// what the store keeps.
func (d *DB) ExecRaw(ctx context.Context, query string, args ...any) error {
	return d.gorm.WithContext(ctx).Exec(query, args...).Error
}

// MigrateUpTo applies the pending migrations up to version last, for
// tests of one migration on the data of the ones before it.
func (d *DB) MigrateUpTo(ctx context.Context, last int) (int, error) {
	return d.migrateUpTo(ctx, last)
}
