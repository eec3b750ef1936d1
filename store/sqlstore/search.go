package sqlstore

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"unicode"

	"github.com/ncruces/go-sqlite3"
	"gorm.io/gorm"

	"repohost/store"
)

// Issue search: the keyword of an issue list (q) is read as the
// reference's issue index reads it. It is split into words (letters and
// digits; anything else separates them) and an issue matches when each
// word begins a word of its title, its body or one of its comments
// ("conf" finds "configuration"). A keyword that is a number ("12") also
// finds the issue of that number; after "#" ("#12") it finds only that
// issue, as a reference to it. The
// words are looked up in the full-text index of migrateV24, so a search
// costs what its matches cost, not what the repository holds.

// maxSearchWords bounds the words of one keyword that reach the index:
// each is one more index lookup, and a longer query adds nothing a
// person types.
const maxSearchWords = 16

// searchWords splits a keyword into the lower-cased words the index holds,
// each once, in their order.
func searchWords(keyword string) []string {
	var out []string
	seen := map[string]bool{}
	for _, w := range strings.FieldsFunc(strings.ToLower(keyword), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	}) {
		if !seen[w] && len(out) < maxSearchWords {
			seen[w] = true
			out = append(out, w)
		}
	}
	return out
}

// keywordNumber is the issue number a keyword names ("12" or "#12"), or 0.
func keywordNumber(keyword string) int64 {
	n, err := strconv.ParseInt(strings.TrimPrefix(strings.TrimSpace(keyword), "#"), 10, 64)
	if err != nil || n <= 0 {
		return 0
	}
	return n
}

// ftsQuery is an FTS5 query in which every word is a prefix that must
// match: `"conf"* AND "ui"*`. The words hold only letters and digits, so
// quoting them cannot let FTS5 syntax through.
func ftsQuery(words []string) string {
	parts := make([]string, len(words))
	for i, w := range words {
		parts[i] = `"` + w + `"*`
	}
	return strings.Join(parts, " AND ")
}

// tsQuery is the PostgreSQL to_tsquery form of the same: 'conf':* & 'ui':*.
func tsQuery(words []string) string {
	parts := make([]string, len(words))
	for i, w := range words {
		parts[i] = "'" + w + "':*"
	}
	return strings.Join(parts, " & ")
}

// keywordMatches selects the ids (column id) of the issues the keyword of
// f matches, from the index alone: the issues whose title or body has
// every word, those with a comment that has every word, and the issue of
// the keyword's number. It is nil when the keyword can match nothing (no
// word, no number).
func (s issueStore) keywordMatches(ctx context.Context, f store.IssueFilter) *gorm.DB {
	words := searchWords(f.Keyword)
	number := keywordNumber(f.Keyword)
	if number > 0 && strings.HasPrefix(strings.TrimSpace(f.Keyword), "#") {
		// "#12" is a reference to an issue, not text to look for.
		words = nil
	}
	if len(words) == 0 && number == 0 {
		return nil
	}
	var parts []string
	var args []any
	if len(words) > 0 {
		if s.d.usesPostgres() {
			q := tsQuery(words)
			parts = append(parts,
				`SELECT issue_id AS id FROM issue_search WHERE document @@ to_tsquery('simple', ?)`,
				`SELECT issue_id AS id FROM comment_search WHERE document @@ to_tsquery('simple', ?)`)
			args = append(args, q, q)
		} else {
			q := ftsQuery(words)
			parts = append(parts,
				`SELECT rowid AS id FROM issues_fts WHERE issues_fts MATCH ?`,
				`SELECT c.issue_id AS id FROM comments_fts CROSS JOIN comments c
					WHERE comments_fts MATCH ? AND c.id = comments_fts.rowid`)
			args = append(args, q, q)
		}
	}
	if number > 0 {
		if f.RepoID > 0 {
			parts = append(parts, `SELECT id FROM issues WHERE repo_id = ? AND number = ?`)
			args = append(args, f.RepoID, number)
		} else {
			parts = append(parts, `SELECT id FROM issues WHERE number = ?`)
			args = append(args, number)
		}
	}
	// UNION, not UNION ALL: an issue found by its title and a comment
	// is one match.
	return s.d.conn(ctx).Raw(strings.Join(parts, " UNION "), args...)
}

