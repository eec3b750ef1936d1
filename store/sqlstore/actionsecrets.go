package sqlstore

import (
	"context"
	"fmt"
	"time"

	"gorm.io/gorm"

	"repohost/store"
)

func (d *DB) ActionSecrets() store.ActionSecretStore     { return actionSecretStore{d} }
func (d *DB) ActionVariables() store.ActionVariableStore { return actionVariableStore{d} }

// actionSecretRow and actionVariableRow are the stored rows: the column of
// the scope a row does not belong to is NULL (migrateV31).
type actionSecretRow struct {
	ID          int64
	OwnerID     *int64
	RepoID      *int64
	Name        string
	Data        string // sealed
	Description string
	CreatedAt   time.Time
}

func (actionSecretRow) TableName() string { return "action_secrets" }

type actionVariableRow struct {
	ID          int64
	OwnerID     *int64
	RepoID      *int64
	Name        string
	Data        string
	Description string
	CreatedAt   time.Time
	UpdatedAt   time.Time
}

func (actionVariableRow) TableName() string { return "action_variables" }

// scopeColumns are the stored form of sc: exactly one of the two set.
func scopeColumns(sc store.ActionScope) (owner, repo *int64) {
	if sc.RepoID != 0 {
		id := sc.RepoID
		return nil, &id
	}
	id := sc.OwnerID
	return &id, nil
}

func scopeOf(owner, repo *int64) store.ActionScope {
	var sc store.ActionScope
	if owner != nil {
		sc.OwnerID = *owner
	}
	if repo != nil {
		sc.RepoID = *repo
	}
	return sc
}

// inScope filters db to sc's rows, through the scope's (column, name)
// index.
func inScope(db *gorm.DB, sc store.ActionScope) *gorm.DB {
	if sc.RepoID != 0 {
		return db.Where("repo_id = ?", sc.RepoID)
	}
	return db.Where("owner_id = ?", sc.OwnerID)
}

func checkScope(sc store.ActionScope) error {
	if (sc.RepoID == 0) == (sc.OwnerID == 0) {
		return fmt.Errorf("an actions scope needs exactly one of owner and repository: %w", store.ErrInvalid)
	}
	return nil
}

type actionSecretStore struct{ d *DB }

func (s actionSecretStore) Put(ctx context.Context, sec *store.ActionSecret, value string) (bool, error) {
	if err := checkScope(sec.Scope); err != nil {
		return false, err
	}
	sealed, err := s.d.secrets.Seal(value)
	if err != nil {
		return false, fmt.Errorf("seal an actions secret: %w", err)
	}
	created := false
	err = s.d.WithTx(ctx, func(ctx context.Context) error {
		db := s.d.conn(ctx)
		var row actionSecretRow
		err := inScope(db, sec.Scope).Where("name = ?", sec.Name).Take(&row).Error
		switch {
		case err == nil:
			res := db.Model(&actionSecretRow{}).Where("id = ?", row.ID).
				Updates(map[string]any{"data": sealed, "description": sec.Description})
			sec.ID, sec.CreatedAt = row.ID, row.CreatedAt
			return affected(res, "update actions secret")
		case err != gorm.ErrRecordNotFound:
			return translate(err, "find actions secret")
		}
		owner, repo := scopeColumns(sec.Scope)
		row = actionSecretRow{OwnerID: owner, RepoID: repo, Name: sec.Name, Data: sealed, Description: sec.Description, CreatedAt: s.d.clock.Now()}
		if err := db.Create(&row).Error; err != nil {
			return translate(err, "create actions secret")
		}
		sec.ID, sec.CreatedAt, created = row.ID, row.CreatedAt, true
		return nil
	})
	return created, err
}

func (s actionSecretStore) Delete(ctx context.Context, sc store.ActionScope, name string) error {
	if err := checkScope(sc); err != nil {
		return err
	}
	res := inScope(s.d.conn(ctx), sc).Where("name = ?", name).Delete(&actionSecretRow{})
	return affected(res, "delete actions secret")
}

func (s actionSecretStore) List(ctx context.Context, sc store.ActionScope, p store.Page) ([]*store.ActionSecret, int64, error) {
	if err := checkScope(sc); err != nil {
		return nil, 0, err
	}
	db := inScope(s.d.conn(ctx).Model(&actionSecretRow{}), sc)
	var total int64
	if err := db.Count(&total).Error; err != nil {
		return nil, 0, translate(err, "count actions secrets")
	}
	// The value stays in the database: a list never reads it.
	rows, err := readPage[actionSecretRow](db.Omit("data"), listOrder{{expr: "name"}}, p, total)
	if err != nil {
		return nil, 0, translate(err, "list actions secrets")
	}
	out := make([]*store.ActionSecret, len(rows))
	for i, r := range rows {
		out[i] = &store.ActionSecret{ID: r.ID, Scope: scopeOf(r.OwnerID, r.RepoID), Name: r.Name, Description: r.Description, CreatedAt: r.CreatedAt}
	}
	return out, total, nil
}

