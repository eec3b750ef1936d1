package auth

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"

	"golang.org/x/crypto/bcrypt"
)

// Hasher hashes passwords slowly (bcrypt) and tokens quickly (SHA-256): a token
// is 160 random bits, so a fast hash is safe and a check is one indexed lookup.
type Hasher struct {
	// Cost is the bcrypt cost; tests lower it.
	Cost int
}

// HashPassword returns the bcrypt hash of password.
func (h Hasher) HashPassword(password string) (string, error) {
	cost := h.Cost
	if cost == 0 {
		cost = bcrypt.DefaultCost
	}
	b, err := bcrypt.GenerateFromPassword([]byte(password), cost)
	return string(b), err
}

// CheckPassword compares in constant time.
func (h Hasher) CheckPassword(hash, password string) bool {
	return hash != "" && bcrypt.CompareHashAndPassword([]byte(hash), []byte(password)) == nil
}

// NewToken returns a fresh 40-hex-digit secret and the hash to store.
func NewToken() (secret, hash string, err error) {
	b := make([]byte, 20)
	if _, err := rand.Read(b); err != nil {
		return "", "", err
	}
	secret = hex.EncodeToString(b)
	return secret, HashToken(secret), nil
}

// HashToken is the stored form of a token secret.
func HashToken(secret string) string {
	sum := sha256.Sum256([]byte(secret))
	return hex.EncodeToString(sum[:])
}

// RandomPassword is used for the first admin when none is configured.
func RandomPassword() (string, error) {
	b := make([]byte, 12)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return hex.EncodeToString(b), nil
}
