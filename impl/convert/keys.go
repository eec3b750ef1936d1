package convert

import (
	"strconv"

	"github.com/go-openapi/strfmt"

	"repohost/models"
	"repohost/store"
)

// PublicKey renders a user's SSH key. owner is nil when the caller is
// neither the key's owner nor a site admin: the reference then leaves out
// the user and the key type.
func PublicKey(base string, k *store.PublicKey, owner *models.User) *models.PublicKey {
	out := &models.PublicKey{
		ID:          k.ID,
		Key:         k.Content,
		URL:         base + "api/v1/user/keys/" + strconv.FormatInt(k.ID, 10),
		Title:       k.Name,
		Fingerprint: k.Fingerprint,
		Created:     strfmt.DateTime(k.CreatedAt),
		Updated:     Time(k.LastUsedAt),
	}
	if owner != nil {
		out.KeyType, out.User = "user", owner
	}
	return out
}

// DeployKey renders a repository's deploy key; the key stands for itself,
// so key_id is its own id.
func DeployKey(base string, k *store.DeployKey, repo *models.Repository) *models.DeployKey {
	return &models.DeployKey{
		ID:          k.ID,
		KeyID:       k.ID,
		Key:         k.Content,
		URL:         base + "api/v1/repos/" + repo.FullName + "/keys/" + strconv.FormatInt(k.ID, 10),
		Title:       k.Name,
		Fingerprint: k.Fingerprint,
		Created:     strfmt.DateTime(k.CreatedAt),
		ReadOnly:    k.ReadOnly,
		Repository:  repo,
	}
}

// GPGKey renders a GPG key with its subkeys.
func GPGKey(k *store.GPGKey) *models.GPGKey {
	out := &models.GPGKey{
		ID:                k.ID,
		KeyID:             k.KeyID,
		PrimaryKeyID:      k.PrimaryKeyID,
		PublicKey:         k.Content,
		CanSign:           k.CanSign,
		CanCertify:        k.CanCertify,
		CanEncryptComms:   k.CanEncryptComms,
		CanEncryptStorage: k.CanEncryptStorage,
		Created:           strfmt.DateTime(k.CreatedAt),
		Expires:           Time(k.ExpiresAt),
		Verified:          k.Verified,
		Emails:            make([]*models.GPGKeyEmail, 0, len(k.Emails)),
		SubsKey:           make([]*models.GPGKey, 0, len(k.Subkeys)),
	}
	for _, e := range k.Emails {
		out.Emails = append(out.Emails, &models.GPGKeyEmail{Email: e.Email, Verified: e.Verified})
	}
	for _, sub := range k.Subkeys {
		out.SubsKey = append(out.SubsKey, GPGKey(sub))
	}
	return out
}
