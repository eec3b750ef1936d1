// Package secretbox seals short secrets the server keeps in its database
// (a webhook's authorization header) with the instance secret key, so a
// copy of the database alone does not reveal them.
//
// The key is a string: given by the operator (--secret-key), or generated
// once and kept in a file of the data directory (LoadKey), so every
// process sharing that directory agrees on it. AES-256-GCM seals each
// value under the SHA-256 of the key, with a fresh random nonce.
package secretbox

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// KeyFile is the name of the generated key's file in the data directory.
const KeyFile = "secret_key"

// prefix starts every sealed value: it names the format, so a value that
// was never sealed is told apart from one that was.
const prefix = "sb1:"

// ErrNoKey is returned when a value must be sealed or opened and no key
// was configured.
var ErrNoKey = errors.New("no instance secret key configured")

// Box seals and opens values with one key. A nil *Box has no key: it
// seals and opens only the empty string.
type Box struct {
	aead cipher.AEAD
}

// New returns a Box for key, which must not be empty.
func New(key string) (*Box, error) {
	if key == "" {
		return nil, errors.New("the secret key is empty")
	}
	sum := sha256.Sum256([]byte(key))
	block, err := aes.NewCipher(sum[:])
	if err != nil {
		return nil, err
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	return &Box{aead: aead}, nil
}

// IsSealed tells whether s has the form Seal gives its results.
func IsSealed(s string) bool { return strings.HasPrefix(s, prefix) }

// Seal encrypts plain; the empty string stays empty (nothing to hide, and
// "no value" stays recognisable).
func (b *Box) Seal(plain string) (string, error) {
	if plain == "" {
		return "", nil
	}
	if b == nil {
		return "", ErrNoKey
	}
	nonce := make([]byte, b.aead.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		return "", err
	}
	sealed := b.aead.Seal(nonce, nonce, []byte(plain), nil)
	return prefix + base64.RawStdEncoding.EncodeToString(sealed), nil
}

// Open decrypts a value Seal returned. It fails on a value that is not
// sealed, was sealed under another key or was altered.
func (b *Box) Open(sealed string) (string, error) {
	if sealed == "" {
		return "", nil
	}
	if b == nil {
		return "", ErrNoKey
	}
	if !IsSealed(sealed) {
		return "", errors.New("secretbox: the value is not sealed")
	}
	raw, err := base64.RawStdEncoding.DecodeString(sealed[len(prefix):])
	if err != nil || len(raw) < b.aead.NonceSize()+b.aead.Overhead() {
		return "", errors.New("secretbox: the sealed value is malformed")
	}
	n := b.aead.NonceSize()
	plain, err := b.aead.Open(nil, raw[:n], raw[n:], nil)
	if err != nil {
		return "", errors.New("secretbox: the value does not open with this key (was the secret key changed?)")
	}
	return string(plain), nil
}

// LoadKey returns the key kept in dataDir's KeyFile, generating it (32
// random bytes, hex) first when the file does not exist. The file is
// written whole under another name and then linked into place, so a
// second process starting at the same moment reads either no file or the
// complete one, and both end with the same key.
func LoadKey(dataDir string) (string, error) {
	path := filepath.Join(dataDir, KeyFile)
	for range 3 {
		raw, err := os.ReadFile(path)
		if err == nil {
			key := strings.TrimSpace(string(raw))
			if key == "" {
				return "", fmt.Errorf("%s is empty", path)
			}
			return key, nil
		}
		if !errors.Is(err, os.ErrNotExist) {
			return "", err
		}
		if err := createKey(dataDir, path); err != nil && !errors.Is(err, os.ErrExist) {
			return "", err
		}
	}
	return "", fmt.Errorf("cannot create %s", path)
}

func createKey(dataDir, path string) error {
	if err := os.MkdirAll(dataDir, 0o755); err != nil {
		return err
	}
	key, err := NewKey()
	if err != nil {
		return err
	}
	// Link fails when the name exists: the first process to get there
	// wins, the others read its key.
	return writeKey(dataDir, key, func(tmp string) error { return os.Link(tmp, path) })
}

// writeKey writes key whole into a new file of dataDir (mode 0600,
// synced) and hands its name to place, which puts it where it belongs;
// the temporary name is removed afterwards.
func writeKey(dataDir, key string, place func(tmp string) error) error {
	tmp, err := os.CreateTemp(dataDir, KeyFile+".new.")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return err
	}
	if _, err := tmp.WriteString(key + "\n"); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return place(tmp.Name())
}

// NewKey returns a fresh random key, as LoadKey generates one.
func NewKey() (string, error) {
	random := make([]byte, 32)
	if _, err := rand.Read(random); err != nil {
		return "", err
	}
	return hex.EncodeToString(random), nil
}

// StageKey writes key next to dataDir's KeyFile, under PendingKeyFile
// (mode 0600, synced), so a key rotation keeps the new key on disk before
// any value is sealed with it; CommitKey then puts it in KeyFile's place.
func StageKey(dataDir, key string) error {
	return writeKey(dataDir, key, func(tmp string) error {
		return os.Rename(tmp, filepath.Join(dataDir, PendingKeyFile))
	})
}

// CommitKey makes the staged key dataDir's key.
func CommitKey(dataDir string) error {
	return os.Rename(filepath.Join(dataDir, PendingKeyFile), filepath.Join(dataDir, KeyFile))
}

// PendingKeyFile holds a rotation's new key until the rotation commits.
const PendingKeyFile = KeyFile + ".pending"
