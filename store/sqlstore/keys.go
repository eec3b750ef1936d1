package sqlstore

import (
	"context"
	"time"

	"repohost/store"
)

type keyStore struct{ d *DB }

func (d *DB) Keys() store.KeyStore { return keyStore{d} }

func (s keyStore) CreatePublicKey(ctx context.Context, k *store.PublicKey) error {
	return translate(s.d.conn(ctx).Create(k).Error, "create public key")
}

func (s keyStore) FindPublicKey(ctx context.Context, ownerID, id int64) (*store.PublicKey, error) {
	var k store.PublicKey
	if err := s.d.conn(ctx).Where("owner_id = ? AND id = ?", ownerID, id).Take(&k).Error; err != nil {
		return nil, translate(err, "find public key")
	}
	return &k, nil
}

func (s keyStore) FindPublicKeyByFingerprint(ctx context.Context, fingerprint string) (*store.PublicKey, error) {
	var k store.PublicKey
	if err := s.d.conn(ctx).Where("fingerprint = ?", fingerprint).Take(&k).Error; err != nil {
		return nil, translate(err, "find public key")
	}
	return &k, nil
}

func (s keyStore) ListPublicKeys(ctx context.Context, ownerID int64, fingerprint string, p store.Page) ([]*store.PublicKey, int64, error) {
	db := s.d.conn(ctx).Model(&store.PublicKey{}).Where("owner_id = ?", ownerID)
	if fingerprint != "" {
		db = db.Where("fingerprint = ?", fingerprint)
	}
	var total int64
	if err := db.Count(&total).Error; err != nil {
		return nil, 0, translate(err, "count public keys")
	}
	out, err := readPage[store.PublicKey](db, listOrder{{"public_keys.id", true}}, p, total)
	return out, total, translate(err, "list public keys")
}

func (s keyStore) DeletePublicKey(ctx context.Context, ownerID, id int64) error {
	res := s.d.conn(ctx).Where("owner_id = ? AND id = ?", ownerID, id).Delete(&store.PublicKey{})
	if res.Error == nil && res.RowsAffected == 0 {
		return store.ErrNotFound
	}
	return translate(res.Error, "delete public key")
}

func (s keyStore) TouchPublicKey(ctx context.Context, id int64, at time.Time) error {
	return translate(s.d.conn(ctx).Model(&store.PublicKey{}).Where("id = ?", id).Update("last_used_at", at).Error, "touch public key")
}

func (s keyStore) CreateDeployKey(ctx context.Context, k *store.DeployKey) error {
	return translate(s.d.conn(ctx).Create(k).Error, "create deploy key")
}

func (s keyStore) FindDeployKey(ctx context.Context, repoID, id int64) (*store.DeployKey, error) {
	var k store.DeployKey
	if err := s.d.conn(ctx).Where("repo_id = ? AND id = ?", repoID, id).Take(&k).Error; err != nil {
		return nil, translate(err, "find deploy key")
	}
	return &k, nil
}

func (s keyStore) FindDeployKeysByFingerprint(ctx context.Context, fingerprint string) ([]*store.DeployKey, error) {
	var out []*store.DeployKey
	err := s.d.conn(ctx).Where("fingerprint = ?", fingerprint).Order("id").Find(&out).Error
	return out, translate(err, "find deploy keys")
}

func (s keyStore) ListDeployKeys(ctx context.Context, repoID, keyID int64, fingerprint string, p store.Page) ([]*store.DeployKey, int64, error) {
	db := s.d.conn(ctx).Model(&store.DeployKey{}).Where("repo_id = ?", repoID)
	if keyID != 0 {
		db = db.Where("id = ?", keyID)
	}
	if fingerprint != "" {
		db = db.Where("fingerprint = ?", fingerprint)
	}
	var total int64
	if err := db.Count(&total).Error; err != nil {
		return nil, 0, translate(err, "count deploy keys")
	}
	out, err := readPage[store.DeployKey](db, listOrder{{"deploy_keys.id", true}}, p, total)
	return out, total, translate(err, "list deploy keys")
}

func (s keyStore) DeleteDeployKey(ctx context.Context, repoID, id int64) error {
	res := s.d.conn(ctx).Where("repo_id = ? AND id = ?", repoID, id).Delete(&store.DeployKey{})
	if res.Error == nil && res.RowsAffected == 0 {
		return store.ErrNotFound
	}
	return translate(res.Error, "delete deploy key")
}

func (s keyStore) CreateGPGKey(ctx context.Context, k *store.GPGKey) error {
	return s.d.WithTx(ctx, func(ctx context.Context) error {
		db := s.d.conn(ctx)
		if k.Emails == nil {
			k.Emails = []store.GPGKeyEmail{}
		}
		if err := db.Create(k).Error; err != nil {
			return translate(err, "create gpg key")
		}
		for _, sub := range k.Subkeys {
			sub.OwnerID, sub.PrimaryKeyID = k.OwnerID, k.KeyID
			if sub.Emails == nil {
				sub.Emails = []store.GPGKeyEmail{}
			}
			if err := db.Create(sub).Error; err != nil {
				return translate(err, "create gpg subkey")
			}
		}
		return nil
	})
}

