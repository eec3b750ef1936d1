package sqlstore

import (
	"strings"

	"gorm.io/gorm"
)

// migrateV38 gives the keyword searches of repositories and users
// (GET /repos/search?q=, GET /users/search?q=) trigram indexes, so that a
// substring of a name, a topic, a description, a full name or an address
// is found through an index instead of by reading every row. The match
// stays the LIKE it was (substring, case-insensitive): the index only
// narrows the rows it is tested on (see nameCandidates).
//
// SQLite: FTS5 tables with the trigram tokenizer (case folded) and
// external content (repositories_trgm over repositories' lower_name,
// topics and description; users_trgm over users' lower_name, full_name and
// email), kept by triggers in the statement that writes the text; the
// update triggers fire only when one of those columns changed, so counter
// writes cost nothing. PostgreSQL: pg_trgm GIN indexes on the lower-cased
// columns the searches compare, which PostgreSQL keeps itself.
func migrateV38(tx *gorm.DB) error {
	stmts := sqliteTrigramSchema
	if tx.Dialector.Name() == "postgres" {
		// The extension lives in one schema of the database (where it
		// was first created, perhaps before this server): its operator
		// class is named with that schema, whatever the search_path.
		if err := tx.Exec(`CREATE EXTENSION IF NOT EXISTS pg_trgm`).Error; err != nil {
			return err
		}
		var schema string
		if err := tx.Raw(`SELECT n.nspname FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace
			WHERE e.extname = 'pg_trgm'`).Scan(&schema).Error; err != nil {
			return err
		}
		ops := `"` + strings.ReplaceAll(schema, `"`, `""`) + `".gin_trgm_ops`
		stmts = nil
		for _, stmt := range pgTrigramSchema {
			stmts = append(stmts, strings.ReplaceAll(stmt, "gin_trgm_ops", ops))
		}
	}
	for _, stmt := range stmts {
		if err := tx.Exec(stmt).Error; err != nil {
			return err
		}
	}
	return nil
}

// sqliteTrigramSchema creates and fills the trigram tables and their
// triggers (the same pattern as sqliteSearchSchema).
var sqliteTrigramSchema = []string{
	`CREATE VIRTUAL TABLE repositories_trgm USING fts5(lower_name, topics, description,
		content='repositories', content_rowid='id', tokenize='trigram')`,
	`CREATE TRIGGER repositories_trgm_insert AFTER INSERT ON repositories BEGIN
		INSERT INTO repositories_trgm (rowid, lower_name, topics, description)
			VALUES (NEW.id, NEW.lower_name, NEW.topics, NEW.description);
	END`,
	`CREATE TRIGGER repositories_trgm_delete AFTER DELETE ON repositories BEGIN
		INSERT INTO repositories_trgm (repositories_trgm, rowid, lower_name, topics, description)
			VALUES ('delete', OLD.id, OLD.lower_name, OLD.topics, OLD.description);
	END`,
	`CREATE TRIGGER repositories_trgm_update AFTER UPDATE OF lower_name, topics, description ON repositories
		WHEN OLD.lower_name IS NOT NEW.lower_name OR OLD.topics IS NOT NEW.topics
			OR OLD.description IS NOT NEW.description BEGIN
		INSERT INTO repositories_trgm (repositories_trgm, rowid, lower_name, topics, description)
			VALUES ('delete', OLD.id, OLD.lower_name, OLD.topics, OLD.description);
		INSERT INTO repositories_trgm (rowid, lower_name, topics, description)
			VALUES (NEW.id, NEW.lower_name, NEW.topics, NEW.description);
	END`,
	`CREATE VIRTUAL TABLE users_trgm USING fts5(lower_name, full_name, email,
		content='users', content_rowid='id', tokenize='trigram')`,
	`CREATE TRIGGER users_trgm_insert AFTER INSERT ON users BEGIN
		INSERT INTO users_trgm (rowid, lower_name, full_name, email)
			VALUES (NEW.id, NEW.lower_name, NEW.full_name, NEW.email);
	END`,
	`CREATE TRIGGER users_trgm_delete AFTER DELETE ON users BEGIN
		INSERT INTO users_trgm (users_trgm, rowid, lower_name, full_name, email)
			VALUES ('delete', OLD.id, OLD.lower_name, OLD.full_name, OLD.email);
	END`,
	`CREATE TRIGGER users_trgm_update AFTER UPDATE OF lower_name, full_name, email ON users
		WHEN OLD.lower_name IS NOT NEW.lower_name OR OLD.full_name IS NOT NEW.full_name
			OR OLD.email IS NOT NEW.email BEGIN
		INSERT INTO users_trgm (users_trgm, rowid, lower_name, full_name, email)
			VALUES ('delete', OLD.id, OLD.lower_name, OLD.full_name, OLD.email);
		INSERT INTO users_trgm (rowid, lower_name, full_name, email)
			VALUES (NEW.id, NEW.lower_name, NEW.full_name, NEW.email);
	END`,
	`INSERT INTO repositories_trgm (repositories_trgm) VALUES ('rebuild')`,
	`INSERT INTO users_trgm (users_trgm) VALUES ('rebuild')`,
}

// pgTrigramSchema: one GIN index of pg_trgm (a trusted extension, shipped
// with PostgreSQL) per compared expression, each written exactly as the
// searches write it so the planner can match them.
var pgTrigramSchema = []string{
	`CREATE INDEX idx_repositories_lower_name_trgm ON repositories USING gin (lower_name gin_trgm_ops)`,
	`CREATE INDEX idx_repositories_topics_trgm ON repositories USING gin (LOWER(topics) gin_trgm_ops)`,
	`CREATE INDEX idx_repositories_description_trgm ON repositories USING gin (LOWER(description) gin_trgm_ops)`,
	`CREATE INDEX idx_users_lower_name_trgm ON users USING gin (lower_name gin_trgm_ops)`,
	`CREATE INDEX idx_users_full_name_trgm ON users USING gin (LOWER(full_name) gin_trgm_ops)`,
	`CREATE INDEX idx_users_email_trgm ON users USING gin (LOWER(email) gin_trgm_ops)`,
}
