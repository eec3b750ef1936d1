package auth

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

func TestCredentialCacheMatchesOnlyTheVerifiedHash(t *testing.T) {
	t.Parallel()
	c := NewCredentialCache(10, time.Minute)
	c.Remember(1, "hash-a", "secret")
	switch {
	case !c.Verified(1, "hash-a", "secret"):
		t.Error("the verified password is not remembered")
	case c.Verified(1, "hash-a", "Secret"), c.Verified(1, "hash-a", ""):
		t.Error("another password matches")
	case c.Verified(2, "hash-a", "secret"):
		t.Error("another user matches")
	case c.Verified(1, "hash-b", "secret"):
		t.Error("a changed password hash still matches")
	}
	// The mismatch dropped the entry: even the old hash misses now.
	if c.Verified(1, "hash-a", "secret") || c.Len() != 0 {
		t.Errorf("the stale entry survived (%d entries)", c.Len())
	}
	if c.Verified(1, "", "") {
		t.Error("an account without a password hash matches")
	}
}

func TestCredentialCacheExpires(t *testing.T) {
	t.Parallel()
	now := time.Unix(1_000_000, 0)
	c := NewCredentialCache(10, time.Minute)
	c.now = func() time.Time { return now }
	c.Remember(1, "h", "pw")
	now = now.Add(59 * time.Second)
	if !c.Verified(1, "h", "pw") {
		t.Fatal("forgotten before its TTL")
	}
	now = now.Add(time.Second)
	if c.Verified(1, "h", "pw") {
		t.Fatal("remembered past its TTL")
	}
}

func TestCredentialCacheIsBoundedAndKeepsNoPassword(t *testing.T) {
	t.Parallel()
	c := NewCredentialCache(64, time.Minute)
	for i := 0; i < 1000; i++ {
		c.Remember(int64(i), "h", fmt.Sprintf("password-%d", i))
		if c.Len() > 64 {
			t.Fatalf("%d entries after %d inserts, bound 64", c.Len(), i+1)
		}
	}
	if !c.Verified(999, "h", "password-999") {
		t.Error("the newest entry was evicted")
	}
	for k, e := range c.entries {
		if strings.Contains(string(k.mac[:]), "password") || strings.Contains(e.hash, "password") {
			t.Fatal("an entry holds the password")
		}
	}
	// Two processes' caches key the same password differently.
	if NewCredentialCache(1, time.Minute).keyOf(1, "pw") == c.keyOf(1, "pw") {
		t.Error("the HMAC key is not random per cache")
	}
	var off *CredentialCache
	off.Remember(1, "h", "pw")
	if off.Verified(1, "h", "pw") {
		t.Error("a nil cache verified something")
	}
}
