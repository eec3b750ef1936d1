package sqlstore

import "gorm.io/gorm"

// migrateV17 copies each repository's owner's visibility into the
// repository row (owner_visibility), indexed with is_private. The part of
// the visibility rule that needs no facts about the viewer ("a public
// repository of an owner everyone may see", see visibleTo) is then one
// index range: a count of every repository a user may see reads that
// index alone, where joining each repository to its owner read every
// repository row and every owner's.
//
// The database keeps the copy, not the store's code, so that no path that
// writes repositories (creation, transfer, bulk seeding) or users can
// forget it: triggers set it when a repository is inserted or changes
// owner, and rewrite an owner's repositories when its visibility changes.
// On PostgreSQL a new repository reads its owner's visibility FOR SHARE,
// so a concurrent visibility change either waits for the new repository
// (and then rewrites it) or is seen by it.
func migrateV17(tx *gorm.DB) error {
	stmts := []string{
		`ALTER TABLE repositories ADD COLUMN owner_visibility integer NOT NULL DEFAULT 0`,
		`UPDATE repositories SET owner_visibility = (SELECT users.visibility FROM users WHERE users.id = repositories.owner_id)`,
		`CREATE INDEX idx_repository_listed ON repositories (is_private, owner_visibility)`,
	}
	if tx.Dialector.Name() == "postgres" {
		stmts = append(stmts,
			`CREATE FUNCTION repositories_copy_owner_visibility() RETURNS trigger LANGUAGE plpgsql AS $$
			BEGIN
				SELECT users.visibility INTO NEW.owner_visibility FROM users WHERE users.id = NEW.owner_id FOR SHARE;
				RETURN NEW;
			END $$`,
			`CREATE TRIGGER repositories_owner_visibility_insert BEFORE INSERT ON repositories
				FOR EACH ROW EXECUTE FUNCTION repositories_copy_owner_visibility()`,
			`CREATE TRIGGER repositories_owner_visibility_transfer BEFORE UPDATE OF owner_id ON repositories
				FOR EACH ROW WHEN (OLD.owner_id IS DISTINCT FROM NEW.owner_id)
				EXECUTE FUNCTION repositories_copy_owner_visibility()`,
			`CREATE FUNCTION users_copy_visibility_to_repositories() RETURNS trigger LANGUAGE plpgsql AS $$
			BEGIN
				UPDATE repositories SET owner_visibility = NEW.visibility WHERE owner_id = NEW.id;
				RETURN NULL;
			END $$`,
			`CREATE TRIGGER users_visibility_to_repositories AFTER UPDATE OF visibility ON users
				FOR EACH ROW WHEN (OLD.visibility IS DISTINCT FROM NEW.visibility)
				EXECUTE FUNCTION users_copy_visibility_to_repositories()`)
	} else {
		const copyOwnerVisibility = `UPDATE repositories
			SET owner_visibility = (SELECT users.visibility FROM users WHERE users.id = NEW.owner_id)
			WHERE id = NEW.id;`
		stmts = append(stmts,
			`CREATE TRIGGER repositories_owner_visibility_insert AFTER INSERT ON repositories
			BEGIN `+copyOwnerVisibility+` END`,
			`CREATE TRIGGER repositories_owner_visibility_transfer AFTER UPDATE OF owner_id ON repositories
			WHEN OLD.owner_id IS NOT NEW.owner_id
			BEGIN `+copyOwnerVisibility+` END`,
			`CREATE TRIGGER users_visibility_to_repositories AFTER UPDATE OF visibility ON users
			WHEN OLD.visibility IS NOT NEW.visibility
			BEGIN
				UPDATE repositories SET owner_visibility = NEW.visibility WHERE owner_id = NEW.id;
			END`)
	}
	for _, stmt := range stmts {
		if err := tx.Exec(stmt).Error; err != nil {
			return err
		}
	}
	return nil
}
