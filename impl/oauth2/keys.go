package oauth2

import (
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
)

// KeyFile is where, under the data directory, the provider's signing key
// lives. It is made on first start and shared by every process using the
// directory.
const KeyFile = "oauth2/jwt_private.pem" // documentation of app.Deps.OAuth2KeyFile

// Keys signs the provider's ID tokens and refresh tokens (RS256) and
// publishes the public half as a JWKS.
type Keys struct {
	signer jose.Signer
	public jose.JSONWebKey
}

// LoadKeys reads the signing key at path, making a new one first if there
// is none. Concurrent starts agree on one key: the file is written aside
// and linked into place, and a loser of that race reads the winner's.
func LoadKeys(path string) (*Keys, error) {
	for range 3 {
		raw, err := os.ReadFile(path)
		if err == nil {
			return parseKey(path, raw)
		}
		if !errors.Is(err, os.ErrNotExist) {
			return nil, err
		}
		if err := createKey(path); err != nil && !errors.Is(err, os.ErrExist) {
			return nil, err
		}
	}
	return nil, fmt.Errorf("cannot create %s", path)
}

func createKey(path string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return err
	}
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".jwt.new.")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return err
	}
	if err := pem.Encode(tmp, &pem.Block{Type: "PRIVATE KEY", Bytes: der}); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Link(tmp.Name(), path)
}

func parseKey(path string, raw []byte) (*Keys, error) {
	block, _ := pem.Decode(raw)
	if block == nil {
		return nil, fmt.Errorf("%s holds no PEM key", path)
	}
	parsed, err := x509.ParsePKCS8PrivateKey(block.Bytes)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	key, ok := parsed.(*rsa.PrivateKey)
	if !ok {
		return nil, fmt.Errorf("%s is not an RSA key", path)
	}
	public := jose.JSONWebKey{Key: &key.PublicKey, Algorithm: string(jose.RS256), Use: "sig"}
	thumb, err := public.Thumbprint(crypto.SHA256)
	if err != nil {
		return nil, err
	}
	public.KeyID = base64.RawURLEncoding.EncodeToString(thumb)
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.RS256, Key: jose.JSONWebKey{Key: key, KeyID: public.KeyID}},
		(&jose.SignerOptions{}).WithType("JWT"))
	if err != nil {
		return nil, err
	}
	return &Keys{signer: signer, public: public}, nil
}

// Sign serialises claims as a signed JWT.
func (k *Keys) Sign(claims ...any) (string, error) {
	b := jwt.Signed(k.signer)
	for _, c := range claims {
		b = b.Claims(c)
	}
	return b.Serialize()
}

// Verify checks a JWT's signature against the key and reads its claims
// into out. The caller checks what the claims say.
func (k *Keys) Verify(token string, out ...any) error {
	t, err := jwt.ParseSigned(token, []jose.SignatureAlgorithm{jose.RS256})
	if err != nil {
		return err
	}
	return t.Claims(k.public.Key, out...)
}

// JWKS is the public key set clients verify ID tokens with.
func (k *Keys) JWKS() jose.JSONWebKeySet {
	return jose.JSONWebKeySet{Keys: []jose.JSONWebKey{k.public}}
}
