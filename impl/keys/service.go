package keys

import (
	"context"
	"errors"
	"strings"

	"github.com/ProtonMail/go-crypto/openpgp"

	"repohost/impl/apierr"
	"repohost/impl/app"
	"repohost/impl/events"
	"repohost/store"
)

// The reference's refusals.
const (
	MsgKeyUsed          = "Key content has been used as non-deploy key"
	MsgKeyTitleUsed     = "Key title has been used"
	MsgDeployKeyExists  = "This key has already been added to this repository"
	MsgDeployKeyNameUse = "A key with the same name already exists"
	MsgGPGKeyExists     = "A key with the same id already exists"
	msgGPGNoEmail       = "None of the emails attached to the GPG key could be found. It may still be added if you provide a valid signature for the token: "
	msgGPGBadSignature  = "The provided GPG key, signature and token do not match or token is out of date. Provide a valid signature for the token: "
)

// Service is the one writer of keys.
type Service struct {
	*app.Deps
}

func (s Service) emit(ctx context.Context, kind events.Kind, repoID, actorID int64, k events.Key) error {
	return s.Events.Emit(ctx, kind, repoID, actorID, k)
}

// AddPublicKey gives owner the SSH key content under title.
func (s Service) AddPublicKey(ctx context.Context, doer, owner *store.User, title, content string) (*store.PublicKey, error) {
	parsed, err := ParseSSHKey(content)
	if err != nil {
		return nil, apierr.Validation("Invalid key content: %v", err)
	}
	if err := s.fingerprintFree(ctx, parsed.Fingerprint, true); err != nil {
		return nil, err
	}
	k := &store.PublicKey{OwnerID: owner.ID, Name: strings.TrimSpace(title), Fingerprint: parsed.Fingerprint,
		Content: parsed.Line, CreatedAt: s.Clock.Now().UTC()}
	err = s.Store.WithTx(ctx, func(ctx context.Context) error {
		if err := s.Store.Keys().CreatePublicKey(ctx, k); err != nil {
			return err
		}
		return s.emit(ctx, events.KeyAdded, 0, doer.ID, events.Key{ID: k.ID, Type: "ssh", Name: k.Name, Fingerprint: k.Fingerprint, OwnerID: owner.ID})
	})
	if errors.Is(err, store.ErrDuplicate) {
		// Either the title or (a concurrent add of) the key itself.
		if _, ferr := s.Store.Keys().FindPublicKeyByFingerprint(ctx, k.Fingerprint); ferr == nil {
			return nil, apierr.Validation(MsgKeyUsed)
		}
		return nil, apierr.Validation(MsgKeyTitleUsed)
	}
	return k, err
}

// fingerprintFree refuses a key that is some user's key already, or,
// for a user key, some repository's deploy key: a key authenticates as
// exactly one thing.
func (s Service) fingerprintFree(ctx context.Context, fingerprint string, userKey bool) error {
	_, err := s.Store.Keys().FindPublicKeyByFingerprint(ctx, fingerprint)
	switch {
	case err == nil:
		return apierr.Validation(MsgKeyUsed)
	case !errors.Is(err, store.ErrNotFound):
		return err
	}
	if userKey {
		deploy, err := s.Store.Keys().FindDeployKeysByFingerprint(ctx, fingerprint)
		if err != nil {
			return err
		}
		if len(deploy) > 0 {
			return apierr.Validation(MsgKeyUsed)
		}
	}
	return nil
}

// DeletePublicKey removes owner's key id.
func (s Service) DeletePublicKey(ctx context.Context, doer, owner *store.User, id int64) error {
	return s.Store.WithTx(ctx, func(ctx context.Context) error {
		k, err := s.Store.Keys().FindPublicKey(ctx, owner.ID, id)
		if err != nil {
			return err
		}
		if err := s.Store.Keys().DeletePublicKey(ctx, owner.ID, id); err != nil {
			return err
		}
		return s.emit(ctx, events.KeyDeleted, 0, doer.ID, events.Key{ID: k.ID, Type: "ssh", Name: k.Name, Fingerprint: k.Fingerprint, OwnerID: owner.ID})
	})
}

// AddDeployKey gives repository r the key content under title.
func (s Service) AddDeployKey(ctx context.Context, doer *store.User, r *store.Repository, title, content string, readOnly bool) (*store.DeployKey, error) {
	parsed, err := ParseSSHKey(content)
	if err != nil {
		return nil, apierr.Validation("Invalid key content: %v", err)
	}
	if err := s.fingerprintFree(ctx, parsed.Fingerprint, false); err != nil {
		return nil, err
	}
	existing, _, err := s.Store.Keys().ListDeployKeys(ctx, r.ID, 0, parsed.Fingerprint, store.Page{Limit: 1})
	if err != nil {
		return nil, err
	}
	if len(existing) > 0 {
		return nil, apierr.Validation(MsgDeployKeyExists)
	}
	k := &store.DeployKey{RepoID: r.ID, Name: strings.TrimSpace(title), Fingerprint: parsed.Fingerprint,
		Content: parsed.Line, ReadOnly: readOnly, CreatedAt: s.Clock.Now().UTC()}
	err = s.Store.WithTx(ctx, func(ctx context.Context) error {
		if err := s.Store.Keys().CreateDeployKey(ctx, k); err != nil {
			return err
		}
		return s.emit(ctx, events.KeyAdded, r.ID, doer.ID, events.Key{ID: k.ID, Type: "deploy", Name: k.Name, Fingerprint: k.Fingerprint})
	})
	if errors.Is(err, store.ErrDuplicate) {
		return nil, apierr.Validation(MsgDeployKeyNameUse)
	}
	return k, err
}

