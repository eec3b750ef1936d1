package sqlstore

import (
	"fmt"
	"strconv"
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

// candidates gathers the arms of an id-selecting subquery: on SQLite one
// FTS5 MATCH per keyword (plus subqueries of other tables), on
// PostgreSQL one SELECT per indexed expression, joined by UNION ALL (an
// OR of several columns' LIKEs is not read through their indexes when the
// page is ordered by another).
type candidates struct {
	pg   bool
	fts  string // the FTS5 table (SQLite)
	arms []string
	args []any
}

// The rows of an FTS5 trigram table holding a keyword are found by
// walking the lists of every trigram of the keyword side by side, and
// those lists step one row at a time: a trigram most names share ("use",
// "ser" of "user001" among 5,000 users named userNNNN) makes the lookup
// read every row, about 0.8 ms per search on 5,000 users, for the ten
// found. The rows holding one rare trigram of the keyword ("001": 15 rows)
// are a superset of those holding the keyword too (the LIKE conditions
// still decide), read in a twentieth of the time. Which trigram is rare
// is measured when searching: up to trigramProbes of them (the last one
// first, where names tend to differ) are each counted up to
// trigramRareRows rows, and the first found in fewer rows is looked up;
// when none is, the whole phrase is, as before. SQLite evaluates the
// arguments of COALESCE in turn, so a search whose first probe is rare
// runs one probe. Each probe reads at most trigramRareRows entries: the
// cost stays bounded by the keyword, not the table.
const (
	trigramProbes   = 4
	trigramRareRows = 64
)

// probeOrder is the trigrams of kw (at least one) to probe, in order.
func probeOrder(kw string) []string {
	r := []rune(kw)
	n := len(r) - 2
	tri := func(i int) string { return string(r[i : i+3]) }
	out := []string{tri(n - 1)}
	if n > 1 {
		out = append(out, tri(0))
	}
	for i := 1; i < n-1 && len(out) < trigramProbes; i++ {
		out = append(out, tri(i))
	}
	return out
}

// match adds, on SQLite, the rows of the FTS5 table whose columns cols
// hold kw (trigramUsable): those of a rare trigram of kw when one is
// found, else those of the phrase kw.
func (c *candidates) match(kw string, cols ...string) {
	c.arms = append(c.arms, "SELECT rowid FROM "+c.fts+" WHERE "+c.fts+" MATCH "+c.rareMatch(c.fts, kw, cols...))
}

// rareMatch is the argument of a MATCH of the FTS5 table fts that finds
// the rows whose columns cols hold kw (see match), adding its arguments.
func (c *candidates) rareMatch(fts, kw string, cols ...string) string {
	probes := probeOrder(kw)
	parts := make([]string, 0, len(probes)+1)
	for _, t := range probes {
		parts = append(parts, "(SELECT ? WHERE (SELECT count(*) FROM (SELECT 1 FROM "+fts+" WHERE "+fts+
			" MATCH ? LIMIT "+strconv.Itoa(trigramRareRows)+")) < "+strconv.Itoa(trigramRareRows)+")")
		m := ftsColumns(ftsPhrase(t), cols...)
		c.args = append(c.args, m, m)
	}
	parts = append(parts, "?")
	c.args = append(c.args, ftsColumns(ftsPhrase(kw), cols...))
	return "COALESCE(" + strings.Join(parts, ", ") + ")"
}

// like adds, on PostgreSQL, the rows of table whose expr contains kw.
func (c *candidates) like(table, expr, kw string) {
	c.arms = append(c.arms, "SELECT id FROM "+table+" WHERE "+expr+" LIKE "+opaquePattern+` ESCAPE '\'`)
	c.args = append(c.args, likePattern(kw))
}

// opaquePattern is the bound pattern of a candidates arm on PostgreSQL,
// read through a subquery so that the planner does not see its value.
// Whatever the pattern, the plan is the same (the trigram index finds the
// candidates, each then read by its key), yet PostgreSQL plans a prepared
// statement afresh for every execution while a plan that knows the
// pattern's value (which it estimates to match about one row) looks
// cheaper than the generic one (which assumes 0.5% of the table): about
// 1 ms of planning per search under load, twice its execution. With the
// value out of sight, both estimates agree and each connection keeps the
// generic plan after its first five executions (plan_cache_mode auto).
const opaquePattern = "(SELECT CAST(? AS TEXT))"

// sql is the subquery and its arguments ("" when nothing was added).
func (c *candidates) sql() (string, []any) {
	return strings.Join(c.arms, " UNION ALL "), c.args
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
			c.match(kw, cols...)
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
				c.match(namePart, "lower_name")
			}
		case trigramUsable(ownerPart): // the owner's name holds ownerPart
			if c.pg {
				c.arms = append(c.arms, `SELECT id FROM repositories WHERE owner_id IN
					(SELECT id FROM users WHERE lower_name LIKE `+opaquePattern+` ESCAPE '\')`)
				c.args = append(c.args, likePattern(ownerPart))
			} else {
				c.arms = append(c.arms, `SELECT id FROM repositories WHERE owner_id IN
					(SELECT rowid FROM users_trgm WHERE users_trgm MATCH `+c.rareMatch("users_trgm", ownerPart, "lower_name")+`)`)
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
		c.match(kw, cols...)
	}
	s, args := c.sql()
	return s, args, true
}
