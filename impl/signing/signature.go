// Package signing answers whether a commit's OpenPGP signature is good, and
// signs the commits the server writes with the instance key. It is the one
// place for both: the commits API, the branch and contents answers and the
// push policy's require_signed_commits (impl/access) all ask Verifier, so
// a commit the API shows verified is exactly one a protected branch takes.
package signing

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/ProtonMail/go-crypto/openpgp"
	"github.com/ProtonMail/go-crypto/openpgp/armor"
	"github.com/ProtonMail/go-crypto/openpgp/packet"
	"github.com/go-git/go-git/v6/plumbing"
	"github.com/go-git/go-git/v6/plumbing/object"
)

// KeyIDString is the 16-hex-digit upper-case key id the API shows.
func KeyIDString(id uint64) string { return fmt.Sprintf("%016X", id) }

// signatureBody is the packet stream of an armored (or binary) detached
// signature.
func signatureBody(sig string) (io.Reader, error) {
	if !strings.Contains(sig, "-----BEGIN") {
		return strings.NewReader(sig), nil
	}
	block, err := armor.Decode(strings.NewReader(strings.TrimSpace(sig)))
	if err != nil {
		return nil, err
	}
	if block.Type != openpgp.SignatureType {
		return nil, fmt.Errorf("not a signature: the armor is a %q block", block.Type)
	}
	return block.Body, nil
}

// ReadSignature reads the one signature packet of a detached signature.
func ReadSignature(sig string) (*packet.Signature, error) {
	body, err := signatureBody(sig)
	if err != nil {
		return nil, err
	}
	p, err := packet.Read(body)
	if err != nil {
		return nil, err
	}
	s, ok := p.(*packet.Signature)
	if !ok {
		return nil, errors.New("not a signature")
	}
	return s, nil
}

// IssuerKeyID names the key that made s, "" when s does not say.
func IssuerKeyID(s *packet.Signature) string {
	if s.IssuerKeyId != nil && *s.IssuerKeyId != 0 {
		return KeyIDString(*s.IssuerKeyId)
	}
	if len(s.IssuerFingerprint) >= 8 {
		// A v4 key's id is the low 64 bits of its fingerprint.
		fp := s.IssuerFingerprint
		return strings.ToUpper(fmt.Sprintf("%X", fp[len(fp)-8:]))
	}
	return ""
}

// CheckDetached verifies sig, a detached signature of signed, by one of
// keyring's keys, judging the keys' validity at the signature's own time:
// a key that expired since still vouches for what it signed before.
func CheckDetached(keyring openpgp.EntityList, signed []byte, sig string) (*openpgp.Entity, error) {
	s, err := ReadSignature(sig)
	if err != nil {
		return nil, err
	}
	at := s.CreationTime
	cfg := &packet.Config{Time: func() time.Time { return at }}
	body, err := signatureBody(sig)
	if err != nil {
		return nil, err
	}
	return openpgp.CheckDetachedSignature(keyring, bytes.NewReader(signed), body, cfg)
}

// Payload is what a commit's signature signs: the commit object without
// its gpgsig header.
func Payload(c *object.Commit) ([]byte, error) {
	obj := &plumbing.MemoryObject{}
	if err := c.EncodeWithoutSignature(obj); err != nil {
		return nil, err
	}
	r, err := obj.Reader()
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return io.ReadAll(r)
}
