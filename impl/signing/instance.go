package signing

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/ProtonMail/go-crypto/openpgp"
	"github.com/ProtonMail/go-crypto/openpgp/packet"
	"github.com/go-git/go-git/v6/plumbing/object"

	"repohost/store"
)

// Signer is the instance's own OpenPGP key (the reference's
// [repository.signing] SIGNING_KEY): the commits the server writes are
// signed with it, and commits it signed are reported verified with the
// instance as signer.
type Signer struct {
	entity *openpgp.Entity
	// Name and Email are the key's primary identity, shown as the signer.
	Name  string
	Email string
	// KeyID is the primary key's id.
	KeyID string
	clock store.Clock
}

// LoadSigner reads an armored OpenPGP private key from path.
func LoadSigner(path string, clock store.Clock) (*Signer, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return ParseSigner(b, clock)
}

// ParseSigner reads an armored OpenPGP private key. The key must be
// usable for signing and not protected by a passphrase: the server signs
// unattended, and able to sign now; clock dates its signatures.
func ParseSigner(armored []byte, clock store.Clock) (*Signer, error) {
	list, err := openpgp.ReadArmoredKeyRing(bytes.NewReader(armored))
	if err != nil {
		return nil, fmt.Errorf("signing key: %w", err)
	}
	if len(list) != 1 {
		return nil, fmt.Errorf("signing key: want exactly one key, found %d", len(list))
	}
	e := list[0]
	if e.PrivateKey == nil {
		return nil, errors.New("signing key: not a private key")
	}
	if e.PrivateKey.Encrypted {
		return nil, errors.New("signing key: protected by a passphrase; export it without one")
	}
	for _, sub := range e.Subkeys {
		if sub.PrivateKey != nil && sub.PrivateKey.Encrypted {
			return nil, errors.New("signing key: a subkey is protected by a passphrase; export it without one")
		}
	}
	if _, ok := e.SigningKey(clock.Now()); !ok {
		return nil, errors.New("signing key: no key that may sign (expired, revoked or lacking the flag)")
	}
	s := &Signer{entity: e, KeyID: KeyIDString(e.PrimaryKey.KeyId), clock: clock}
	if id := e.PrimaryIdentity(); id != nil && id.UserId != nil {
		s.Name, s.Email = id.UserId.Name, id.UserId.Email
	}
	if s.Name == "" {
		s.Name = "repohost"
	}
	return s, nil
}

// SignCommit is the armored detached signature, made at at, of a commit's
// payload (see Payload), for its gpgsig header. The signature carries the
// real time rather than the commit's dates, which a writer may set in the
// past, before the key existed.
func (s *Signer) SignCommit(payload []byte, at time.Time) (string, error) {
	var out bytes.Buffer
	if err := openpgp.ArmoredDetachSign(&out, s.entity, bytes.NewReader(payload), &packet.Config{Time: func() time.Time { return at }}); err != nil {
		return "", err
	}
	return out.String() + "\n", nil
}

// Sign gives c a signature by s made now (c must not have one yet); it is
// the gitstore.CommitSigner of the commits the server writes.
func (s *Signer) Sign(c *object.Commit) error {
	payload, err := Payload(c)
	if err != nil {
		return err
	}
	sig, err := s.SignCommit(payload, s.clock.Now())
	if err != nil {
		return err
	}
	if c.TreeHash.Size() == 32 {
		// A SHA-256 repository's commits carry their signature in
		// gpgsig-sha256, as git writes and reads it.
		c.SignatureSHA256 = sig
		return nil
	}
	c.Signature = sig
	return nil
}

// has tells whether keyID is the id of s's primary key or of a subkey.
func (s *Signer) has(keyID string) bool {
	if keyID == s.KeyID {
		return true
	}
	for _, sub := range s.entity.Subkeys {
		if KeyIDString(sub.PublicKey.KeyId) == keyID {
			return true
		}
	}
	return false
}
