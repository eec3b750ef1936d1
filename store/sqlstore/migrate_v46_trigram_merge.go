package sqlstore

import "gorm.io/gorm"

// migrateV46 keeps the SQLite trigram tables of repository and user
// keyword search (migrateV38) in fewer segments. FTS5 writes each
// transaction's rows as a new segment and merges a level's segments only
// once automerge (by default 4) of them are there, so a table written one
// repository or user at a time holds a dozen segments or more, and a
// phrase of common trigrams ("use", "ser" in every name) is looked up in
// each of them: measured on 5,000 users, 0.52 ms per search at the
// default, 0.14 ms with automerge 2, 0.19 ms right after an optimize that
// later writes undo. These tables are written rarely (a repository or a
// user created, renamed or described) and searched on every keystroke,
// so they merge at 2; the issue tables (migrateV24), written on every
// issue and comment, keep the default. The existing segments are merged
// once. PostgreSQL's GIN indexes keep themselves: nothing to do there.
func migrateV46(tx *gorm.DB) error {
	if tx.Dialector.Name() == "postgres" {
		return nil
	}
	for _, t := range []string{"repositories_trgm", "users_trgm"} {
		for _, stmt := range []string{
			`INSERT INTO ` + t + ` (` + t + `, rank) VALUES ('automerge', 2)`,
			`INSERT INTO ` + t + ` (` + t + `) VALUES ('optimize')`,
		} {
			if err := tx.Exec(stmt).Error; err != nil {
				return err
			}
		}
	}
	return nil
}
