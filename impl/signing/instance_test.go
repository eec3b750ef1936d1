package signing

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/ProtonMail/go-crypto/openpgp"
	"github.com/ProtonMail/go-crypto/openpgp/armor"
	"github.com/ProtonMail/go-crypto/openpgp/packet"
	"github.com/go-git/go-git/v6/plumbing/object"

	"repohost/store"
)

func armored(t *testing.T, ent *openpgp.Entity, private bool) []byte {
	t.Helper()
	var b bytes.Buffer
	typ := openpgp.PublicKeyType
	if private {
		typ = openpgp.PrivateKeyType
	}
	w, err := armor.Encode(&b, typ, nil)
	if err != nil {
		t.Fatal(err)
	}
	if private {
		// Without re-signing: an encrypted key cannot sign its identities.
		err = ent.SerializePrivateWithoutSigning(w, nil)
	} else {
		err = ent.Serialize(w)
	}
	if err != nil {
		t.Fatal(err)
	}
	w.Close()
	return b.Bytes()
}

// TestParseSigner: the instance key must be a private key the server can
// use unattended; what it signs checks out against it.
func TestParseSigner(t *testing.T) {
	now := time.Now()
	cfg := &packet.Config{Algorithm: packet.PubKeyAlgoEdDSA, Time: func() time.Time { return now.Add(-time.Hour) }}
	ent, err := openpgp.NewEntity("Signer", "", "signer@example.com", cfg)
	if err != nil {
		t.Fatal(err)
	}
	clock := store.SystemClock{}
	if _, err := ParseSigner(armored(t, ent, false), clock); err == nil || !strings.Contains(err.Error(), "not a private key") {
		t.Errorf("public key: %v", err)
	}
	if _, err := ParseSigner([]byte("garbage"), clock); err == nil {
		t.Error("garbage accepted")
	}
	locked, _ := openpgp.NewEntity("Locked", "", "locked@example.com", cfg)
	if err := locked.EncryptPrivateKeys([]byte("secret"), nil); err != nil {
		t.Fatal(err)
	}
	if _, err := ParseSigner(armored(t, locked, true), clock); err == nil || !strings.Contains(err.Error(), "passphrase") {
		t.Errorf("passphrase-protected key: %v", err)
	}

	s, err := ParseSigner(armored(t, ent, true), clock)
	if err != nil {
		t.Fatal(err)
	}
	if s.Name != "Signer" || s.Email != "signer@example.com" || s.KeyID != KeyIDString(ent.PrimaryKey.KeyId) {
		t.Errorf("signer %+v", s)
	}
	c := &object.Commit{Message: "m\n", Author: object.Signature{Name: "a", Email: "a@example.com", When: now}}
	c.Committer = c.Author
	if err := s.Sign(c); err != nil {
		t.Fatal(err)
	}
	payload, err := Payload(c)
	if err != nil {
		t.Fatal(err)
	}
	sig, err := ReadSignature(c.Signature)
	if err != nil || !s.has(IssuerKeyID(sig)) {
		t.Fatalf("signature %v names %s", err, IssuerKeyID(sig))
	}
	if _, err := CheckDetached(openpgp.EntityList{ent}, payload, c.Signature); err != nil {
		t.Errorf("signature does not check out: %v", err)
	}
	if _, err := CheckDetached(openpgp.EntityList{ent}, append(payload, 'x'), c.Signature); err == nil {
		t.Error("signature checks out over other content")
	}
}
