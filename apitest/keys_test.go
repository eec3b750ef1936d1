package apitest_test

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/rsa"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/ProtonMail/go-crypto/openpgp"
	"github.com/ProtonMail/go-crypto/openpgp/armor"
	"github.com/ProtonMail/go-crypto/openpgp/packet"
	"golang.org/x/crypto/ssh"

	"repohost/apitest"
	"repohost/models"
)

// sshKeyPair is a key made for one test: the signer for the client side
// and the authorized_keys line to upload.
type sshKeyPair struct {
	signer ssh.Signer
	line   string
}

func newEd25519Key(t *testing.T) sshKeyPair {
	t.Helper()
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	s, err := ssh.NewSignerFromKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	return sshKeyPair{signer: s, line: strings.TrimSpace(string(ssh.MarshalAuthorizedKey(s.PublicKey())))}
}

func newRSAKey(t *testing.T, bits int) sshKeyPair {
	t.Helper()
	priv, err := rsa.GenerateKey(rand.Reader, bits)
	if err != nil {
		t.Fatal(err)
	}
	s, err := ssh.NewSignerFromKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	return sshKeyPair{signer: s, line: strings.TrimSpace(string(ssh.MarshalAuthorizedKey(s.PublicKey())))}
}

func TestSSHKeys(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	alice := e.CreateUser("alice", false)
	bob := e.CreateUser("bob", false)
	key := newEd25519Key(t)

	// Anonymous callers cannot add keys.
	e.Do("POST", "user/keys", map[string]any{"title": "laptop", "key": key.line}, nil).Expect(t, http.StatusUnauthorized)

	var created models.PublicKey
	e.Do("POST", "user/keys", map[string]any{"title": "laptop", "key": key.line + " alice@laptop"}, apitest.Basic(alice)).
		Expect(t, http.StatusCreated).JSON(t, &created)
	if created.Fingerprint != ssh.FingerprintSHA256(key.signer.PublicKey()) || created.Key != key.line ||
		created.Title != "laptop" || created.KeyType != "user" || created.User == nil || created.User.UserName != "alice" {
		t.Fatalf("created key: %+v", created)
	}
	if !strings.HasSuffix(created.URL, "/api/v1/user/keys/"+itoa(created.ID)) {
		t.Errorf("url %q", created.URL)
	}

	// The reference's refusals: a key in use (by anyone), a title in use,
	// bad content, keys too small or of a refused type.
	refusals := []struct {
		who  *apitest.Account
		body map[string]any
		want string
	}{
		{alice, map[string]any{"title": "again", "key": key.line}, "Key content has been used as non-deploy key"},
		{bob, map[string]any{"title": "stolen", "key": key.line}, "Key content has been used as non-deploy key"},
		{alice, map[string]any{"title": "laptop", "key": newEd25519Key(t).line}, "Key title has been used"},
		{alice, map[string]any{"title": "junk", "key": "ssh-ed25519 not-base64!"}, "Invalid key content"},
		{alice, map[string]any{"title": "junk", "key": "ssh-rsa " + strings.Fields(key.line)[1]}, "key type and content does not match"},
		{alice, map[string]any{"title": "small", "key": newRSAKey(t, 2048).line}, "key length is not enough: got 2048, needs 3071"},
		{alice, map[string]any{"title": "two", "key": key.line + "\n" + key.line}, "Invalid key content"},
	}
	for _, c := range refusals {
		r := e.Do("POST", "user/keys", c.body, apitest.Basic(c.who)).Expect(t, http.StatusUnprocessableEntity)
		if !strings.Contains(string(r.Body), c.want) {
			t.Errorf("%v: body %s, want %q", c.body["title"], r.Body, c.want)
		}
	}
	e.Do("POST", "user/keys", map[string]any{"title": "missing"}, apitest.Basic(alice)).Expect(t, http.StatusUnprocessableEntity)

	// An RSA key of 3072 bits is accepted.
	var rsaKey models.PublicKey
	e.Do("POST", "user/keys", map[string]any{"title": "rsa", "key": newRSAKey(t, 3072).line}, apitest.Basic(alice)).
		Expect(t, http.StatusCreated).JSON(t, &rsaKey)

	// Lists: the owner sees the user, others see the keys only.
	var mine []models.PublicKey
	r := e.Do("GET", "user/keys", nil, apitest.Basic(alice)).Expect(t, http.StatusOK)
	r.JSON(t, &mine)
	if len(mine) != 2 || r.Header.Get("X-Total-Count") != "2" || mine[0].ID != rsaKey.ID || mine[0].User == nil {
		t.Fatalf("own keys: %s", r.Body)
	}
	var theirs []models.PublicKey
	e.Do("GET", "users/alice/keys?fingerprint="+url.QueryEscape(created.Fingerprint), nil, nil).Expect(t, http.StatusOK).JSON(t, &theirs)
	if len(theirs) != 1 || theirs[0].ID != created.ID || theirs[0].User != nil || theirs[0].KeyType != "" {
		t.Fatalf("alice's keys seen anonymously: %+v", theirs)
	}
	e.Do("GET", "users/nobody/keys", nil, nil).Expect(t, http.StatusNotFound)
	e.Do("GET", "user/keys?limit=1&page=2", nil, apitest.Basic(alice)).Expect(t, http.StatusOK)

	// Only the owner reaches a key by id; deleting someone else's key
	// leaves it alone.
	e.Do("GET", "user/keys/"+itoa(created.ID), nil, apitest.Basic(alice)).Expect(t, http.StatusOK)
	e.Do("GET", "user/keys/"+itoa(created.ID), nil, apitest.Basic(bob)).Expect(t, http.StatusNotFound)
	e.Do("DELETE", "user/keys/"+itoa(created.ID), nil, apitest.Basic(bob)).Expect(t, http.StatusNotFound)
	e.Do("GET", "user/keys/"+itoa(created.ID), nil, apitest.Basic(alice)).Expect(t, http.StatusOK)
	e.Do("DELETE", "user/keys/"+itoa(created.ID), nil, apitest.Basic(alice)).Expect(t, http.StatusNoContent)
	e.Do("GET", "user/keys/"+itoa(created.ID), nil, apitest.Basic(alice)).Expect(t, http.StatusNotFound)
	// Once deleted, the key may be added by someone else.
	e.Do("POST", "user/keys", map[string]any{"title": "bobs", "key": key.line}, apitest.Basic(bob)).Expect(t, http.StatusCreated)
}

