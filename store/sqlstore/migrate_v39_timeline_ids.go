package sqlstore

import (
	"fmt"

	"gorm.io/gorm"
)

// migrateV39 puts timeline events and comments in one id space, as the
// reference's timeline (whose every entry is a comment) has: the events
// recorded so far move above every comment id, and from now on each new
// comment or event takes an id neither table has used. On PostgreSQL the
// events draw from the comments' sequence; on SQLite, where both tables
// are AUTOINCREMENT, an insert into either moves the other's counter past
// its id. It also gives reference events their action (ref_action: 0
// none, 1 closes, 2 reopens, 3 neutered, as the reference numbers them).
func migrateV39(tx *gorm.DB) error {
	var maxComment int64
	if err := tx.Raw(`SELECT COALESCE(MAX(id), 0) FROM comments`).Scan(&maxComment).Error; err != nil {
		return err
	}
	stmts := []string{
		`ALTER TABLE issue_events ADD COLUMN ref_action integer NOT NULL DEFAULT 0`,
		// The references one issue (or its comment) made, to neuter or resolve them.
		`CREATE INDEX idx_issue_events_ref ON issue_events (ref_issue_id, ref_comment_id) WHERE ref_issue_id <> 0`,
		// Through negative ids, so no intermediate id collides.
		`UPDATE issue_events SET id = -id`,
		fmt.Sprintf(`UPDATE issue_events SET id = %d - id`, maxComment),
	}
	if tx.Dialector.Name() == "postgres" {
		var seq string
		if err := tx.Raw(`SELECT pg_get_serial_sequence('comments', 'id')`).Scan(&seq).Error; err != nil {
			return err
		}
		if seq == "" {
			return fmt.Errorf("comments.id has no sequence")
		}
		stmts = append(stmts,
			fmt.Sprintf(`SELECT setval('%s', GREATEST((SELECT COALESCE(MAX(id), 0) FROM comments), (SELECT COALESCE(MAX(id), 0) FROM issue_events), 1))`, seq),
			fmt.Sprintf(`ALTER TABLE issue_events ALTER COLUMN id SET DEFAULT nextval('%s')`, seq),
		)
	} else {
		stmts = append(stmts,
			`INSERT INTO sqlite_sequence (name, seq) SELECT 'comments', 0 WHERE NOT EXISTS (SELECT 1 FROM sqlite_sequence WHERE name = 'comments')`,
			`INSERT INTO sqlite_sequence (name, seq) SELECT 'issue_events', 0 WHERE NOT EXISTS (SELECT 1 FROM sqlite_sequence WHERE name = 'issue_events')`,
			`UPDATE sqlite_sequence SET seq = MAX((SELECT COALESCE(MAX(id), 0) FROM comments), (SELECT COALESCE(MAX(id), 0) FROM issue_events),
				(SELECT MAX(seq) FROM sqlite_sequence WHERE name IN ('comments', 'issue_events'))) WHERE name IN ('comments', 'issue_events')`,
			`CREATE TRIGGER trg_comments_timeline_id AFTER INSERT ON comments BEGIN
				UPDATE sqlite_sequence SET seq = NEW.id WHERE name = 'issue_events' AND seq < NEW.id;
			END`,
			`CREATE TRIGGER trg_issue_events_timeline_id AFTER INSERT ON issue_events BEGIN
				UPDATE sqlite_sequence SET seq = NEW.id WHERE name = 'comments' AND seq < NEW.id;
			END`,
		)
	}
	for _, stmt := range stmts {
		if err := tx.Exec(stmt).Error; err != nil {
			return err
		}
	}
	return nil
}
