package sqlstore

import (
	"fmt"

	"gorm.io/gorm"

	"repohost/store"
)

// The class of a repository, as a cross-repository issue search tells
// them apart (the classes of repo_issue_totals, migrateV33, plus one for
// repositories whose issues no search covers). Every issue carries its
// repository's class (issues.repo_class, migrateV42), so that the issues
// of the classes a viewer sees wholesale are read, newest first, from one
// index range per class, never stepping over issues the viewer may not
// see (see acrossPage).
const (
	classPublic  = 0 // a public repository of a public owner
	classLimited = 1 // a public repository of a limited owner
	classHidden  = 2 // a public repository of a private owner
	classPrivate = 3 // a private repository
	classOff     = 4 // issues off, or kept by an external tracker
)

// searchedClasses are the classes whose issues a search may return.
var searchedClasses = []int{classPublic, classLimited, classHidden, classPrivate}

// repoClassOf is the class of the repository row r (a table alias, or
// OLD/NEW in a trigger) as an SQL expression. It restates searchable (the
// issue tracker on, not external) and the columns visibilityOf's open part
// reads (is_private, owner_visibility); openClasses checks the latter
// against that rule rather than repeating it.
func repoClassOf(r string) string {
	return fmt.Sprintf(`(CASE WHEN NOT (%[1]s.has_issues AND %[1]s.external_tracker_url = '') THEN %[2]d
		WHEN %[1]s.is_private THEN %[3]d
		WHEN %[1]s.owner_visibility = %[4]d THEN %[5]d
		WHEN %[1]s.owner_visibility = %[6]d THEN %[7]d
		ELSE %[8]d END)`, r, classOff, classPrivate, store.VisibilityPublic, classPublic, store.VisibilityLimited, classLimited, classHidden)
}

// migrateV42 copies onto every issue its repository's class, kept by
// triggers: an inserted issue (or one moved to another repository) takes
// its repository's class, and a repository whose class changes (made
// private or public, its owner's visibility copied in by migrateV17's
// trigger, its issue tracker turned off) re-classes its issues in the
// same statement, and so the same transaction. The index puts each class's
// issues of a state and a type in the order of every issue list.
func migrateV42(tx *gorm.DB) error {
	stmts := []string{
		// Until its trigger has run, an issue is of the class that only
		// the given part of the rule (per repository) reaches.
		fmt.Sprintf(`ALTER TABLE issues ADD COLUMN repo_class integer NOT NULL DEFAULT %d`, classPrivate),
		`UPDATE issues SET repo_class = COALESCE((SELECT ` + repoClassOf("r") + ` FROM repositories r WHERE r.id = issues.repo_id), ` +
			fmt.Sprint(classOff) + `)`,
		`CREATE INDEX idx_issues_class_closed_pull_created ON issues (repo_class, is_closed, is_pull, created_at, id)`,
	}
	changed := repoClassOf("OLD") + " <> " + repoClassOf("NEW")
	if tx.Dialector.Name() == "postgres" {
		stmts = append(stmts,
			`CREATE FUNCTION issues_take_repo_class() RETURNS trigger LANGUAGE plpgsql AS $$
			BEGIN
				NEW.repo_class := COALESCE((SELECT `+repoClassOf("r")+` FROM repositories r WHERE r.id = NEW.repo_id), `+fmt.Sprint(classOff)+`);
				RETURN NEW;
			END $$`,
			`CREATE TRIGGER issues_repo_class_insert BEFORE INSERT ON issues
				FOR EACH ROW EXECUTE FUNCTION issues_take_repo_class()`,
			`CREATE TRIGGER issues_repo_class_move BEFORE UPDATE OF repo_id ON issues
				FOR EACH ROW WHEN (OLD.repo_id IS DISTINCT FROM NEW.repo_id) EXECUTE FUNCTION issues_take_repo_class()`,
			`CREATE FUNCTION repositories_reclass_issues() RETURNS trigger LANGUAGE plpgsql AS $$
			BEGIN
				UPDATE issues SET repo_class = `+repoClassOf("NEW")+` WHERE repo_id = NEW.id;
				RETURN NULL;
			END $$`,
			`CREATE TRIGGER repositories_reclass_issues AFTER UPDATE OF is_private, owner_visibility, has_issues, external_tracker_url
				ON repositories FOR EACH ROW WHEN (`+changed+`) EXECUTE FUNCTION repositories_reclass_issues()`)
	} else {
		take := `UPDATE issues SET repo_class = COALESCE((SELECT ` + repoClassOf("r") + ` FROM repositories r WHERE r.id = NEW.repo_id), ` +
			fmt.Sprint(classOff) + `) WHERE id = NEW.id;`
		stmts = append(stmts,
			`CREATE TRIGGER issues_repo_class_insert AFTER INSERT ON issues BEGIN `+take+` END`,
			`CREATE TRIGGER issues_repo_class_move AFTER UPDATE OF repo_id ON issues
				WHEN OLD.repo_id IS NOT NEW.repo_id BEGIN `+take+` END`,
			`CREATE TRIGGER repositories_reclass_issues AFTER UPDATE OF is_private, owner_visibility, has_issues, external_tracker_url
				ON repositories WHEN `+changed+` BEGIN
				UPDATE issues SET repo_class = `+repoClassOf("NEW")+` WHERE repo_id = NEW.id; END`)
	}
	for _, stmt := range stmts {
		if err := tx.Exec(stmt).Error; err != nil {
			return err
		}
	}
	return nil
}
