package apitest

import (
	"context"
	"os"
	"slices"
	"testing"
	"time"

	"repohost/impl/app"
	"repohost/store/objects"
)

// S3Env names the variable holding the S3-compatible service tests may
// store objects in (scripts/with-s3.sh exports it), a storage address as
// --storage takes it: http://KEY:SECRET@HOST:PORT/BUCKET.
const S3Env = "REPOHOST_TEST_S3"

// Backend is one place a test server may keep its large files.
type Backend struct {
	Name string
	// Configure sets the server's object stores (nil: the local disk).
	Configure func(*app.Deps)
}

// Backends are the storage backends a test runs on: the local disk
// always, and S3 when REPOHOST_TEST_S3 names a service.
func Backends(t testing.TB) []Backend {
	out := []Backend{{Name: "local"}}
	if os.Getenv(S3Env) != "" {
		out = append(out, Backend{Name: "s3", Configure: func(d *app.Deps) { d.Objects = S3Stores(t, false) }})
	}
	return out
}

// S3Stores opens every kind's store on the service REPOHOST_TEST_S3
// names, under a base path of the test's own (the bucket is shared by
// every test), serving downloads direct when direct is set. It skips the
// test when there is no service.
func S3Stores(t testing.TB, direct bool) app.ObjectStores {
	t.Helper()
	addr := os.Getenv(S3Env)
	if addr == "" {
		t.Skip(S3Env + " is not set (scripts/with-s3.sh starts a service)")
	}
	base := addr + "/t-" + randomHex(8)
	if direct {
		base += "?serve_direct=true"
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := app.OpenObjectStores(ctx, t.TempDir(), app.StorageSettings{Default: base})
	if err != nil {
		t.Fatalf("open the S3 stores: %v", err)
	}
	return s
}

// Keys lists the keys a store holds under prefix, sorted.
func Keys(t testing.TB, s objects.Store, prefix string) []string {
	t.Helper()
	var keys []string
	err := s.Walk(context.Background(), prefix, func(key string, _ int64, _ time.Time) error {
		keys = append(keys, key)
		return nil
	})
	if err != nil {
		t.Fatalf("list stored objects: %v", err)
	}
	slices.Sort(keys)
	return keys
}

// TempFiles lists the uploads the server is staging (or left behind).
func (e *Env) TempFiles() []string {
	e.T.Helper()
	entries, err := os.ReadDir(e.Deps.TempDir)
	if err != nil && !os.IsNotExist(err) {
		e.T.Fatal(err)
	}
	var names []string
	for _, en := range entries {
		names = append(names, en.Name())
	}
	return names
}
