package secretbox

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

func TestSealOpen(t *testing.T) {
	b, err := New("instance key")
	if err != nil {
		t.Fatal(err)
	}
	const plain = "Bearer s3cr3t-token"
	s1, err := b.Seal(plain)
	if err != nil {
		t.Fatal(err)
	}
	s2, _ := b.Seal(plain)
	if !IsSealed(s1) || strings.Contains(s1, "s3cr3t") {
		t.Fatalf("sealed value %q shows the plaintext or lacks the prefix", s1)
	}
	if s1 == s2 {
		t.Error("two seals of one value are equal: the nonce is not fresh")
	}
	for _, s := range []string{s1, s2} {
		got, err := b.Open(s)
		if err != nil || got != plain {
			t.Errorf("Open(%q) = %q, %v; want %q", s, got, err, plain)
		}
	}

	// The empty string stays empty, with or without a key.
	if s, err := b.Seal(""); s != "" || err != nil {
		t.Errorf("Seal(\"\") = %q, %v", s, err)
	}
	var none *Box
	if s, err := none.Open(""); s != "" || err != nil {
		t.Errorf("nil box Open(\"\") = %q, %v", s, err)
	}
	if _, err := none.Seal(plain); err != ErrNoKey {
		t.Errorf("nil box Seal: %v, want ErrNoKey", err)
	}

	other, _ := New("another key")
	if _, err := other.Open(s1); err == nil {
		t.Error("a value opened under another key")
	}
	// Altered ciphertext, unsealed text and garbage are refused.
	// A character in the middle: the last one may carry only padding bits.
	i := len(prefix) + 20
	c := byte('A')
	if s1[i] == 'A' {
		c = 'B'
	}
	flipped := s1[:i] + string(c) + s1[i+1:]
	for _, bad := range []string{flipped, plain, prefix + "!!!", prefix + "AAAA"} {
		if got, err := b.Open(bad); err == nil {
			t.Errorf("Open(%q) = %q, want an error", bad, got)
		}
	}
	if _, err := New(""); err == nil {
		t.Error("New accepted an empty key")
	}
}

func TestLoadKey(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	// Several processes starting at once on one data directory agree.
	keys := make([]string, 8)
	var wg sync.WaitGroup
	for i := range keys {
		wg.Add(1)
		go func() {
			defer wg.Done()
			k, err := LoadKey(dir)
			if err != nil {
				t.Error(err)
			}
			keys[i] = k
		}()
	}
	wg.Wait()
	for _, k := range keys {
		if k != keys[0] || len(k) != 64 {
			t.Fatalf("keys differ or are short: %q", keys)
		}
	}
	fi, err := os.Stat(filepath.Join(dir, KeyFile))
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("key file mode %v, want 0600", fi.Mode().Perm())
	}
	again, err := LoadKey(dir)
	if err != nil || again != keys[0] {
		t.Errorf("reloaded key %q, %v; want %q", again, err, keys[0])
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("data directory holds %d entries, want only the key file", len(entries))
	}
}