func TestDeployKeys(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	alice := e.CreateUser("alice", false)
	bob := e.CreateUser("bob", false)
	roCreateRepo(t, e, apitest.Basic(alice), map[string]any{"name": "app"})
	roCreateRepo(t, e, apitest.Basic(alice), map[string]any{"name": "lib", "private": true})
	key := newEd25519Key(t)
	body := map[string]any{"title": "ci", "key": key.line, "read_only": true}

	// Only the repository's admins manage its deploy keys.
	e.Do("POST", "repos/alice/app/keys", body, nil).Expect(t, http.StatusUnauthorized)
	e.Do("POST", "repos/alice/app/keys", body, apitest.Basic(bob)).Expect(t, http.StatusForbidden)
	e.Do("POST", "repos/alice/lib/keys", body, apitest.Basic(bob)).Expect(t, http.StatusNotFound)
	e.Do("GET", "repos/alice/app/keys", nil, apitest.Basic(bob)).Expect(t, http.StatusForbidden)

	var dk models.DeployKey
	e.Do("POST", "repos/alice/app/keys", body, apitest.Basic(alice)).Expect(t, http.StatusCreated).JSON(t, &dk)
	if !dk.ReadOnly || dk.Title != "ci" || dk.Fingerprint != ssh.FingerprintSHA256(key.signer.PublicKey()) ||
		dk.Repository == nil || dk.Repository.FullName != "alice/app" || dk.KeyID != dk.ID ||
		!strings.HasSuffix(dk.URL, "/api/v1/repos/alice/app/keys/"+itoa(dk.ID)) {
		t.Fatalf("deploy key: %+v", dk)
	}
	// Twice in one repository, or a title taken: 422. The same key may
	// serve another repository, but not as a user key.
	r := e.Do("POST", "repos/alice/app/keys", map[string]any{"title": "ci2", "key": key.line}, apitest.Basic(alice)).Expect(t, http.StatusUnprocessableEntity)
	if !strings.Contains(string(r.Body), "This key has already been added to this repository") {
		t.Errorf("duplicate deploy key: %s", r.Body)
	}
	r = e.Do("POST", "repos/alice/app/keys", map[string]any{"title": "ci", "key": newEd25519Key(t).line}, apitest.Basic(alice)).Expect(t, http.StatusUnprocessableEntity)
	if !strings.Contains(string(r.Body), "A key with the same name already exists") {
		t.Errorf("duplicate deploy key title: %s", r.Body)
	}
	e.Do("POST", "repos/alice/lib/keys", map[string]any{"title": "ci", "key": key.line}, apitest.Basic(alice)).Expect(t, http.StatusCreated)
	e.Do("POST", "user/keys", map[string]any{"title": "mine", "key": key.line}, apitest.Basic(alice)).Expect(t, http.StatusUnprocessableEntity)
	userKey := newEd25519Key(t)
	e.Do("POST", "user/keys", map[string]any{"title": "mine", "key": userKey.line}, apitest.Basic(alice)).Expect(t, http.StatusCreated)
	r = e.Do("POST", "repos/alice/app/keys", map[string]any{"title": "user", "key": userKey.line}, apitest.Basic(alice)).Expect(t, http.StatusUnprocessableEntity)
	if !strings.Contains(string(r.Body), "Key content has been used as non-deploy key") {
		t.Errorf("user key as deploy key: %s", r.Body)
	}

	var list []models.DeployKey
	r = e.Do("GET", "repos/alice/app/keys", nil, apitest.Basic(alice)).Expect(t, http.StatusOK)
	r.JSON(t, &list)
	if len(list) != 1 || list[0].ID != dk.ID || r.Header.Get("X-Total-Count") != "1" {
		t.Fatalf("list: %s", r.Body)
	}
	e.Do("GET", "repos/alice/app/keys?key_id=999999", nil, apitest.Basic(alice)).Expect(t, http.StatusOK).JSON(t, &list)
	if len(list) != 0 {
		t.Errorf("key_id filter: %+v", list)
	}
	e.Do("GET", "repos/alice/app/keys/"+itoa(dk.ID), nil, apitest.Basic(alice)).Expect(t, http.StatusOK)
	e.Do("GET", "repos/alice/lib/keys/"+itoa(dk.ID), nil, apitest.Basic(alice)).Expect(t, http.StatusNotFound)
	e.Do("DELETE", "repos/alice/lib/keys/"+itoa(dk.ID), nil, apitest.Basic(alice)).Expect(t, http.StatusNotFound)
	e.Do("DELETE", "repos/alice/app/keys/"+itoa(dk.ID), nil, apitest.Basic(bob)).Expect(t, http.StatusForbidden)
	e.Do("DELETE", "repos/alice/app/keys/"+itoa(dk.ID), nil, apitest.Basic(alice)).Expect(t, http.StatusNoContent)
	e.Do("GET", "repos/alice/app/keys/"+itoa(dk.ID), nil, apitest.Basic(alice)).Expect(t, http.StatusNotFound)
}