// matched selects the issues f keeps, starting from the keyword's
// matches: each match is read by its key and held to f's other filters,
// so neither a page nor a count reads an issue the keyword does not
// match. The matches are then sorted for the page (there are as many as
// the keyword finds). Both databases are held to that order as labelled
// holds them: SQLite by the CROSS JOIN, PostgreSQL by a lateral subquery
// it cannot flatten. ok is false when the keyword matches nothing.
func (s issueStore) matched(ctx context.Context, f store.IssueFilter) (*gorm.DB, bool) {
	ids := s.keywordMatches(ctx, f)
	if ids == nil {
		return nil, false
	}
	rest := f
	rest.Keyword = ""
	var from *gorm.DB
	if s.d.usesPostgres() {
		from = s.d.conn(ctx).Table("(?) matches", ids).
			Joins("CROSS JOIN LATERAL (SELECT * FROM issues WHERE issues.id = matches.id OFFSET 0) issues")
	} else {
		from = s.d.conn(ctx).Table("(?) matches", ids).Joins("CROSS JOIN issues").Where("issues.id = matches.id")
	}
	// Probes per match (EXISTS) rather than gathered sets: the matches
	// are few next to a repository's or a site's issues.
	return s.filteredFrom(ctx, from, rest, false), true
}

// Reindex rebuilds the full-text index of issues and comments from their
// rows (repohost admin reindex-issues), and on SQLite the trigram tables
// of repositories and users too.
func (s issueStore) Reindex(ctx context.Context) error {
	var stmts []string
	if s.d.usesPostgres() {
		stmts = []string{
			`INSERT INTO issue_search (issue_id, document) SELECT id, repohost_search_vector(title, body) FROM issues
				ON CONFLICT (issue_id) DO UPDATE SET document = EXCLUDED.document`,
			`INSERT INTO comment_search (comment_id, issue_id, document) SELECT id, issue_id, repohost_search_vector('', body) FROM comments
				ON CONFLICT (comment_id) DO UPDATE SET issue_id = EXCLUDED.issue_id, document = EXCLUDED.document`,
			`DELETE FROM issue_search WHERE NOT EXISTS (SELECT 1 FROM issues WHERE issues.id = issue_search.issue_id)`,
			`DELETE FROM comment_search WHERE NOT EXISTS (SELECT 1 FROM comments WHERE comments.id = comment_search.comment_id)`,
		}
	} else {
		stmts = []string{
			`INSERT INTO issues_fts (issues_fts) VALUES ('rebuild')`,
			`INSERT INTO comments_fts (comments_fts) VALUES ('rebuild')`,
			// The trigram indexes of repositories and users
			// (migrateV38; on PostgreSQL plain indexes, kept by it).
			`INSERT INTO repositories_trgm (repositories_trgm) VALUES ('rebuild')`,
			`INSERT INTO users_trgm (users_trgm) VALUES ('rebuild')`,
		}
	}
	return s.d.WithTx(ctx, func(ctx context.Context) error {
		for _, stmt := range stmts {
			if err := s.d.conn(ctx).Exec(stmt).Error; err != nil {
				return translate(err, "reindex issues")
			}
		}
		return nil
	})
}

// CheckSearchIndex counts the issues and comments whose entry in the
// full-text index disagrees with their text (0 when the index is
// current). On SQLite, FTS5's own integrity check compares the index
// with its content tables; it reports a disagreement, not how many rows
// it concerns, so a drift counts 1 per table.
func (s issueStore) CheckSearchIndex(ctx context.Context) (int64, error) {
	if s.d.usesPostgres() {
		var bad int64
		err := s.d.conn(ctx).Raw(`SELECT
			(SELECT COUNT(*) FROM issues i LEFT JOIN issue_search x ON x.issue_id = i.id
				WHERE x.document IS DISTINCT FROM repohost_search_vector(i.title, i.body))
			+ (SELECT COUNT(*) FROM comments c LEFT JOIN comment_search x ON x.comment_id = c.id
				WHERE x.document IS DISTINCT FROM repohost_search_vector('', c.body) OR x.issue_id <> c.issue_id)`).Scan(&bad).Error
		return bad, translate(err, "check search index")
	}
	var bad int64
	for _, table := range []string{"issues_fts", "comments_fts", "repositories_trgm", "users_trgm"} {
		err := s.d.conn(ctx).Exec(`INSERT INTO ` + table + ` (` + table + `, rank) VALUES ('integrity-check', 1)`).Error
		switch {
		case err == nil:
		case isCorrupt(err):
			bad++
		default:
			return 0, translate(err, "check search index")
		}
	}
	return bad, nil
}

// isCorrupt tells whether err is SQLite's report of an index that
// disagrees with its content.
func isCorrupt(err error) bool {
	return errors.Is(err, sqlite3.CORRUPT) || errors.Is(err, sqlite3.CORRUPT_VTAB)
}
