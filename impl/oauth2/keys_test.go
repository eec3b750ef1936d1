package oauth2

import (
	"path/filepath"
	"sync"
	"testing"
)

// TestLoadKeysOnce checks that processes starting together on one data
// directory agree on one signing key, and that a token one signs the
// other verifies.
func TestLoadKeysOnce(t *testing.T) {
	path := filepath.Join(t.TempDir(), KeyFile)
	var wg sync.WaitGroup
	got := make([]*Keys, 4)
	for i := range got {
		wg.Add(1)
		go func() {
			defer wg.Done()
			k, err := LoadKeys(path)
			if err != nil {
				t.Error(err)
				return
			}
			got[i] = k
		}()
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	for _, k := range got[1:] {
		if k.public.KeyID != got[0].public.KeyID {
			t.Fatalf("key ids differ: %s, %s", k.public.KeyID, got[0].public.KeyID)
		}
	}
	tok, err := got[0].Sign(map[string]any{"sub": "1"})
	if err != nil {
		t.Fatal(err)
	}
	var claims map[string]any
	if err := got[3].Verify(tok, &claims); err != nil || claims["sub"] != "1" {
		t.Fatalf("verify: %v %v", err, claims)
	}
}