func (s actionSecretStore) ForRepo(ctx context.Context, ownerID, repoID int64) (map[string]string, error) {
	out := map[string]string{}
	// The owner's first, so the repository's own of a name win.
	for _, sc := range []store.ActionScope{{OwnerID: ownerID}, {RepoID: repoID}} {
		var rows []actionSecretRow
		if err := inScope(s.d.conn(ctx), sc).Select("id, name, data").Order("name").Find(&rows).Error; err != nil {
			return nil, translate(err, "read actions secrets")
		}
		for _, r := range rows {
			v, err := s.d.secrets.Open(r.Data)
			if err != nil {
				continue // sealed under another key: as if absent
			}
			out[r.Name] = v
		}
	}
	return out, nil
}

type actionVariableStore struct{ d *DB }

func variableOf(r *actionVariableRow) *store.ActionVariable {
	return &store.ActionVariable{ID: r.ID, Scope: scopeOf(r.OwnerID, r.RepoID), Name: r.Name, Data: r.Data,
		Description: r.Description, CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt}
}

func (s actionVariableStore) Create(ctx context.Context, v *store.ActionVariable) error {
	if err := checkScope(v.Scope); err != nil {
		return err
	}
	owner, repo := scopeColumns(v.Scope)
	now := s.d.clock.Now()
	row := actionVariableRow{OwnerID: owner, RepoID: repo, Name: v.Name, Data: v.Data, Description: v.Description, CreatedAt: now, UpdatedAt: now}
	if err := s.d.conn(ctx).Create(&row).Error; err != nil {
		return translate(err, "create actions variable")
	}
	v.ID, v.CreatedAt, v.UpdatedAt = row.ID, row.CreatedAt, row.UpdatedAt
	return nil
}

func (s actionVariableStore) Find(ctx context.Context, sc store.ActionScope, name string) (*store.ActionVariable, error) {
	if err := checkScope(sc); err != nil {
		return nil, err
	}
	var row actionVariableRow
	if err := inScope(s.d.conn(ctx), sc).Where("name = ?", name).Take(&row).Error; err != nil {
		return nil, translate(err, "find actions variable")
	}
	return variableOf(&row), nil
}

func (s actionVariableStore) Update(ctx context.Context, v *store.ActionVariable) error {
	v.UpdatedAt = s.d.clock.Now()
	res := s.d.conn(ctx).Model(&actionVariableRow{}).Where("id = ?", v.ID).
		Updates(map[string]any{"name": v.Name, "data": v.Data, "description": v.Description, "updated_at": v.UpdatedAt})
	return affected(res, "update actions variable")
}

func (s actionVariableStore) Delete(ctx context.Context, sc store.ActionScope, name string) error {
	if err := checkScope(sc); err != nil {
		return err
	}
	res := inScope(s.d.conn(ctx), sc).Where("name = ?", name).Delete(&actionVariableRow{})
	return affected(res, "delete actions variable")
}

func (s actionVariableStore) List(ctx context.Context, sc store.ActionScope, p store.Page) ([]*store.ActionVariable, int64, error) {
	if err := checkScope(sc); err != nil {
		return nil, 0, err
	}
	db := inScope(s.d.conn(ctx).Model(&actionVariableRow{}), sc)
	var total int64
	if err := db.Count(&total).Error; err != nil {
		return nil, 0, translate(err, "count actions variables")
	}
	rows, err := readPage[actionVariableRow](db, listOrder{{expr: "name"}}, p, total)
	if err != nil {
		return nil, 0, translate(err, "list actions variables")
	}
	out := make([]*store.ActionVariable, len(rows))
	for i, r := range rows {
		out[i] = variableOf(r)
	}
	return out, total, nil
}

func (s actionVariableStore) ForRepo(ctx context.Context, ownerID, repoID int64) (map[string]string, error) {
	out := map[string]string{}
	for _, sc := range []store.ActionScope{{OwnerID: ownerID}, {RepoID: repoID}} {
		var rows []actionVariableRow
		if err := inScope(s.d.conn(ctx), sc).Select("name, data").Order("name").Find(&rows).Error; err != nil {
			return nil, translate(err, "read actions variables")
		}
		for _, r := range rows {
			out[r.Name] = r.Data
		}
	}
	return out, nil
}