// gpgKey makes an OpenPGP key for a test. algo is packet.PubKeyAlgoEdDSA
// or packet.PubKeyAlgoRSA; noSubkeys drops the encryption subkey; a
// lifetime makes a key that expires that long after created.
func gpgKey(t *testing.T, name, email string, algo packet.PublicKeyAlgorithm, noSubkeys bool, created time.Time, lifetime time.Duration) *openpgp.Entity {
	t.Helper()
	cfg := &packet.Config{Algorithm: algo, RSABits: 2048, Time: func() time.Time { return created }}
	if lifetime > 0 {
		cfg.KeyLifetimeSecs = uint32(lifetime / time.Second)
	}
	ent, err := openpgp.NewEntity(name, "", email, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if noSubkeys {
		ent.Subkeys = nil
	}
	return ent
}

func armoredPublic(t *testing.T, ent *openpgp.Entity) string {
	t.Helper()
	var b bytes.Buffer
	w, err := armor.Encode(&b, openpgp.PublicKeyType, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := ent.Serialize(w); err != nil {
		t.Fatal(err)
	}
	w.Close()
	return b.String()
}

func armoredSign(t *testing.T, ent *openpgp.Entity, data string) string {
	t.Helper()
	var b bytes.Buffer
	if err := openpgp.ArmoredDetachSign(&b, ent, strings.NewReader(data), nil); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func TestGPGKeys(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	alice := e.CreateUser("alice", false)
	bob := e.CreateUser("bob", false)
	now := time.Now()

	edKey := gpgKey(t, "Alice", "alice@example.com", packet.PubKeyAlgoEdDSA, false, now.Add(-time.Hour), 0)
	e.Do("POST", "user/gpg_keys", map[string]any{"armored_public_key": armoredPublic(t, edKey)}, nil).Expect(t, http.StatusUnauthorized)

	var k models.GPGKey
	e.Do("POST", "user/gpg_keys", map[string]any{"armored_public_key": armoredPublic(t, edKey)}, apitest.Basic(alice)).
		Expect(t, http.StatusCreated).JSON(t, &k)
	if k.KeyID != edKey.PrimaryKey.KeyIdString() || k.PrimaryKeyID != "" || !k.CanSign || !k.CanCertify || k.CanEncryptComms ||
		k.Verified || k.Expires != nil || len(k.Emails) != 1 || k.Emails[0].Email != "alice@example.com" || !k.Emails[0].Verified ||
		len(k.SubsKey) != 1 || !k.SubsKey[0].CanEncryptComms || k.SubsKey[0].CanSign || k.SubsKey[0].PrimaryKeyID != k.KeyID || k.PublicKey == "" {
		t.Fatalf("ed25519 key: %+v (subkeys %+v)", k, k.SubsKey)
	}

	// Refusals: duplicate, bad armor, a private key, an expired key.
	cases := []struct {
		name, armored string
		status        int
		want          string
	}{
		{"duplicate", armoredPublic(t, edKey), 422, "A key with the same id already exists"},
		{"garbage", "not a key", 422, "invalid armored key"},
		{"private", func() string {
			var b bytes.Buffer
			w, _ := armor.Encode(&b, openpgp.PrivateKeyType, nil)
			_ = edKey.SerializePrivate(w, nil)
			w.Close()
			return b.String()
		}(), 422, "not a public key"},
		{"expired", armoredPublic(t, gpgKey(t, "Alice", "alice@example.com", packet.PubKeyAlgoEdDSA, false, now.Add(-48*time.Hour), time.Hour)), 422, "the key expired"},
		{"foreign email", armoredPublic(t, gpgKey(t, "Mallory", "mallory@example.net", packet.PubKeyAlgoEdDSA, true, now, 0)), 404, "None of the emails attached to the GPG key could be found"},
	}
	for _, c := range cases {
		r := e.Do("POST", "user/gpg_keys", map[string]any{"armored_public_key": c.armored}, apitest.Basic(alice)).Expect(t, c.status)
		if !strings.Contains(string(r.Body), c.want) {
			t.Errorf("%s: %s, want %q", c.name, r.Body, c.want)
		}
	}

	// An RSA key without subkeys and with an expiry, for another address
	// of alice: proved by signing the token.
	rsaKey := gpgKey(t, "Alice Work", "alice@work.example", packet.PubKeyAlgoRSA, true, now.Add(-time.Minute), 365*24*time.Hour)
	token := string(e.Do("GET", "user/gpg_key_token", nil, apitest.Basic(alice)).Expect(t, http.StatusOK).Body)
	if len(token) != 64 {
		t.Fatalf("token %q", token)
	}
	// Signed over bob's token, the signature does not serve alice.
	bobToken := string(e.Do("GET", "user/gpg_key_token", nil, apitest.Basic(bob)).Expect(t, http.StatusOK).Body)
	r := e.Do("POST", "user/gpg_keys", map[string]any{"armored_public_key": armoredPublic(t, rsaKey), "armored_signature": armoredSign(t, rsaKey, bobToken)}, apitest.Basic(alice)).
		Expect(t, http.StatusUnprocessableEntity)
	if !strings.Contains(string(r.Body), "do not match or token is out of date") {
		t.Errorf("bob's token: %s", r.Body)
	}
	var rk models.GPGKey
	e.Do("POST", "user/gpg_keys", map[string]any{"armored_public_key": armoredPublic(t, rsaKey), "armored_signature": armoredSign(t, rsaKey, token)}, apitest.Basic(alice)).
		Expect(t, http.StatusCreated).JSON(t, &rk)
	if !rk.Verified || rk.Expires == nil || len(rk.SubsKey) != 0 || len(rk.Emails) != 1 || rk.Emails[0].Verified || !rk.CanEncryptComms {
		t.Fatalf("rsa key: %+v", rk)
	}

	var list []models.GPGKey
	r = e.Do("GET", "user/gpg_keys", nil, apitest.Basic(alice)).Expect(t, http.StatusOK)
	r.JSON(t, &list)
	if len(list) != 2 || list[0].ID != rk.ID || len(list[1].SubsKey) != 1 || r.Header.Get("X-Total-Count") != "2" {
		t.Fatalf("list: %s", r.Body)
	}
	e.Do("GET", "users/alice/gpg_keys", nil, nil).Expect(t, http.StatusOK).JSON(t, &list)
	if len(list) != 2 {
		t.Fatalf("public list: %+v", list)
	}

	// Verifying a key later: 404 for someone else's, 422 for a bad
	// signature, 201 for a good one.
	e.Do("POST", "user/gpg_key_verify", map[string]any{"key_id": k.KeyID, "armored_signature": armoredSign(t, edKey, bobToken)}, apitest.Basic(bob)).Expect(t, http.StatusNotFound)
	e.Do("POST", "user/gpg_key_verify", map[string]any{"key_id": k.KeyID, "armored_signature": armoredSign(t, rsaKey, token)}, apitest.Basic(alice)).Expect(t, http.StatusUnprocessableEntity)
	var vk models.GPGKey
	e.Do("POST", "user/gpg_key_verify", map[string]any{"key_id": k.KeyID, "armored_signature": armoredSign(t, edKey, token)}, apitest.Basic(alice)).
		Expect(t, http.StatusCreated).JSON(t, &vk)
	if !vk.Verified || vk.ID != k.ID {
		t.Fatalf("verified: %+v", vk)
	}

	// Another user's key is out of reach.
	e.Do("GET", "user/gpg_keys/"+itoa(k.ID), nil, apitest.Basic(bob)).Expect(t, http.StatusNotFound)
	// Deleting it is the reference's silent no-op: 204, and the key stays.
	e.Do("DELETE", "user/gpg_keys/"+itoa(k.ID), nil, apitest.Basic(bob)).Expect(t, http.StatusNoContent)
	e.Do("GET", "user/gpg_keys/"+itoa(k.ID), nil, apitest.Basic(alice)).Expect(t, http.StatusOK)
	e.Do("DELETE", "user/gpg_keys/"+itoa(k.ID), nil, apitest.Basic(alice)).Expect(t, http.StatusNoContent)
	e.Do("GET", "user/gpg_keys/"+itoa(k.ID), nil, apitest.Basic(alice)).Expect(t, http.StatusNotFound)
	// Its subkey went with it: the same key can be added again.
	e.Do("POST", "user/gpg_keys", map[string]any{"armored_public_key": armoredPublic(t, edKey)}, apitest.Basic(alice)).Expect(t, http.StatusCreated)
}