// DeleteDeployKey removes r's deploy key id.
func (s Service) DeleteDeployKey(ctx context.Context, doer *store.User, r *store.Repository, id int64) error {
	return s.Store.WithTx(ctx, func(ctx context.Context) error {
		k, err := s.Store.Keys().FindDeployKey(ctx, r.ID, id)
		if err != nil {
			return err
		}
		if err := s.Store.Keys().DeleteDeployKey(ctx, r.ID, id); err != nil {
			return err
		}
		return s.emit(ctx, events.KeyDeleted, r.ID, doer.ID, events.Key{ID: k.ID, Type: "deploy", Name: k.Name, Fingerprint: k.Fingerprint})
	})
}

// activatedEmails is the set of u's activated addresses, lower-cased.
func (s Service) activatedEmails(ctx context.Context, u *store.User) (map[string]bool, error) {
	es, err := s.Store.Emails().ListByUser(ctx, u.ID)
	if err != nil {
		return nil, err
	}
	out := make(map[string]bool, len(es))
	for _, e := range es {
		if e.IsActivated {
			out[strings.ToLower(e.Email)] = true
		}
	}
	return out, nil
}

// AddGPGKey gives u the armored key. Without a signature one of the key's
// identities must be an activated address of u; with one, it must sign
// u's current token (the key is then verified).
func (s Service) AddGPGKey(ctx context.Context, u *store.User, armored, signature string) (*store.GPGKey, error) {
	now := s.Clock.Now()
	parsed, err := ParseGPGKey(armored, now)
	if err != nil {
		return nil, apierr.Validation("%s", err.Error())
	}
	ids := []uint64{parsed.Entity.PrimaryKey.KeyId}
	for _, sub := range parsed.Entity.Subkeys {
		ids = append(ids, sub.PublicKey.KeyId)
	}
	for _, id := range ids {
		_, err := s.Store.Keys().FindGPGKeyByKeyID(ctx, KeyIDString(id))
		if err == nil {
			return nil, apierr.Validation(MsgGPGKeyExists)
		}
		if !errors.Is(err, store.ErrNotFound) {
			return nil, err
		}
	}
	activated, err := s.activatedEmails(ctx, u)
	if err != nil {
		return nil, err
	}
	verified := false
	if strings.TrimSpace(signature) != "" {
		if !SignsToken(parsed.Entity, u, signature, now) {
			return nil, apierr.Validation("%s", msgGPGBadSignature+VerificationToken(u, now))
		}
		verified = true
	} else {
		matched := false
		for _, e := range parsed.Emails {
			matched = matched || activated[e]
		}
		if !matched {
			return nil, apierr.NotFound("%s", msgGPGNoEmail+VerificationToken(u, now))
		}
	}
	k, err := parsed.Rows(activated)
	if err != nil {
		return nil, apierr.Validation("invalid key: %v", err)
	}
	k.OwnerID, k.Verified, k.AddedAt = u.ID, verified, now.UTC()
	err = s.Store.WithTx(ctx, func(ctx context.Context) error {
		if err := s.Store.Keys().CreateGPGKey(ctx, k); err != nil {
			return err
		}
		return s.emit(ctx, events.KeyAdded, 0, u.ID, events.Key{ID: k.ID, Type: "gpg", Name: k.KeyID, OwnerID: u.ID})
	})
	if errors.Is(err, store.ErrDuplicate) {
		return nil, apierr.Validation(MsgGPGKeyExists)
	}
	return k, err
}

// VerifyGPGKey marks u's key keyID verified when signature signs u's
// current token.
func (s Service) VerifyGPGKey(ctx context.Context, u *store.User, keyID, signature string) (*store.GPGKey, error) {
	now := s.Clock.Now()
	k, err := s.Store.Keys().FindGPGKeyByKeyID(ctx, strings.ToUpper(strings.TrimSpace(keyID)))
	if errors.Is(err, store.ErrNotFound) || (err == nil && k.OwnerID != u.ID) {
		return nil, apierr.NotFound("GPG key %s not found", keyID)
	}
	if err != nil {
		return nil, err
	}
	list, err := openpgp.ReadArmoredKeyRing(strings.NewReader(k.Armored))
	if err != nil || len(list) != 1 {
		return nil, errors.Join(errors.New("stored gpg key unreadable"), err)
	}
	if !SignsToken(list[0], u, signature, now) {
		return nil, apierr.Validation("%s", msgGPGBadSignature+VerificationToken(u, now))
	}
	err = s.Store.WithTx(ctx, func(ctx context.Context) error {
		if err := s.Store.Keys().MarkGPGKeyVerified(ctx, u.ID, k.ID); err != nil {
			return err
		}
		return s.emit(ctx, events.KeyAdded, 0, u.ID, events.Key{ID: k.ID, Type: "gpg", Name: k.KeyID, OwnerID: u.ID})
	})
	k.Verified = true
	return k, err
}

// DeleteGPGKey removes u's key id and its subkeys.
func (s Service) DeleteGPGKey(ctx context.Context, u *store.User, id int64) error {
	return s.Store.WithTx(ctx, func(ctx context.Context) error {
		k, err := s.Store.Keys().FindGPGKey(ctx, u.ID, id)
		if errors.Is(err, store.ErrNotFound) {
			// As the reference: deleting a key the caller does not have
			// (another user's, or none) changes nothing and succeeds, so
			// the answer tells nothing about other users' keys either.
			return nil
		}
		if err != nil {
			return err
		}
		if err := s.Store.Keys().DeleteGPGKey(ctx, u.ID, id); err != nil {
			return err
		}
		return s.emit(ctx, events.KeyDeleted, 0, u.ID, events.Key{ID: k.ID, Type: "gpg", Name: k.KeyID, OwnerID: u.ID})
	})
}
