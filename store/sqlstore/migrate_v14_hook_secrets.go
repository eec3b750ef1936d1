package sqlstore

import (
	"context"
	"fmt"

	"gorm.io/gorm"

	"repohost/store/secretbox"
)

// secretsKey carries the instance key to the migrations that seal
// columns (Migrate puts it in the context of each step's transaction).
type secretsKey struct{}

func secretsOf(tx *gorm.DB) *secretbox.Box {
	if tx.Statement == nil || tx.Statement.Context == nil {
		return nil
	}
	b, _ := tx.Statement.Context.Value(secretsKey{}).(*secretbox.Box)
	return b
}

func withSecrets(ctx context.Context, b *secretbox.Box) context.Context {
	return context.WithValue(ctx, secretsKey{}, b)
}

// migrateV14 seals the authorization headers of existing webhooks, which
// earlier versions kept in clear, with the instance secret key. A
// database with such headers cannot be migrated without the key.
func migrateV14(tx *gorm.DB) error {
	type row struct {
		ID                  int64
		AuthorizationHeader string
	}
	var rows []row
	if err := tx.Table("webhooks").Select("id, authorization_header").
		Where("authorization_header <> ''").Order("id").Scan(&rows).Error; err != nil {
		return err
	}
	box := secretsOf(tx)
	for _, r := range rows {
		if secretbox.IsSealed(r.AuthorizationHeader) {
			continue
		}
		sealed, err := box.Seal(r.AuthorizationHeader)
		if err != nil {
			return fmt.Errorf("seal the authorization header of webhook %d: %w", r.ID, err)
		}
		if err := tx.Table("webhooks").Where("id = ?", r.ID).Update("authorization_header", sealed).Error; err != nil {
			return err
		}
	}
	return nil
}
