package auth

import (
	"fmt"
	"testing"
	"time"
)

// Failures from many addresses on one account never lock its owner out
// of a fresh address; past the account-wide limit they slow its checks.
func TestThrottleKeysAccountByAddress(t *testing.T) {
	now := time.Unix(1_000_000, 0)
	th := NewLoginThrottle(2, time.Minute)
	th.Now = func() time.Time { return now }
	for i := 0; i < 2*addressFactor; i++ {
		k := KeysFor("Alice", fmt.Sprintf("10.0.0.%d", i/2))
		if th.RetryAfter(k) != 0 {
			t.Fatalf("attempt %d refused before its address failed twice", i)
		}
		th.Fail(k.Account, k.Address, k.AnyAddress)
	}
	if th.RetryAfter(KeysFor("alice", "10.0.0.0")) == 0 {
		t.Fatal("an address that failed twice on alice is not locked")
	}
	fresh := KeysFor("alice", "192.0.2.1")
	if th.RetryAfter(fresh) != 0 {
		t.Fatal("alice is locked from an address that never failed")
	}
	if th.SlowDown(fresh) == 0 {
		t.Fatal("alice's checks are not slowed after failures from many addresses")
	}
	if th.SlowDown(KeysFor("bob", "192.0.2.1")) != 0 {
		t.Fatal("bob is slowed by alice's failures")
	}
	now = now.Add(time.Minute)
	if th.SlowDown(fresh) != 0 || th.RetryAfter(KeysFor("alice", "10.0.0.0")) != 0 {
		t.Fatal("limits outlive their window")
	}
}
