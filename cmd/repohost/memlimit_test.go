package main

import (
	"math"
	"runtime/debug"
	"testing"

	"repohost/impl/app"
)

func TestParseMemoryLimit(t *testing.T) {
	for in, want := range map[string]int64{
		"off":       math.MaxInt64,
		"64MiB":     64 << 20,
		" 1GiB ":    1 << 30,
		"512KiB":    512 << 10,
		"2TiB":      2 << 40,
		"1000000":   1000000,
		"100000B":   100000,
		"8388608B ": 8 << 20,
	} {
		got, err := parseMemoryLimit(in)
		if err != nil || got != want {
			t.Errorf("parseMemoryLimit(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "0", "-1MiB", "64MB", "64 MiB", "MiB", "1.5GiB", "9999999TiB", "on"} {
		if got, err := parseMemoryLimit(in); err == nil {
			t.Errorf("parseMemoryLimit(%q) = %d, want an error", in, got)
		}
	}
}

// TestApplyMemoryLimit checks the flag sets the runtime's limit, and that
// GOMEMLIMIT, when set, is left in force whatever the flag says.
func TestApplyMemoryLimit(t *testing.T) {
	before := debug.SetMemoryLimit(-1)
	t.Cleanup(func() { debug.SetMemoryLimit(before) })

	t.Setenv("GOMEMLIMIT", "")
	got, err := applyMemoryLimit("48MiB", quietLog())
	if err != nil || got != 48<<20 || debug.SetMemoryLimit(-1) != 48<<20 {
		t.Fatalf("--memory-limit 48MiB: got %d, %v; runtime has %d", got, err, debug.SetMemoryLimit(-1))
	}
	if got, err = applyMemoryLimit("off", quietLog()); err != nil || got != math.MaxInt64 || debug.SetMemoryLimit(-1) != math.MaxInt64 {
		t.Fatalf("--memory-limit off: got %d, %v; runtime has %d", got, err, debug.SetMemoryLimit(-1))
	}
	if _, err := applyMemoryLimit("lots", quietLog()); err == nil {
		t.Fatal("--memory-limit lots accepted")
	}

	// The runtime read GOMEMLIMIT at start-up; stand in for that.
	t.Setenv("GOMEMLIMIT", "200MiB")
	debug.SetMemoryLimit(200 << 20)
	if got, err = applyMemoryLimit("48MiB", quietLog()); err != nil || got != 200<<20 || debug.SetMemoryLimit(-1) != 200<<20 {
		t.Fatalf("GOMEMLIMIT=200MiB with --memory-limit 48MiB: got %d, %v; runtime has %d", got, err, debug.SetMemoryLimit(-1))
	}
}

func TestApplySizeLimits(t *testing.T) {
	c := app.DefaultConfig()
	if err := applySizeLimits("asset=100MiB, package=1GiB,npm=40MiB,generic=off", &c); err != nil {
		t.Fatal(err)
	}
	if c.MaxAssetBytes != 100<<20 || c.MaxPackageFileBytes != 1<<30 || c.PackageTypeLimits["npm"] != 40<<20 || c.PackageTypeLimits["generic"] != -1 {
		t.Fatalf("limits %d %d %v", c.MaxAssetBytes, c.MaxPackageFileBytes, c.PackageTypeLimits)
	}
	if c.LFSMaxFileBytes != -1 || c.LFSOwnerBytes != -1 {
		t.Fatalf("LFS limits by default: %d %d, want none", c.LFSMaxFileBytes, c.LFSOwnerBytes)
	}
	// main puts --lfs-max-file-size first: --size-limits lfs= wins.
	if err := applySizeLimits("lfs=off,lfs=5MiB,lfs-owner=1GiB", &c); err != nil {
		t.Fatal(err)
	}
	if c.LFSMaxFileBytes != 5<<20 || c.LFSOwnerBytes != 1<<30 {
		t.Fatalf("LFS limits %d %d", c.LFSMaxFileBytes, c.LFSOwnerBytes)
	}
	for _, bad := range []string{"asset", "asset=", "=1MiB", "npm=-1", "npm=lots"} {
		if err := applySizeLimits(bad, &c); err == nil {
			t.Errorf("--size-limits %q accepted", bad)
		}
	}
}
