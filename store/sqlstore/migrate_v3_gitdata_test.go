package sqlstore

import (
	"context"
	"testing"
	"time"

	"repohost/store"
	"repohost/store/sqlstore/sqltest"
)

// TestMigrateV3OwnersTeams applies the steps before 3, adds organizations
// the old way (no teams), then step 3: each organization, and only they,
// gets an owners team like the one new organizations get.
func TestMigrateV3OwnersTeams(t *testing.T) {
	db, err := Open(sqltest.DSN(t, ""), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, m := range migrations {
		if m.version >= 3 {
			break
		}
		if err := db.gorm.Transaction(m.up); err != nil {
			t.Fatalf("migration %d: %v", m.version, err)
		}
	}
	now := time.Now().UTC()
	for _, u := range []struct {
		name string
		typ  int
	}{{"acme", 1}, {"bob", 0}, {"globex", 1}} {
		err := db.gorm.Exec(`INSERT INTO users (name, lower_name, type, created_at, updated_at) VALUES (?, ?, ?, ?, ?)`,
			u.name, u.name, u.typ, now, now).Error
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := db.gorm.Transaction(migrateV3); err != nil {
		t.Fatalf("migration 3: %v", err)
	}
	ctx := context.Background()
	for _, name := range []string{"acme", "globex"} {
		org, err := db.Users().FindByName(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		migrated, err := db.Teams().FindByName(ctx, org.ID, "owners")
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		// The team a new organization gets, for comparison.
		fresh := int64(1000 + org.ID)
		if err := db.gorm.Exec(`INSERT INTO users (id, name, lower_name, type, created_at, updated_at) VALUES (?, ?, ?, 1, ?, ?)`,
			fresh, name+"-new", name+"-new", now, now).Error; err != nil {
			t.Fatal(err)
		}
		if err := db.Teams().CreateOwnersTeam(ctx, fresh); err != nil {
			t.Fatal(err)
		}
		created, err := db.Teams().FindByName(ctx, fresh, "Owners")
		if err != nil {
			t.Fatal(err)
		}
		if migrated.Name != store.OwnersTeamName || !migrated.IsOwnersTeam() || migrated.Permission != created.Permission ||
			migrated.IncludesAllRepositories != created.IncludesAllRepositories || migrated.CanCreateOrgRepo != created.CanCreateOrgRepo ||
			migrated.Visibility != created.Visibility || len(migrated.Units) != len(created.Units) {
			t.Fatalf("%s: migrated %+v, created %+v", name, migrated, created)
		}
		for unit, mode := range created.Units {
			if migrated.Units[unit] != mode {
				t.Fatalf("%s: unit %s is %q after migration, %q on creation", name, unit, migrated.Units[unit], mode)
			}
		}
	}
	var n int64
	if err := db.gorm.Table("teams").Count(&n).Error; err != nil || n != 4 {
		t.Fatalf("teams: %d (%v)", n, err)
	}
}
