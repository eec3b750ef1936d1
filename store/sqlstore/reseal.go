package sqlstore

import (
	"context"
	"fmt"

	"repohost/store/secretbox"
)

// sealedColumns lists every column kept sealed with the instance secret
// key: whatever seals a new column adds it here, so that Reseal (the key
// rotation) carries it to the next key. key is the table's integer
// primary key, which the rotation walks in order.
var sealedColumns = []struct{ table, key, column string }{
	{"webhooks", "id", "authorization_header"},
	{"action_secrets", "id", "data"},
	{"repo_mirrors", "id", "auth_secret"},
	{"push_mirrors", "id", "auth_secret"},
	{"repo_migrations", "repo_id", "auth_secret"},
}

// ResealCount is how many values Reseal carried to the new key, per
// "table.column".
type ResealCount map[string]int

// Reseal opens every sealed value with the database's key and seals it
// again with next, all in one transaction: either every value moves to
// next or none does. A value that does not open with the current key
// fails the rotation (it would be lost), naming its row. The caller then
// makes next the instance key; processes still holding the old key read
// the re-sealed values as unreadable until they restart with the new one.
func (d *DB) Reseal(ctx context.Context, next *secretbox.Box) (ResealCount, error) {
	if d.secrets == nil || next == nil {
		return nil, secretbox.ErrNoKey
	}
	count := ResealCount{}
	err := d.WithTx(ctx, func(ctx context.Context) error {
		db := d.conn(ctx)
		for _, c := range sealedColumns {
			const batch = 500
			for after := int64(0); ; {
				var rows []struct {
					ID    int64
					Value string
				}
				err := db.Table(c.table).Select(c.key+" AS id, "+c.column+" AS value").
					Where(c.key+" > ? AND "+c.column+" <> ''", after).Order(c.key).Limit(batch).Scan(&rows).Error
				if err != nil {
					return translate(err, "read "+c.table)
				}
				for _, r := range rows {
					plain, err := d.secrets.Open(r.Value)
					if err != nil {
						return fmt.Errorf("%s.%s of row %d: %w", c.table, c.column, r.ID, err)
					}
					sealed, err := next.Seal(plain)
					if err != nil {
						return err
					}
					if err := db.Table(c.table).Where(c.key+" = ?", r.ID).Update(c.column, sealed).Error; err != nil {
						return translate(err, "reseal "+c.table)
					}
					count[c.table+"."+c.column]++
					after = r.ID
				}
				if len(rows) < batch {
					break
				}
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return count, nil
}