// withSubkeys loads the subkeys of keys in one statement.
func (s keyStore) withSubkeys(ctx context.Context, ownerID int64, keys []*store.GPGKey) error {
	if len(keys) == 0 {
		return nil
	}
	ids := make([]string, len(keys))
	byID := make(map[string]*store.GPGKey, len(keys))
	for i, k := range keys {
		ids[i] = k.KeyID
		byID[k.KeyID] = k
		k.Subkeys = []*store.GPGKey{}
	}
	var subs []*store.GPGKey
	if err := s.d.conn(ctx).Where("owner_id = ? AND primary_key_id IN ?", ownerID, ids).Order("id").Find(&subs).Error; err != nil {
		return translate(err, "list gpg subkeys")
	}
	for _, sub := range subs {
		if k := byID[sub.PrimaryKeyID]; k != nil {
			sub.Subkeys = []*store.GPGKey{}
			k.Subkeys = append(k.Subkeys, sub)
		}
	}
	return nil
}

func (s keyStore) FindGPGKey(ctx context.Context, ownerID, id int64) (*store.GPGKey, error) {
	var k store.GPGKey
	if err := s.d.conn(ctx).Where("owner_id = ? AND id = ? AND primary_key_id = ''", ownerID, id).Take(&k).Error; err != nil {
		return nil, translate(err, "find gpg key")
	}
	return &k, s.withSubkeys(ctx, ownerID, []*store.GPGKey{&k})
}

func (s keyStore) FindGPGKeyByKeyID(ctx context.Context, keyID string) (*store.GPGKey, error) {
	var k store.GPGKey
	if err := s.d.conn(ctx).Where("key_id = ?", keyID).Take(&k).Error; err != nil {
		return nil, translate(err, "find gpg key")
	}
	if k.PrimaryKeyID != "" {
		if err := s.d.conn(ctx).Where("key_id = ?", k.PrimaryKeyID).Take(&k).Error; err != nil {
			return nil, translate(err, "find gpg key")
		}
	}
	return &k, s.withSubkeys(ctx, k.OwnerID, []*store.GPGKey{&k})
}

func (s keyStore) FindGPGKeysByKeyIDs(ctx context.Context, keyIDs []string) ([]*store.GPGKey, error) {
	if len(keyIDs) == 0 {
		return nil, nil
	}
	var hits []*store.GPGKey
	if err := s.d.conn(ctx).Select("owner_id", "key_id", "primary_key_id").Where("key_id IN ?", keyIDs).Find(&hits).Error; err != nil {
		return nil, translate(err, "find gpg keys")
	}
	if len(hits) == 0 {
		return nil, nil
	}
	seen := map[string]bool{}
	var primaries []string
	var owners []int64
	for _, h := range hits {
		owners = append(owners, h.OwnerID)
		id := h.KeyID
		if h.PrimaryKeyID != "" {
			id = h.PrimaryKeyID
		}
		if !seen[id] {
			seen[id] = true
			primaries = append(primaries, id)
		}
	}
	// The primary keys and their subkeys in one statement, each part
	// served by an index (key_id; owner_id and primary_key_id).
	var rows []*store.GPGKey
	if err := s.d.conn(ctx).Where("key_id IN ? OR (owner_id IN ? AND primary_key_id IN ?)", primaries, owners, primaries).Find(&rows).Error; err != nil {
		return nil, translate(err, "find gpg keys")
	}
	byID := map[string]*store.GPGKey{}
	var out []*store.GPGKey
	for _, r := range rows {
		if r.PrimaryKeyID == "" {
			r.Subkeys = []*store.GPGKey{}
			byID[r.KeyID] = r
			out = append(out, r)
		}
	}
	for _, r := range rows {
		if k := byID[r.PrimaryKeyID]; k != nil && r.PrimaryKeyID != "" {
			r.Subkeys = []*store.GPGKey{}
			k.Subkeys = append(k.Subkeys, r)
		}
	}
	return out, nil
}

func (s keyStore) ListGPGKeys(ctx context.Context, ownerID int64, p store.Page) ([]*store.GPGKey, int64, error) {
	db := s.d.conn(ctx).Model(&store.GPGKey{}).Where("owner_id = ? AND primary_key_id = ''", ownerID)
	var total int64
	if err := db.Count(&total).Error; err != nil {
		return nil, 0, translate(err, "count gpg keys")
	}
	out, err := readPage[store.GPGKey](db, listOrder{{"gpg_keys.id", true}}, p, total)
	if err != nil {
		return nil, 0, translate(err, "list gpg keys")
	}
	return out, total, s.withSubkeys(ctx, ownerID, out)
}

func (s keyStore) DeleteGPGKey(ctx context.Context, ownerID, id int64) error {
	return s.d.WithTx(ctx, func(ctx context.Context) error {
		db := s.d.conn(ctx)
		var k store.GPGKey
		if err := db.Where("owner_id = ? AND id = ? AND primary_key_id = ''", ownerID, id).Take(&k).Error; err != nil {
			return translate(err, "find gpg key")
		}
		if err := db.Where("owner_id = ? AND primary_key_id = ?", ownerID, k.KeyID).Delete(&store.GPGKey{}).Error; err != nil {
			return translate(err, "delete gpg subkeys")
		}
		return translate(db.Delete(&store.GPGKey{}, k.ID).Error, "delete gpg key")
	})
}

func (s keyStore) MarkGPGKeyVerified(ctx context.Context, ownerID, id int64) error {
	res := s.d.conn(ctx).Model(&store.GPGKey{}).Where("owner_id = ? AND id = ? AND primary_key_id = ''", ownerID, id).Update("verified", true)
	if res.Error == nil && res.RowsAffected == 0 {
		return store.ErrNotFound
	}
	return translate(res.Error, "verify gpg key")
}
