package keys

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/ProtonMail/go-crypto/openpgp"
	"github.com/ProtonMail/go-crypto/openpgp/armor"
	"github.com/ProtonMail/go-crypto/openpgp/packet"

	"repohost/impl/signing"
	"repohost/store"
)

// ParsedGPGKey is an uploaded OpenPGP public key, checked.
type ParsedGPGKey struct {
	Entity  *openpgp.Entity
	Armored string
	// Emails are the addresses of the identities that are not revoked,
	// lower-cased, in the key's order.
	Emails []string
}

// ParseGPGKey reads one armored OpenPGP public key. The error text is
// the API's 422 message: the armor or packets cannot be read, the block
// is a private key, it holds no or several keys, or the key has expired
// or been revoked (at now).
func ParseGPGKey(armored string, now time.Time) (*ParsedGPGKey, error) {
	block, err := armor.Decode(strings.NewReader(strings.TrimSpace(armored)))
	if err != nil {
		return nil, fmt.Errorf("invalid armored key: %v", err)
	}
	if block.Type != openpgp.PublicKeyType {
		return nil, fmt.Errorf("not a public key: the armor is a %q block", block.Type)
	}
	list, err := openpgp.ReadKeyRing(block.Body)
	if err != nil {
		return nil, fmt.Errorf("invalid key: %v", err)
	}
	if len(list) != 1 {
		return nil, fmt.Errorf("the armor must hold exactly one key, it holds %d", len(list))
	}
	e := list[0]
	if e.PrivateKey != nil {
		return nil, errors.New("not a public key: it holds private key material")
	}
	if e.Revoked(now) {
		return nil, errors.New("the key has been revoked")
	}
	if exp := expiry(e); exp != nil && !exp.After(now) {
		return nil, fmt.Errorf("the key expired on %s", exp.UTC().Format(time.RFC3339))
	}
	p := &ParsedGPGKey{Entity: e, Armored: strings.TrimSpace(armored) + "\n"}
	seen := map[string]bool{}
	for _, id := range e.Identities {
		if id.Revoked(now) || id.UserId == nil {
			continue
		}
		email := strings.ToLower(strings.TrimSpace(id.UserId.Email))
		if email != "" && !seen[email] {
			seen[email] = true
			p.Emails = append(p.Emails, email)
		}
	}
	return p, nil
}

// expiry is when the primary key expires, nil when never.
func expiry(e *openpgp.Entity) *time.Time {
	sig, _ := e.PrimarySelfSignature()
	if sig == nil || sig.KeyLifetimeSecs == nil || *sig.KeyLifetimeSecs == 0 {
		return nil
	}
	t := e.PrimaryKey.CreationTime.Add(time.Duration(*sig.KeyLifetimeSecs) * time.Second)
	return &t
}

// KeyIDString is the 16-hex-digit upper-case key id the API shows.
func KeyIDString(id uint64) string { return signing.KeyIDString(id) }

func packetContent(pk *packet.PublicKey) (string, error) {
	var b bytes.Buffer
	if err := pk.Serialize(&b); err != nil {
		return "", err
	}
	return base64.StdEncoding.EncodeToString(b.Bytes()), nil
}

func keyRow(pk *packet.PublicKey, exp *time.Time) (*store.GPGKey, error) {
	content, err := packetContent(pk)
	if err != nil {
		return nil, err
	}
	return &store.GPGKey{
		KeyID:   KeyIDString(pk.KeyId),
		Content: content,
		// The reference reports what the algorithm can do, and mirrors
		// signing as certification.
		CanSign:           pk.CanSign(),
		CanCertify:        pk.CanSign(),
		CanEncryptComms:   pk.PubKeyAlgo.CanEncrypt(),
		CanEncryptStorage: pk.PubKeyAlgo.CanEncrypt(),
		CreatedAt:         pk.CreationTime.UTC(),
		ExpiresAt:         exp,
		Emails:            []store.GPGKeyEmail{},
	}, nil
}

// Rows builds the stored form of p: the primary key with its subkeys;
// emails in verified are marked verified.
func (p *ParsedGPGKey) Rows(verified map[string]bool) (*store.GPGKey, error) {
	exp := expiry(p.Entity)
	k, err := keyRow(p.Entity.PrimaryKey, exp)
	if err != nil {
		return nil, err
	}
	k.Armored = p.Armored
	for _, e := range p.Emails {
		k.Emails = append(k.Emails, store.GPGKeyEmail{Email: e, Verified: verified[e]})
	}
	k.Subkeys = []*store.GPGKey{}
	for _, sub := range p.Entity.Subkeys {
		subExp := exp
		if sub.Sig != nil && sub.Sig.KeyLifetimeSecs != nil && *sub.Sig.KeyLifetimeSecs != 0 {
			t := sub.PublicKey.CreationTime.Add(time.Duration(*sub.Sig.KeyLifetimeSecs) * time.Second)
			subExp = &t
		}
		row, err := keyRow(sub.PublicKey, subExp)
		if err != nil {
			return nil, err
		}
		k.Subkeys = append(k.Subkeys, row)
	}
	return k, nil
}

// VerificationToken is the token a user's key signs to prove the user
// holds it: it changes every minute and names the account, so a
// signature made for one user or one minute does not serve another.
func VerificationToken(u *store.User, now time.Time) string {
	emailAddr := u.Email
	s := strings.Join([]string{
		now.UTC().Truncate(time.Minute).Format(time.RFC1123Z),
		u.CreatedAt.UTC().Format(time.RFC1123Z),
		u.Name, emailAddr, strconv.FormatInt(u.ID, 10),
	}, ":")
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// SignsToken tells whether armoredSig is a valid signature by p over
// u's token of this minute or the previous one (signers often add a
// line end to what they sign).
func SignsToken(e *openpgp.Entity, u *store.User, armoredSig string, now time.Time) bool {
	for _, t := range []time.Time{now, now.Add(-time.Minute)} {
		token := VerificationToken(u, t)
		for _, signed := range []string{token, token + "\n", token + "\r\n"} {
			if _, err := signing.CheckDetached(openpgp.EntityList{e}, []byte(signed), armoredSig); err == nil {
				return true
			}
		}
	}
	return false
}
