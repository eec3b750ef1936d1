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
	b, err := bcrypt.GenerateFromPassword(bcryptInput(password), cost)
	return string(b), err
}

// CheckPassword compares in constant time.
func (h Hasher) CheckPassword(hash, password string) bool {
	return hash != "" && bcrypt.CompareHashAndPassword([]byte(hash), bcryptInput(password)) == nil
}

// bcryptMaxInput is the longest input bcrypt accepts.
const bcryptMaxInput = 72

// bcryptInput is what bcrypt sees of a password. bcrypt refuses inputs over
// 72 bytes (and silently truncating them would make every password sharing
// the first 72 bytes equal), so a longer password is first reduced to its
// SHA-256 in hex: 64 bytes, no NUL, and every byte of the password counts.
// Shorter passwords go in unchanged, so hashes stored before this rule still
// verify: no password over 72 bytes could be stored then.
func bcryptInput(password string) []byte {
	if len(password) <= bcryptMaxInput {
		return []byte(password)
	}
	sum := sha256.Sum256([]byte(password))
	return []byte(hex.EncodeToString(sum[:]))
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
