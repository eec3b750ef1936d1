package sqlstore

import (
	"context"
	"runtime"
	"strings"
	"testing"

	"repohost/store/sqlstore/sqltest"
)

// TestOpenStartsNoEndlessGoroutine: a handle, used and closed, leaves no
// goroutine behind that keeps its memory. GORM's statement cache sweeps
// expiring statements from a goroutine that never ends; the test servers,
// hundreds per run, each kept their whole heap through it.
func TestOpenStartsNoEndlessGoroutine(t *testing.T) {
	d, err := Open(sqltest.DSN(t, ""), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.Migrate(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Users().FindByName(context.Background(), "nobody"); err == nil {
		t.Fatal("found a user in an empty database")
	}
	d.Close()
	buf := make([]byte, 1<<22)
	stacks := string(buf[:runtime.Stack(buf, true)])
	if strings.Contains(stacks, "gorm.io/gorm/internal/lru") {
		t.Error("GORM's statement cache runs a sweeping goroutine that never ends")
	}
}
