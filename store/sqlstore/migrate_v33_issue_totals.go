package sqlstore

import (
	"fmt"

	"gorm.io/gorm"
)

// totalStripes is how many rows of repo_issue_totals share each class of
// repositories (see migrateV33): a repository's counters move its class's
// row of stripe id % totalStripes, so concurrent writes to repositories of
// different stripes do not wait for each other on one row.
const totalStripes = 64

// migrateV33 keeps, for each class of repositories a cross-repository
// issue search tells apart (private or not, by their owner's visibility),
// the sum of the issue counters of those whose issues it covers (issues
// on, no external tracker): repo_issue_totals, one row per class and
// stripe, moved by triggers on repositories in the statement (and so the
// transaction) that moves a counter, changes what decides a repository's
// class, inserts or deletes it. A search open to every public repository
// then counts its matches from at most a few hundred rows instead of
// reading every visible repository. The triggers add and subtract, so
// they do not depend on the order in which other triggers on repositories
// (the owner's visibility copied in, migrateV17) run.
func migrateV33(tx *gorm.DB) error {
	stmts := []string{
		`CREATE TABLE repo_issue_totals (
			is_private boolean NOT NULL,
			owner_visibility integer NOT NULL,
			stripe integer NOT NULL,
			num_issues bigint NOT NULL DEFAULT 0,
			num_closed_issues bigint NOT NULL DEFAULT 0,
			PRIMARY KEY (is_private, owner_visibility, stripe))`,
	}
	// Every row a trigger may move exists from the start (the
	// visibilities are store.Visibility's three).
	rows := ""
	for _, private := range []bool{false, true} {
		for v := 0; v <= 2; v++ {
			for s := 0; s < totalStripes; s++ {
				if rows != "" {
					rows += ", "
				}
				rows += fmt.Sprintf("(%t, %d, %d)", private, v, s)
			}
		}
	}
	stmts = append(stmts, "INSERT INTO repo_issue_totals (is_private, owner_visibility, stripe) VALUES "+rows)
	stmts = append(stmts, `UPDATE repo_issue_totals SET
		num_issues = (SELECT COALESCE(SUM(r.num_issues), 0) FROM repositories r`+totalsOfRow+`),
		num_closed_issues = (SELECT COALESCE(SUM(r.num_closed_issues), 0) FROM repositories r`+totalsOfRow+`)`)
	if tx.Dialector.Name() == "postgres" {
		stmts = append(stmts,
			fmt.Sprintf(`CREATE FUNCTION repo_issue_totals_follow() RETURNS trigger LANGUAGE plpgsql AS $$
			BEGIN
				IF TG_OP <> 'INSERT' THEN
					IF OLD.has_issues AND OLD.external_tracker_url = '' THEN
						UPDATE repo_issue_totals SET num_issues = num_issues - OLD.num_issues,
							num_closed_issues = num_closed_issues - OLD.num_closed_issues
						WHERE is_private = OLD.is_private AND owner_visibility = OLD.owner_visibility
							AND stripe = OLD.id %% %[1]d;
					END IF;
				END IF;
				IF TG_OP <> 'DELETE' THEN
					IF NEW.has_issues AND NEW.external_tracker_url = '' THEN
						UPDATE repo_issue_totals SET num_issues = num_issues + NEW.num_issues,
							num_closed_issues = num_closed_issues + NEW.num_closed_issues
						WHERE is_private = NEW.is_private AND owner_visibility = NEW.owner_visibility
							AND stripe = NEW.id %% %[1]d;
					END IF;
				END IF;
				RETURN NULL;
			END $$`, totalStripes),
			`CREATE TRIGGER repo_issue_totals_insert_delete AFTER INSERT OR DELETE ON repositories
				FOR EACH ROW EXECUTE FUNCTION repo_issue_totals_follow()`,
			`CREATE TRIGGER repo_issue_totals_update AFTER UPDATE OF `+totalsColumns+` ON repositories
				FOR EACH ROW WHEN (`+totalsChanged("IS DISTINCT FROM")+`)
				EXECUTE FUNCTION repo_issue_totals_follow()`)
	} else {
		sub := fmt.Sprintf(`UPDATE repo_issue_totals SET num_issues = num_issues - OLD.num_issues,
				num_closed_issues = num_closed_issues - OLD.num_closed_issues
			WHERE OLD.has_issues AND OLD.external_tracker_url = '' AND is_private = OLD.is_private
				AND owner_visibility = OLD.owner_visibility AND stripe = OLD.id %% %d;`, totalStripes)
		add := fmt.Sprintf(`UPDATE repo_issue_totals SET num_issues = num_issues + NEW.num_issues,
				num_closed_issues = num_closed_issues + NEW.num_closed_issues
			WHERE NEW.has_issues AND NEW.external_tracker_url = '' AND is_private = NEW.is_private
				AND owner_visibility = NEW.owner_visibility AND stripe = NEW.id %% %d;`, totalStripes)
		stmts = append(stmts,
			`CREATE TRIGGER repo_issue_totals_insert AFTER INSERT ON repositories BEGIN `+add+` END`,
			`CREATE TRIGGER repo_issue_totals_delete AFTER DELETE ON repositories BEGIN `+sub+` END`,
			`CREATE TRIGGER repo_issue_totals_update AFTER UPDATE OF `+totalsColumns+` ON repositories
				WHEN `+totalsChanged("IS NOT")+` BEGIN `+sub+add+` END`)
	}
	for _, stmt := range stmts {
		if err := tx.Exec(stmt).Error; err != nil {
			return err
		}
	}
	return nil
}

// totalsOfRow keeps, in a subquery over repositories r, those counted in
// the repo_issue_totals row being written.
var totalsOfRow = fmt.Sprintf(` WHERE r.has_issues AND r.external_tracker_url = ''
	AND r.is_private = repo_issue_totals.is_private AND r.owner_visibility = repo_issue_totals.owner_visibility
	AND r.id %% %d = repo_issue_totals.stripe`, totalStripes)

// totalsColumns are the columns of repositories repo_issue_totals follows.
const totalsColumns = "num_issues, num_closed_issues, is_private, owner_visibility, has_issues, external_tracker_url"

// totalsChanged is the trigger's condition: one of totalsColumns changed
// (distinct being the databases' IS DISTINCT FROM).
func totalsChanged(distinct string) string {
	s := ""
	for i, c := range []string{"num_issues", "num_closed_issues", "is_private", "owner_visibility", "has_issues", "external_tracker_url"} {
		if i > 0 {
			s += " OR "
		}
		s += "OLD." + c + " " + distinct + " NEW." + c
	}
	return s
}
