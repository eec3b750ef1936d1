package signing

import (
	"context"
	"strings"

	"github.com/ProtonMail/go-crypto/openpgp"
	"github.com/go-git/go-git/v6/plumbing/object"

	"repohost/store"
)

// The reference's reasons for a commit that is not verified.
const (
	ReasonNotSigned = "gpg.error.not_signed_commit"
	// ReasonExtractSign: the gpgsig header holds no readable signature.
	ReasonExtractSign = "gpg.error.extract_sign"
	// ReasonNoKey: no registered key (nor the instance key) has the
	// signature's key id.
	ReasonNoKey = "gpg.error.no_gpg_keys_found"
	// ReasonBadSignature: a key with the signature's id is known, but the
	// signature does not check out with it (or the key may not vouch).
	ReasonBadSignature = "gpg.error.probable_bad_signature"
)

// Verification is the verdict on one commit's signature.
type Verification struct {
	Verified bool
	// Reason is "<signer name> / <key id>" when verified, else one of the
	// Reason constants.
	Reason string
	// Signature is the commit's gpgsig header and Payload what it signs;
	// both empty for an unsigned commit.
	Signature string
	Payload   string
	// Signer is who vouches for a verified commit: the key's owner (User
	// set) or the instance (User nil).
	Signer *SignerInfo
}

// SignerInfo names the signer of a verified commit. Email is the
// instance's address, or the verified address of the user's key that
// vouched ("" when the key was proved by a signed token alone).
type SignerInfo struct {
	Name  string
	Email string
	User  *store.User
}

// Verifier judges commit signatures against the users' registered GPG
// keys and the instance key.
type Verifier struct {
	Store store.Store
	// Instance is the instance's signing key, nil when there is none.
	Instance *Signer
}

// signed is one signed commit on its way through Verify.
type signed struct {
	v       *Verification
	payload []byte
	keyID   string
}

// CommitSignature is the signature of c: its gpgsig header, or in a
// SHA-256 repository its gpgsig-sha256 one ("" when unsigned).
func CommitSignature(c *object.Commit) string {
	if c.Signature != "" {
		return c.Signature
	}
	return c.SignatureSHA256
}

// Verify judges commits, in a fixed number of statements whatever their
// number: the keys their signatures name are read at once, then those
// keys' owners. The result is in the order of commits.
func (v Verifier) Verify(ctx context.Context, commits []*object.Commit) ([]*Verification, error) {
	out := make([]*Verification, len(commits))
	var pending []*signed
	keyIDs := map[string]bool{}
	for i, c := range commits {
		signature := CommitSignature(c)
		if signature == "" {
			out[i] = &Verification{Reason: ReasonNotSigned}
			continue
		}
		payload, err := Payload(c)
		if err != nil {
			return nil, err
		}
		vr := &Verification{Signature: signature, Payload: string(payload)}
		out[i] = vr
		if strings.HasPrefix(strings.TrimSpace(signature), "-----BEGIN SSH SIGNATURE-----") {
			// SSH signatures are not checked by this server: no key of
			// ours can vouch for them.
			vr.Reason = ReasonNoKey
			continue
		}
		sig, err := ReadSignature(signature)
		if err != nil {
			vr.Reason = ReasonExtractSign
			continue
		}
		s := &signed{v: vr, payload: payload, keyID: IssuerKeyID(sig)}
		pending = append(pending, s)
		if s.keyID != "" {
			keyIDs[s.keyID] = true
		}
	}
	if len(pending) == 0 {
		return out, nil
	}
	keys, err := v.keysByID(ctx, keyIDs)
	if err != nil {
		return nil, err
	}
	owners, err := v.owners(ctx, keys)
	if err != nil {
		return nil, err
	}
	rings := map[string]openpgp.EntityList{}
	for _, s := range pending {
		s.v.Reason = ReasonNoKey
		if k := keys[s.keyID]; k != nil {
			s.v.Reason = ReasonBadSignature
			if owner := owners[k.OwnerID]; owner != nil && vouches(k) {
				ring, ok := rings[k.KeyID]
				if !ok {
					ring = keyRing(k)
					rings[k.KeyID] = ring
				}
				if ring != nil {
					if _, err := CheckDetached(ring, s.payload, s.v.Signature); err == nil {
						s.v.Verified = true
						s.v.Reason = owner.Name + " / " + s.keyID
						s.v.Signer = &SignerInfo{Name: owner.Name, Email: keyEmail(k), User: owner}
						continue
					}
				}
			}
		}
		if v.Instance != nil && v.Instance.has(s.keyID) {
			if _, err := CheckDetached(openpgp.EntityList{v.Instance.entity}, s.payload, s.v.Signature); err == nil {
				s.v.Verified = true
				s.v.Reason = v.Instance.Name + " / " + s.keyID
				s.v.Signer = &SignerInfo{Name: v.Instance.Name, Email: v.Instance.Email}
				continue
			}
			s.v.Reason = ReasonBadSignature
		}
	}
	return out, nil
}

// keysByID maps each key id (primary or subkey) to its primary key.
func (v Verifier) keysByID(ctx context.Context, ids map[string]bool) (map[string]*store.GPGKey, error) {
	out := map[string]*store.GPGKey{}
	if len(ids) == 0 {
		return out, nil
	}
	list := make([]string, 0, len(ids))
	for id := range ids {
		list = append(list, id)
	}
	keys, err := v.Store.Keys().FindGPGKeysByKeyIDs(ctx, list)
	if err != nil {
		return nil, err
	}
	for _, k := range keys {
		out[k.KeyID] = k
		for _, sub := range k.Subkeys {
			out[sub.KeyID] = k
		}
	}
	return out, nil
}

func (v Verifier) owners(ctx context.Context, keys map[string]*store.GPGKey) (map[int64]*store.User, error) {
	seen := map[int64]bool{}
	var ids []int64
	for _, k := range keys {
		if !seen[k.OwnerID] {
			seen[k.OwnerID] = true
			ids = append(ids, k.OwnerID)
		}
	}
	return v.Store.Users().FindByIDs(ctx, ids)
}

// vouches tells whether a registered key may verify commits: its owner
// proved holding it, or one of its addresses is an activated address of
// the owner, as in the reference.
func vouches(k *store.GPGKey) bool {
	if k.Verified {
		return true
	}
	for _, e := range k.Emails {
		if e.Verified {
			return true
		}
	}
	return false
}

// keyRing rebuilds a stored primary key from the armored key its row
// keeps (nil when it cannot be read).
func keyRing(k *store.GPGKey) openpgp.EntityList {
	ring, err := openpgp.ReadArmoredKeyRing(strings.NewReader(k.Armored))
	if err != nil {
		return nil
	}
	return ring
}

// keyEmail is the key's first verified address, "" when it has none.
func keyEmail(k *store.GPGKey) string {
	for _, e := range k.Emails {
		if e.Verified {
			return e.Email
		}
	}
	return ""
}
