package sqlstore

import "gorm.io/gorm"

// migrateV24 gives issue and pull request search a full-text index of
// titles, bodies and comments, kept by the database itself: triggers on
// issues and comments update it in the statement (and so the transaction)
// that writes the text, so every path that writes issues or comments (the
// single-statement issue create on PostgreSQL, bulk seeding, cascades)
// keeps it without knowing it exists.
//
// SQLite: FTS5 tables with external content (issues_fts over issues'
// title and body, comments_fts over comments' body); the index holds the
// words only, the text stays in its table. PostgreSQL: tables of tsvectors
// (issue_search, comment_search) written by AFTER triggers when the text
// is inserted or changes, with GIN indexes, and dropped with their rows
// by foreign-key cascades. Both tokenise the same way as searchWords (ASCII punctuation
// separates words, case is folded, accents are kept: PostgreSQL would need
// the unaccent extension to drop them), so a word found on one database
// is found on the other. An issue number gets its own index for "#12"
// across repositories.
func migrateV24(tx *gorm.DB) error {
	var stmts []string
	if tx.Dialector.Name() == "postgres" {
		stmts = pgSearchSchema
	} else {
		stmts = sqliteSearchSchema
	}
	stmts = append(stmts, `CREATE INDEX idx_issues_number ON issues (number)`)
	for _, stmt := range stmts {
		if err := tx.Exec(stmt).Error; err != nil {
			return err
		}
	}
	return nil
}

// sqliteSearchSchema creates and fills the FTS5 tables and the triggers
// that keep them. An external-content table is told what a row held when
// it is deleted or changed ('delete' with the old values), so that it can
// drop exactly that row's words; the update triggers fire only when the
// text changed, so counters and states written on issues cost nothing.
var sqliteSearchSchema = []string{
	`CREATE VIRTUAL TABLE issues_fts USING fts5(title, body, content='issues', content_rowid='id',
		tokenize='unicode61 remove_diacritics 0')`,
	`CREATE VIRTUAL TABLE comments_fts USING fts5(body, content='comments', content_rowid='id',
		tokenize='unicode61 remove_diacritics 0')`,
	`CREATE TRIGGER issues_fts_insert AFTER INSERT ON issues BEGIN
		INSERT INTO issues_fts (rowid, title, body) VALUES (NEW.id, NEW.title, NEW.body);
	END`,
	`CREATE TRIGGER issues_fts_delete AFTER DELETE ON issues BEGIN
		INSERT INTO issues_fts (issues_fts, rowid, title, body) VALUES ('delete', OLD.id, OLD.title, OLD.body);
	END`,
	`CREATE TRIGGER issues_fts_update AFTER UPDATE OF title, body ON issues
		WHEN OLD.title IS NOT NEW.title OR OLD.body IS NOT NEW.body BEGIN
		INSERT INTO issues_fts (issues_fts, rowid, title, body) VALUES ('delete', OLD.id, OLD.title, OLD.body);
		INSERT INTO issues_fts (rowid, title, body) VALUES (NEW.id, NEW.title, NEW.body);
	END`,
	`CREATE TRIGGER comments_fts_insert AFTER INSERT ON comments BEGIN
		INSERT INTO comments_fts (rowid, body) VALUES (NEW.id, NEW.body);
	END`,
	`CREATE TRIGGER comments_fts_delete AFTER DELETE ON comments BEGIN
		INSERT INTO comments_fts (comments_fts, rowid, body) VALUES ('delete', OLD.id, OLD.body);
	END`,
	`CREATE TRIGGER comments_fts_update AFTER UPDATE OF body ON comments
		WHEN OLD.body IS NOT NEW.body BEGIN
		INSERT INTO comments_fts (comments_fts, rowid, body) VALUES ('delete', OLD.id, OLD.body);
		INSERT INTO comments_fts (rowid, body) VALUES (NEW.id, NEW.body);
	END`,
	`INSERT INTO issues_fts (issues_fts) VALUES ('rebuild')`,
	`INSERT INTO comments_fts (comments_fts) VALUES ('rebuild')`,
}

// pgSearchSchema adds the side tables holding each issue's and comment's
// tsvector, the function that computes one (also used by a reindex), the
// triggers that keep them and their GIN indexes. Side tables rather than
// columns keep the issue and comment rows as narrow as they were, so the
// reads that take whole rows do not carry the vectors. The 'simple'
// configuration folds case and keeps every word (no stemming, no stop
// words), as the reference's issue index does. ASCII punctuation is turned
// into spaces first so that PostgreSQL's parser, which would keep "a.b" or
// "x-y" as one token besides their parts, splits text as SQLite does. Each
// text is cut at 256 Ki characters: a tsvector is limited to 1 MiB, and a
// longer body must still be stored.
var pgSearchSchema = []string{
	`CREATE FUNCTION repohost_search_vector(title text, body text) RETURNS tsvector
		LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
		SELECT to_tsvector('simple', regexp_replace(left(coalesce(title, ''), 262144) || ' ' || left(coalesce(body, ''), 262144),
			'[[:punct:][:space:]]+', ' ', 'g'))
	$$`,
	`CREATE TABLE issue_search (
		issue_id bigint PRIMARY KEY REFERENCES issues (id) ON DELETE CASCADE,
		document tsvector NOT NULL)`,
	`CREATE TABLE comment_search (
		comment_id bigint PRIMARY KEY REFERENCES comments (id) ON DELETE CASCADE,
		issue_id bigint NOT NULL,
		document tsvector NOT NULL)`,
	`INSERT INTO issue_search (issue_id, document) SELECT id, repohost_search_vector(title, body) FROM issues`,
	`INSERT INTO comment_search (comment_id, issue_id, document) SELECT id, issue_id, repohost_search_vector('', body) FROM comments`,
	`CREATE FUNCTION issues_search_index() RETURNS trigger LANGUAGE plpgsql AS $$
	BEGIN
		INSERT INTO issue_search (issue_id, document) VALUES (NEW.id, repohost_search_vector(NEW.title, NEW.body))
			ON CONFLICT (issue_id) DO UPDATE SET document = EXCLUDED.document;
		RETURN NULL;
	END $$`,
	`CREATE FUNCTION comments_search_index() RETURNS trigger LANGUAGE plpgsql AS $$
	BEGIN
		INSERT INTO comment_search (comment_id, issue_id, document) VALUES (NEW.id, NEW.issue_id, repohost_search_vector('', NEW.body))
			ON CONFLICT (comment_id) DO UPDATE SET issue_id = EXCLUDED.issue_id, document = EXCLUDED.document;
		RETURN NULL;
	END $$`,
	`CREATE TRIGGER issues_search_insert AFTER INSERT ON issues
		FOR EACH ROW EXECUTE FUNCTION issues_search_index()`,
	`CREATE TRIGGER issues_search_update AFTER UPDATE OF title, body ON issues
		FOR EACH ROW WHEN (OLD.title IS DISTINCT FROM NEW.title OR OLD.body IS DISTINCT FROM NEW.body)
		EXECUTE FUNCTION issues_search_index()`,
	`CREATE TRIGGER comments_search_insert AFTER INSERT ON comments
		FOR EACH ROW EXECUTE FUNCTION comments_search_index()`,
	`CREATE TRIGGER comments_search_update AFTER UPDATE OF body ON comments
		FOR EACH ROW WHEN (OLD.body IS DISTINCT FROM NEW.body)
		EXECUTE FUNCTION comments_search_index()`,
	`CREATE INDEX idx_issue_search_document ON issue_search USING gin (document)`,
	`CREATE INDEX idx_comment_search_document ON comment_search USING gin (document)`,
}
