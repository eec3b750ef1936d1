package apitest_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"code.gitea.io/sdk/gitea"
	"github.com/ProtonMail/go-crypto/openpgp/packet"

	"repohost/apitest"
)

// TestKeysSDK manages SSH and GPG keys with the official SDK, a foreign
// address proved by signing /user/gpg_key_token among them.
func TestKeysSDK(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	alice := e.CreateUser("alice", false)
	c := sdkClient(t, e, gitea.SetBasicAuth("alice", alice.Password))

	key := newEd25519Key(t)
	pk, resp, err := c.CreatePublicKey(gitea.CreateKeyOption{Title: "laptop", Key: key.line})
	if err != nil || resp.StatusCode != http.StatusCreated || pk.Title != "laptop" || !strings.HasPrefix(pk.Fingerprint, "SHA256:") {
		t.Fatalf("CreatePublicKey: %v %+v", err, pk)
	}
	_, resp, err = c.CreatePublicKey(gitea.CreateKeyOption{Title: "again", Key: key.line})
	if err == nil || resp.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(err.Error(), "Key content has been used as non-deploy key") {
		t.Fatalf("duplicate key: %v", err)
	}
	keys, _, err := c.ListMyPublicKeys(gitea.ListPublicKeysOptions{})
	if err != nil || len(keys) != 1 || keys[0].ID != pk.ID {
		t.Fatalf("ListMyPublicKeys: %v %+v", err, keys)
	}
	if resp, err := c.DeletePublicKey(pk.ID); err != nil || resp.StatusCode != http.StatusNoContent {
		t.Fatalf("DeletePublicKey: %v", err)
	}

	// A key whose only address is not alice's: 404 without a signature,
	// accepted and verified with a signature of the token.
	ent := gpgKey(t, "Alice", "alice@elsewhere.example", packet.PubKeyAlgoEdDSA, false, time.Now().Add(-time.Hour), 0)
	armored := armoredPublic(t, ent)
	_, resp, err = c.CreateGPGKey(gitea.CreateGPGKeyOption{ArmoredKey: armored})
	if err == nil || resp.StatusCode != http.StatusNotFound || !strings.Contains(err.Error(), "None of the emails attached to the GPG key could be found") {
		t.Fatalf("foreign address without a signature: %v", err)
	}
	token, resp, err := c.GetGPGKeyVerificationToken()
	if err != nil || resp.StatusCode != http.StatusOK || len(token) != 64 {
		t.Fatalf("token: %v %q", err, token)
	}
	gk, resp, err := c.CreateGPGKey(gitea.CreateGPGKeyOption{ArmoredKey: armored, Signature: armoredSign(t, ent, token)})
	if err != nil || resp.StatusCode != http.StatusCreated || !gk.Verified || gk.KeyID != ent.PrimaryKey.KeyIdString() ||
		len(gk.Emails) != 1 || gk.Emails[0].Email != "alice@elsewhere.example" || len(gk.SubsKey) != 1 {
		t.Fatalf("CreateGPGKey with signature: %v %+v", err, gk)
	}
	_, resp, err = c.CreateGPGKey(gitea.CreateGPGKeyOption{ArmoredKey: armored})
	if err == nil || resp.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(err.Error(), "A key with the same id already exists") {
		t.Fatalf("duplicate GPG key: %v", err)
	}
	verified, resp, err := c.VerifyGPGKey(gitea.VerifyGPGKeyOption{KeyID: gk.KeyID, Signature: armoredSign(t, ent, token)})
	if err != nil || resp.StatusCode != http.StatusCreated || !verified.Verified {
		t.Fatalf("VerifyGPGKey: %v %+v", err, verified)
	}
	list, _, err := c.ListMyGPGKeys(&gitea.ListGPGKeysOptions{})
	if err != nil || len(list) != 1 || list[0].ID != gk.ID {
		t.Fatalf("ListMyGPGKeys: %v %+v", err, list)
	}
	got, _, err := c.GetGPGKey(gk.ID)
	if err != nil || got.KeyID != gk.KeyID {
		t.Fatalf("GetGPGKey: %v %+v", err, got)
	}
	if resp, err := c.DeleteGPGKey(gk.ID); err != nil || resp.StatusCode != http.StatusNoContent {
		t.Fatalf("DeleteGPGKey: %v", err)
	}
	if _, resp, _ := c.GetGPGKey(gk.ID); resp == nil || resp.StatusCode != http.StatusNotFound {
		t.Fatalf("deleted GPG key still there")
	}
}
