package sqlstore

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"repohost/store"
)

// The keyword searches of repositories and users match substrings,
// case-insensitively, with LIKE on lower-cased columns. Those conditions
// stay the rule; what this file adds is where the rows they test come
// from: the ids a trigram index (migrateV38) finds for the keyword, each
// then read by its key, instead of every repository or user. A trigram
// index holds every run of three characters, so it can only find a
// keyword of three characters or more: a shorter one (one or two
// characters, which most names contain anyway) keeps the plain LIKE,
// which walks the list's order index and stops when the page is full, and
// counts by reading every row of the table (bounded by the table, not by
// an index: the one fallback).

// checkKeyword refuses a keyword no text column can hold (a NUL, which
// PostgreSQL refuses in any text and FTS5 in a query) as invalid input on
// both databases.
func checkKeyword(kw string) error {
	if strings.ContainsRune(kw, 0) {
		return fmt.Errorf("search keyword: %w", store.ErrInvalid)
	}
	return nil
}

// trigramMin is the shortest keyword a trigram index can find.
const trigramMin = 3

// trigramUsable tells whether kw is long enough for a trigram index.
func trigramUsable(kw string) bool { return utf8.RuneCountInString(kw) >= trigramMin }

// ftsPhrase quotes s as one FTS5 phrase: for the trigram tokenizer, the
// rows holding s as a substring (case folded).
func ftsPhrase(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }

// ftsColumns restricts phrase to the columns cols of an FTS5 table.
func ftsColumns(phrase string, cols ...string) string {
	return "({" + strings.Join(cols, " ") + "} : " + phrase + ")"
}

// candidates gathers the arms of an id-selecting subquery: on SQLite
// OR-ed phrases of one FTS5 MATCH (plus subqueries of other tables), on
// PostgreSQL one SELECT per indexed expression, joined by UNION ALL (an
// OR of several columns' LIKEs is not read through their indexes when the
// page is ordered by another).
type candidates struct {
	pg      bool
	fts     string // the FTS5 table (SQLite)
	matches []string
	arms    []string
	args    []any
}

// like adds, on PostgreSQL, the rows of table whose expr contains kw.
func (c *candidates) like(table, expr, kw string) {
	c.arms = append(c.arms, "SELECT id FROM "+table+" WHERE "+expr+` LIKE ? ESCAPE '\'`)
	c.args = append(c.args, likePattern(kw))
}

// sql is the subquery and its arguments ("" when nothing was added).
func (c *candidates) sql() (string, []any) {
	arms, args := c.arms, c.args
	if len(c.matches) > 0 {
		arms = append([]string{"SELECT rowid FROM " + c.fts + " WHERE " + c.fts + " MATCH ?"}, arms...)
		args = append([]any{strings.Join(c.matches, " OR ")}, args...)
	}
	return strings.Join(arms, " UNION ALL "), args
}

// repoCandidates selects the ids of the repositories a trigram index finds
// for q.Keyword (a superset of keywordCond's matches, which still decides),
// or reports that some part of it is too short for the index.
func (d *DB) repoCandidates(q store.RepoSearch) (string, []any, bool) {
	c := candidates{pg: d.usesPostgres(), fts: "repositories_trgm"}
	for _, kw := range strings.Split(q.Keyword, ",") {
		kw = strings.ToLower(strings.TrimSpace(kw))
		if kw == "" {
			continue
		}
		if !trigramUsable(kw) {
			return "", nil, false
		}
		cols := []string{"lower_name", "topics"}
		if q.TopicOnly {
			// A topic equal to kw contains it.
			cols = []string{"topics"}
		} else if q.IncludeDescription {
			cols = append(cols, "description")
		}
		if c.pg {
			for _, col := range cols {
				expr := "lower_name"
				if col != "lower_name" {
					expr = "LOWER(" + col + ")"
				}
				c.like("repositories", expr, kw)
			}
		} else {
			c.matches = append(c.matches, ftsColumns(ftsPhrase(kw), cols...))
		}
		if q.TopicOnly {
			continue
		}
		ownerPart, namePart, ok := strings.Cut(kw, "/")
		if !ok || strings.Contains(namePart, "/") {
			continue
		}
		switch {
		case trigramUsable(namePart): // the name holds namePart
			if c.pg {
				c.like("repositories", "lower_name", namePart)
			} else {
				c.matches = append(c.matches, ftsColumns(ftsPhrase(namePart), "lower_name"))
			}
		case trigramUsable(ownerPart): // the owner's name holds ownerPart
			if c.pg {
				c.arms = append(c.arms, `SELECT id FROM repositories WHERE owner_id IN
					(SELECT id FROM users WHERE lower_name LIKE ? ESCAPE '\')`)
				c.args = append(c.args, likePattern(ownerPart))
			} else {
				c.arms = append(c.arms, `SELECT id FROM repositories WHERE owner_id IN
					(SELECT rowid FROM users_trgm WHERE users_trgm MATCH ?)`)
				c.args = append(c.args, ftsColumns(ftsPhrase(ownerPart), "lower_name"))
			}
		default:
			return "", nil, false
		}
	}
	s, args := c.sql()
	return s, args, s != ""
}

// userCandidates selects the ids of the users a trigram index finds for
// keyword in their name and full name, and with email in their address
// (a superset of Search's matches, which still decide), or reports that
// keyword is too short for the index.
func (d *DB) userCandidates(keyword string, email bool) (string, []any, bool) {
	kw := strings.ToLower(keyword)
	if !trigramUsable(kw) {
		return "", nil, false
	}
	c := candidates{pg: d.usesPostgres(), fts: "users_trgm"}
	cols := []string{"lower_name", "full_name"}
	if email {
		cols = append(cols, "email")
	}
	if c.pg {
		c.like("users", "lower_name", kw)
		c.like("users", "LOWER(full_name)", kw)
		if email {
			c.like("users", "LOWER(email)", kw)
		}
	} else {
		c.matches = append(c.matches, ftsColumns(ftsPhrase(kw), cols...))
	}
	s, args := c.sql()
	return s, args, true
}
